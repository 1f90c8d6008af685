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
// The smallest type a number is printed at (points, before the theme's scale): below it a grid
// shows its colours alone and the table lists fewer values per row.
constexpr qreal kSmallestValuePoint = 7.0;
// The largest type of a grid's values, and the table's numbers (points, before the scale).
constexpr qreal kGridValuePoint = 9.5;
constexpr qreal kTableValuePoint = 8.5;
// The least room between a number and its neighbour, at scale 1: in a grid, between the text
// and the cell's edges together; in the table, the padding inside a column on each side.
constexpr qreal kValueGap = 4;
constexpr qreal kCellPadding = 5;
// How much wider than tall a grid's cells may grow in a short view, so that the values keep their
// room while the table below keeps its rows (a lecturer points at both).
constexpr qreal kMaxCellAspect = 1.8;
// A grid's values at their shortest: 2 significant digits, fewer where that takes more than 5
// characters ("-0.091" → "-0.09").
constexpr int kShortDigits = 2;
constexpr int kShortChars = 5;
// The view's margin above and below, and the room between the grids and the table (at scale 1).
constexpr qreal kMargin = 5;
constexpr qreal kGridGap = 5;
constexpr qreal kRowPadding = 3; // under a table row's lines

QString valuesText(const Vector& values, int limit) {
    if (values.size() == 0) return QStringLiteral("—");
    QStringList parts;
    for (Eigen::Index c = 0; c < std::min<Eigen::Index>(values.size(), limit); ++c)
        parts << formatValue(values(c), 3);
    QString text = parts.join(QLatin1Char(' '));
    if (values.size() > limit) text += QStringLiteral(" …");
    return text;
}

QString valueText(const std::optional<double>& value) {
    return value ? formatValue(*value) : QStringLiteral("—");
}

QString correctText(const std::optional<double>& value) {
    return value ? TileDetailView::tr("correct %1").arg(formatValue(*value)) : QString();
}

// A grid cell's value in at most `chars` characters where it can be: the most significant
// digits up to `digits` that keep it that short ("0.0456" → "0.046" → "0.05").
QString gridValueText(double value, int digits, int chars) {
    if (std::isinf(value) && value < 0) return QStringLiteral("−∞");
    QString text = formatValue(value, digits);
    while (text.size() > chars && digits > 1)
        text = formatValue(value, --digits);
    return text;
}

