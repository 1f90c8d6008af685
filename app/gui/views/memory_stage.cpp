#include "views/memory_stage.h"

#include "style/format.h"
#include "style/heatmap.h"
#include "style/paint_util.h"

#include <QEasingCurve>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <vector>

namespace flashviz::gui {

namespace {

enum class Item { Q, K, V, O, S, P };

struct Placed {
    Item item;
    QString name;
    int rows = 0, cols = 0;
    QRectF rect;
    QColor colour;
    bool ghost = false; // drawn as never stored
};

struct Movement {
    QRectF from, to;
    QImage image;
    QRectF source; // part of the image carried
    QColor colour;
    QString label;
};

QImage tileImage(const Matrix& m, Colouring colouring) {
    if (m.size() == 0) return {};
    return heatmapImage(m, colouring, std::max(finiteAbsMax(m), 1e-300), 256);
}

QImage columnImage(const Vector& v) {
    if (v.size() == 0) return {};
    Matrix m = v;
    return heatmapImage(m, Colouring::Diverging, std::max(finiteAbsMax(m), 1e-300), 256);
}

bool isLoad(StepKind k) {
    return k == StepKind::LoadQuery || k == StepKind::LoadKeyValue ||
           k == StepKind::LoadRunningState || k == StepKind::ReadInputs ||
           k == StepKind::ReadScores || k == StepKind::ReadWeights;
}

int kernelOf(StepKind k) {
    switch (k) {
    case StepKind::ReadInputs:
    case StepKind::ComputeScores:
    case StepKind::WriteScores:
        return 0;
    case StepKind::ReadScores:
    case StepKind::ComputeSoftmax:
    case StepKind::WriteWeights:
        return 1;
    default:
        return 2;
    }
}

void layoutToScale(std::vector<Placed>& items, const QRectF& area, qreal gap, qreal minSide) {
    std::vector<QSize> shapes;
    for (const auto& it : items)
        shapes.emplace_back(it.cols, it.rows);
    const std::vector<QRectF> rects = layoutSideBySide(shapes, area, gap, minSide);
    for (std::size_t i = 0; i < items.size(); ++i)
        items[i].rect = rects[i];
}

} // namespace

MemoryStageView::MemoryStageView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus);
}

void MemoryStageView::frameChanged() {
    m_tiles = {};
    if (!m_frame) return;
    const StepState& s = m_frame->state;
    m_tiles.q = tileImage(s.query, Colouring::Diverging);
    m_tiles.k = tileImage(s.key, Colouring::Diverging);
    m_tiles.v = tileImage(s.value, Colouring::Diverging);
    m_tiles.s = tileImage(s.scores, Colouring::Diverging);
    m_tiles.p = tileImage(s.weights, Colouring::Sequential);
    m_tiles.m = columnImage(s.mNew.size() ? s.mNew : s.mOld);
    m_tiles.l = columnImage(s.lNew.size() ? s.lNew : s.lOld);
    const Matrix& acc = s.output.size() ? s.output : s.accNew.size() ? s.accNew : s.accOld;
    m_tiles.acc = tileImage(acc, Colouring::Diverging);
}

