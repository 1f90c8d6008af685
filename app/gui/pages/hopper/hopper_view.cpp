#include "pages/hopper/hopper_view.h"

#include "style/format.h"

#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

using kernels::HopperActivity;
using kernels::HopperUnit;

namespace {

constexpr qreal kBodyPt = 8.5;
constexpr qreal kLeastPt = 6.5;
constexpr qreal kLegendPt = 8;
constexpr qreal kZoomStep = 1.5;
constexpr int kWrap = Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap;

// The height a word-wrapped text takes at `width`.
qreal wrappedHeight(const QString& text, const QFont& font, qreal width) {
    return QFontMetricsF(font).boundingRect(QRectF(0, 0, width, 1e6), kWrap, text).height();
}

bool fits(const PlacedText& t) {
    const QFontMetricsF fm(t.font);
    if (t.flags & Qt::TextWordWrap) {
        const QRectF used = fm.boundingRect(QRectF(0, 0, t.rect.width(), 1e6), t.flags, t.text);
        return used.width() <= t.rect.width() + 0.5 && used.height() <= t.rect.height() + 0.5;
    }
    return fm.horizontalAdvance(t.text) <= t.rect.width() + 0.5 &&
           fm.height() <= t.rect.height() + 1;
}

// The activities in the order the legend lists them.
constexpr HopperActivity kLegendOrder[] = {
    HopperActivity::LoadQ,         HopperActivity::LoadK,        HopperActivity::LoadV,
    HopperActivity::Scores,        HopperActivity::Values,       HopperActivity::Softmax,
    HopperActivity::StoreO,        HopperActivity::WaitForData,  HopperActivity::WaitForTurn,
    HopperActivity::WaitForValues, HopperActivity::WaitForBuffer};

QString trackToolTip(const HopperTrack& t) {
    switch (t.kind) {
    case HopperTrackKind::Copies:
        return t.buffer < 0
                   ? QObject::tr("Q's copy by the copy engine (TMA), from its issue until the "
                                 "first consumer found it arrived.")
                   : QObject::tr("%1: each track one buffer; K_j and V_j land in buffer j mod "
                                 "the stages. A bar runs from the copy's issue until the first "
                                 "consumer found it arrived.")
                         .arg(t.label);
    case HopperTrackKind::ProducerThread:
        return QObject::tr(
            "The producer's issuing thread waiting for the consumers to hand a buffer back.");
    case HopperTrackKind::Scores:
        return QObject::tr(
            "S_j = Q·K_jᵀ on the tensor cores (wgmma), from its issue to the wait that retired it.");
    case HopperTrackKind::Values:
        return QObject::tr(
            "O += P_j·V_j on the tensor cores (wgmma), from its issue to the wait that retired it.");
    case HopperTrackKind::ConsumerThread:
        return QObject::tr("The warpgroup's threads: the softmax and the store on the CUDA cores, "
                           "and what they waited for (data, their turn, a product to finish).");
    }
    return {};
}

} // namespace

struct HopperView::Placer {
    std::vector<PlacedText> texts;
    bool overflow = false;
    void add(const QRectF& rect, const QString& text, const QFont& font, const QColor& colour,
             int flags = Qt::AlignLeft | Qt::AlignVCenter) {
        texts.push_back({rect, text, font, flags, colour});
        if (!fits(texts.back())) overflow = true;
    }
    // A word-wrapped paragraph from y across `area`'s width; returns the y below it.
    qreal paragraph(const QRectF& area, qreal y, const QString& text, const QFont& font,
                    const QColor& colour) {
        if (text.isEmpty()) return y;
        const qreal h = wrappedHeight(text, font, area.width());
        add(QRectF(area.left(), y, area.width(), h), text, font, colour, kWrap);
        return y + h;
    }
};

HopperView::HopperView(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    auto button = [this](const char* name, const QString& text, const QString& tip,
                         void (HopperView::*slot)()) {
        auto* b = new QToolButton(this);
        b->setObjectName(QLatin1String(name));
        b->setText(text);
        b->setToolTip(tip);
        b->setFocusPolicy(Qt::NoFocus);
        connect(b, &QToolButton::clicked, this, slot);
        return b;
    };
    m_zoomOut =
        button("hopperZoomOut", QStringLiteral("−"), tr("Zoom out (−)"), &HopperView::zoomOut);
    m_zoomIn = button("hopperZoomIn", QStringLiteral("+"),
                      tr("Zoom in (+; the wheel zooms about the pointer)"), &HopperView::zoomIn);
    m_whole = button("hopperWholeBlock", tr("Whole block"),
                     tr("The whole block (0, or a double click)"), &HopperView::showWholeBlock);
}

// At the right of B's title line, with a trace.
void HopperView::placeZoomButtons() {
    const QRectF& b = m_layout.timeline;
    const qreal sc = m_theme.scale, pad = 8 * sc;
    qreal right = b.right() - pad;
    const int h = int(QFontMetricsF(m_theme.font(10.5, true)).height() + 4);
    for (QToolButton* button : {m_whole, m_zoomIn, m_zoomOut}) {
        const int w = std::max(button->sizeHint().width(), h);
        button->setGeometry(int(right) - w, int(b.top() + pad * 0.7) - 2, w, h);
        button->setVisible(hasTrace() && b.width() > 300);
        right -= w + 3;
    }
    const QFont font = m_theme.font(kLegendPt);
    const qreal w =
        QFontMetricsF(font).horizontalAdvance(
            tr("%1 – %2 of %3")
                .arg(formatNanoseconds(8888), formatNanoseconds(8888), formatNanoseconds(8888))) +
        4;
    m_layout.windowLabel = QRectF(right - 6 * sc - w, b.top() + pad * 0.7, w, h - 4);
}

