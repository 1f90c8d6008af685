#include "views/tile_detail.h"

#include "style/format.h"
#include "style/heatmap.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

// A tile taller than the table lists shows this many of its rows, leaving the grids room.
constexpr int kTallTileRowsListed = 5;
// The grids' least height, at scale 1, however many rows the table would like.
constexpr qreal kMinGridHeight = 90;

QString valuesText(const Vector& values, int limit) {
    if (values.size() == 0) return QStringLiteral("—");
    QStringList parts;
    for (Eigen::Index c = 0; c < std::min<Eigen::Index>(values.size(), limit); ++c)
        parts << formatValue(values(c), 3);
    QString text = parts.join(QStringLiteral("  "));
    if (values.size() > limit) text += QStringLiteral("  …");
    return text;
}

QString valueText(const std::optional<double>& value) {
    return value ? formatValue(*value) : QStringLiteral("—");
}

QString correctText(const std::optional<double>& value) {
    return value ? TileDetailView::tr("correct %1").arg(formatValue(*value)) : QString();
}

QString wasText(const std::optional<double>& value) {
    return value ? TileDetailView::tr("was %1").arg(formatValue(*value)) : QString();
}

QString correctionNoteText(CorrectionNote note) {
    switch (note) {
    case CorrectionNote::FirstBlock:
        return TileDetailView::tr("first block: nothing to rescale");
    case CorrectionNote::Rescaled:
        return TileDetailView::tr("rescaled");
    case CorrectionNote::Unchanged:
        return TileDetailView::tr("max unchanged");
    case CorrectionNote::Skipped:
        return TileDetailView::tr("skipped (bug)");
    case CorrectionNote::None:
        break;
    }
    return {};
}

// A column's titles (symbol line, explanation line; the symbols alone for a narrow table), its
// share of the width, and a sample as wide as its widest usual value.
struct ColumnLook {
    QString title, compact;
    qreal weight = 1;
    QString sample;
};

ColumnLook columnLook(TileColumn column, const TileModel& model) {
    // Each single-value column has room for a signed 4-digit value; longer ones ("-1.23e-05")
    // shrink to fit (drawFittedText). The rows of acc and O take what their weight gives them and
    // end in "…" when that is too little.
    const QString number = QStringLiteral("-0.0000");
    const int n = model.valuesListed;
    switch (column) {
    case TileColumn::Row:
        return {TileDetailView::tr("row"), TileDetailView::tr("row"), 0.5, QStringLiteral("000 ✗")};
    case TileColumn::Max:
        return {TileDetailView::tr("m\nmax so far"), TileDetailView::tr("m"), 1.2, number};
    case TileColumn::Sum:
        return {TileDetailView::tr("ℓ\nsum so far"), TileDetailView::tr("ℓ"), 1.6, number};
    case TileColumn::Correction:
        return {TileDetailView::tr("e^(m_old−m_new)\ncorrection"),
                TileDetailView::tr("e^(m_old\n −m_new)"), 1.8, number};
    case TileColumn::Accumulator:
        return {
            TileDetailView::tr("acc\nO before ÷ ℓ"), TileDetailView::tr("acc"), 0.5 + 0.58 * n, {}};
    case TileColumn::Output:
        return {TileDetailView::tr("O = acc / ℓ\nthe output row"),
                TileDetailView::tr("O = acc/ℓ"),
                0.3 + 0.45 * n,
                {}};
    case TileColumn::Backend:
        // "CUDA (NVIDIA H200)" heads its column as "CUDA"; the note under the table has it in full.
        return {TileDetailView::tr("%1\nrecorded").arg(model.backendShortName),
                model.backendShortName, 1.9, number};
    }
    return {};
}

} // namespace

TileDetailView::TileDetailView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void TileDetailView::setMaxRows(int rows) {
    m_maxRows = std::max(1, rows);
    layOut();
    update();
}

void TileDetailView::frameChanged() {
    m_model.reset();
    if (m_frame) m_model = tileModel(*m_frame, viewOptions());
}