void MemoryStageView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    const qreal sc = m_theme.scale;
    if (!m_frame) {
        p.setPen(m_theme.muted);
        p.setFont(m_theme.font(11));
        p.drawText(rect(), Qt::AlignCenter, tr("Computing…"));
        return;
    }
    const Scene& scene = *m_frame->scene;
    const StepState& st = m_frame->state;
    const StepInfo& info = st.info;
    const HardwareProfile& hw = scene.hardware;
    const auto& spec = scene.settings.spec;
    const int d = spec.headDim, nq = spec.queries, nk = spec.keys;
    const qreal t = QEasingCurve(QEasingCurve::InOutCubic).valueForProgress(m_transition);
    const bool moving = m_transition < 1.0;

    const QRectF area = QRectF(rect()).adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const qreal stripH = 46 * sc;
    const QRectF top(area.left(), area.top(), area.width(), area.height() - stripH - 6 * sc);
    const QRectF strip(area.left(), area.bottom() - stripH, area.width(), stripH);
    const QRectF hbmBox(top.left(), top.top(), top.width() * 0.53, top.height());
    const QRectF chipBox(top.left() + top.width() * 0.64, top.top(), top.width() * 0.36,
                         top.height());
    const QRectF bus(hbmBox.right(), top.top(), chipBox.left() - hbmBox.right(), top.height());

    // ---- HBM ------------------------------------------------------------------------------
    const QRectF hbmContent =
        drawPanel(p, hbmBox, m_theme, m_theme.hbm, tr("HBM · off-chip memory"),
                  tr("%1 · %2 to and from the chip · fp32, %3 B a value")
                      .arg(formatMemorySize(hw.hbmBytes.value),
                           formatRate(hw.hbmBandwidthBytesPerSecond.value))
                      .arg(kBytesPerElement));
    std::vector<Placed> items;
    items.push_back({Item::Q, QStringLiteral("Q"), nq, d, {}, m_theme.q, false});
    items.push_back({Item::K, QStringLiteral("K"), nk, d, {}, m_theme.k, false});
    items.push_back({Item::V, QStringLiteral("V"), nk, d, {}, m_theme.v, false});
    const bool flash = scene.isFlash();
    const bool debugCopy = flash && scene.settings.options.keepFullScores;
    if (flash) {
        items.push_back({Item::O, QStringLiteral("O"), nq, d, {}, m_theme.o, false});
        items.push_back({Item::S,
                         debugCopy ? tr("S (debug copy)") : tr("S, P"),
                         nq,
                         nk,
                         {},
                         m_theme.s,
                         !debugCopy});
    } else {
        items.push_back({Item::S, QStringLiteral("S"), nq, nk, {}, m_theme.s, false});
        items.push_back({Item::P, QStringLiteral("P"), nq, nk, {}, m_theme.p, false});
        items.push_back({Item::O, QStringLiteral("O"), nq, d, {}, m_theme.o, false});
    }
    const QFont labelFont = m_theme.font(8.5, true);
    const QFont smallFont = m_theme.font(8);
    const qreal labelH =
        QFontMetricsF(labelFont).height() + 2 * QFontMetricsF(smallFont).height() + 4;
    QRectF matrixArea = hbmContent.adjusted(0, 2 * sc, 0, -labelH);
    layoutToScale(items, matrixArea, 12 * sc, 44 * sc);
    auto find = [&](Item which) -> const Placed* {
        for (const auto& it : items)
            if (it.item == which) return &it;
        return nullptr;
    };

    const int writeScores = scene.writeScoresStep;
    const int writeWeights = scene.writeWeightsStep;
    const int writeOutput = scene.writeOutputStep;
    const QPen activePen(m_theme.accent, 3 * sc);

    for (const Placed& it : items) {
        const QRectF r = it.rect;
        p.setPen(Qt::NoPen);
        p.setBrush(m_theme.panel);
        p.drawRect(r);
        switch (it.item) {
        case Item::Q:
            drawMatrixImage(p, r, scene.qImage);
            break;
        case Item::K:
            drawMatrixImage(p, r, scene.kImage);
            break;
        case Item::V:
            drawMatrixImage(p, r, scene.vImage);
            break;
        case Item::O: {
            // Only the rows already written back are in HBM.
            if (!flash) {
                if (info.index > writeOutput || (info.index == writeOutput && !moving))
                    drawMatrixImage(p, r, scene.outputImage);
                break;
            }
            const QImage& img = scene.outputImage;
            const qreal iy = qreal(img.height()) / nq;
            for (const Range& rows : finishedRowRuns(scene, info.index, moving))
                drawMatrixImage(p, rowBand(r, nq, rows), img,
                                QRectF(0, iy * rows.begin, img.width(), iy * rows.size()));
            break;
        }
        case Item::S:
            if (it.ghost) break;
            if (debugCopy) {
                const QImage& img = scene.scoresImage;
                const qreal ix = qreal(img.width()) / nk, iy = qreal(img.height()) / nq;
                for (const QRect& e : storedScoreRegions(scene, info))
                    drawMatrixImage(
                        p,
                        QRectF(r.left() + r.width() * e.left() / nk,
                               r.top() + r.height() * e.top() / nq, r.width() * e.width() / nk,
                               r.height() * e.height() / nq),
                        img, QRectF(ix * e.left(), iy * e.top(), ix * e.width(), iy * e.height()));
            } else if (info.index > writeScores || (info.index == writeScores && !moving)) {
                drawMatrixImage(p, r, scene.scoresImage);
            } else if (info.index == writeScores) {
                const qreal f = t;
                const QImage& img = scene.scoresImage;
                drawMatrixImage(p, QRectF(r.left(), r.top(), r.width(), r.height() * f), img,
                                QRectF(0, 0, img.width(), img.height() * f));
            }
            break;
        case Item::P:
            if (info.index > writeWeights || (info.index == writeWeights && !moving)) {
                drawMatrixImage(p, r, scene.weightsImage);
            } else if (info.index == writeWeights) {
                const QImage& img = scene.weightsImage;
                drawMatrixImage(p, QRectF(r.left(), r.top(), r.width(), r.height() * t), img,
                                QRectF(0, 0, img.width(), img.height() * t));
            }
            break;
        }
        if (it.ghost) {
            p.setPen(QPen(m_theme.muted, 1.2 * sc, Qt::DashLine));
            p.setBrush(Qt::NoBrush);
            p.drawRect(r);
            p.setPen(m_theme.muted);
            drawFittedText(p, r.adjusted(4, 4, -4, -4), Qt::AlignCenter | Qt::TextWordWrap,
                           tr("never stored"), m_theme.font(9, true));
        } else {
            p.setPen(QPen(it.colour, 1.5 * sc));
            p.setBrush(Qt::NoBrush);
            p.drawRect(r);
        }
        // Label: name, shape, bytes.
        // At most the matrix and a third of the gap to its neighbours (labels ran together:
        // "4096×644096×64").
        const qreal lw = std::min(std::max(r.width(), 60 * sc), r.width() + 4 * sc);
        QRectF lr(r.center().x() - lw / 2, r.bottom() + 3, lw, QFontMetricsF(labelFont).height());
        lr.moveLeft(std::max(lr.left(), hbmContent.left()));
        p.setPen(it.ghost ? m_theme.muted : it.colour);
        drawFittedText(p, lr, Qt::AlignHCenter | Qt::AlignTop, it.name, labelFont);
        p.setPen(m_theme.muted);
        const double bytes = double(it.rows) * it.cols * kBytesPerElement;
        QRectF l2 = lr.translated(0, lr.height());
        l2.setHeight(QFontMetricsF(smallFont).height());
        drawFittedText(p, l2, Qt::AlignHCenter | Qt::AlignTop,
                       QStringLiteral("%1×%2").arg(it.rows).arg(it.cols), smallFont);
        drawFittedText(p, l2.translated(0, l2.height()), Qt::AlignHCenter | Qt::AlignTop,
                       it.ghost ? tr("0 B (std: %1)").arg(formatBytes(2 * bytes))
                                : formatBytes(bytes),
                       smallFont);
    }

    // Active tiles in HBM.
    p.setBrush(Qt::NoBrush);
    p.setPen(activePen);
    if (flash) {
        if (info.queryBlock >= 0 && find(Item::Q))
            p.drawRect(rowBand(find(Item::Q)->rect, nq, info.rows));
        if (info.keyBlock >= 0) {
            p.drawRect(rowBand(find(Item::K)->rect, nk, info.cols));
            p.drawRect(rowBand(find(Item::V)->rect, nk, info.cols));
        }
        if (info.queryBlock >= 0 &&
            (info.kind == StepKind::StoreOutput || info.kind == StepKind::LoadRunningState ||
             info.kind == StepKind::StoreRunningState))
            p.drawRect(rowBand(find(Item::O)->rect, nq, info.rows));
        if (info.kind == StepKind::InitialiseOutput) p.drawRect(find(Item::O)->rect);
        if (debugCopy && info.queryBlock >= 0 && info.keyBlock >= 0) {
            const QRectF sRect = find(Item::S)->rect;
            p.drawRect(QRectF(sRect.left() + sRect.width() * info.cols.begin / nk,
                              sRect.top() + sRect.height() * info.rows.begin / nq,
                              sRect.width() * info.cols.size() / nk,
                              sRect.height() * info.rows.size() / nq));
        }
    } else {
        auto outline = [&](Item which) { p.drawRect(find(which)->rect); };
        switch (info.kind) {
        case StepKind::ReadInputs:
            outline(Item::Q);
            outline(Item::K);
            outline(Item::V);
            break;
        case StepKind::WriteScores:
        case StepKind::ReadScores:
            outline(Item::S);
            break;
        case StepKind::WriteWeights:
            outline(Item::P);
            break;
        case StepKind::ReadWeights:
            outline(Item::P);
            outline(Item::V);
            break;
        case StepKind::WriteOutput:
            outline(Item::O);
            break;
        default:
            break;
        }
    }

    // ---- the chip ---------------------------------------------------------------------------
    const double sramPerSm = hw.sharedMemoryPerSmBytes.value;
    const QRectF chipContent =
        drawPanel(p, chipBox, m_theme, m_theme.sram, tr("SRAM · on the chip"),
                  tr("%1 per SM × %2 SMs · %3")
                      .arg(formatBytes(sramPerSm))
                      .arg(int(hw.smCount.value))
                      .arg(formatRate(hw.sramBandwidthBytesPerSecond.value)));
    const QFont barFont = m_theme.font(8);
    const qreal barH = QFontMetricsF(barFont).height() + 8 * sc;
    const QRectF slotsArea = chipContent.adjusted(0, 0, 0, -barH - 6 * sc);
    struct Slot {
        QString name;
        QRectF rect;
        const QImage* image;
        QColor colour;
        bool resident;
        bool produced;
    };
    std::vector<Slot> chipSlots;
    auto slotRect = [&](const QString& name) -> QRectF {
        for (const auto& s : chipSlots)
            if (s.name == name) return s.rect;
        return {};
    };
    std::vector<QRectF> kernels;
    if (flash) {
        const int br =
            std::max(1, info.rows.size() > 0 ? info.rows.size()
                                             : std::min(scene.settings.options.blockRows, nq));
        const int bc =
            std::max(1, info.cols.size() > 0 ? info.cols.size()
                                             : std::min(scene.settings.options.blockCols, nk));
        const QFont slotFont = m_theme.font(7.5, true);
        const qreal lh = QFontMetricsF(slotFont).height() + 2;
        const qreal gap = 10 * sc;
        const qreal minSide = 14 * sc;
        // Two rows: what is loaded (Q_i, K_j, V_j), then what is computed on chip.
        const double widest = std::max(3.0 * d, 2.0 * bc + 2.0 + d);
        const double tallest = double(std::max(br, bc)) + double(br);
        const qreal unit = std::min((slotsArea.width() - 4 * gap) / widest,
                                    (slotsArea.height() - 2 * lh - gap) / tallest);
        auto side = [&](int elements) { return std::max(minSide, elements * unit); };
        qreal y = slotsArea.top();
        auto row = [&](std::vector<std::tuple<QString, int, int, const QImage*, QColor, bool, bool>>
                           cells) {
            qreal x = slotsArea.left(), h = 0;
            for (auto& [name, r, c, img, colour, resident, produced] : cells) {
                QRectF rr(x, y + lh, side(c), side(r));
                chipSlots.push_back({name, rr, img, colour, resident, produced});
                x += rr.width() + gap;
                h = std::max(h, rr.height());
            }
            y += lh + h + gap;
        };
        const StepKind k = info.kind;
        const bool normalised = st.output.size() > 0;
        row({{QStringLiteral("Q_i"), br, d, &m_tiles.q, m_theme.q, st.query.size() > 0, false},
             {QStringLiteral("K_j"), bc, d, &m_tiles.k, m_theme.k, st.key.size() > 0, false},
             {QStringLiteral("V_j"), bc, d, &m_tiles.v, m_theme.v, st.value.size() > 0, false}});
        row({{QStringLiteral("S_ij"), br, bc, &m_tiles.s, m_theme.s, st.scores.size() > 0,
              k == StepKind::ComputeScores},
             {QStringLiteral("P_ij"), br, bc, &m_tiles.p, m_theme.p, st.weights.size() > 0,
              k == StepKind::ComputeWeights},
             {QStringLiteral("m"), br, 1, &m_tiles.m, m_theme.accent,
              st.mOld.size() > 0 || st.mNew.size() > 0, k == StepKind::UpdateMax},
             {QStringLiteral("ℓ"), br, 1, &m_tiles.l, m_theme.accent,
              st.lOld.size() > 0 || st.lNew.size() > 0, k == StepKind::UpdateSum},
             {normalised ? QStringLiteral("O_i = acc/ℓ") : QStringLiteral("acc"), br, d,
              &m_tiles.acc, m_theme.o, st.accOld.size() > 0 || st.accNew.size() > 0,
              k == StepKind::UpdateOutput || k == StepKind::Normalise}});
        for (const Slot& s : chipSlots) {
            const bool arriving =
                moving && isLoad(info.kind) &&
                ((info.kind == StepKind::LoadQuery && s.name == QLatin1String("Q_i")) ||
                 (info.kind == StepKind::LoadKeyValue &&
                  (s.name == QLatin1String("K_j") || s.name == QLatin1String("V_j"))) ||
                 (info.kind == StepKind::LoadRunningState && s.name == QLatin1String("acc")));
            p.setPen(s.resident ? s.colour : m_theme.muted);
            drawFittedText(
                p, QRectF(s.rect.left() - 4, s.rect.top() - lh, s.rect.width() + 40 * sc, lh),
                Qt::AlignLeft | Qt::AlignBottom, s.name, slotFont);
            if (s.resident && !arriving && s.image && !s.image->isNull()) {
                drawMatrixImage(p, s.rect, *s.image);
                p.setPen(QPen(s.colour, 1.5 * sc));
            } else {
                p.setPen(QPen(withAlpha(m_theme.muted, 140), 1.0 * sc, Qt::DashLine));
            }
            p.setBrush(Qt::NoBrush);
            p.drawRect(s.rect);
            if (s.produced) {
                p.setPen(QPen(
                    withAlpha(m_theme.accent, int(255 * (0.35 + 0.65 * (1 - std::abs(2 * t - 1))))),
                    4 * sc));
                p.drawRect(s.rect.adjusted(-3 * sc, -3 * sc, 3 * sc, 3 * sc));
            }
        }
    } else {
        const QStringList names = {tr("kernel 1 · S = scale·QKᵀ"), tr("kernel 2 · P = softmax(S)"),
                                   tr("kernel 3 · O = PV")};
        const qreal textH = QFontMetricsF(m_theme.font(9.5, true)).height();
        const qreal h =
            std::max(textH + 6 * sc, std::min(48 * sc, (slotsArea.height() - 40 * sc) / 3));
        const int active = kernelOf(info.kind);
        for (int i = 0; i < 3; ++i) {
            QRectF r(slotsArea.left(), slotsArea.top() + i * (h + 8 * sc), slotsArea.width(), h);
            kernels.push_back(r);
            p.setPen(QPen(i == active ? m_theme.accent : withAlpha(m_theme.muted, 150),
                          i == active ? 3 * sc : 1 * sc));
            p.setBrush(i == active ? QBrush(withAlpha(m_theme.accent, 40)) : QBrush(Qt::NoBrush));
            p.drawRoundedRect(r, 5 * sc, 5 * sc);
            p.setPen(i == active ? m_theme.text : m_theme.muted);
            drawFittedText(p, r.adjusted(8 * sc, 0, -8 * sc, 0), Qt::AlignVCenter | Qt::AlignLeft,
                           names[i], m_theme.font(9.5, i == active));
        }
        // The note takes what is left above the SRAM bar (it ran into the bar when short).
        const qreal noteTop = slotsArea.top() + 3 * (h + 8 * sc);
        const qreal noteH = std::min(36 * sc, slotsArea.bottom() - noteTop);
        if (noteH >= QFontMetricsF(m_theme.font(6.5)).height()) {
            p.setPen(m_theme.muted);
            drawFittedText(p, QRectF(slotsArea.left(), noteTop, slotsArea.width(), noteH),
                           Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                           tr("each kernel writes its whole result to HBM"), m_theme.font(8.5));
        }
    }

    // SRAM fill against the per-SM budget.
    {
        const QRectF bar(chipContent.left(), chipContent.bottom() - barH, chipContent.width(),
                         barH);
        const double used = double(st.sramElements) * double(kBytesPerElement);
        const double fraction = sramPerSm > 0 ? used / sramPerSm : 0;
        const qreal textH = QFontMetricsF(barFont).height();
        const QRectF track(bar.left(), bar.top() + textH + 1, bar.width(),
                           bar.height() - textH - 1);
        p.setPen(Qt::NoPen);
        p.setBrush(withAlpha(m_theme.muted, 50));
        p.drawRoundedRect(track, 3, 3);
        const bool over = fraction > 1.0;
        p.setBrush(over ? m_theme.bad : m_theme.sram);
        QRectF fill = track;
        fill.setWidth(track.width() * std::min(1.0, fraction));
        if (used > 0) fill.setWidth(std::max(fill.width(), 2.0));
        p.drawRoundedRect(fill, 3, 3);
        p.setPen(over ? m_theme.bad : m_theme.text);
        QString text;
        if (!flash)
            text = tr("SRAM holds only the GEMMs' tiles; S and P live in HBM");
        else if (over)
            text = tr("%1 of %2 per SM: too big, the tile spills to HBM")
                       .arg(formatBytes(used), formatBytes(sramPerSm));
        else
            text = tr("SRAM used %1 of %2 per SM (%3 %)")
                       .arg(formatBytes(used), formatBytes(sramPerSm))
                       .arg(fraction * 100, 0, 'f', fraction < 0.1 ? 2 : 1);
        QFont f = barFont;
        f.setBold(over);
        drawFittedText(p, QRectF(bar.left(), bar.top(), bar.width(), textH),
                       Qt::AlignLeft | Qt::AlignVCenter, text, f);
    }

    // ---- the bus -----------------------------------------------------------------------------
    const Counters& now = st.counters;
    const Counters& before = m_frame->before;
    const bool reading = now.hbmReadBytes > before.hbmReadBytes;
    const bool writing = now.hbmWriteBytes > before.hbmWriteBytes;
    {
        const qreal x0 = bus.left() + 8 * sc, x1 = bus.right() - 8 * sc;
        const qreal yRead = bus.center().y() - 26 * sc, yWrite = bus.center().y() + 26 * sc;
        auto arrow = [&](qreal y, bool rightwards, bool active, const QString& label,
                         const QString& amount) {
            const QColor c = active ? m_theme.accent : withAlpha(m_theme.muted, 140);
            QPen pen(c, active ? 5 * sc : 2 * sc);
            if (active) {
                pen.setStyle(Qt::DashLine);
                pen.setDashOffset(rightwards ? -t * 12 : t * 12);
            }
            p.setPen(pen);
            const qreal a = rightwards ? x0 : x1, b = rightwards ? x1 - 10 * sc : x0 + 10 * sc;
            p.drawLine(QPointF(a, y), QPointF(b, y));
            QPainterPath head;
            const qreal tip = rightwards ? x1 : x0, back = rightwards ? x1 - 14 * sc : x0 + 14 * sc;
            head.moveTo(tip, y);
            head.lineTo(back, y - 8 * sc);
            head.lineTo(back, y + 8 * sc);
            head.closeSubpath();
            p.setPen(Qt::NoPen);
            p.setBrush(c);
            p.drawPath(head);
            p.setPen(active ? m_theme.text : m_theme.muted);
            drawFittedText(p, QRectF(bus.left(), y - 30 * sc, bus.width(), 20 * sc),
                           Qt::AlignCenter, label, m_theme.font(8.5, active));
            if (active)
                drawFittedText(p, QRectF(bus.left(), y + 8 * sc, bus.width(), 20 * sc),
                               Qt::AlignCenter, amount, m_theme.font(8.5, true));
        };
        arrow(
            yRead, true, reading, tr("read"),
            QStringLiteral("+%1").arg(formatBytes(double(now.hbmReadBytes - before.hbmReadBytes))));
        arrow(yWrite, false, writing, tr("write"),
              QStringLiteral("+%1").arg(
                  formatBytes(double(now.hbmWriteBytes - before.hbmWriteBytes))));
    }

    // ---- tiles in flight ---------------------------------------------------------------------
    if (moving) {
        std::vector<Movement> moves;
        auto band = [&](Item which, int total, Range r) {
            const Placed* it = find(which);
            return it ? rowBand(it->rect, total, r) : QRectF();
        };
        // Standard attention streams whole matrices: a small token travels, and S and P fill up in
        // HBM as they are written.
        auto token = [&](const QRectF& r) {
            const qreal side = std::min({r.width(), r.height(), 40 * sc});
            return QRectF(r.left() + 4 * sc, r.center().y() - side / 2, side, side);
        };
        auto imageBand = [](const QImage& img, int total, Range r) {
            const qreal iy = qreal(img.height()) / std::max(1, total);
            return QRectF(0, iy * r.begin, img.width(), iy * r.size());
        };
        switch (info.kind) {
        case StepKind::LoadQuery:
            moves.push_back({band(Item::Q, nq, info.rows), slotRect(QStringLiteral("Q_i")),
                             scene.qImage, imageBand(scene.qImage, nq, info.rows), m_theme.q,
                             QStringLiteral("Q_i")});
            break;
        case StepKind::LoadKeyValue:
            moves.push_back({band(Item::K, nk, info.cols), slotRect(QStringLiteral("K_j")),
                             scene.kImage, imageBand(scene.kImage, nk, info.cols), m_theme.k,
                             QStringLiteral("K_j")});
            moves.push_back({band(Item::V, nk, info.cols), slotRect(QStringLiteral("V_j")),
                             scene.vImage, imageBand(scene.vImage, nk, info.cols), m_theme.v,
                             QStringLiteral("V_j")});
            break;
        case StepKind::LoadRunningState:
            moves.push_back({band(Item::O, nq, info.rows),
                             slotRect(QStringLiteral("acc")),
                             m_tiles.acc,
                             {},
                             m_theme.o,
                             QStringLiteral("O_i, m_i, ℓ_i")});
            break;
        case StepKind::StoreRunningState:
        case StepKind::StoreOutput: {
            QRectF from = slotRect(QStringLiteral("O_i = acc/ℓ"));
            if (from.isNull()) from = slotRect(QStringLiteral("acc"));
            moves.push_back({from,
                             band(Item::O, nq, info.rows),
                             m_tiles.acc,
                             {},
                             m_theme.o,
                             info.kind == StepKind::StoreOutput ? QStringLiteral("O_i")
                                                                : QStringLiteral("O_i, m_i, ℓ_i")});
            break;
        }
        case StepKind::InitialiseOutput:
            moves.push_back({QRectF(chipContent.center(), QSizeF(20 * sc, 20 * sc)),
                             find(Item::O)->rect,
                             {},
                             {},
                             m_theme.o,
                             QStringLiteral("O = 0, m = −∞, ℓ = 0")});
            break;
        case StepKind::ReadInputs:
            for (Item which : {Item::Q, Item::K, Item::V}) {
                const Placed* it = find(which);
                const QImage& img = which == Item::Q   ? scene.qImage
                                    : which == Item::K ? scene.kImage
                                                       : scene.vImage;
                moves.push_back(
                    {token(it->rect), token(kernels[0]), img, {}, it->colour, it->name});
            }
            break;
        case StepKind::ReadScores:
            moves.push_back({token(find(Item::S)->rect),
                             token(kernels[1]),
                             scene.scoresImage,
                             {},
                             m_theme.s,
                             QStringLiteral("S")});
            break;
        case StepKind::ReadWeights:
            moves.push_back({token(find(Item::P)->rect),
                             token(kernels[2]),
                             scene.weightsImage,
                             {},
                             m_theme.p,
                             QStringLiteral("P")});
            moves.push_back({token(find(Item::V)->rect),
                             token(kernels[2]),
                             scene.vImage,
                             {},
                             m_theme.v,
                             QStringLiteral("V")});
            break;
        case StepKind::WriteOutput:
            moves.push_back({token(kernels[2]),
                             token(find(Item::O)->rect),
                             scene.outputImage,
                             {},
                             m_theme.o,
                             QStringLiteral("O")});
            break;
        default:
            break;
        }
        for (const Movement& mv : moves) {
            if (mv.from.isNull() || mv.to.isNull()) continue;
            const QRectF r(mv.from.topLeft() + (mv.to.topLeft() - mv.from.topLeft()) * t,
                           mv.from.size() + (mv.to.size() - mv.from.size()) * t);
            p.setPen(QPen(withAlpha(mv.colour, 110), 2 * sc, Qt::DotLine));
            p.drawLine(mv.from.center(), r.center());
            p.setPen(Qt::NoPen);
            p.setBrush(withAlpha(QColor(0, 0, 0), 60));
            p.drawRect(r.translated(3 * sc, 3 * sc));
            p.setBrush(m_theme.panel);
            p.drawRect(r);
            if (!mv.image.isNull()) drawMatrixImage(p, r, mv.image, mv.source);
            p.setPen(QPen(mv.colour, 2.5 * sc));
            p.setBrush(Qt::NoBrush);
            p.drawRect(r);
            p.setPen(m_theme.text);
            const QFont f = m_theme.font(9, true);
            QRectF lr(r.left(), r.top() - QFontMetricsF(f).height() - 2,
                      std::max(r.width(), 120 * sc), QFontMetricsF(f).height());
            drawFittedText(p, lr, Qt::AlignLeft | Qt::AlignBottom, mv.label, f);
        }
    }

    // ---- counters ----------------------------------------------------------------------------
    {
        auto tickValue = [&](std::uint64_t a, std::uint64_t b) {
            return double(a) + (double(b) - double(a)) * (moving ? t : 1.0);
        };
        const double read = tickValue(before.hbmReadBytes, now.hbmReadBytes);
        const double written = tickValue(before.hbmWriteBytes, now.hbmWriteBytes);
        const double flops = tickValue(before.flops, now.flops);
        p.setPen(Qt::NoPen);
        p.setBrush(withAlpha(m_theme.hbm, m_theme.lecture ? 40 : 18));
        p.drawRoundedRect(strip, 6 * sc, 6 * sc);
        const QRectF inner = strip.adjusted(10 * sc, 4 * sc, -10 * sc, -4 * sc);
        const qreal colW = inner.width() / 4;
        auto counter = [&](int column, const QString& label, const QString& value,
                           const QString& sub, bool active) {
            const QRectF cell(inner.left() + column * colW, inner.top(), colW - 8 * sc,
                              inner.height());
            p.setPen(m_theme.muted);
            drawFittedText(p, QRectF(cell.left(), cell.top(), cell.width(), cell.height() * 0.3),
                           Qt::AlignLeft | Qt::AlignVCenter, label, m_theme.font(8));
            p.setPen(active ? m_theme.accent.darker(m_theme.lecture ? 100 : 130) : m_theme.text);
            drawFittedText(p,
                           QRectF(cell.left(), cell.top() + cell.height() * 0.28, cell.width(),
                                  cell.height() * 0.42),
                           Qt::AlignLeft | Qt::AlignVCenter, value, m_theme.mono(12, true));
            p.setPen(m_theme.muted);
            drawFittedText(p,
                           QRectF(cell.left(), cell.top() + cell.height() * 0.7, cell.width(),
                                  cell.height() * 0.3),
                           Qt::AlignLeft | Qt::AlignVCenter, sub, m_theme.font(7.5));
        };
        const double total = double(scene.totals.hbmBytes());
        counter(0, tr("HBM bytes read"), formatBytes(read),
                tr("of %1 in the whole run").arg(formatBytes(double(scene.totals.hbmReadBytes))),
                reading);
        counter(1, tr("HBM bytes written"), formatBytes(written),
                tr("of %1 in the whole run").arg(formatBytes(double(scene.totals.hbmWriteBytes))),
                writing);
        counter(2, tr("FLOPs"), formatFlops(flops),
                tr("of %1 (standard: %2)")
                    .arg(formatFlops(double(scene.totals.flops)),
                         formatFlops(double(scene.standardTotals.flops))),
                now.flops > before.flops);
        const double hbmTime = (read + written) / hw.hbmBandwidthBytesPerSecond.value;
        const double flopTime = flops / hw.fp32FlopsPerSecond.value;
        counter(3,
                tr("time at %1 / %2")
                    .arg(formatRate(hw.hbmBandwidthBytesPerSecond.value),
                         formatFlopRate(hw.fp32FlopsPerSecond.value)),
                QStringLiteral("%1 / %2").arg(formatSeconds(hbmTime), formatSeconds(flopTime)),
                tr("moving bytes / fp32 arithmetic · run total %1 (standard %2)")
                    .arg(formatBytes(total), formatBytes(double(scene.standardTotals.hbmBytes()))),
                false);
    }
}

} // namespace flashviz::gui