QString HopperView::windowText() const {
    if (!hasTrace()) return {};
    return tr("%1 – %2 of %3")
        .arg(formatNanoseconds(m_window.startNs), formatNanoseconds(m_window.endNs),
             formatNanoseconds(m_content.timeline.durationNs));
}

void HopperView::setContent(HopperViewContent content) {
    m_content = std::move(content);
    m_window = hopperWholeBlock(m_content.timeline);
    m_hovered = -1;
    m_dragging = m_choosingRange = false;
    layOut();
    update();
    emit timeWindowChanged();
}

void HopperView::setTimeWindow(const HopperTimeWindow& window) {
    const HopperTimeline& t = m_content.timeline;
    const double span =
        std::clamp(window.spanNs(), hopperMinimumSpanNs(t), hopperWholeBlock(t).spanNs());
    const HopperTimeWindow kept = hopperPanned({window.startNs, window.startNs + span}, 0, t);
    if (kept == m_window) return;
    m_window = kept;
    update();
    emit timeWindowChanged();
}

void HopperView::zoomIn() {
    zoomAbout(kZoomStep, m_layout.chart.center().x());
}

void HopperView::zoomOut() {
    zoomAbout(1 / kZoomStep, m_layout.chart.center().x());
}

void HopperView::showWholeBlock() {
    setTimeWindow(hopperWholeBlock(m_content.timeline));
}

void HopperView::zoomAbout(double factor, qreal x) {
    if (!hasTrace()) return;
    setTimeWindow(hopperZoomed(m_window, factor, hopperNsAt(x, m_window, m_layout.chart),
                               m_content.timeline));
}

// ---- layout ----

void HopperView::resizeEvent(QResizeEvent*) {
    layOut();
}

// A and C side by side, as tall as their texts need at the largest size from 8.5 pt down that
// fits in 40 % of the height (at the smallest, as tall as they need, up to 55 %); B below them,
// the rest.
void HopperView::layOut() {
    m_layout = {};
    const qreal sc = m_theme.scale;
    const QRectF area = QRectF(rect()).adjusted(8 * sc, 6 * sc, -8 * sc, -8 * sc);
    const qreal gap = 8 * sc;
    const qreal leftW = (area.width() - gap) * 0.5;
    const qreal maxTop = std::max<qreal>(area.height() * 0.4, 60 * sc);
    const QRectF a(area.left(), area.top(), leftW, maxTop);
    const QRectF c(a.right() + gap, area.top(), area.width() - leftW - gap, maxTop);
    const QRectF contentA = panelContentRect(a, m_theme, true),
                 contentC = panelContentRect(c, m_theme, true);
    const qreal chrome = a.height() - contentA.height();
    Placer placerA, placerC;
    qreal topH = maxTop;
    for (qreal pt = kBodyPt; pt >= kLeastPt - 1e-9; pt -= 0.5) {
        placerA = {};
        placerC = {};
        const qreal need =
            std::max(layOutConfig(contentA, pt, placerA), layOutFindings(contentC, pt, placerC)) +
            chrome;
        topH = std::min(need, std::max<qreal>(maxTop, area.height() * 0.55));
        if (need <= maxTop && !placerA.overflow && !placerC.overflow) break;
    }
    m_layout.config = QRectF(a.topLeft(), QSizeF(a.width(), topH));
    m_layout.findings = QRectF(c.topLeft(), QSizeF(c.width(), topH));
    for (Placer* placer : {&placerA, &placerC})
        m_layout.texts.insert(m_layout.texts.end(), placer->texts.begin(), placer->texts.end());
    m_layout.timeline =
        QRectF(area.left(), area.top() + topH + gap, area.width(), area.height() - topH - gap);
    layOutTimeline(panelContentRect(m_layout.timeline, m_theme, true));
    placeZoomButtons();
}