QString correctionNoteText(CorrectionNote note) {
    switch (note) {
    case CorrectionNote::FirstBlock:
        return TileDetailView::tr("first block");
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

// A column's titles (symbol line, explanation line; the symbols alone for a narrow table) and
// its share of the width beyond what its texts need.
struct ColumnLook {
    QString title, compact;
    qreal weight = 1;
};

ColumnLook columnLook(TileColumn column, const TileModel& model) {
    const int n = model.valuesListed;
    switch (column) {
    case TileColumn::Row:
        return {TileDetailView::tr("row"), TileDetailView::tr("row"), 0.5};
    case TileColumn::Max:
        return {TileDetailView::tr("m\nmax so far"), TileDetailView::tr("m"), 1.2};
    case TileColumn::Sum:
        return {TileDetailView::tr("ℓ\nsum so far"), TileDetailView::tr("ℓ"), 1.4};
    case TileColumn::Correction:
        return {TileDetailView::tr("e^(m_old−m_new)\ncorrection"), TileDetailView::tr("rescale"),
                1.6};
    case TileColumn::Accumulator:
        return {TileDetailView::tr("acc\nO before ÷ ℓ"), TileDetailView::tr("acc"), 0.5 + 0.58 * n};
    case TileColumn::Output:
        return {TileDetailView::tr("O = acc / ℓ\nat the last block"),
                TileDetailView::tr("O = acc/ℓ"), 0.3 + 0.58 * n};
    case TileColumn::Backend:
        // "CUDA (NVIDIA H200)" heads its column as "CUDA"; the note under the table has it in full.
        if (model.backward)
            return {TileDetailView::tr("%1\nrecorded dQ_i").arg(model.backendShortName),
                    model.backendShortName, 0.5 + 0.58 * n};
        return {TileDetailView::tr("%1\nrecorded").arg(model.backendShortName),
                model.backendShortName, 1.9};
    case TileColumn::UpstreamGradient:
        return {TileDetailView::tr("dO\nupstream gradient"), TileDetailView::tr("dO"),
                0.5 + 0.58 * n};
    case TileColumn::ForwardOutput:
        return {TileDetailView::tr("O\nthe forward's"), TileDetailView::tr("O"), 0.3 + 0.58 * n};
    case TileColumn::LogSumExp:
        return {TileDetailView::tr("L_i\nm + log ℓ"), TileDetailView::tr("L"), 1.1};
    case TileColumn::RowDot:
        return {TileDetailView::tr("D_i\nrowsum(dO∘O)"), TileDetailView::tr("D"), 1.2};
    case TileColumn::QueryGradient:
        return {TileDetailView::tr("dQ_i\nin HBM, read-add-write"), TileDetailView::tr("dQ_i"),
                0.5 + 0.58 * n};
    case TileColumn::Key:
        return {TileDetailView::tr("key"), TileDetailView::tr("key"), 0.5};
    case TileColumn::KeyGradient:
        return {TileDetailView::tr("dK_j\non chip"), TileDetailView::tr("dK_j"), 0.5 + 0.58 * n};
    case TileColumn::ValueGradient:
        return {TileDetailView::tr("dV_j\non chip"), TileDetailView::tr("dV_j"), 0.5 + 0.58 * n};
    }
    return {};
}

// The label of a line's query row or key ("3", "3 ✗" where the check finds it wrong; blank on a
// line without one).
QString lineLabel(int index, bool wrong) {
    if (index < 0) return {};
    return wrong ? QStringLiteral("%1 ✗").arg(index) : QString::number(index);
}

} // namespace

TileDetailView::TileDetailView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void TileDetailView::setMaxRows(int rows) {
    m_maxRows = std::max(1, rows);
    frameChanged();
    layOut();
    update();
}

void TileDetailView::frameChanged() {
    m_model.reset();
    if (m_frame) m_model = tileModel(*m_frame, viewOptions());
}

std::vector<PlacedText> TileDetailView::placedTexts() const {
    std::vector<PlacedText> texts;
    for (const GridLayout& g : m_layout.grids)
        texts.insert(texts.end(), g.valueTexts.begin(), g.valueTexts.end());
    texts.insert(texts.end(), m_layout.table.texts.begin(), m_layout.table.texts.end());
    return texts;
}

qreal TileDetailView::wasGap() const {
    return 2 * kCellPadding * m_theme.scale;
}

bool TileDetailView::gridsShowValues() const {
    return m_model && shownGridsPrintValues();
}

bool TileDetailView::shownGridsPrintValues() const {
    for (std::size_t i = 0; i < m_layout.shown.size(); ++i)
        if (m_layout.shown[i]->computed && !m_layout.grids[i].values) return false;
    return true;
}

// A grid's title, or its short form where the title would shrink more than 1.5 points.
QString TileDetailView::titleOf(const TileGrid& grid, qreal width) const {
    if (grid.shortTitle.isEmpty()) return grid.title;
    const QFontMetricsF fm(m_theme.font(8, true));
    return fm.horizontalAdvance(grid.title) <= width ? grid.title : grid.shortTitle;
}

// ---- layout --------------------------------------------------------------------------------

// Where the heading, the grids and the table go: the table decides how much room the grids get.
void TileDetailView::layOut() {
    m_layout = {};
    if (!m_model) return;
    const qreal sc = m_theme.scale;
    const QRectF area = QRectF(rect()).adjusted(10 * sc, kMargin * sc, -10 * sc, -kMargin * sc);
    const qreal headH = QFontMetricsF(m_theme.font(10.5, true)).height() + 4 * sc;
    m_layout.heading = QRectF(area.left(), area.top(), area.width() * 0.7, headH);
    m_layout.stepName =
        QRectF(area.left() + area.width() * 0.7, area.top(), area.width() * 0.3, headH);
    // Wide (lecture): grids on the left, the table beside them. Otherwise the grids take what they
    // need on top (cells up to a readable size) and the table the rest below.
    const bool wide = area.width() > 2.1 * area.height();
    layOutTableRows(area, headH, wide);
    const QRectF gridArea = layOutRegions(area, headH, wide);
    const std::vector<const TileGrid*> all = m_model->grids();
    layOutGrids(gridArea, all);
    // The backward's four grids side by side lose their values where a pair keeps them: then the
    // pair this step is about is drawn (S and P, or dP and dS).
    if (all.size() == 4 && !shownGridsPrintValues()) {
        const int first = 2 * m_model->focusPair;
        const std::vector<const TileGrid*> pair = {all[std::size_t(first)],
                                                   all[std::size_t(first + 1)]};
        const Layout four = m_layout;
        layOutGrids(gridArea, pair);
        if (!shownGridsPrintValues()) { // values in neither: all four, as colours
            m_layout.shown = four.shown;
            m_layout.grids = four.grids;
        }
    }
    if (m_model->hasTable) layOutTableCells();
}

// The grids side by side, each in an equal share of the width.
void TileDetailView::layOutGrids(const QRectF& gridArea,
                                 const std::vector<const TileGrid*>& shown) {
    const qreal sc = m_theme.scale;
    const qreal gap = 16 * sc;
    const int count = int(shown.size());
    m_layout.shown = shown;
    m_layout.grids.clear();
    if (count == 0) return;
    const qreal w = (gridArea.width() - gap * (count - 1)) / count;
    for (int i = 0; i < count; ++i) {
        const QRectF box(gridArea.left() + i * (w + gap), gridArea.top(), w, gridArea.height());
        m_layout.grids.push_back(shown[std::size_t(i)]->wholeMatrix
                                     ? wholeMatrixLayout(box)
                                     : valueGridLayout(box, *shown[std::size_t(i)]));
    }
}

// The table's row heights, and how many rows fit: large tiles leave the grids more room (they
// show as images and need the height); in a short view, only the rows that fit (at least one),
// and the note then says how many are shown. A row has a second line only where some listed
// cell has one.
void TileDetailView::layOutTableRows(const QRectF& area, qreal headH, bool wide) {
    const qreal sc = m_theme.scale;
    const TileModel& model = *m_model;
    TableLayout& t = m_layout.table;
    if (model.hasTable) {
        // Beside the grids (lecture) the table takes what its columns need at the largest
        // type, between 60 % and 80 % of the width; the grids the rest.
        qreal tableW = area.width();
        if (wide && model.backward) {
            tableW = backwardTableWidth(area.width());
        } else if (wide) {
            qreal need = 0;
            for (const qreal w : columnContents(model.valuesListed, kTableValuePoint, false))
                need += w;
            tableW = std::clamp(need, area.width() * 0.6, area.width() * 0.8) - 18 * sc;
        }
        t.rect.setWidth(tableW);
        const TableFit fit = fitTable(tableW, false, false);
        t.point = fit.point;
        t.valuesShown = fit.valuesShown;
        t.header = fit.header;
        for (const TileRow& row : model.rows)
            for (const TileTableColumn& c : model.columns) {
                const Cell cell = cellOf(c.column, row, t.valuesShown);
                t.wasLine = t.wasLine || !cell.was.isEmpty();
                t.correctLine = t.correctLine || !cell.correct.isEmpty();
            }
    }
    const auto setRowHeight = [&] {
        t.lineH = QFontMetricsF(m_theme.mono(t.point)).height();
        t.smallH = QFontMetricsF(m_theme.mono(t.point - 1)).height();
        t.rowH = t.lineH + (t.wasLine ? t.smallH : 0) + (t.correctLine ? t.smallH : 0) +
                 kRowPadding * sc;
    };
    setRowHeight();
    const qreal noteLinesH = t.smallH * (model.bug && model.backendShown ? 2 : 1) + 6 * sc;
    const bool grids = !model.grids().empty();
    const qreal gridH = grids ? std::max(kMinGridHeight * sc, gridNeed(smallestValueCell())) : 0;
    const auto headerHeight = [&] {
        qsizetype lines = 1;
        for (const QString& title : t.header.titles)
            lines = std::max(lines, title.count(QLatin1Char('\n')) + 1);
        return qreal(lines) * QFontMetricsF(t.header.font).height() + 6 * sc;
    };
    const auto roomForRows = [&] {
        return area.height() - headH - t.headH - (wide || !grids ? 0 : gridH + kGridGap * sc);
    };
    t.headH = headerHeight();
    const int tileRows = model.tileRows;
    const int wanted = std::min(
        {tileRows, m_maxRows, tileRows > kTileRowsListed ? kTallTileRowsListed : kTileRowsListed});
    // The note line is kept only for a note: all rows listed, none is needed to say so.
    const qreal modelNoteH = model.notes.isEmpty() ? 0 : noteLinesH;
    const auto allFit = [&] { return int((roomForRows() - modelNoteH) / t.rowH) >= wanted; };
    // The rows come first: before the explanation lines of the titles, before the second lines
    // of the values ("was 0.32", "correct 0.41" go beside the value where the columns have
    // room; "was" is left out where they have not), and before the type's size (down to the
    // smallest readable; narrower type still fits the columns).
    const auto tryBeside = [&] {
        if (allFit() || !(t.wasLine || t.correctLine)) return;
        const TableFit beside = fitTable(t.rect.width(), true, true);
        if (!beside.header.fits || beside.valuesShown != t.valuesShown) return;
        t.linesBeside = true;
        t.wasLine = t.correctLine = false;
        t.point = beside.point;
        t.header = beside.header;
        setRowHeight();
    };
    if (model.hasTable && !allFit()) {
        t.header = fitTable(t.rect.width(), true, false).header;
        t.headH = headerHeight();
        tryBeside();
        if (!allFit() && t.wasLine) {
            t.wasLine = false;
            t.wasDropped = true;
            setRowHeight();
            tryBeside();
        }
        t.headH = headerHeight();
    }
    while (model.hasTable && !allFit() && t.point > kSmallestValuePoint) {
        t.point -= 0.5;
        setRowHeight();
    }
    t.shownRows = allFit()
                      ? wanted
                      : std::max(1, std::min(wanted, int((roomForRows() - noteLinesH) / t.rowH)));
    QStringList notes = model.notes;
    if (tileRows > t.shownRows && model.backward)
        notes.prepend(tr("%1 of %2 lines listed").arg(t.shownRows).arg(tileRows));
    else if (tileRows > t.shownRows)
        notes.prepend(tr("rows %1–%2 of %3–%4 listed")
                          .arg(model.rows.front().row)
                          .arg(model.rows.front().row + t.shownRows - 1)
                          .arg(model.rows.front().row)
                          .arg(model.rows.front().row + tileRows - 1));
    t.note = notes.join(QStringLiteral(" · "));
    t.noteH = notes.isEmpty() ? 0 : noteLinesH;
}

// The backward's table beside its grids (three gradients a line): the narrowest share of the
// width, from 45 % to 60 %, that still lists two entries of each gradient, so that the signed
// gradients' grids keep the room to print their values.
qreal TileDetailView::backwardTableWidth(qreal width) const {
    const qreal gap = 18 * m_theme.scale;
    const int entries = std::min(2, m_model->valuesListed);
    for (const qreal share : {0.45, 0.5, 0.55}) {
        const TableFit fit = fitTable(width * share - gap, false, false);
        if (fit.header.fits && fit.valuesShown >= entries) return width * share - gap;
    }
    return width * 0.6 - gap;
}

// Places the table (its height known from its rows) and returns where the grids go.
QRectF TileDetailView::layOutRegions(const QRectF& area, qreal headH, bool wide) {
    const qreal sc = m_theme.scale;
    TableLayout& t = m_layout.table;
    const qreal tableH = m_model->hasTable ? t.headH + t.shownRows * t.rowH + t.noteH : 0;
    if (wide) {
        const qreal gw = m_model->hasTable ? area.width() - t.rect.width() - 18 * sc : area.width();
        t.rect = QRectF(area.left() + gw + 18 * sc, area.top() + headH, t.rect.width(), tableH);
        return QRectF(area.left(), area.top() + headH, gw, area.height() - headH);
    }
    if (m_model->grids().empty()) { // no tile at this step: the table has the room
        t.rect = QRectF(area.left(), area.top() + headH, area.width(), tableH);
        return {};
    }
    const qreal minGridH = kMinGridHeight * sc;
    const qreal preferred = gridNeed(52 * sc);
    const qreal gridH =
        std::max(minGridH, std::min(preferred, area.height() - headH - tableH - kGridGap * sc));
    t.rect = QRectF(area.left(), area.top() + headH + gridH + kGridGap * sc, area.width(), tableH);
    return QRectF(area.left(), area.top() + headH, area.width(), gridH);
}

// The height a grid takes with cells of this height: its title, its column labels, its rows.
qreal TileDetailView::gridNeed(qreal cellH) const {
    const int rows = std::min(m_model->gridRows, 12);
    return QFontMetricsF(m_theme.font(9.5, true)).height() + 2 +
           QFontMetricsF(m_theme.font(7.5)).height() + rows * cellH + 2 * m_theme.scale;
}

// The least cell height at which a grid of values prints them (at the smallest type); what the
// layout gives the grids before the table's rows. Grids too large to print values (more than
// 8 rows or columns) show colours alone and need no more than kMinGridHeight.
qreal TileDetailView::smallestValueCell() const {
    if (m_model->scores.wholeMatrix || m_model->gridRows > 8) return 0;
    const QFontMetricsF fm(m_theme.mono(kSmallestValuePoint));
    // Before the tile is computed its values are not known: room for a signed 2-digit value.
    qreal widest = fm.horizontalAdvance(QStringLiteral("-0.00"));
    for (const TileGrid* g : m_model->grids())
        for (Eigen::Index i = 0; i < g->values.size(); ++i)
            widest = std::max(widest, fm.horizontalAdvance(gridValueText(
                                          g->values.data()[i], kShortDigits, kShortChars)));
    return std::max((widest + kValueGap * m_theme.scale) / kMaxCellAspect, fm.height() + 2);
}

// Every listed cell's lines, where the header's columns put them.
void TileDetailView::layOutTableCells() {
    TableLayout& t = m_layout.table;
    const qreal sc = m_theme.scale;
    qreal x = t.rect.left();
    for (const qreal w : t.header.widths) {
        t.columns.emplace_back(x, t.rect.top(), w, t.headH);
        x += w;
    }
    const QFont smallFont = m_theme.mono(t.point - 1);
    const QFont correctFont = m_theme.mono(t.point - 1, true);
    for (int i = 0; i < t.shownRows; ++i) {
        const TileRow& row = m_model->rows[std::size_t(i)];
        const qreal y = t.rect.top() + t.headH + i * t.rowH;
        for (std::size_t c = 0; c < m_model->columns.size(); ++c) {
            const TileColumn column = m_model->columns[c].column;
            const QRectF r(t.columns[c].left() + 2, y + 1, t.columns[c].width() - 4, t.rowH - 2);
            const qreal pad = kCellPadding * sc - 2;
            const auto line = [&](qreal top, qreal h) {
                return QRectF(r.left() + pad, top, r.width() - 2 * pad, h);
            };
            if (column == TileColumn::Row || column == TileColumn::Key) {
                const bool key = column == TileColumn::Key;
                const bool wrong = key ? row.keyWrong : row.wrong;
                t.texts.push_back({line(r.top(), t.lineH),
                                   lineLabel(key ? row.key : row.row, wrong),
                                   m_theme.mono(t.point, true), Qt::AlignLeft | Qt::AlignVCenter,
                                   wrong ? m_theme.bad : m_theme.muted});
                continue;
            }
            const Cell cell = cellOf(column, row, t.valuesShown);
            const QFont nowFont = m_theme.mono(t.point, cell.changed || cell.wrong);
            const bool wasShown = !cell.was.isEmpty() && !t.wasDropped;
            // Beside the value (one line a row): the value, then what it was, then the correct
            // run's, each as wide as its text; otherwise each on a line of its own.
            qreal along = line(r.top(), t.lineH).left();
            const auto next = [&](const QString& text, const QFont& font, qreal top, qreal h) {
                QRectF box = line(top, h);
                if (!t.linesBeside) return box;
                box.setLeft(along);
                box.setWidth(std::min(box.width(), QFontMetricsF(font).horizontalAdvance(text)));
                along = box.right() + wasGap();
                return box;
            };
            const QRectF nowRect = next(cell.now, nowFont, r.top(), t.lineH);
            t.texts.push_back({nowRect, cell.now, nowFont, Qt::AlignLeft | Qt::AlignVCenter,
                               cell.wrong ? m_theme.bad : m_theme.text});
            if (wasShown)
                t.texts.push_back({t.linesBeside ? next(cell.was, smallFont, r.top(), t.lineH)
                                                 : line(r.top() + t.lineH, t.smallH),
                                   cell.was, smallFont, Qt::AlignLeft | Qt::AlignVCenter,
                                   m_theme.muted});
            // The correct run's green value stays off the highlight, where it reads clearly.
            if (cell.changed)
                t.highlights.push_back(
                    cell.correct.isEmpty() ? r
                    : t.linesBeside
                        ? QRectF(r.left(), r.top(), along - wasGap() / 2 - r.left(), r.height())
                        : QRectF(r.left(), r.top(), r.width(),
                                 t.lineH + (t.wasLine ? t.smallH : 0)));
            if (!cell.correct.isEmpty())
                t.texts.push_back(
                    {t.linesBeside ? next(cell.correct, correctFont, r.top(), t.lineH)
                                   : line(r.top() + t.lineH + (t.wasLine ? t.smallH : 0), t.smallH),
                     cell.correct, correctFont, Qt::AlignLeft | Qt::AlignVCenter, m_theme.good});
        }
    }
}

// The table's number size and the values listed per row of acc and O: the largest size, then
// the most values, at which every column holds its widest text beside its neighbours; the
// header's titles then take what fits (fitTableHeader).
TileDetailView::TableFit TileDetailView::fitTable(qreal width, bool compactTitles,
                                                  bool linesBeside) const {
    TableFit fit;
    for (int n = m_model->valuesListed; n >= 1; --n) {
        for (qreal point = kTableValuePoint; point >= kSmallestValuePoint; point -= 0.5) {
            fit = {point, n,
                   fitHeader(columnContents(n, point, linesBeside), width, compactTitles)};
            if (fit.header.fits) return fit;
        }
    }
    return fit; // not even one value at the smallest type: the narrowest there is
}

// What each column's texts need at this number size: its widest line and its padding.
std::vector<qreal> TileDetailView::columnContents(int valuesShown, qreal point,
                                                  bool linesBeside) const {
    const QFontMetricsF bold(m_theme.mono(point, true)), small(m_theme.mono(point - 1, true));
    std::vector<qreal> contents;
    for (const TileTableColumn& c : m_model->columns) {
        qreal widest = 0;
        for (const TileRow& row : m_model->rows) {
            if (c.column == TileColumn::Row || c.column == TileColumn::Key) {
                const int index = c.column == TileColumn::Row ? row.row : row.key;
                widest = std::max(widest, bold.horizontalAdvance(lineLabel(index, true)));
                continue;
            }
            const Cell cell = cellOf(c.column, row, valuesShown);
            const qreal was = m_layout.table.wasDropped ? 0 : small.horizontalAdvance(cell.was);
            const qreal now = bold.horizontalAdvance(cell.now);
            const qreal correct = small.horizontalAdvance(cell.correct);
            const qreal beside =
                now + (was > 0 ? wasGap() + was : 0) + (correct > 0 ? wasGap() + correct : 0);
            widest = std::max({widest, linesBeside ? beside : std::max({now, was, correct})});
        }
        contents.push_back(std::ceil(widest) + 2 * kCellPadding * m_theme.scale + 1);
    }
    return contents;
}

// One header size for all columns: the largest at which the titles fit side by side (the compact
// ones when the whole titles cannot); the columns then share the width by weight, each at least
// as wide as its title and its values.
TableHeader TileDetailView::fitHeader(const std::vector<qreal>& contents, qreal width,
                                      bool compactTitles) const {
    QStringList titles, compact;
    std::vector<qreal> weights;
    for (const TileTableColumn& c : m_model->columns) {
        const ColumnLook look = columnLook(c.column, *m_model);
        titles << (compactTitles ? look.compact : look.title);
        compact << look.compact;
        weights.push_back(look.weight);
    }
    return fitTableHeader(titles, compact, weights, contents, m_theme.font(8.5, true), 6.5, width,
                          12);
}

// A grid of values: the title, then row labels on the left and column labels on top; cells as
// large as the box allows, with their values printed where the widest of them, at the largest
// type that fits, leaves kValueGap to the cell's edges (3 significant digits, then 2).
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
    g.cellH = std::min(g.area.width() / cols, g.area.height() / rows);
    g.cellW = std::min(g.area.width() / cols, g.cellH * kMaxCellAspect);
    g.grid = QRectF(g.area.left(), g.area.top(), g.cellW * cols, g.cellH * rows);
    g.labels = g.cellH >= 10 * sc;
    const qreal room = g.cellW - kValueGap * sc;
    // Cells too small for the smallest type show colours alone: no value is formatted (a 64 x 64
    // tile has 8192 of them, and this runs on every step).
    const QFontMetricsF smallest(m_theme.mono(kSmallestValuePoint));
    if (smallest.height() > g.cellH - 2 || smallest.horizontalAdvance(QStringLiteral("0")) > room)
        return g;
    struct Form {
        int digits, chars;
        qreal smallest;
    };
    for (const Form& form :
         {Form{3, 6, 8.0}, Form{kShortDigits, kShortChars, kSmallestValuePoint}}) {
        QStringList texts;
        for (Eigen::Index i = 0; i < grid.values.size(); ++i)
            texts << gridValueText(grid.values.data()[i], form.digits, form.chars);
        // The widest value of the grids drawn (where computed): they print alike, side by side.
        QString widest;
        for (const TileGrid* shown : m_layout.shown)
            for (Eigen::Index i = 0; i < shown->values.size(); ++i) {
                const QString text =
                    gridValueText(shown->values.data()[i], form.digits, form.chars);
                if (text.size() > widest.size()) widest = text;
            }
        for (qreal point = kGridValuePoint; point >= form.smallest && !g.values; point -= 0.5) {
            const QFont font = m_theme.mono(point);
            const QFontMetricsF fm(font);
            if (fm.horizontalAdvance(widest) > room || fm.height() > g.cellH - 2) continue;
            g.values = true;
            for (int r = 0; r < rows; ++r)
                for (int c = 0; c < cols; ++c) {
                    const double v = grid.values(r, c);
                    const QColor bg = grid.colouring == Colouring::Diverging
                                          ? divergingColour(v, grid.scaleMax)
                                          : sequentialColour(v, grid.scaleMax);
                    // Matrix is row-major: the text of (r, c) is at r * cols + c.
                    g.valueTexts.push_back({QRectF(g.grid.left() + c * g.cellW,
                                                   g.grid.top() + r * g.cellH, g.cellW, g.cellH),
                                            texts[r * cols + c], font, Qt::AlignCenter,
                                            textOn(bg)});
                }
        }
        if (g.values) break;
    }
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
    for (std::size_t i = 0; i < m_layout.shown.size(); ++i) {
        const TileGrid& grid = *m_layout.shown[i];
        if (grid.wholeMatrix)
            drawWholeMatrix(p, grid, m_layout.grids[i],
                            &grid == &m_model->scores ? m_theme.s : m_theme.p);
        else
            drawGrid(p, grid, m_layout.grids[i]);
    }
    if (!m_model->hasTable) return;
    drawTableHeader(p);
    drawTableRows(p);
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
    drawFittedText(p, g.title, Qt::AlignLeft | Qt::AlignVCenter, titleOf(grid, g.title.width()),
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
    // Cells too small to outline one by one: the grid itself is outlined as holding wrong values.
    if (!grid.wrongCells.empty() && !cellsOutlined(g)) {
        const qreal out = 3 * m_theme.scale;
        p.setPen(QPen(m_theme.bad, 2 * m_theme.scale));
        p.drawRect(g.grid.adjusted(-out, -out, out, out));
    }
}

bool TileDetailView::cellsOutlined(const GridLayout& g) const {
    return g.cellH >= 4 * m_theme.scale;
}

void TileDetailView::drawEmptyGrid(QPainter& p, const TileGrid& grid, const GridLayout& g) const {
    p.setPen(QPen(m_theme.muted, 1, Qt::DashLine));
    p.setBrush(Qt::NoBrush);
    const QRectF r = g.area.adjusted(0, 0, -4, -4);
    p.drawRect(r);
    p.setPen(m_theme.muted);
    drawFittedText(p, r.adjusted(4, 4, -4, -4), Qt::AlignCenter | Qt::TextWordWrap, grid.emptyText,
                   m_theme.font(8.5));
}

// Each cell in its colour with its value (where they fit), and each row's maximum outlined on
// the step that takes it; cell by cell, as an outline overlaps the next cell's edge.
void TileDetailView::drawGridCells(QPainter& p, const TileGrid& grid, const GridLayout& g) const {
    const qreal sc = m_theme.scale;
    const bool markMax = !grid.rowMaxColumn.empty() && g.cellH >= 6 * sc;
    const bool markWrong = !grid.wrongCells.empty() && cellsOutlined(g);
    if (!g.values && !markMax && !markWrong) return;
    for (int r = 0; r < grid.values.rows(); ++r) {
        const int maxCol = markMax ? grid.rowMaxColumn[std::size_t(r)] : -1;
        for (int c = 0; c < grid.values.cols(); ++c) {
            const QRectF rc(g.grid.left() + c * g.cellW, g.grid.top() + r * g.cellH, g.cellW, g.cellH);
            if (g.values) {
                const double v = grid.values(r, c);
                p.fillRect(rc, grid.colouring == Colouring::Diverging
                                   ? divergingColour(v, grid.scaleMax)
                                   : sequentialColour(v, grid.scaleMax));
                p.setPen(QPen(withAlpha(m_theme.border, 120), 0.5));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rc);
                drawPlacedText(p, g.valueTexts[std::size_t(r * grid.values.cols() + c)]);
            }
            if (c == maxCol) {
                p.setPen(QPen(m_theme.text, std::max(1.5, 2 * sc)));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rc.adjusted(1.5, 1.5, -1.5, -1.5));
            }
            if (markWrong && grid.wrongCells[std::size_t(r * grid.values.cols() + c)]) {
                p.setPen(QPen(m_theme.bad, std::max(1.5, 2 * sc)));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rc.adjusted(1, 1, -1, -1));
            }
        }
    }
}

