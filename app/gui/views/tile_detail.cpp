#include "views/tile_detail.h"

#include "style/format.h"
#include "style/heatmap.h"
#include "style/paint_util.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

bool differs(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) != std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a != b;
    return std::abs(a - b) > 1e-12 * std::max({1.0, std::abs(a), std::abs(b)});
}

// A grid of values with colour; returns false when there was nothing to draw.
void drawGrid(QPainter& p, const Theme& th, const QRectF& box, const QString& title,
              const QString& emptyText, const Matrix& m, Colouring colouring, double scaleMax,
              int rowStart, int colStart, bool active, bool markRowMax) {
    const qreal sc = th.scale;
    const QFont titleFont = th.font(9.5, true);
    const qreal titleH = QFontMetricsF(titleFont).height() + 2;
    p.setPen(active ? th.accent.darker(th.lecture ? 100 : 125) : th.text);
    drawFittedText(p, QRectF(box.left(), box.top(), box.width(), titleH),
                   Qt::AlignLeft | Qt::AlignVCenter, title, titleFont);
    const QFont labelFont = th.font(7.5);
    const qreal labelW = QFontMetricsF(labelFont).horizontalAdvance(QStringLiteral("0000")) + 2;
    const qreal labelH = QFontMetricsF(labelFont).height();
    const QRectF area(box.left() + labelW, box.top() + titleH + labelH, box.width() - labelW,
                      box.height() - titleH - labelH);
    if (m.size() == 0) {
        p.setPen(QPen(th.muted, 1, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        const QRectF r = area.adjusted(0, 0, -4, -4);
        p.drawRect(r);
        p.setPen(th.muted);
        drawFittedText(p, r, Qt::AlignCenter, emptyText, th.font(8.5));
        return;
    }
    const int rows = int(m.rows()), cols = int(m.cols());
    const qreal cell = std::min(area.width() / cols, area.height() / rows);
    const QRectF grid(area.left(), area.top(), cell * cols, cell * rows);
    const QFont valueFont = th.mono(std::clamp(cell / (4.6 * sc), 5.5, 9.5));
    const bool values =
        cell >= 28; // the value font follows the cell size, so this holds at any scale
    const int digits = cell >= 46 * sc ? 3 : 2;
    const bool labels = cell >= 10 * sc;
    if (!values) {
        drawMatrixImage(p, grid, heatmapImage(m, colouring, scaleMax, 512));
    }
    for (int r = 0; r < rows; ++r) {
        int maxCol = -1;
        if (markRowMax) {
            double best = -INFINITY;
            for (int c = 0; c < cols; ++c)
                if (m(r, c) > best) {
                    best = m(r, c);
                    maxCol = c;
                }
        }
        for (int c = 0; c < cols; ++c) {
            const QRectF rc(grid.left() + c * cell, grid.top() + r * cell, cell, cell);
            const double v = m(r, c);
            if (values) {
                const QColor bg = colouring == Colouring::Diverging ? divergingColour(v, scaleMax)
                                                                    : sequentialColour(v, scaleMax);
                p.fillRect(rc, bg);
                p.setPen(QPen(withAlpha(th.border, 120), 0.5));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rc);
                p.setPen(textOn(bg));
                p.setFont(valueFont);
                const bool masked = std::isinf(v) && v < 0;
                p.drawText(rc, Qt::AlignCenter,
                           masked ? QStringLiteral("−∞") : formatValue(v, digits));
            }
            if (c == maxCol && cell >= 6 * sc) {
                p.setPen(QPen(th.text, std::max(1.5, 2 * sc)));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rc.adjusted(1.5, 1.5, -1.5, -1.5));
            }
        }
        if (labels) {
            p.setPen(th.muted);
            p.setFont(labelFont);
            p.drawText(QRectF(box.left(), grid.top() + r * cell, labelW - 3, cell),
                       Qt::AlignRight | Qt::AlignVCenter, QString::number(rowStart + r));
        }
    }
    if (labels) {
        p.setPen(th.muted);
        p.setFont(labelFont);
        for (int c = 0; c < cols; ++c)
            p.drawText(QRectF(grid.left() + c * cell, grid.top() - labelH, cell, labelH),
                       Qt::AlignCenter, QString::number(colStart + c));
    }
    p.setPen(QPen(active ? th.accent : th.border, active ? 2.5 * sc : 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(grid);
}

QString rowValues(const Matrix& m, int row, int limit) {
    if (m.size() == 0 || row >= m.rows()) return QStringLiteral("—");
    QStringList parts;
    const int cols = int(m.cols());
    for (int c = 0; c < std::min(cols, limit); ++c)
        parts << formatValue(m(row, c), 3);
    QString text = parts.join(QStringLiteral("  "));
    if (cols > limit) text += QStringLiteral("  …");
    return text;
}

bool rowDiffers(const Matrix& a, const Matrix& b, int row) {
    if (a.size() == 0 || b.size() == 0 || row >= a.rows() || row >= b.rows()) return false;
    for (Eigen::Index c = 0; c < a.cols(); ++c)
        if (differs(a(row, c), b(row, c))) return true;
    return false;
}

} // namespace

TileDetailView::TileDetailView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void TileDetailView::setMaxRows(int rows) {
    m_maxRows = std::max(1, rows);
    update();
}

TileDetailView::TileGeometry TileDetailView::tileGeometry() const {
    const qreal sc = m_theme.scale;
    const Scene& scene = *m_frame->scene;
    const StepState& st = m_frame->state;
    const StepInfo& info = st.info;
    TileGeometry g;
    const QRectF area = g.area = QRectF(rect()).adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const qreal headH = g.headH = QFontMetricsF(m_theme.font(10.5, true)).height() + 4 * sc;
    const QFont cellFont = m_theme.mono(8.5);
    const QFont smallFont = m_theme.mono(7.5);
    const bool flash = scene.isFlash();
    const bool hasRows = g.hasRows = flash && info.queryBlock >= 0;
    const bool bug = g.bug = m_frame->correct.has_value();
    const bool backend = g.backend = viewOptions().showBackendValues && scene.trace && hasRows; // its column shows
    const int tileRows = g.tileRows = hasRows ? info.rows.size() : 0;
    const qreal lineH = g.lineH = QFontMetricsF(cellFont).height();
    const qreal smallH = g.smallH = QFontMetricsF(smallFont).height();
    const qreal rowH = g.rowH = lineH + smallH + (bug ? smallH : 0) + 4 * sc;
    const qreal tableHeadH = g.tableHeadH =
        2 * QFontMetricsF(m_theme.font(8.5, true)).height() + 6 * sc;
    const qreal noteLinesH = smallH * (bug && backend ? 2 : 1) + 6 * sc;
    // Wide (lecture): grids on the left, the table beside them. Otherwise the grids take what they
    // need on top (cells up to a readable size) and the table the rest below.
    const bool wide = area.width() > 2.1 * area.height();
    const qreal minGridH = 90 * sc;
    // Large tiles leave the grids more room: they show as images and need the height. In a short
    // view, only the rows that fit (at least one); the note then says how many are shown.
    const qreal roomForRows = area.height() - headH - tableHeadH - noteLinesH -
                              (wide ? 0 : minGridH + 8 * sc);
    const int shownRows = g.shownRows = std::min({tileRows, m_maxRows, tileRows > 8 ? 5 : 8,
                                                  std::max(1, int(roomForRows / rowH))});
    const bool traceNote = viewOptions().showBackendValues && !scene.trace && !scene.traceNote.isEmpty();
    const qreal noteH = g.noteH =
        (tileRows > shownRows || bug || backend || traceNote) ? noteLinesH : 0;
    const qreal tableH = hasRows ? tableHeadH + shownRows * rowH + noteH : 0;
    int gridRows = 4;
    if (flash && st.scores.size() > 0)
        gridRows = int(st.scores.rows());
    else if (flash && info.queryBlock >= 0)
        gridRows = info.rows.size();
    else if (!flash && scene.smallScores.size() > 0)
        gridRows = int(scene.smallScores.rows());
    QRectF& gridArea = g.gridArea;
    QRectF& tableArea = g.tableArea;
    if (wide) {
        const qreal gw = hasRows ? area.width() * 0.4 : area.width();
        gridArea = QRectF(area.left(), area.top() + headH, gw, area.height() - headH);
        tableArea = QRectF(area.left() + gw + 18 * sc, area.top() + headH,
                           area.width() - gw - 18 * sc, tableH);
    } else {
        const qreal gridNeed = QFontMetricsF(m_theme.font(9.5, true)).height() +
                               QFontMetricsF(m_theme.font(7.5)).height() +
                               std::min(gridRows, 12) * 52 * sc + 6 * sc;
        const qreal gridH =
            std::max(minGridH, std::min(gridNeed, area.height() - headH - tableH - 8 * sc));
        gridArea = QRectF(area.left(), area.top() + headH, area.width(), gridH);
        tableArea = QRectF(area.left(), gridArea.bottom() + 8 * sc, area.width(), tableH);
    }
    return g;
}

int TileDetailView::listedRows() const {
    return m_frame ? tileGeometry().shownRows : 0;
}

QRectF TileDetailView::tableRect() const {
    return m_frame ? tileGeometry().tableArea : QRectF();
}

std::vector<TileDetailView::Column> TileDetailView::tableColumns(bool withBackend) const {
    const StepKind k = m_frame->state.info.kind;
    const int shownValues = std::min(m_frame->scene->settings.spec.headDim, 4);
    // Each single-value column has room for a signed 4-digit value; longer ones ("-1.23e-05")
    // shrink to fit (drawFittedText). The rows of acc and O take what their weight gives them and
    // end in "…" when that is too little.
    const QString number = QStringLiteral("-0.0000");
    const QString noMinimum;
    std::vector<Column> columns = {
        {tr("row"), tr("row"), 0.5, false, QStringLiteral("000 ✗")},
        {tr("m\nmax so far"), tr("m"), 1.2, k == StepKind::UpdateMax, number},
        {tr("ℓ\nsum so far"), tr("ℓ"), 1.6, k == StepKind::UpdateSum, number},
        {tr("e^(m_old−m_new)\ncorrection"), tr("e^(m_old\n −m_new)"), 1.8,
         k == StepKind::UpdateSum || k == StepKind::UpdateOutput, number},
        {tr("acc\nO before ÷ ℓ"), tr("acc"), 0.5 + 0.58 * shownValues,
         k == StepKind::UpdateOutput, noMinimum},
        {tr("O = acc / ℓ\nthe output row"), tr("O = acc/ℓ"), 0.3 + 0.45 * shownValues,
         k == StepKind::Normalise || k == StepKind::StoreOutput, noMinimum},
    };
    // "CUDA (NVIDIA H200)" heads its column as "CUDA"; the note under the table has it in full.
    if (withBackend) {
        const QString name = m_frame->scene->backendName.section(QStringLiteral(" ("), 0, 0);
        columns.push_back({tr("%1\nrecorded").arg(name), name, 1.9, false, number});
    }
    return columns;
}

// One header size for all columns: the largest at which the titles fit side by side (the compact
// ones when the whole titles cannot); the columns then share the width by weight, each at least
// as wide as its title and its values.
TableHeader TileDetailView::fitHeader(const std::vector<Column>& columns, qreal width) const {
    QStringList titles, compact;
    std::vector<qreal> weights, contents;
    const QFontMetricsF cellFont(m_theme.mono(8.5, true));
    for (const Column& c : columns) {
        titles << c.title;
        compact << c.compact;
        weights.push_back(c.weight);
        // A cell's text sits 5 px inside its column on each side (see `cell` in paintEvent).
        contents.push_back(c.sample.isEmpty() ? 0 : cellFont.horizontalAdvance(c.sample) + 10);
    }
    return fitTableHeader(titles, compact, weights, contents, m_theme.font(8.5, true), 6.5, width,
                          12);
}

QStringList TileDetailView::tableTitles() const {
    if (!m_frame) return {};
    const TileGeometry g = tileGeometry();
    return g.hasRows ? fitHeader(tableColumns(g.backend), g.tableArea.width()).titles
                     : QStringList();
}

void TileDetailView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    const qreal sc = m_theme.scale;
    if (!m_frame) return;
    const Scene& scene = *m_frame->scene;
    const StepState& st = m_frame->state;
    const StepInfo& info = st.info;
    // Where the header, the grids and the table go (tileGeometry: the table decides how much
    // room the grids get).
    const TileGeometry g = tileGeometry();
    const QRectF area = g.area;
    const qreal headH = g.headH;
    const QFont headFont = m_theme.font(10.5, true);

    // ---- header ---------------------------------------------------------------------------
    QString head;
    if (!scene.isFlash())
        head = tr("Standard attention: whole n × n matrices, no running statistics");
    else if (info.queryBlock < 0)
        head = tr("Key block %1 · keys %2–%3 on chip")
                   .arg(info.keyBlock)
                   .arg(info.cols.begin)
                   .arg(info.cols.end - 1);
    else if (info.keyBlock >= 0)
        head = tr("Tile (%1, %2) · query rows %3–%4 × keys %5–%6")
                   .arg(info.queryBlock)
                   .arg(info.keyBlock)
                   .arg(info.rows.begin)
                   .arg(info.rows.end - 1)
                   .arg(info.cols.begin)
                   .arg(info.cols.end - 1);
    else
        head = tr("Query block %1 · rows %2–%3")
                   .arg(info.queryBlock)
                   .arg(info.rows.begin)
                   .arg(info.rows.end - 1);
    p.setPen(m_theme.text);
    drawFittedText(p, QRectF(area.left(), area.top(), area.width() * 0.7, headH),
                   Qt::AlignLeft | Qt::AlignVCenter, head, headFont);
    p.setPen(m_theme.accent.darker(m_theme.lecture ? 100 : 125));
    drawFittedText(p,
                   QRectF(area.left() + area.width() * 0.7, area.top(), area.width() * 0.3, headH),
                   Qt::AlignRight | Qt::AlignVCenter, QString::fromLatin1(toString(info.kind)),
                   m_theme.font(9.5, true));

    const bool flash = scene.isFlash();
    const bool hasRows = g.hasRows, bug = g.bug, backend = g.backend;
    const int tileRows = g.tileRows, shownRows = g.shownRows;
    const QFont smallFont = m_theme.mono(7.5);
    const qreal lineH = g.lineH, smallH = g.smallH, rowH = g.rowH;
    const qreal tableHeadH = g.tableHeadH, noteH = g.noteH;
    const QRectF gridArea = g.gridArea, tableArea = g.tableArea;

    // ---- S and P ------------------------------------------------------------------------------
    const Matrix* scores = nullptr;
    const Matrix* weights = nullptr;
    int rowStart = 0, colStart = 0;
    if (flash) {
        scores = &st.scores;
        weights = &st.weights;
        rowStart = info.rows.begin;
        colStart = info.cols.begin;
    } else {
        static const Matrix none;
        const int phase = int(info.kind);
        scores = phase >= int(StepKind::WriteScores) || info.kind == StepKind::ComputeScores
                     ? &scene.smallScores
                     : &none;
        weights = phase >= int(StepKind::ComputeSoftmax) ? &scene.smallWeights : &none;
        if (scene.smallScores.size() == 0) {
            // Too many values to print: the whole matrices as images, once computed.
            const qreal half = (gridArea.width() - 16 * sc) / 2;
            const QFont titleFont = m_theme.font(9.5, true);
            const qreal titleH = QFontMetricsF(titleFont).height() + 4;
            const bool haveS = scores != &none, haveP = weights != &none;
            const QString titles[2] = {tr("S = scale · Q Kᵀ  (%1 × %2, written to HBM)")
                                           .arg(scene.settings.spec.queries)
                                           .arg(scene.settings.spec.keys),
                                       tr("P = softmax(S)  (written to HBM)")};
            const QImage* images[2] = {haveS ? &scene.scoresImage : nullptr,
                                       haveP ? &scene.weightsImage : nullptr};
            for (int i = 0; i < 2; ++i) {
                const QRectF box(gridArea.left() + i * (half + 16 * sc), gridArea.top(), half,
                                 gridArea.height());
                p.setPen(m_theme.text);
                drawFittedText(p, QRectF(box.left(), box.top(), box.width(), titleH),
                               Qt::AlignLeft | Qt::AlignVCenter, titles[i], titleFont);
                const qreal side = std::min(box.width(), box.height() - titleH);
                const QRectF r(box.left(), box.top() + titleH, side, side);
                if (images[i]) {
                    drawMatrixImage(p, r, *images[i]);
                    p.setPen(QPen(i == 0 ? m_theme.s : m_theme.p, 1.5 * sc));
                } else {
                    p.setPen(QPen(m_theme.muted, 1, Qt::DashLine));
                }
                p.setBrush(Qt::NoBrush);
                p.drawRect(r);
                if (!images[i]) {
                    p.setPen(m_theme.muted);
                    drawFittedText(p, r, Qt::AlignCenter, tr("not computed yet"),
                                   m_theme.font(8.5));
                }
            }
            scores = weights = nullptr;
        }
    }
    if (scores && weights) {
        const qreal half = (gridArea.width() - 16 * sc) / 2;
        const bool runningMax = scene.settings.options.runningMax;
        const QString sTitle = flash ? tr("S = scale · Q_i K_jᵀ  (on chip only)")
                                     : tr("S = scale · Q Kᵀ  (written to HBM)");
        const QString pTitle = flash ? (runningMax ? tr("P = exp(S − m_new)  (unnormalised)")
                                                   : tr("P = exp(S)  (no max subtracted)"))
                                     : tr("P = softmax(S)  (written to HBM)");
        const bool sActive = info.kind == StepKind::ComputeScores;
        const bool pActive =
            info.kind == StepKind::ComputeWeights || info.kind == StepKind::ComputeSoftmax;
        drawGrid(p, m_theme, QRectF(gridArea.left(), gridArea.top(), half, gridArea.height()),
                 sTitle,
                 flash ? tr("the tile is computed at 'compute-scores'") : tr("not computed yet"),
                 *scores, Colouring::Diverging, std::max(finiteAbsMax(*scores), 1e-300), rowStart,
                 colStart, sActive, info.kind == StepKind::UpdateMax);
        const double pMax = flash && runningMax ? 1.0 : std::max(finiteAbsMax(*weights), 1e-300);
        drawGrid(p, m_theme,
                 QRectF(gridArea.left() + half + 16 * sc, gridArea.top(), half, gridArea.height()),
                 pTitle, flash ? tr("P appears at 'compute-weights'") : tr("not computed yet"),
                 *weights, Colouring::Sequential, pMax, rowStart, colStart, pActive, false);
    }
    if (!hasRows) return;

    // ---- per-row table -------------------------------------------------------------------------
    const QRectF table = tableArea;
    const StepKind k = info.kind;
    const bool normalised = st.output.size() > 0;
    const StepState* correct = bug ? &*m_frame->correct : nullptr;
    const TileTrace* trace =
        backend ? m_frame->trace : nullptr; // its values, once this tile is updated
    const int d = scene.settings.spec.headDim;
    const int shownValues = std::min(d, 4);
    // The note under the table names the backend in full, its column ("CUDA") in short.
    const QString backendName = scene.backendName;
    const QString backendShortName = backendName.section(QStringLiteral(" ("), 0, 0);

    const std::vector<Column> columns = tableColumns(backend);
    const TableHeader header = fitHeader(columns, table.width());
    std::vector<QRectF> colRects;
    qreal x = table.left();
    for (const qreal w : header.widths) {
        colRects.emplace_back(x, table.top(), w, tableHeadH);
        x += w;
    }
    for (std::size_t c = 0; c < columns.size(); ++c) {
        const QRectF r = colRects[c].adjusted(2, 0, -2, 0);
        if (columns[c].active) p.fillRect(r, withAlpha(m_theme.accent, m_theme.lecture ? 70 : 60));
        p.setPen(columns[c].active ? m_theme.text : m_theme.muted);
        p.setFont(header.font);
        p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter,
                   header.titles[int(c)]);
    }

    auto vec = [](const Vector& v, int i) -> std::optional<double> {
        if (v.size() == 0 || i >= v.size()) return std::nullopt;
        return v(i);
    };
    for (int i = 0; i < shownRows; ++i) {
        const qreal y = table.top() + tableHeadH + i * rowH;
        if (i % 2 == 1)
            p.fillRect(QRectF(table.left(), y, table.width(), rowH), withAlpha(m_theme.border, 40));
        const bool wrongRow = scene.isRowWrong(info.rows.begin + i);
        auto cell = [&](std::size_t c, const QString& now, const QString& was, bool changed,
                        bool wrong, const QString& right) {
            const QRectF r(colRects[c].left() + 2, y + 1, colRects[c].width() - 4, rowH - 2);
            // The correct run's green value stays off the highlight, where it reads clearly.
            if (changed)
                p.fillRect(right.isEmpty() ? r : QRectF(r.left(), r.top(), r.width(), lineH + smallH),
                           m_theme.changed);
            p.setPen(wrong ? m_theme.bad : m_theme.text);
            drawFittedText(p, QRectF(r.left() + 3, r.top(), r.width() - 6, lineH),
                           Qt::AlignLeft | Qt::AlignVCenter, now,
                           m_theme.mono(8.5, changed || wrong));
            if (!was.isEmpty()) {
                p.setPen(m_theme.muted);
                drawFittedText(p, QRectF(r.left() + 3, r.top() + lineH, r.width() - 6, smallH),
                               Qt::AlignLeft | Qt::AlignVCenter, was, smallFont);
            }
            if (!right.isEmpty()) {
                p.setPen(m_theme.good);
                drawFittedText(
                    p, QRectF(r.left() + 3, r.top() + lineH + smallH, r.width() - 6, smallH),
                    Qt::AlignLeft | Qt::AlignVCenter, right, m_theme.mono(7.5, true));
            }
        };
        // row
        p.setPen(wrongRow ? m_theme.bad : m_theme.muted);
        drawFittedText(p, QRectF(colRects[0].left() + 4, y, colRects[0].width() - 6, lineH),
                       Qt::AlignLeft | Qt::AlignVCenter,
                       wrongRow ? QStringLiteral("%1 ✗").arg(info.rows.begin + i)
                                : QString::number(info.rows.begin + i),
                       m_theme.mono(8.5, true));
        // m
        {
            const auto mNew = vec(st.mNew, i), mOld = vec(st.mOld, i);
            const bool rose = mNew && mOld && *mNew > *mOld && k == StepKind::UpdateMax;
            const auto cm = correct ? vec(correct->mNew.size() ? correct->mNew : correct->mOld, i)
                                    : std::nullopt;
            const auto shown = mNew ? mNew : mOld;
            const bool wrong = cm && shown && differs(*cm, *shown);
            cell(1,
                 shown ? formatValue(*shown) + (rose ? QStringLiteral(" ↑") : QString())
                       : QStringLiteral("—"),
                 mOld && mNew && differs(*mOld, *mNew) ? tr("was %1").arg(formatValue(*mOld))
                                                       : QString(),
                 rose, wrong, wrong ? tr("correct %1").arg(formatValue(*cm)) : QString());
        }
        // l
        {
            const auto lNew = vec(st.lNew, i), lOld = vec(st.lOld, i);
            const auto shown = lNew ? lNew : lOld;
            const bool changed = k == StepKind::UpdateSum && lNew && lOld && differs(*lNew, *lOld);
            const auto cl = correct ? vec(correct->lNew.size() ? correct->lNew : correct->lOld, i)
                                    : std::nullopt;
            const bool wrong = cl && shown && differs(*cl, *shown);
            cell(2, shown ? formatValue(*shown) : QStringLiteral("—"),
                 lOld && lNew && differs(*lOld, *lNew) ? tr("was %1").arg(formatValue(*lOld))
                                                       : QString(),
                 changed, wrong, wrong ? tr("correct %1").arg(formatValue(*cl)) : QString());
        }
        // correction
        {
            const auto c = vec(st.correction, i);
            const bool rescaled = c && *c < 1.0;
            const auto cc = correct ? vec(correct->correction, i) : std::nullopt;
            const bool skipped = c && cc && differs(*c, *cc);
            QString note;
            const auto mOld = vec(st.mOld, i);
            const bool firstBlock = mOld && std::isinf(*mOld) && *mOld < 0; // nothing summed yet
            if (c)
                note = firstBlock ? tr("first block: nothing to rescale")
                       : rescaled ? tr("rescaled")
                                  : tr("max unchanged");
            if (skipped) note = tr("skipped (bug)");
            cell(3, c ? formatValue(*c) : QStringLiteral("—"), note,
                 rescaled && !firstBlock &&
                     (k == StepKind::UpdateSum || k == StepKind::UpdateOutput),
                 skipped, skipped ? tr("correct %1").arg(formatValue(*cc)) : QString());
        }
        // acc
        {
            const Matrix& accNew = st.accNew.size() ? st.accNew : st.accOld;
            const bool changed = k == StepKind::UpdateOutput && rowDiffers(st.accNew, st.accOld, i);
            const Matrix* cAcc =
                correct ? (correct->accNew.size() ? &correct->accNew : &correct->accOld) : nullptr;
            const bool wrong = cAcc && rowDiffers(*cAcc, accNew, i);
            cell(4, rowValues(accNew, i, shownValues),
                 changed ? tr("was %1").arg(rowValues(st.accOld, i, shownValues)) : QString(),
                 changed, wrong,
                 wrong ? tr("correct %1").arg(rowValues(*cAcc, i, shownValues)) : QString());
        }
        // O
        {
            const bool wrong =
                correct && correct->output.size() && rowDiffers(correct->output, st.output, i);
            cell(5, normalised ? rowValues(st.output, i, shownValues) : QStringLiteral("—"),
                 normalised ? tr("divided by ℓ = %1")
                                  .arg(formatValue(st.lNew.size() ? st.lNew(i) : st.lOld(i)))
                            : tr("after the last key block"),
                 normalised && k == StepKind::Normalise, wrong,
                 wrong ? tr("correct %1").arg(rowValues(correct->output, i, shownValues))
                       : QString());
        }
        // backend
        if (backend && !(trace && i < trace->mNew.size())) {
            cell(columns.size() - 1, QStringLiteral("—"), tr("recorded after 'update-output'"),
                 false, false, QString());
        } else if (trace && i < trace->mNew.size()) {
            const bool tileDone = k == StepKind::UpdateOutput || k == StepKind::Normalise ||
                                  k == StepKind::StoreOutput || k == StepKind::StoreRunningState;
            const Matrix& acc = st.accNew.size() ? st.accNew : st.accOld;
            double delta = 0;
            if (tileDone && acc.rows() == trace->accNew.rows() &&
                acc.cols() == trace->accNew.cols()) {
                delta = (acc.row(i) - trace->accNew.row(i)).cwiseAbs().maxCoeff();
                if (st.mNew.size() > i)
                    delta = std::max(delta, std::abs(st.mNew(i) - trace->mNew(i)));
                if (st.lNew.size() > i)
                    delta = std::max(delta, std::abs(st.lNew(i) - trace->lNew(i)));
            }
            cell(columns.size() - 1,
                 QStringLiteral("m %1  ℓ %2")
                     .arg(formatValue(trace->mNew(i), 3), formatValue(trace->lNew(i), 3)),
                 tileDone ? tr("|Δ| %1").arg(formatValue(delta, 2)) : QString(), false,
                 false, QString());
        }
    }
    // Notes under the table.
    QStringList notes;
    if (tileRows > shownRows)
        notes << tr("showing %1 of the tile's %2 rows").arg(shownRows).arg(tileRows);
    if (bug)
        notes << (scene.settings.options.rescale
                      ? tr("green: the correct run at this same step (running max kept)")
                      : tr("green: the correct run at this same step (rescale applied)"));
    if (backend)
        notes << tr("%1 column: what the %2 backend recorded after this tile's update; |Δ|: "
                    "its largest difference from the CPU's m, ℓ and acc")
                     .arg(backendShortName, backendName);
    else if (viewOptions().showBackendValues && !scene.traceNote.isEmpty())
        notes << tr("no backend trace: %1").arg(scene.traceNote);
    if (!notes.isEmpty()) {
        p.setPen(m_theme.muted);
        drawFittedText(
            p, QRectF(table.left() + 4, table.bottom() - noteH + 2, table.width() - 8, noteH - 2),
            Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, notes.join(QStringLiteral(" · ")),
            m_theme.font(7.5));
    }
}

} // namespace flashviz::gui