// The warpgroups in a row, the two paths, shared memory as a bar to scale, its sizes, the
// schedule. Returns the height used.
qreal HopperView::layOutConfig(const QRectF& c, qreal pt, Placer& out) {
    const HopperBlockPicture& pic = m_content.picture;
    const qreal sc = m_theme.scale;
    const QFont font = m_theme.font(pt), bold = m_theme.font(pt, true);
    const qreal lineH = QFontMetricsF(font).height();
    const int n = int(pic.warpgroups.size());
    const qreal gapX = 6 * sc, pad = 4 * sc;
    const qreal boxW = (c.width() - gapX * (n - 1)) / std::max(n, 1);
    const qreal boxH = 4 * lineH + 2 * pad;
    m_layout.warpgroups.clear();
    const QFontMetricsF fm(font);
    // The first form that fits the box's width (the last one when none does).
    auto fitting = [&](const QStringList& forms, qreal width) {
        for (const QString& form : forms)
            if (fm.horizontalAdvance(form) <= width) return form;
        return forms.back();
    };
    for (int i = 0; i < n; ++i) {
        const HopperWarpgroupBox& w = pic.warpgroups[std::size_t(i)];
        const QRectF box(c.left() + i * (boxW + gapX), c.top(), boxW, boxH);
        m_layout.warpgroups.push_back(box);
        const QRectF line(box.left() + pad, box.top() + pad, box.width() - 2 * pad, lineH);
        out.add(line, w.title, bold, m_theme.text);
        out.add(line.translated(0, lineH), tr("%1 threads").arg(w.threads), font, m_theme.text);
        out.add(line.translated(0, 2 * lineH),
                fitting({tr("%1 registers each").arg(w.registers),
                         tr("%1 registers").arg(w.registers), tr("%1 regs").arg(w.registers)},
                        line.width()),
                font, m_theme.text);
        out.add(line.translated(0, 3 * lineH),
                w.firstRow >= 0
                    ? tr("rows %1–%2").arg(w.firstRow).arg(w.lastRow)
                    : fitting({w.role, tr("issues TMA copies"), tr("TMA copies")}, line.width()),
                font, m_theme.muted);
    }
    // The copy engine's path down from the producer into shared memory; wgmma's up from it to
    // the consumers (joined by a line under their boxes), each arrow with its words beside it.
    qreal y = c.top() + boxH;
    const qreal arrowH = lineH * 1.3;
    const QRectF producer = m_layout.warpgroups.empty() ? c : m_layout.warpgroups.front();
    const QRectF consumers =
        n > 1 ? m_layout.warpgroups[1].united(m_layout.warpgroups.back()) : producer;
    const qreal labelTop = y + (arrowH - lineH) / 2;
    const QString copy = tr("TMA: HBM → shared memory"),
                  wgmma = tr("wgmma: shared memory → tensor cores");
    const qreal copyX = producer.left() + 10 * sc;
    const qreal copyW = fm.horizontalAdvance(copy) + 2;
    out.add(QRectF(copyX + 6 * sc, labelTop, copyW, lineH), copy, font, m_theme.text);
    const qreal wgmmaX = std::max(consumers.left() + 10 * sc, copyX + 6 * sc + copyW + 14 * sc);
    out.add(QRectF(wgmmaX + 6 * sc, labelTop,
                   std::min(fm.horizontalAdvance(wgmma) + 2, c.right() - wgmmaX - 6 * sc), lineH),
            wgmma, font, m_theme.text);
    m_layout.copyArrow = QRectF(copyX, y, 0, arrowH);
    m_layout.wgmmaArrow = QRectF(wgmmaX, y, consumers.right() - wgmmaX, arrowH);
    y += arrowH;
    // Shared memory to scale: the parts, then the rest of the budget free.
    const qreal barH = lineH * 1.4;
    m_layout.sharedBar = QRectF(c.left(), y, c.width(), barH);
    m_layout.sharedParts.clear();
    qreal x = c.left();
    for (const HopperSharedPart& part : pic.shared) {
        const qreal w = pic.budgetBytes > 0 ? c.width() * part.bytes / pic.budgetBytes : 0;
        m_layout.sharedParts.push_back(QRectF(x, y, w, barH));
        x += w;
    }
    for (std::size_t i = 0; i < pic.shared.size(); ++i) {
        const QRectF r = m_layout.sharedParts[i].adjusted(2, 0, -2, 0);
        const QString sized =
            pic.shared[i].name + QLatin1Char(' ') + formatBytes(pic.shared[i].bytes);
        const QString label = fm.horizontalAdvance(sized) <= r.width() ? sized
                              : fm.horizontalAdvance(pic.shared[i].name) <= r.width() &&
                                      pic.shared[i].buffer <= HopperBuffer::V
                                  ? pic.shared[i].name
                                  : QString();
        if (!label.isEmpty())
            out.add(r, label, font, textOn(partColour(pic.shared[i].buffer)), Qt::AlignCenter);
    }
    const QString free =
        tr("free %1").arg(formatBytes(std::max(0.0, pic.budgetBytes - pic.sharedBytes)));
    const QRectF freeRect(x + 4 * sc, y, c.right() - x - 8 * sc, barH);
    if (fm.horizontalAdvance(free) <= freeRect.width())
        out.add(freeRect, free, font, m_theme.muted, Qt::AlignRight | Qt::AlignVCenter);
    y += barH + 3 * sc;
    y = out.paragraph(c, y, pic.sharedLine, font, m_theme.muted) + 3 * sc;
    y = out.paragraph(c, y, pic.schedule, font, m_theme.text);
    return y - c.top();
}