void TileDetailView::drawGridLabels(QPainter& p, const TileGrid& grid, const GridLayout& g) const {
    if (!g.labels) return;
    p.setPen(m_theme.muted);
    p.setFont(m_theme.font(7.5));
    for (int r = 0; r < grid.values.rows(); ++r)
        p.drawText(QRectF(g.left, g.grid.top() + r * g.cellH, g.labelW - 3, g.cellH),
                   Qt::AlignRight | Qt::AlignVCenter, QString::number(grid.firstRow + r));
    for (int c = 0; c < grid.values.cols(); ++c)
        p.drawText(QRectF(g.grid.left() + c * g.cellW, g.grid.top() - g.labelH, g.cellW, g.labelH),
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

void TileDetailView::drawTableRows(QPainter& p) const {
    const TableLayout& t = m_layout.table;
    for (int i = 1; i < t.shownRows; i += 2)
        p.fillRect(
            QRectF(t.rect.left(), t.rect.top() + t.headH + i * t.rowH, t.rect.width(), t.rowH),
            withAlpha(m_theme.border, 40));
    for (const QRectF& r : t.highlights)
        p.fillRect(r, m_theme.changed);
    for (const PlacedText& text : t.texts)
        drawPlacedText(p, text);
}

// A value's second line says what it was (or how it came about) on the step that changes it,
// and only then: the rows stay one line high on the other steps.
TileDetailView::Cell TileDetailView::cellOf(TileColumn column, const TileRow& row,
                                            int valuesShown) const {
    const int n = valuesShown;
    const auto rowCell = [n](const TileRowValues& v, const QString& was) {
        return Cell{valuesText(v.now, n), v.changed ? was : QString(),
                    v.correct.size() ? tr("correct %1").arg(valuesText(v.correct, n)) : QString(),
                    v.changed, v.correct.size() > 0};
    };
    const auto was = [](const TileValue& v) {
        return v.changed && v.before ? tr("was %1").arg(formatValue(*v.before)) : QString();
    };
    switch (column) {
    case TileColumn::Max:
        return {valueText(row.m.now) + (row.m.changed ? QStringLiteral(" ↑") : QString()),
                was(row.m), correctText(row.m.correct), row.m.changed, row.m.correct.has_value()};
    case TileColumn::Sum:
        return {valueText(row.l.now), was(row.l), correctText(row.l.correct), row.l.changed,
                row.l.correct.has_value()};
    case TileColumn::Correction: {
        const bool explained =
            row.correction.changed || row.correctionNote == CorrectionNote::Skipped ||
            (row.correction.now && (m_model->stepKind == StepKind::UpdateSum ||
                                    m_model->stepKind == StepKind::UpdateOutput));
        return {valueText(row.correction.now),
                explained ? correctionNoteText(row.correctionNote) : QString(),
                correctText(row.correction.correct), row.correction.changed,
                row.correction.correct.has_value()};
    }
    case TileColumn::Accumulator:
        return rowCell(row.accumulator, tr("was %1").arg(valuesText(row.accumulator.before, n)));
    case TileColumn::Output:
        return rowCell(row.output, tr("÷ ℓ = %1").arg(valueText(row.l.now)));
    case TileColumn::Backend:
        if (m_model->backward) {
            if (!row.backwardBackend) return {QStringLiteral("—"), {}, {}, false, false};
            const BackwardRecord& record = *row.backwardBackend;
            const QString difference = record.difference
                                           ? tr("|Δ| %1").arg(formatValue(*record.difference, 2))
                                           : QString();
            // A line without a query row (dK_j, dV_j stored) has its difference alone.
            if (record.dq.size() == 0)
                return {
                    difference.isEmpty() ? QStringLiteral("—") : difference, {}, {}, false, false};
            return {valuesText(record.dq, n), difference, {}, false, false};
        }
        if (!row.backend) return {QStringLiteral("—"), {}, {}, false, false};
        return {QStringLiteral("m %1 ℓ %2")
                    .arg(formatValue(row.backend->m, 3), formatValue(row.backend->l, 3)),
                row.backend->difference ? tr("|Δ| %1").arg(formatValue(*row.backend->difference, 2))
                                        : QString(),
                {},
                false,
                false};
    case TileColumn::UpstreamGradient:
        return rowCell(row.dO, {});
    case TileColumn::ForwardOutput:
        return rowCell(row.output, {});
    case TileColumn::LogSumExp:
        if (row.row < 0) return {};
        return {valueText(row.lse.now), {}, {}, false, false};
    case TileColumn::RowDot:
        if (row.row < 0) return {};
        return {valueText(row.delta.now),
                {},
                correctText(row.delta.correct),
                row.delta.changed,
                row.delta.correct.has_value()};
    case TileColumn::QueryGradient:
        if (row.row < 0) return {};
        return rowCell(row.dq, tr("was %1").arg(valuesText(row.dq.before, n)));
    case TileColumn::KeyGradient:
        if (row.key < 0) return {};
        return rowCell(row.dk, tr("was %1").arg(valuesText(row.dk.before, n)));
    case TileColumn::ValueGradient:
        if (row.key < 0) return {};
        return rowCell(row.dv, tr("was %1").arg(valuesText(row.dv.before, n)));
    case TileColumn::Row:
    case TileColumn::Key:
        break;
    }
    return {};
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