// ---- layout --------------------------------------------------------------------------------

// Where the heading, the grids and the table go: the table decides how much room the grids get.
void TileDetailView::layOut() {
    m_layout = {};
    if (!m_model) return;
    const qreal sc = m_theme.scale;
    const QRectF area = QRectF(rect()).adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const qreal headH = QFontMetricsF(m_theme.font(10.5, true)).height() + 4 * sc;
    m_layout.heading = QRectF(area.left(), area.top(), area.width() * 0.7, headH);
    m_layout.stepName =
        QRectF(area.left() + area.width() * 0.7, area.top(), area.width() * 0.3, headH);
    // Wide (lecture): grids on the left, the table beside them. Otherwise the grids take what they
    // need on top (cells up to a readable size) and the table the rest below.
    const bool wide = area.width() > 2.1 * area.height();
    layOutTableRows(area, headH, wide);
    const QRectF gridArea = layOutRegions(area, headH, wide);
    const qreal half = (gridArea.width() - 16 * sc) / 2;
    const QRectF scoresBox(gridArea.left(), gridArea.top(), half, gridArea.height());
    const QRectF weightsBox(gridArea.left() + half + 16 * sc, gridArea.top(), half,
                            gridArea.height());
    const bool whole = m_model->scores.wholeMatrix;
    m_layout.scores =
        whole ? wholeMatrixLayout(scoresBox) : valueGridLayout(scoresBox, m_model->scores);
    m_layout.weights =
        whole ? wholeMatrixLayout(weightsBox) : valueGridLayout(weightsBox, m_model->weights);
    if (m_model->hasTable) layOutTableHeader();
}

// The table's row heights, and how many rows fit: large tiles leave the grids more room (they
// show as images and need the height); in a short view, only the rows that fit (at least one),
// and the note then says how many are shown.
void TileDetailView::layOutTableRows(const QRectF& area, qreal headH, bool wide) {
    const qreal sc = m_theme.scale;
    const TileModel& model = *m_model;
    TableLayout& t = m_layout.table;
    t.lineH = QFontMetricsF(m_theme.mono(8.5)).height();
    t.smallH = QFontMetricsF(m_theme.mono(7.5)).height();
    t.rowH = t.lineH + t.smallH + (model.bug ? t.smallH : 0) + 4 * sc;
    t.headH = 2 * QFontMetricsF(m_theme.font(8.5, true)).height() + 6 * sc;
    const qreal noteLinesH = t.smallH * (model.bug && model.backendShown ? 2 : 1) + 6 * sc;
    const qreal minGridH = kMinGridHeight * sc;
    const qreal roomForRows =
        area.height() - headH - t.headH - noteLinesH - (wide ? 0 : minGridH + 8 * sc);
    const int tileRows = model.tileRows;
    t.shownRows = std::min({tileRows, m_maxRows,
                            tileRows > kTileRowsListed ? kTallTileRowsListed : kTileRowsListed,
                            std::max(1, int(roomForRows / t.rowH))});
    QStringList notes = model.notes;
    if (tileRows > t.shownRows)
        notes.prepend(tr("showing %1 of the tile's %2 rows").arg(t.shownRows).arg(tileRows));
    t.note = notes.join(QStringLiteral(" · "));
    t.noteH = notes.isEmpty() ? 0 : noteLinesH;
}