// The headline, a table of the warpgroups' totals, where and how it was recorded.
qreal HopperView::layOutFindings(const QRectF& c, qreal pt, Placer& out) {
    const QFont font = m_theme.font(pt), bold = m_theme.font(pt, true);
    const qreal sc = m_theme.scale;
    if (!m_content.findings)
        return out.paragraph(c, c.top(),
                             tr("The numbers of a trace of this variant appear here: how "
                                "long one block ran, how long its products were outstanding, "
                                "how much of the softmax ran beside them."),
                             font, m_theme.muted) -
               c.top();
    const HopperFindings& f = *m_content.findings;
    qreal y = out.paragraph(c, c.top(), f.headline, bold, m_theme.text) + 4 * sc;
    const QFontMetricsF fm(font);
    const qreal rowH = fm.height() * 1.05;
    const QStringList heads{QString(), tr("copies"), tr("products out"), tr("CUDA cores"),
                            tr("waiting")};
    std::vector<qreal> needs;
    for (int col = 0; col < heads.size(); ++col) {
        qreal need = fm.horizontalAdvance(heads[col]);
        for (const HopperWarpgroupRow& r : f.rows) {
            const QString cells[] = {r.name, r.copies, r.outstanding, r.cudaCores, r.waiting};
            need = std::max(need, fm.horizontalAdvance(cells[col]));
        }
        needs.push_back(need + 8 * sc);
    }
    const std::vector<qreal> widths = fitColumnWidths({1.3, 1, 1, 1, 1}, needs, c.width());
    m_layout.table = QRectF(c.left(), y, c.width(), rowH * qreal(f.rows.size() + 1));
    for (std::size_t r = 0; r <= f.rows.size(); ++r) {
        qreal x = c.left();
        for (int col = 0; col < heads.size(); ++col) {
            QString text = heads[col];
            if (r > 0) {
                const HopperWarpgroupRow& row = f.rows[r - 1];
                const QString cells[] = {row.name, row.copies, row.outstanding, row.cudaCores,
                                         row.waiting};
                text = cells[col];
            }
            const QRectF cell(x, y, widths[std::size_t(col)] - 4 * sc, rowH);
            if (!text.isEmpty())
                out.add(cell, text, r == 0 || col == 0 ? (r == 0 ? font : bold) : font,
                        r == 0 ? m_theme.muted : m_theme.text,
                        (col == 0 ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
            x += widths[std::size_t(col)];
        }
        y += rowH;
    }
    y = out.paragraph(c, y + 4 * sc, f.recordedLine, font, m_theme.muted);
    y = out.paragraph(c, y, f.timingLine, font, m_theme.muted);
    return y - c.top();
}

// The legend across the top, the lanes' labels on the left, the chart, the axis and the note.
void HopperView::layOutTimeline(const QRectF& c) {
    const qreal sc = m_theme.scale;
    const QFont small = m_theme.font(kLegendPt), bold = m_theme.font(kLegendPt, true);
    const qreal lineH = QFontMetricsF(small).height();
    qreal top = c.top() + layOutLegend(c, small) + 4 * sc;
    qreal bottom = c.bottom();
    if (m_content.findings) {
        const QFont note = m_theme.font(7.5);
        const qreal h = wrappedHeight(m_content.findings->note, note, c.width());
        const QRectF r(c.left(), bottom - h, c.width(), h);
        m_layout.texts.push_back({r, m_content.findings->note, note, kWrap, m_theme.muted});
        bottom = r.top() - 2 * sc;
    }
    const qreal axisH = lineH + 6 * sc;
    bottom -= axisH;
    // The label column: a lane's title and subtitle on the left, its tracks' names on the right.
    const QFontMetricsF fmBold(bold), fm(small);
    qreal titles = 0, groups = 0;
    for (const HopperLane& lane : m_content.timeline.lanes)
        titles = std::max(
            {titles, fmBold.horizontalAdvance(lane.title), fm.horizontalAdvance(lane.subtitle)});
    for (const HopperTrack& track : m_content.timeline.tracks)
        groups = std::max(groups, fm.horizontalAdvance(track.label));
    const qreal labelW = std::min(titles + groups + 14 * sc, c.width() * 0.32);
    m_layout.labels = QRectF(c.left(), top, labelW, std::max<qreal>(0, bottom - top));
    m_layout.chart =
        QRectF(c.left() + labelW + 6 * sc, top, std::max<qreal>(10, c.width() - labelW - 6 * sc),
               m_layout.labels.height());
    m_layout.axis = QRectF(m_layout.chart.left(), bottom, m_layout.chart.width(), axisH);
    m_layout.tracks = hopperTrackRects(m_content.timeline, m_layout.chart, 5 * sc);
    qreal unitH = 0;
    for (std::size_t i = 0; i < m_layout.tracks.size(); ++i)
        if (m_content.timeline.tracks[i].weight >= 1) unitH = m_layout.tracks[i].height();
    m_layout.barFontPt = kLegendPt;
    while (m_layout.barFontPt > 5.5 &&
           QFontMetricsF(m_theme.font(m_layout.barFontPt)).height() > unitH * 0.8)
        m_layout.barFontPt -= 0.5;
    layOutLabels(bold, small);
    if (!m_content.findings) {
        const QRectF box = m_layout.chart.adjusted(m_layout.chart.width() * 0.08, 0,
                                                   -m_layout.chart.width() * 0.08, 0);
        const QFont font = m_theme.font(9);
        const qreal h = wrappedHeight(m_content.noTrace, font, box.width() - 20 * sc);
        m_layout.message =
            QRectF(box.left(), box.center().y() - h / 2 - 10 * sc, box.width(), h + 20 * sc);
        m_layout.texts.push_back({m_layout.message.adjusted(10 * sc, 10 * sc, -10 * sc, -10 * sc),
                                  m_content.noTrace, font, kWrap, m_theme.text});
    }
}

// Rows of swatches and names; returns their height.
qreal HopperView::layOutLegend(const QRectF& area, const QFont& font) {
    std::vector<bool> shown(std::size_t(HopperActivity::Count), !m_content.findings.has_value());
    for (const HopperBar& b : m_content.timeline.bars)
        shown[std::size_t(b.activity)] = true;
    const QFontMetricsF fm(font);
    const qreal sc = m_theme.scale, lineH = fm.height(), sw = lineH * 0.9;
    qreal x = area.left(), y = area.top();
    for (const HopperActivity a : kLegendOrder) {
        if (!shown[std::size_t(a)]) continue;
        const QString name = hopperActivityName(a);
        const qreal w = sw + 4 * sc + fm.horizontalAdvance(name) + 2;
        if (x > area.left() && x + w > area.right()) {
            x = area.left();
            y += lineH + 2 * sc;
        }
        m_layout.legend.push_back({a, QRectF(x, y + (lineH - sw) / 2, sw, sw)});
        m_layout.texts.push_back({QRectF(x + sw + 4 * sc, y, w - sw - 4 * sc, lineH), name, font,
                                  Qt::AlignLeft | Qt::AlignVCenter, m_theme.text});
        x += w + 9 * sc;
    }
    return m_layout.legend.empty() ? 0 : y + lineH - area.top();
}

// Each lane's title and subtitle at its top left; each run of tracks of one name, its name at
// the right, in the largest size up to the legend's that its height holds (none below 6 pt).
void HopperView::layOutLabels(const QFont& bold, const QFont& small) {
    const HopperTimeline& t = m_content.timeline;
    const QRectF& col = m_layout.labels;
    const qreal sc = m_theme.scale;
    for (const HopperLane& lane : t.lanes) {
        if (lane.trackCount == 0) continue;
        const QRectF first = m_layout.tracks[std::size_t(lane.firstTrack)];
        const QRectF last = m_layout.tracks[std::size_t(lane.firstTrack + lane.trackCount - 1)];
        const QRectF span(col.left(), first.top(), col.width(), last.bottom() - first.top());
        const qreal titleH = QFontMetricsF(bold).height(), subH = QFontMetricsF(small).height();
        if (span.height() >= titleH)
            m_layout.texts.push_back({QRectF(span.left(), span.top(), span.width(), titleH),
                                      lane.title, bold, Qt::AlignLeft | Qt::AlignVCenter,
                                      m_theme.text});
        if (span.height() >= titleH + subH)
            m_layout.texts.push_back({QRectF(span.left(), span.top() + titleH, span.width(), subH),
                                      lane.subtitle, small, Qt::AlignLeft | Qt::AlignVCenter,
                                      m_theme.muted});
        int i = lane.firstTrack;
        while (i < lane.firstTrack + lane.trackCount) {
            int j = i;
            while (j + 1 < lane.firstTrack + lane.trackCount &&
                   t.tracks[std::size_t(j + 1)].label == t.tracks[std::size_t(i)].label)
                ++j;
            const QRectF group(
                col.left(), m_layout.tracks[std::size_t(i)].top(), col.width() - 2 * sc,
                m_layout.tracks[std::size_t(j)].bottom() - m_layout.tracks[std::size_t(i)].top());
            QFont font = small;
            while (font.pointSizeF() > 6 && QFontMetricsF(font).height() > group.height() + 1)
                font.setPointSizeF(font.pointSizeF() - 0.5);
            if (QFontMetricsF(font).height() <= group.height() + 1)
                m_layout.texts.push_back({group, t.tracks[std::size_t(i)].label, font,
                                          Qt::AlignRight | Qt::AlignVCenter, m_theme.muted});
            i = j + 1;
        }
    }
}

std::vector<PlacedText> HopperView::axisTexts() const {
    std::vector<PlacedText> out;
    if (!hasTrace() || m_layout.chart.width() < 20) return out;
    const QFont font = m_theme.font(kLegendPt);
    const QFontMetricsF fm(font);
    const qreal labelW =
        fm.horizontalAdvance(formatNanoseconds(m_window.endNs)) + 16 * m_theme.scale;
    const auto ticks = hopperTicks(
        m_window, std::max(2, int(m_layout.chart.width() / std::max<qreal>(labelW, 1))));
    const QRectF& axis = m_layout.axis;
    for (const double ns : ticks) {
        const QString text = formatNanoseconds(ns);
        const qreal w = fm.horizontalAdvance(text) + 2;
        const qreal x = std::clamp(hopperX(ns, m_window, m_layout.chart) - w / 2, axis.left() - 20,
                                   axis.right() - w);
        out.push_back({QRectF(x, axis.top() + 3 * m_theme.scale, w, fm.height()), text, font,
                       Qt::AlignCenter, m_theme.muted});
    }
    if (!m_zoomIn->isHidden())
        out.push_back({m_layout.windowLabel, windowText(), font, Qt::AlignRight | Qt::AlignVCenter,
                       m_theme.muted});
    return out;
}

std::vector<PlacedText> HopperView::placedTexts() const {
    std::vector<PlacedText> all = m_layout.texts;
    const std::vector<PlacedText> axis = axisTexts();
    all.insert(all.end(), axis.begin(), axis.end());
    return all;
}

QRectF HopperView::trackRect(int track) const {
    return track >= 0 && std::size_t(track) < m_layout.tracks.size()
               ? m_layout.tracks[std::size_t(track)]
               : QRectF();
}

QRectF HopperView::barRect(std::size_t index) const {
    if (index >= m_content.timeline.bars.size()) return {};
    const HopperBar& bar = m_content.timeline.bars[index];
    return hopperBarRect(bar, trackRect(bar.track), m_window, m_layout.chart);
}

QRectF HopperView::sharedPartRect(std::size_t part) const {
    return part < m_layout.sharedParts.size() ? m_layout.sharedParts[part] : QRectF();
}

// Per activity, which of its bars' label forms is shown: the longest that at least half of its
// bars in view have room for, so that neighbours read alike ("sm3", "sm4", not "softmax 3",
// "4"); a bar too narrow for it goes without.
std::vector<int> HopperView::labelForms() const {
    const QFontMetricsF fm(m_theme.font(m_layout.barFontPt));
    std::vector<int> forms(std::size_t(HopperActivity::Count), -1);
    for (const HopperActivity a : kLegendOrder) {
        std::vector<int> fitting(4, 0);
        int shown = 0;
        for (std::size_t i = 0; i < m_content.timeline.bars.size(); ++i) {
            const HopperBar& bar = m_content.timeline.bars[i];
            const QRectF r = barRect(i);
            if (bar.activity != a || r.isEmpty()) continue;
            ++shown;
            for (int f = 0; f < int(bar.labels.size()) && f < 4; ++f)
                if (fm.horizontalAdvance(bar.labels[f]) + 4 <= r.width() &&
                    fm.height() <= r.height() + 1)
                    ++fitting[std::size_t(f)];
        }
        for (int f = 0; f < 4 && shown > 0; ++f)
            if (fitting[std::size_t(f)] * 2 >= shown) {
                forms[std::size_t(a)] = f;
                break;
            }
    }
    return forms;
}

QString HopperView::barLabel(std::size_t index, const std::vector<int>& forms) const {
    const QRectF r = barRect(index);
    if (r.isEmpty()) return {};
    const HopperBar& bar = m_content.timeline.bars[index];
    const int form = forms[std::size_t(bar.activity)];
    if (form < 0 || form >= int(bar.labels.size())) return {};
    const QFontMetricsF fm(m_theme.font(m_layout.barFontPt));
    const QString& label = bar.labels[form];
    return fm.horizontalAdvance(label) + 4 <= r.width() && fm.height() <= r.height() + 1
               ? label
               : QString();
}

QString HopperView::barLabel(std::size_t index) const {
    return index < m_content.timeline.bars.size() ? barLabel(index, labelForms()) : QString();
}

// ---- painting ----

QColor HopperView::colourOf(HopperActivity a) const {
    switch (a) {
    case HopperActivity::LoadQ:
        return m_theme.q;
    case HopperActivity::LoadK:
        return m_theme.k;
    case HopperActivity::LoadV:
        return m_theme.v;
    case HopperActivity::Scores:
        return m_theme.s;
    case HopperActivity::Values:
        return m_theme.o;
    case HopperActivity::Softmax:
        return QColor(0xe0, 0xb0, 0x10);
    case HopperActivity::StoreO:
        return m_theme.hbm;
    case HopperActivity::WaitForTurn:
        return QColor(0x2f, 0x6f, 0xd6);
    case HopperActivity::WaitForValues:
        return m_theme.o;
    default:
        return QColor(0x7a, 0x84, 0x94); // waiting for data or a buffer
    }
}

// Work as solid colour; a wait as a pale hatch, its pattern telling which.
QBrush HopperView::brushOf(HopperActivity a) const {
    switch (a) {
    case HopperActivity::WaitForTurn:
        return QBrush(colourOf(a), Qt::Dense6Pattern);
    case HopperActivity::WaitForValues:
        return QBrush(colourOf(a), Qt::FDiagPattern);
    case HopperActivity::WaitForData:
    case HopperActivity::WaitForBuffer:
        return QBrush(colourOf(a), Qt::BDiagPattern);
    default:
        return QBrush(colourOf(a));
    }
}

QColor HopperView::partColour(HopperBuffer buffer) const {
    switch (buffer) {
    case HopperBuffer::Q:
        return m_theme.q;
    case HopperBuffer::K:
        return m_theme.k;
    case HopperBuffer::V:
        return m_theme.v;
    default:
        return m_theme.muted;
    }
}

void HopperView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    drawConfig(p);
    drawFindings(p);
    drawTimeline(p);
    for (const PlacedText& t : m_layout.texts)
        drawPlacedText(p, t);
    for (const PlacedText& t : axisTexts())
        drawPlacedText(p, t);
}

void HopperView::drawConfig(QPainter& p) const {
    const HopperBlockPicture& pic = m_content.picture;
    drawPanel(p, m_layout.config, m_theme, m_theme.sram,
              tr("A · The block as the kernel configures it"), pic.kernel);
    for (std::size_t i = 0; i < m_layout.warpgroups.size(); ++i) {
        const QColor c = i == 0 ? m_theme.hbm : m_theme.sram;
        p.setPen(QPen(c, 1.2 * m_theme.scale));
        p.setBrush(withAlpha(c, 28));
        p.drawRoundedRect(m_layout.warpgroups[i], 4 * m_theme.scale, 4 * m_theme.scale);
    }
    drawArrows(p);
    drawShared(p);
}

// A down arrow from the producer into shared memory; up arrows from it to each consumer.
void HopperView::drawArrows(QPainter& p) const {
    const qreal sc = m_theme.scale;
    auto arrow = [&](QPointF from, QPointF to, const QColor& c) {
        p.setPen(QPen(c, 1.6 * sc));
        p.drawLine(from, to);
        const qreal dir = to.y() > from.y() ? 1 : -1, head = 4 * sc;
        QPainterPath tip;
        tip.moveTo(to);
        tip.lineTo(to.x() - head, to.y() - dir * head * 1.4);
        tip.lineTo(to.x() + head, to.y() - dir * head * 1.4);
        tip.closeSubpath();
        p.fillPath(tip, c);
    };
    const QRectF& a = m_layout.copyArrow;
    const QRectF& b = m_layout.wgmmaArrow;
    if (a.height() <= 0) return;
    arrow({a.left(), a.top()}, {a.left(), a.bottom()}, m_theme.k);
    if (m_layout.warpgroups.size() < 2) return;
    const qreal joinY = b.top() + 2 * sc;
    p.setPen(QPen(m_theme.s, 1.6 * sc));
    p.drawLine(QPointF(m_layout.warpgroups[1].left() + 6 * sc, joinY),
               QPointF(m_layout.warpgroups.back().right() - 6 * sc, joinY));
    for (std::size_t i = 1; i < m_layout.warpgroups.size(); ++i) {
        const qreal x = m_layout.warpgroups[i].center().x();
        p.drawLine(QPointF(x, joinY), QPointF(x, m_layout.warpgroups[i].bottom()));
    }
    arrow({b.left(), b.bottom()}, {b.left(), joinY}, m_theme.s);
}

void HopperView::drawShared(QPainter& p) const {
    const HopperBlockPicture& pic = m_content.picture;
    const QRectF& bar = m_layout.sharedBar;
    if (bar.isEmpty()) return;
    p.setPen(Qt::NoPen);
    p.fillRect(bar, withAlpha(m_theme.muted, 25));
    for (std::size_t i = 0; i < m_layout.sharedParts.size() && i < pic.shared.size(); ++i) {
        p.fillRect(m_layout.sharedParts[i], withAlpha(partColour(pic.shared[i].buffer), 210));
        p.setPen(QPen(m_theme.panel, 1));
        p.drawLine(m_layout.sharedParts[i].topRight(), m_layout.sharedParts[i].bottomRight());
    }
    p.setPen(QPen(m_theme.border, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(bar);
}

void HopperView::drawFindings(QPainter& p) const {
    drawPanel(p, m_layout.findings, m_theme, m_theme.o, tr("C · What the trace says"),
              m_content.findings ? m_content.origin : tr("no trace of this variant"));
    if (m_layout.table.isEmpty()) return;
    p.setPen(QPen(withAlpha(m_theme.border, 200), 1));
    const qreal rowH = m_layout.table.height() / qreal(m_content.findings->rows.size() + 1);
    p.drawLine(QPointF(m_layout.table.left(), m_layout.table.top() + rowH),
               QPointF(m_layout.table.right(), m_layout.table.top() + rowH));
}

void HopperView::drawTimeline(QPainter& p) const {
    const QString subtitle =
        m_content.findings
            ? m_content.findings->blockLine
            : tr("the lanes of %1, waiting for a trace").arg(m_content.picture.kernel);
    drawPanel(p, m_layout.timeline, m_theme, m_theme.q,
              tr("B · One block's timeline: who is busy when"), subtitle);
    drawLegend(p);
    drawTracks(p);
    drawBars(p);
    drawHover(p);
    drawAxis(p);
    if (!m_layout.message.isEmpty()) {
        p.setPen(QPen(m_theme.border, 1));
        p.setBrush(withAlpha(m_theme.panel, 235));
        p.drawRoundedRect(m_layout.message, 6 * m_theme.scale, 6 * m_theme.scale);
    }
}

void HopperView::drawLegend(QPainter& p) const {
    for (const LegendEntry& e : m_layout.legend) {
        if (kernels::unitOf(e.activity) == HopperUnit::Waiting)
            p.fillRect(e.swatch, withAlpha(colourOf(e.activity), 50));
        p.fillRect(e.swatch, brushOf(e.activity));
        p.setPen(QPen(withAlpha(colourOf(e.activity), 200), 1));
        p.setBrush(Qt::NoBrush);
        p.drawRect(e.swatch);
    }
}

// Each lane on a faint band, the ticks' lines across the chart.
void HopperView::drawTracks(QPainter& p) const {
    const HopperTimeline& t = m_content.timeline;
    for (std::size_t l = 0; l < t.lanes.size(); ++l) {
        const HopperLane& lane = t.lanes[l];
        if (lane.trackCount == 0) continue;
        const QRectF first = m_layout.tracks[std::size_t(lane.firstTrack)];
        const QRectF last = m_layout.tracks[std::size_t(lane.firstTrack + lane.trackCount - 1)];
        const QRectF band(m_layout.labels.left(), first.top(),
                          m_layout.chart.right() - m_layout.labels.left(),
                          last.bottom() - first.top());
        p.fillRect(band, withAlpha(l == 0 ? m_theme.hbm : m_theme.sram, l % 2 ? 14 : 24));
    }
    p.setPen(QPen(withAlpha(m_theme.border, 160), 1));
    for (std::size_t i = 0; i < m_layout.tracks.size(); ++i)
        if (i + 1 < m_layout.tracks.size() && t.tracks[i].warpgroup == t.tracks[i + 1].warpgroup)
            p.drawLine(QPointF(m_layout.chart.left(), m_layout.tracks[i].bottom()),
                       QPointF(m_layout.chart.right(), m_layout.tracks[i].bottom()));
    if (!hasTrace()) return;
    p.setPen(QPen(withAlpha(m_theme.border, 200), 1, Qt::DotLine));
    for (const double ns : hopperTicks(m_window, std::max(2, int(m_layout.chart.width() / 90))))
        p.drawLine(QPointF(hopperX(ns, m_window, m_layout.chart), m_layout.chart.top()),
                   QPointF(hopperX(ns, m_window, m_layout.chart), m_layout.chart.bottom()));
}

void HopperView::drawBars(QPainter& p) const {
    p.save();
    p.setClipRect(m_layout.chart.adjusted(0, -1, 0, 1));
    const std::vector<int> forms = labelForms();
    for (std::size_t i = 0; i < m_content.timeline.bars.size(); ++i)
        drawBar(p, i, forms);
    p.restore();
}

void HopperView::drawBar(QPainter& p, std::size_t index, const std::vector<int>& forms) const {
    const QRectF r = barRect(index);
    if (r.isEmpty()) return;
    const HopperActivity a = m_content.timeline.bars[index].activity;
    const QColor c = colourOf(a);
    const HopperUnit unit = kernels::unitOf(a);
    if (unit == HopperUnit::Waiting) {
        p.fillRect(r, withAlpha(c, 45));
        p.fillRect(r, brushOf(a));
        return;
    }
    p.fillRect(r, unit == HopperUnit::CopyEngine ? withAlpha(c, 185) : c);
    if (r.width() >= 4) {
        p.setPen(QPen(m_theme.panel, 1));
        p.drawLine(r.topLeft(), r.bottomLeft());
    }
    const QString label = barLabel(index, forms);
    if (label.isEmpty()) return;
    p.setPen(textOn(c));
    p.setFont(m_theme.font(m_layout.barFontPt));
    p.drawText(r, Qt::AlignCenter, label);
}

// The hovered bar outlined, its time marked across every lane: what ran beside it. A range
// being chosen, shaded.
void HopperView::drawHover(QPainter& p) const {
    const QRectF& chart = m_layout.chart;
    if (m_choosingRange) {
        const qreal a = std::clamp(std::min(m_dragFrom, m_dragTo), chart.left(), chart.right());
        const qreal b = std::clamp(std::max(m_dragFrom, m_dragTo), chart.left(), chart.right());
        p.fillRect(QRectF(a, chart.top(), b - a, chart.height()), withAlpha(m_theme.accent, 60));
    }
    if (m_hovered < 0) return;
    const QRectF r = barRect(std::size_t(m_hovered));
    if (r.isEmpty()) return;
    p.fillRect(QRectF(r.left(), chart.top(), r.width(), chart.height()),
               withAlpha(m_theme.accent, 38));
    p.setPen(QPen(m_theme.text, 1.5 * m_theme.scale));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r.adjusted(-1, -1, 1, 1));
}

void HopperView::drawAxis(QPainter& p) const {
    if (!hasTrace()) return;
    p.setPen(QPen(m_theme.border, 1));
    const QRectF& a = m_layout.axis;
    p.drawLine(a.topLeft(), a.topRight());
    for (const double ns : hopperTicks(m_window, std::max(2, int(m_layout.chart.width() / 90)))) {
        const qreal x = hopperX(ns, m_window, m_layout.chart);
        p.drawLine(QPointF(x, a.top()), QPointF(x, a.top() + 3 * m_theme.scale));
    }
}

// ---- interaction ----

int HopperView::barAt(const QPointF& pos) const {
    if (!m_layout.chart.contains(pos)) return -1;
    for (std::size_t i = 0; i < m_content.timeline.bars.size(); ++i) {
        const QRectF r = barRect(i);
        // Thin bars are found within two pixels.
        if (r.adjusted(r.width() < 4 ? -2 : 0, 0, r.width() < 4 ? 2 : 0, 0).contains(pos))
            return int(i);
    }
    return -1;
}

QString HopperView::toolTipAt(const QPointF& pos) const {
    if (const int bar = barAt(pos); bar >= 0)
        return hopperBarToolTip(m_content.timeline.bars[std::size_t(bar)], m_content.timeline);
    const HopperBlockPicture& pic = m_content.picture;
    for (std::size_t i = 0; i < m_layout.sharedParts.size() && i < pic.shared.size(); ++i)
        if (m_layout.sharedParts[i].contains(pos))
            return tr("%1: %2 of shared memory.\n%3")
                .arg(pic.shared[i].name, formatBytes(pic.shared[i].bytes), pic.pipeline);
    if (m_layout.sharedBar.contains(pos)) return pic.sharedLine;
    for (const QRectF& box : m_layout.warpgroups)
        if (box.contains(pos)) return pic.registersLine;
    for (const LegendEntry& e : m_layout.legend)
        if (e.swatch.adjusted(0, 0, 60, 0).contains(pos))
            return QString::fromUtf8(kernels::describe(e.activity));
    for (std::size_t i = 0; i < m_layout.tracks.size(); ++i)
        if (pos.y() >= m_layout.tracks[i].top() && pos.y() < m_layout.tracks[i].bottom() &&
            m_layout.labels.contains(pos))
            return trackToolTip(m_content.timeline.tracks[i]);
    if (m_layout.chart.contains(pos) && hasTrace())
        return tr("The wheel zooms about the pointer, a drag pans, Shift + drag zooms to a range; "
                  "+, − and 0 (or a double click) zoom in, out and back to the whole block.");
    return {};
}

bool HopperView::event(QEvent* event) {
    if (event->type() != QEvent::ToolTip) return QWidget::event(event);
    const auto* help = static_cast<QHelpEvent*>(event);
    const QString text = toolTipAt(help->pos());
    if (text.isEmpty()) {
        QToolTip::hideText();
        return true;
    }
    QToolTip::showText(help->globalPos(), text, this);
    return true;
}

void HopperView::wheelEvent(QWheelEvent* event) {
    if (!hasTrace() || !m_layout.timeline.contains(event->position()))
        return QWidget::wheelEvent(event);
    const QPoint delta = event->angleDelta();
    if (delta.x() != 0 || event->modifiers() & Qt::ShiftModifier) {
        const int steps = delta.x() != 0 ? delta.x() : delta.y();
        setTimeWindow(
            hopperPanned(m_window, -steps / 120.0 * m_window.spanNs() * 0.15, m_content.timeline));
    } else {
        zoomAbout(std::pow(1.25, delta.y() / 120.0), event->position().x());
    }
    event->accept();
}

void HopperView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || !hasTrace() ||
        !m_layout.chart.contains(event->position()))
        return QWidget::mousePressEvent(event);
    m_choosingRange = event->modifiers() & Qt::ShiftModifier;
    m_dragging = !m_choosingRange;
    m_dragFrom = m_dragTo = event->position().x();
    m_dragWindow = m_window;
    if (m_dragging) setCursor(Qt::ClosedHandCursor);
}