// Places the table (its height known from its rows) and returns where the grids go.
QRectF TileDetailView::layOutRegions(const QRectF& area, qreal headH, bool wide) {
    const qreal sc = m_theme.scale;
    TableLayout& t = m_layout.table;
    const qreal tableH = m_model->hasTable ? t.headH + t.shownRows * t.rowH + t.noteH : 0;
    if (wide) {
        const qreal gw = m_model->hasTable ? area.width() * 0.4 : area.width();
        t.rect = QRectF(area.left() + gw + 18 * sc, area.top() + headH, area.width() - gw - 18 * sc,
                        tableH);
        return QRectF(area.left(), area.top() + headH, gw, area.height() - headH);
    }
    const qreal minGridH = kMinGridHeight * sc;
    const qreal gridNeed = QFontMetricsF(m_theme.font(9.5, true)).height() +
                           QFontMetricsF(m_theme.font(7.5)).height() +
                           std::min(m_model->gridRows, 12) * 52 * sc + 6 * sc;
    const qreal gridH =
        std::max(minGridH, std::min(gridNeed, area.height() - headH - tableH - 8 * sc));
    t.rect = QRectF(area.left(), area.top() + headH + gridH + 8 * sc, area.width(), tableH);
    return QRectF(area.left(), area.top() + headH, area.width(), gridH);
}

void TileDetailView::layOutTableHeader() {
    TableLayout& t = m_layout.table;
    t.header = fitHeader(t.rect.width());
    qreal x = t.rect.left();
    for (const qreal w : t.header.widths) {
        t.columns.emplace_back(x, t.rect.top(), w, t.headH);
        x += w;
    }
}

// One header size for all columns: the largest at which the titles fit side by side (the compact
// ones when the whole titles cannot); the columns then share the width by weight, each at least
// as wide as its title and its values.
TableHeader TileDetailView::fitHeader(qreal width) const {
    QStringList titles, compact;
    std::vector<qreal> weights, contents;
    const QFontMetricsF cellFont(m_theme.mono(8.5, true));
    for (const TileTableColumn& c : m_model->columns) {
        const ColumnLook look = columnLook(c.column, *m_model);
        titles << look.title;
        compact << look.compact;
        weights.push_back(look.weight);
        // A cell's text sits 5 px inside its column on each side (see drawCell).
        contents.push_back(look.sample.isEmpty() ? 0
                                                 : cellFont.horizontalAdvance(look.sample) + 10);
    }
    return fitTableHeader(titles, compact, weights, contents, m_theme.font(8.5, true), 6.5, width,
                          12);
}

// A grid of values: the title, then row labels on the left and column labels on top; cells as
// large as the box allows, with their values printed when there is room.
TileDetailView::GridLayout TileDetailView::valueGridLayout(const QRectF& box,
                                                           const TileGrid& grid) const {
    const qreal sc = m_theme.scale;
    GridLayout g;
    const qreal titleH = QFontMetricsF(m_theme.font(9.5, true)).height() + 2;
    const QFontMetricsF labelMetrics(m_theme.font(7.5));
    g.title = QRectF(box.left(), box.top(), box.width(), titleH);
    g.left = box.left();
    g.labelW = labelMetrics.horizontalAdvance(QStringLiteral("0000")) + 2;
    g.labelH = labelMetrics.height();
    g.area = QRectF(box.left() + g.labelW, box.top() + titleH + g.labelH, box.width() - g.labelW,
                    box.height() - titleH - g.labelH);
    if (!grid.computed) return g;
    const int rows = int(grid.values.rows()), cols = int(grid.values.cols());
    g.cell = std::min(g.area.width() / cols, g.area.height() / rows);
    g.grid = QRectF(g.area.left(), g.area.top(), g.cell * cols, g.cell * rows);
    g.valueFont = m_theme.mono(std::clamp(g.cell / (4.6 * sc), 5.5, 9.5));
    g.values = g.cell >= 28; // the value font follows the cell size, so this holds at any scale
    g.digits = g.cell >= 46 * sc ? 3 : 2;
    g.labels = g.cell >= 10 * sc;
    return g;
}

// Standard attention's whole matrix: the title, and the largest square under it.
TileDetailView::GridLayout TileDetailView::wholeMatrixLayout(const QRectF& box) const {
    GridLayout g;
    const qreal titleH = QFontMetricsF(m_theme.font(9.5, true)).height() + 4;
    g.title = QRectF(box.left(), box.top(), box.width(), titleH);
    const qreal side = std::min(box.width(), box.height() - titleH);
    g.grid = QRectF(box.left(), box.top() + titleH, side, side);
    return g;
}