void HopperView::mouseMoveEvent(QMouseEvent* event) {
    const QPointF pos = event->position();
    if (m_dragging) {
        const double ns = (pos.x() - m_dragFrom) * m_dragWindow.spanNs() /
                          std::max<qreal>(m_layout.chart.width(), 1);
        setTimeWindow(hopperPanned(m_dragWindow, -ns, m_content.timeline));
        return;
    }
    if (m_choosingRange) {
        m_dragTo = pos.x();
        update();
        return;
    }
    const int hovered = barAt(pos);
    if (hovered != m_hovered) {
        m_hovered = hovered;
        update();
    }
}

void HopperView::mouseReleaseEvent(QMouseEvent* event) {
    if (m_choosingRange && std::abs(event->position().x() - m_dragFrom) > 4) {
        const qreal a = std::min(m_dragFrom, event->position().x()),
                    b = std::max(m_dragFrom, event->position().x());
        setTimeWindow(
            {hopperNsAt(a, m_window, m_layout.chart), hopperNsAt(b, m_window, m_layout.chart)});
    }
    m_dragging = m_choosingRange = false;
    unsetCursor();
    update();
}

void HopperView::mouseDoubleClickEvent(QMouseEvent* event) {
    if (hasTrace() && m_layout.chart.contains(event->position())) showWholeBlock();
}

void HopperView::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        break;
    case Qt::Key_Minus:
        zoomOut();
        break;
    case Qt::Key_0:
        showWholeBlock();
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void HopperView::leaveEvent(QEvent*) {
    if (m_hovered < 0) return;
    m_hovered = -1;
    update();
}

} // namespace flashviz::gui