// ---- painting ------------------------------------------------------------------------------

void TileDetailView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    if (!m_model) return;
    drawHeading(p);
    if (m_model->scores.wholeMatrix) {
        drawWholeMatrix(p, m_model->scores, m_layout.scores, m_theme.s);
        drawWholeMatrix(p, m_model->weights, m_layout.weights, m_theme.p);
    } else {
        drawGrid(p, m_model->scores, m_layout.scores);
        drawGrid(p, m_model->weights, m_layout.weights);
    }
    if (!m_model->hasTable) return;
    drawTableHeader(p);
    for (int i = 0; i < m_layout.table.shownRows; ++i)
        drawTableRow(p, i);
    drawTableNote(p);
}

void TileDetailView::drawHeading(QPainter& p) const {
    p.setPen(m_theme.text);
    drawFittedText(p, m_layout.heading, Qt::AlignLeft | Qt::AlignVCenter, m_model->heading,
                   m_theme.font(10.5, true));
    p.setPen(m_theme.accent.darker(m_theme.lecture ? 100 : 125));
    drawFittedText(p, m_layout.stepName, Qt::AlignRight | Qt::AlignVCenter, m_model->stepName,
                   m_theme.font(9.5, true));
}

void TileDetailView::drawGrid(QPainter& p, const TileGrid& grid, const GridLayout& g) const {
    p.setPen(grid.active ? m_theme.accent.darker(m_theme.lecture ? 100 : 125) : m_theme.text);
    drawFittedText(p, g.title, Qt::AlignLeft | Qt::AlignVCenter, grid.title,
                   m_theme.font(9.5, true));
    if (!grid.computed) {
        drawEmptyGrid(p, grid, g);
        return;
    }
    // Cells too small for their values show as one image.
    if (!g.values)
        drawMatrixImage(p, g.grid, heatmapImage(grid.values, grid.colouring, grid.scaleMax, 512));
    drawGridCells(p, grid, g);
    drawGridLabels(p, grid, g);
    p.setPen(
        QPen(grid.active ? m_theme.accent : m_theme.border, grid.active ? 2.5 * m_theme.scale : 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(g.grid);
}

void TileDetailView::drawEmptyGrid(QPainter& p, const TileGrid& grid, const GridLayout& g) const {
    p.setPen(QPen(m_theme.muted, 1, Qt::DashLine));
    p.setBrush(Qt::NoBrush);
    const QRectF r = g.area.adjusted(0, 0, -4, -4);
    p.drawRect(r);
    p.setPen(m_theme.muted);
    drawFittedText(p, r, Qt::AlignCenter, grid.emptyText, m_theme.font(8.5));
}

// Each cell in its colour with its value (where they fit), and each row's maximum outlined on
// the step that takes it; cell by cell, as an outline overlaps the next cell's edge.
void TileDetailView::drawGridCells(QPainter& p, const TileGrid& grid, const GridLayout& g) const {
    const qreal sc = m_theme.scale;
    const bool markMax = !grid.rowMaxColumn.empty() && g.cell >= 6 * sc;
    if (!g.values && !markMax) return;
    for (int r = 0; r < grid.values.rows(); ++r) {
        const int maxCol = markMax ? grid.rowMaxColumn[std::size_t(r)] : -1;
        for (int c = 0; c < grid.values.cols(); ++c) {
            const QRectF rc(g.grid.left() + c * g.cell, g.grid.top() + r * g.cell, g.cell, g.cell);
            const double v = grid.values(r, c);
            if (g.values) {
                const QColor bg = grid.colouring == Colouring::Diverging
                                      ? divergingColour(v, grid.scaleMax)
                                      : sequentialColour(v, grid.scaleMax);
                p.fillRect(rc, bg);
                p.setPen(QPen(withAlpha(m_theme.border, 120), 0.5));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rc);
                p.setPen(textOn(bg));
                p.setFont(g.valueFont);
                const bool masked = std::isinf(v) && v < 0;
                p.drawText(rc, Qt::AlignCenter,
                           masked ? QStringLiteral("−∞") : formatValue(v, g.digits));
            }
            if (c == maxCol) {
                p.setPen(QPen(m_theme.text, std::max(1.5, 2 * sc)));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rc.adjusted(1.5, 1.5, -1.5, -1.5));
            }
        }
    }
}

void TileDetailView::drawGridLabels(QPainter& p, const TileGrid& grid, const GridLayout& g) const {
    if (!g.labels) return;
    p.setPen(m_theme.muted);
    p.setFont(m_theme.font(7.5));
    for (int r = 0; r < grid.values.rows(); ++r)
        p.drawText(QRectF(g.left, g.grid.top() + r * g.cell, g.labelW - 3, g.cell),
                   Qt::AlignRight | Qt::AlignVCenter, QString::number(grid.firstRow + r));
    for (int c = 0; c < grid.values.cols(); ++c)
        p.drawText(QRectF(g.grid.left() + c * g.cell, g.grid.top() - g.labelH, g.cell, g.labelH),
                   Qt::AlignCenter, QString::number(grid.firstCol + c));
}

void TileDetailView::drawWholeMatrix(QPainter& p, const TileGrid& grid, const GridLayout& g,
                                     const QColor& outline) const {
    p.setPen(m_theme.text);
    drawFittedText(p, g.title, Qt::AlignLeft | Qt::AlignVCenter, grid.title,
                   m_theme.font(9.5, true));
    if (grid.computed) {
        drawMatrixImage(p, g.grid, grid.image);
        p.setPen(QPen(outline, 1.5 * m_theme.scale));
    } else {
        p.setPen(QPen(m_theme.muted, 1, Qt::DashLine));
    }
    p.setBrush(Qt::NoBrush);
    p.drawRect(g.grid);
    if (grid.computed) return;
    p.setPen(m_theme.muted);
    drawFittedText(p, g.grid, Qt::AlignCenter, grid.emptyText, m_theme.font(8.5));
}

void TileDetailView::drawTableHeader(QPainter& p) const {
    const TableLayout& t = m_layout.table;
    for (std::size_t c = 0; c < m_model->columns.size(); ++c) {
        const bool active = m_model->columns[c].active;
        const QRectF r = t.columns[c].adjusted(2, 0, -2, 0);
        if (active) p.fillRect(r, withAlpha(m_theme.accent, m_theme.lecture ? 70 : 60));
        p.setPen(active ? m_theme.text : m_theme.muted);
        p.setFont(t.header.font);
        p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter,
                   t.header.titles[int(c)]);
    }
}

void TileDetailView::drawTableRow(QPainter& p, int index) const {
    const TableLayout& t = m_layout.table;
    const TileRow& row = m_model->rows[std::size_t(index)];
    const qreal y = t.rect.top() + t.headH + index * t.rowH;
    if (index % 2 == 1)
        p.fillRect(QRectF(t.rect.left(), y, t.rect.width(), t.rowH), withAlpha(m_theme.border, 40));
    for (std::size_t c = 0; c < m_model->columns.size(); ++c) {
        const TileColumn column = m_model->columns[c].column;
        if (column != TileColumn::Row) {
            drawCell(p, t.columns[c], y, cellOf(column, row));
            continue;
        }
        p.setPen(row.wrong ? m_theme.bad : m_theme.muted);
        drawFittedText(p, QRectF(t.columns[c].left() + 4, y, t.columns[c].width() - 6, t.lineH),
                       Qt::AlignLeft | Qt::AlignVCenter,
                       row.wrong ? QStringLiteral("%1 ✗").arg(row.row) : QString::number(row.row),
                       m_theme.mono(8.5, true));
    }
}

TileDetailView::Cell TileDetailView::cellOf(TileColumn column, const TileRow& row) const {
    const int n = m_model->valuesListed;
    const auto rowCell = [n](const TileRowValues& v, const QString& was) {
        return Cell{valuesText(v.now, n), was,
                    v.correct.size() ? tr("correct %1").arg(valuesText(v.correct, n)) : QString(),
                    v.changed, v.correct.size() > 0};
    };
    switch (column) {
    case TileColumn::Max:
        return {valueText(row.m.now) + (row.m.changed ? QStringLiteral(" ↑") : QString()),
                wasText(row.m.before), correctText(row.m.correct), row.m.changed,
                row.m.correct.has_value()};
    case TileColumn::Sum:
        return {valueText(row.l.now), wasText(row.l.before), correctText(row.l.correct),
                row.l.changed, row.l.correct.has_value()};
    case TileColumn::Correction:
        return {valueText(row.correction.now), correctionNoteText(row.correctionNote),
                correctText(row.correction.correct), row.correction.changed,
                row.correction.correct.has_value()};
    case TileColumn::Accumulator:
        return rowCell(row.accumulator,
                       row.accumulator.changed
                           ? tr("was %1").arg(valuesText(row.accumulator.before, n))
                           : QString());
    case TileColumn::Output:
        return rowCell(row.output, row.output.now.size()
                                       ? tr("divided by ℓ = %1").arg(valueText(row.l.now))
                                       : tr("after the last key block"));
    case TileColumn::Backend:
        if (!row.backend)
            return {QStringLiteral("—"), tr("recorded after 'update-output'"), {}, false, false};
        return {QStringLiteral("m %1  ℓ %2")
                    .arg(formatValue(row.backend->m, 3), formatValue(row.backend->l, 3)),
                row.backend->difference ? tr("|Δ| %1").arg(formatValue(*row.backend->difference, 2))
                                        : QString(),
                {},
                false,
                false};
    case TileColumn::Row:
        break;
    }
    return {};
}

void TileDetailView::drawCell(QPainter& p, const QRectF& column, qreal y, const Cell& cell) const {
    const TableLayout& t = m_layout.table;
    const QRectF r(column.left() + 2, y + 1, column.width() - 4, t.rowH - 2);
    // The correct run's green value stays off the highlight, where it reads clearly.
    if (cell.changed)
        p.fillRect(
            cell.correct.isEmpty() ? r : QRectF(r.left(), r.top(), r.width(), t.lineH + t.smallH),
            m_theme.changed);
    p.setPen(cell.wrong ? m_theme.bad : m_theme.text);
    drawFittedText(p, QRectF(r.left() + 3, r.top(), r.width() - 6, t.lineH),
                   Qt::AlignLeft | Qt::AlignVCenter, cell.now,
                   m_theme.mono(8.5, cell.changed || cell.wrong));
    if (!cell.was.isEmpty()) {
        p.setPen(m_theme.muted);
        drawFittedText(p, QRectF(r.left() + 3, r.top() + t.lineH, r.width() - 6, t.smallH),
                       Qt::AlignLeft | Qt::AlignVCenter, cell.was, m_theme.mono(7.5));
    }
    if (!cell.correct.isEmpty()) {
        p.setPen(m_theme.good);
        drawFittedText(p,
                       QRectF(r.left() + 3, r.top() + t.lineH + t.smallH, r.width() - 6, t.smallH),
                       Qt::AlignLeft | Qt::AlignVCenter, cell.correct, m_theme.mono(7.5, true));
    }
}

void TileDetailView::drawTableNote(QPainter& p) const {
    const TableLayout& t = m_layout.table;
    if (t.note.isEmpty()) return;
    p.setPen(m_theme.muted);
    drawFittedText(
        p,
        QRectF(t.rect.left() + 4, t.rect.bottom() - t.noteH + 2, t.rect.width() - 8, t.noteH - 2),
        Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, t.note, m_theme.font(7.5));
}

} // namespace flashviz::gui
