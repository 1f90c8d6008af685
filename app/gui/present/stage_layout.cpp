// Where the memory stage's pieces go: laid out when the frame or the size changes, not on every
// paint.
#include "present/stage_model.h"

#include "style/paint_util.h"

#include <QFontMetricsF>

#include <algorithm>
#include <limits>

namespace flashviz::gui {

namespace {

qreal lineHeight(const QFont& font) {
    return QFontMetricsF(font).height();
}

// Standard attention streams whole matrices: a small token travels.
QRectF token(const QRectF& r, qreal sc) {
    const qreal side = std::min({r.width(), r.height(), 40 * sc});
    return {r.left() + 4 * sc, r.center().y() - side / 2, side, side};
}

// The backward's rows (of matrices in HBM, of tiles on chip) are fewer only where that draws them
// this much larger: a panel filled top to bottom reads better than a half-empty one.
constexpr qreal kClearlyLarger = 1.2;

// One row of the HBM panel's matrices, side by side in `area`, and the pixels per element it
// drew them at (0 when every matrix is at its minimum side).
struct MatrixRow {
    std::vector<std::size_t> members; // indices into StageModel::matrices
    std::vector<QSize> shapes;
    std::vector<QRectF> rects;
    qreal scale = 0;
    int tallest = 1;
};

// `least`: the narrowest a matrix is drawn (44 px, or less for the backward's one row);
// `largest`: the tallest a matrix may be (its row's height: a short row keeps a thin matrix at
// the least width, not at its height).
void layOutMatrixRow(MatrixRow& row, const QRectF& area, qreal least, qreal largest, qreal sc) {
    // The matrices stay inside the panel however narrow it is: in a small window, narrower than
    // the width a matrix likes (the S, P box ran over the bus's arrows).
    const qreal count = qreal(std::max<std::size_t>(1, row.shapes.size()));
    const qreal gap = std::min(12 * sc, area.width() * 0.04);
    const qreal minSide = std::min(least, (area.width() - gap * (count - 1)) / count);
    row.rects = layoutSideBySide(row.shapes, area, gap, minSide);
    row.scale = 0;
    for (std::size_t i = 0; i < row.rects.size(); ++i) {
        row.tallest = std::max(row.tallest, row.shapes[i].height());
        if (row.rects[i].height() > minSide + 1e-9)
            row.scale = std::max(row.scale, row.rects[i].height() / row.shapes[i].height());
        row.rects[i].setHeight(std::min(row.rects[i].height(), largest));
    }
}

struct MatrixRects {
    std::vector<QRectF> rects; // as StageModel::matrices
    bool shapes = true;        // room for the shape line under each matrix
    // Pixels per row of the matrix drawn the flattest: which of two layouts shows more.
    qreal rowPixels = 0;
};

// The matrices' rectangles: one row (the forward), or the backward's two (its tiers; `oneRow`
// puts them side by side), to one scale (dQ as tall as Q), the second right under the first's
// labels. Two rows in a short panel (a 1366 × 768 laptop) keep each matrix's name and bytes; its
// shape is in the tooltip and the matrices view's titles.
MatrixRects matrixRects(const StageModel& model, const QRectF& content, qreal nameH, qreal lineH,
                        qreal least, qreal sc, bool oneRow) {
    std::vector<MatrixRow> rows;
    for (std::size_t i = 0; i < model.matrices.size(); ++i) {
        const std::size_t tier = oneRow ? 0 : std::size_t(std::max(0, model.matrices[i].tier));
        if (rows.size() <= tier) rows.resize(tier + 1);
        rows[tier].members.push_back(i);
        rows[tier].shapes.emplace_back(model.matrices[i].hbm.cols, model.matrices[i].hbm.rows);
    }
    const qreal rowGap = 6 * sc;
    const qreal count = qreal(std::max<std::size_t>(1, rows.size()));
    const auto rowHeight = [&](qreal labelsH) {
        return (content.height() - 2 * sc - count * labelsH - (count - 1) * rowGap) / count;
    };
    MatrixRects out;
    out.shapes = rows.size() < 2 || rowHeight(nameH + 2 * lineH + 4) >= 40 * sc;
    const qreal labelsH = nameH + (out.shapes ? 2 : 1) * lineH + 4;
    const qreal rowH = rowHeight(labelsH);
    for (MatrixRow& row : rows)
        layOutMatrixRow(row, QRectF(content.left(), content.top() + 2 * sc, content.width(), rowH),
                        least, rowH, sc);
    qreal scale = 0;
    for (const MatrixRow& row : rows)
        if (row.scale > 0) scale = scale > 0 ? std::min(scale, row.scale) : row.scale;
    out.rects.resize(model.matrices.size());
    qreal top = content.top() + 2 * sc;
    for (MatrixRow& row : rows) {
        // A row drawn larger than the others is drawn again at their scale.
        const qreal height = row.scale > scale + 1e-9 ? scale * row.tallest : rowH;
        layOutMatrixRow(row, QRectF(content.left(), top, content.width(), height), least, rowH, sc);
        qreal bottom = top;
        for (std::size_t i = 0; i < row.members.size(); ++i) {
            out.rects[row.members[i]] = row.rects[i];
            bottom = std::max(bottom, row.rects[i].bottom());
        }
        top = bottom + labelsH + rowGap;
    }
    out.rowPixels = std::numeric_limits<qreal>::max();
    for (std::size_t i = 0; i < out.rects.size(); ++i)
        out.rowPixels = std::min(out.rowPixels, out.rects[i].height() / model.matrices[i].hbm.rows);
    return out;
}

// The backward's two rows of matrices, or all of them in one row where that draws them larger
// (a wide, short stage: lecture mode's). In one row a matrix may be narrower than 44 px, down to
// what its labels need at the smallest type (`labelsNeed`): eleven of them share the width.
MatrixRects matrixRects(const StageModel& model, const QRectF& content, qreal nameH, qreal lineH,
                        qreal labelsNeed, qreal sc) {
    const MatrixRects asTiers = matrixRects(model, content, nameH, lineH, 44 * sc, sc, false);
    const bool tiers = std::any_of(model.matrices.begin(), model.matrices.end(),
                                   [](const StageMatrix& m) { return m.tier > 0; });
    if (!tiers) return asTiers;
    const qreal least = std::min(std::max(labelsNeed, 20.0), 44 * sc);
    MatrixRects inOneRow = matrixRects(model, content, nameH, lineH, least, sc, true);
    return inOneRow.rowPixels > kClearlyLarger * asTiers.rowPixels ? inOneRow : asTiers;
}

void layOutHbmMatrices(StageLayout& l, const StageModel& model, const Theme& theme) {
    const qreal sc = theme.scale;
    const qreal labelH = lineHeight(theme.font(8.5, true));
    const qreal smallH = lineHeight(theme.font(8));
    // The widest label at the smallest type drawFittedText shrinks to, less what a label may
    // stand out beyond its matrix.
    QFont smallest = theme.font(8);
    smallest.setPointSizeF(6.0);
    const QFontMetricsF tiny(smallest);
    qreal labelsNeed = 0;
    for (const StageMatrix& m : model.matrices)
        labelsNeed =
            std::max({labelsNeed, tiny.horizontalAdvance(m.shape),
                      tiny.horizontalAdvance(m.bytesShort), tiny.horizontalAdvance(m.name)});
    const MatrixRects placed =
        matrixRects(model, l.hbmContent, labelH, smallH, labelsNeed - 4 * sc + 2, sc);
    for (std::size_t i = 0; i < placed.rects.size(); ++i) {
        const StageMatrix& m = model.matrices[i];
        const QRectF r = placed.rects[i];
        MatrixPlace place;
        place.rect = r;
        // At most the matrix and a third of the gap to its neighbours (labels ran together:
        // "4096×644096×64").
        const qreal lw = std::min(std::max(r.width(), 60 * sc), r.width() + 4 * sc);
        place.nameRect = QRectF(r.center().x() - lw / 2, r.bottom() + 3, lw, labelH);
        place.nameRect.moveLeft(std::max(place.nameRect.left(), l.hbmContent.left()));
        const QRectF line = place.nameRect.translated(0, labelH);
        if (placed.shapes) place.shapeRect = QRectF(line.topLeft(), QSizeF(lw, smallH));
        place.bytesRect =
            QRectF(line.topLeft() + QPointF(0, placed.shapes ? smallH : 0), QSizeF(lw, smallH));
        place.bytesShort =
            QFontMetricsF(theme.font(8)).horizontalAdvance(m.bytes) > place.bytesRect.width();
        place.held = placeParts(r, m.image, m.hbm.rows, m.hbm.cols, m.hbm.held);
        place.heldWhileMoving =
            placeParts(r, m.image, m.hbm.rows, m.hbm.cols, m.hbm.heldWhileMoving);
        for (const QRect& part : m.hbm.running)
            place.running.push_back(elementRect(r, m.hbm.rows, m.hbm.cols, part));
        for (const QRect& part : m.hbm.runningWhileMoving)
            place.runningWhileMoving.push_back(elementRect(r, m.hbm.rows, m.hbm.cols, part));
        l.matrices.push_back(std::move(place));
    }
}

const MatrixPlace* placeOf(const StageLayout& l, const StageModel& model, MatrixId id) {
    for (std::size_t i = 0; i < model.matrices.size(); ++i)
        if (model.matrices[i].hbm.id == id) return &l.matrices[i];
    return nullptr;
}

void layOutHighlights(StageLayout& l, const StageModel& model) {
    for (const Highlight& h : model.highlights) {
        const HbmMatrix& m = model.matrix(h.matrix)->hbm;
        l.highlights.push_back(
            elementRect(placeOf(l, model, h.matrix)->rect, m.rows, m.cols, h.part));
    }
}

struct TileRows {
    std::vector<TilePlace> tiles; // as StageModel::tiles
    qreal unit = 0;               // pixels per element
};

// Rows of tiles to one scale, tile t in row rowOf[t] (rows 0, 1, ... in order, each in the
// tiles' order), as large as `area` allows.
TileRows layOutTileRows(const StageModel& model, const std::vector<int>& rowOf, const QRectF& area,
                        const Theme& theme) {
    const qreal sc = theme.scale;
    const QFontMetricsF labelMetrics(theme.font(7.5, true));
    const qreal lh = labelMetrics.height() + 2;
    const qreal gap = 10 * sc;
    std::vector<int> tallestInRow;
    for (std::size_t i = 0; i < model.tiles.size(); ++i) {
        const std::size_t row = std::size_t(rowOf[i]);
        if (tallestInRow.size() <= row) tallestInRow.resize(row + 1, 0);
        tallestInRow[row] = std::max(tallestInRow[row], model.tiles[i].rows);
    }
    const qreal count = qreal(tallestInRow.size());
    // A short chip (a 1366 × 768 laptop) closes the gaps between the rows, then makes the least
    // side smaller, before a row runs into the SRAM bar.
    qreal rowGap = gap, least = 14 * sc; // a one-column tile (m, ℓ, L_i, D_i) is still seen
    const qreal labels = count * lh;
    if (count > 1 && labels + (count - 1) * rowGap + count * least > area.height())
        rowGap = std::max(2.0, (area.height() - labels - count * least) / (count - 1));
    least = std::max(4.0, std::min(least, (area.height() - labels - (count - 1) * rowGap) / count));
    const qreal tallRoom = area.height() - labels - (count - 1) * rowGap;
    const auto side = [&](int elements, qreal unit) { return std::max(least, elements * unit); };
    const auto tallness = [&](qreal unit) {
        qreal h = 0;
        for (const int rows : tallestInRow)
            h += side(rows, unit);
        return h;
    };
    // A tile takes its side or its label's width, whichever is more: the narrow L_i under a long
    // "dO_i" ran the two labels together.
    const auto slot = [&](const ChipTile& t, qreal unit) {
        return std::max(side(t.cols, unit), labelMetrics.horizontalAdvance(t.name) + 4);
    };
    const auto widestRow = [&](qreal unit) {
        std::vector<qreal> widths(tallestInRow.size(), -gap);
        for (std::size_t i = 0; i < model.tiles.size(); ++i)
            widths[std::size_t(rowOf[i])] += slot(model.tiles[i], unit) + gap;
        return widths.empty() ? 0.0 : *std::max_element(widths.begin(), widths.end());
    };
    // The largest unit at which the rows fit the height and the widest row the width (found by
    // bisection: both grow with the unit).
    qreal lo = 0, hi = std::max(1.0, area.height());
    for (int i = 0; i < 50; ++i) {
        const qreal mid = (lo + hi) / 2;
        (tallness(mid) > tallRoom || widestRow(mid) > area.width() ? hi : lo) = mid;
    }
    TileRows out;
    out.unit = lo;
    out.tiles.resize(model.tiles.size());
    qreal y = area.top();
    for (std::size_t row = 0; row < tallestInRow.size(); ++row) {
        qreal x = area.left(), rowHeight = 0;
        for (std::size_t i = 0; i < model.tiles.size(); ++i) {
            if (std::size_t(rowOf[i]) != row) continue;
            const ChipTile& t = model.tiles[i];
            const qreal width = slot(t, out.unit);
            const QRectF r(x, y + lh, side(t.cols, out.unit), side(t.rows, out.unit));
            out.tiles[i] = {r, QRectF(r.left() - 4, r.top() - lh, width + 4, lh)};
            x += width + gap;
            rowHeight = std::max(rowHeight, r.height());
        }
        y += lh + rowHeight + rowGap;
    }
    return out;
}

// Rows of tiles (the tiles' tiers, in order), to one scale: FlashAttention's loaded tiles, then
// what is computed; the backward's key block, query block, then what is computed, or where that
// draws them larger (a short chip: lecture mode's) what is computed beside the key block's.
void layOutTiles(StageLayout& l, const StageModel& model, const QRectF& area, const Theme& theme) {
    std::vector<int> tiers;
    for (const ChipTile& t : model.tiles)
        tiers.push_back(t.tier);
    TileRows best = layOutTileRows(model, tiers, area, theme);
    if (std::find(tiers.begin(), tiers.end(), 2) != tiers.end()) {
        std::vector<int> twoRows = tiers;
        for (int& row : twoRows)
            if (row == 2) row = 0;
        TileRows merged = layOutTileRows(model, twoRows, area, theme);
        if (merged.unit > kClearlyLarger * best.unit) best = std::move(merged);
    }
    l.tiles = std::move(best.tiles);
}

// Standard attention's kernels, one above the other, and the note below them where it fits
// above the SRAM bar (it ran into the bar when short).
void layOutKernels(StageLayout& l, const StageModel& model, const QRectF& area,
                   const Theme& theme) {
    const qreal sc = theme.scale;
    const qreal count = qreal(model.kernels.size());
    const qreal h = std::max(lineHeight(theme.font(9.5, true)) + 6 * sc,
                             std::min(48 * sc, (area.height() - 40 * sc) / count));
    for (std::size_t i = 0; i < model.kernels.size(); ++i)
        l.kernels.emplace_back(area.left(), area.top() + qreal(i) * (h + 8 * sc), area.width(), h);
    const qreal noteTop = area.top() + count * (h + 8 * sc);
    const qreal noteH = std::min(36 * sc, area.bottom() - noteTop);
    if (noteH >= lineHeight(theme.font(6.5)))
        l.kernelNote = QRectF(area.left(), noteTop, area.width(), noteH);
}

void layOutChip(StageLayout& l, const StageModel& model, const Theme& theme) {
    const qreal sc = theme.scale;
    const qreal textH = lineHeight(theme.font(8));
    const qreal barH = textH + 8 * sc;
    const QRectF tileArea = l.chipContent.adjusted(0, 0, 0, -barH - 6 * sc);
    if (model.tiled)
        layOutTiles(l, model, tileArea, theme);
    else
        layOutKernels(l, model, tileArea, theme);
    l.sramBar =
        QRectF(l.chipContent.left(), l.chipContent.bottom() - barH, l.chipContent.width(), barH);
    l.sramTrack = QRectF(l.sramBar.left(), l.sramBar.top() + textH + 1, l.sramBar.width(),
                         l.sramBar.height() - textH - 1);
    l.sramText = QRectF(l.sramBar.left(), l.sramBar.top(), l.sramBar.width(), textH);
}

// An arrow from x0 to x1 at height y, its label above and the step's amount below.
BusLane busLane(qreal x0, qreal x1, qreal y, qreal sc) {
    const QRectF above(x0 - 4 * sc, y - 30 * sc, x1 - x0 + 8 * sc, 20 * sc);
    return {x0, x1, y, above, above.translated(0, 38 * sc)};
}

// L2's panel in the middle of the bus, when the GPU has one: its name and size at the top, the
// run's share of it as a vertical bar, and a word under the bar.
void layOutL2(StageLayout& l, const L2Panel& l2, const Theme& theme) {
    const qreal sc = theme.scale;
    const qreal width = std::max(l.bus.width() * 0.3, 28 * sc);
    l.l2Box = QRectF(l.bus.center().x() - width / 2, l.bus.top(), width, l.bus.height());
    // The read rate under the size where it fits at the smallest type (else the tooltip has it).
    QFont smallest = theme.font(8);
    smallest.setPointSizeF(6.0);
    const qreal lineH = lineHeight(theme.font(8));
    const qreal top = l.l2Box.top() + 4 * sc + lineHeight(theme.font(10, true)) + lineH;
    l.l2Rate = QFontMetricsF(smallest).horizontalAdvance(l2.rate) <= width - 4
                   ? QRectF(l.l2Box.left() + 2, top, width - 4, lineH)
                   : QRectF();
    const qreal titleH = top - l.l2Box.top() + (l.l2Rate.isNull() ? 0 : lineH) + 2 * sc;
    const qreal textH = lineHeight(theme.font(7.5)) + 4 * sc;
    const qreal trackW = std::min(14 * sc, width * 0.4);
    l.l2Track = QRectF(l.l2Box.center().x() - trackW / 2, l.l2Box.top() + titleH + 4 * sc, trackW,
                       std::max(8 * sc, l.l2Box.height() - titleH - textH - 12 * sc));
    l.l2Text = QRectF(l.l2Box.left() + 2, l.l2Track.bottom() + 4 * sc, width - 4, textH);
}

// The bus's arrows: chip ↔ HBM across it, or with L2 chip ↔ L2 on its right and L2 ↔ HBM on its
// left. Read and write lanes are far enough apart that the read's amount stays clear of the
// write's label when a step does both (the backward's dQ_i round trip: "+64 B" ran into "write").
void layOutBus(StageLayout& l, const StageModel& model, bool withL2, const Theme& theme) {
    const qreal sc = theme.scale;
    const qreal readY = l.bus.center().y() - 32 * sc, writeY = l.bus.center().y() + 32 * sc;
    qreal left = l.bus.left() + 8 * sc;
    if (withL2) {
        layOutL2(l, *model.l2, theme);
        l.l2ReadLane = busLane(l.bus.left() + 5 * sc, l.l2Box.left() - 5 * sc, readY, sc);
        l.l2WriteLane = busLane(l.bus.left() + 5 * sc, l.l2Box.left() - 5 * sc, writeY, sc);
        left = l.l2Box.right() + 5 * sc;
    }
    const qreal right = l.bus.right() - (withL2 ? 5 : 8) * sc;
    l.readLane = busLane(left, right, readY, sc);
    l.writeLane = busLane(left, right, writeY, sc);
}

QRectF chipEndRect(const StageLayout& l, const StageModel& model, const ChipEnd& end, qreal sc) {
    if (const auto* slot = std::get_if<ChipSlot>(&end)) {
        for (std::size_t i = 0; i < model.tiles.size(); ++i)
            if (model.tiles[i].slot == *slot) return l.tiles[i].rect;
        return {};
    }
    if (const auto* kernel = std::get_if<StandardKernel>(&end)) {
        for (std::size_t i = 0; i < model.kernels.size(); ++i)
            if (model.kernels[i].kernel == *kernel) return token(l.kernels[i], sc);
        return {};
    }
    return {l.chipContent.center(), QSizeF(20 * sc, 20 * sc)};
}

void layOutFlights(StageLayout& l, const StageModel& model, qreal sc) {
    // Tiles leaving L2 together start one above the other (K_j over V_j), not on one spot.
    const auto fromL2 = std::count_if(model.flights.begin(), model.flights.end(),
                                      [](const Flight& f) { return f.viaL2Only; });
    int nextFromL2 = 0;
    for (const Flight& f : model.flights) {
        const HbmMatrix& m = model.matrix(f.matrix)->hbm;
        const QRectF matrixRect = placeOf(l, model, f.matrix)->rect;
        QRectF hbmEnd = std::holds_alternative<StandardKernel>(f.chipEnd)
                            ? token(matrixRect, sc)
                            : elementRect(matrixRect, m.rows, m.cols, f.hbmPart);
        if (f.viaL2Only) { // from (or to) L2, no wider than it; the bus's middle where L2 is not drawn
            const QRectF cache =
                !l.l2Box.isNull() ? l.l2Box
                                  : QRectF(l.bus.center().x() - 12 * sc,
                                           l.bus.top() + l.bus.height() / 6, 24 * sc,
                                           l.bus.height() * 2 / 3);
            const qreal w = std::max(4 * sc, std::min(hbmEnd.width(), cache.width() - 6 * sc));
            const qreal h = hbmEnd.height() * (hbmEnd.width() > 0 ? w / hbmEnd.width() : 1);
            const qreal y = cache.top() + cache.height() * (nextFromL2 + 1) / qreal(fromL2 + 1);
            ++nextFromL2;
            hbmEnd = QRectF(cache.center().x() - w / 2, y - h / 2, w, h);
        }
        l.flights.push_back({hbmEnd, chipEndRect(l, model, f.chipEnd, sc)});
    }
}

void layOutCounters(StageLayout& l, qreal sc) {
    const QRectF inner = l.counterStrip.adjusted(10 * sc, 4 * sc, -10 * sc, -4 * sc);
    const qreal colW = inner.width() / 4;
    auto cell = [&](int column) {
        const QRectF c(inner.left() + column * colW, inner.top(), colW - 8 * sc, inner.height());
        return CounterPlace{
            QRectF(c.left(), c.top(), c.width(), c.height() * 0.3),
            QRectF(c.left(), c.top() + c.height() * 0.28, c.width(), c.height() * 0.42),
            QRectF(c.left(), c.top() + c.height() * 0.7, c.width(), c.height() * 0.3)};
    };
    l.counters = {cell(0), cell(1), cell(2), cell(3)};
}

} // namespace

StageLayout layOutStage(const StageModel& model, const QRectF& bounds, const Theme& theme) {
    const qreal sc = theme.scale;
    StageLayout l;
    l.bounds = bounds;
    const QRectF area = bounds.adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const qreal stripH = 46 * sc;
    // The measured line, where there is one, sits between the panels and the counters.
    const qreal measuredH =
        model.measuredLine.isEmpty() ? 0 : lineHeight(theme.font(8)) + 4 * sc;
    const QRectF top(area.left(), area.top(), area.width(),
                     area.height() - stripH - 6 * sc - measuredH);
    l.counterStrip = QRectF(area.left(), area.bottom() - stripH, area.width(), stripH);
    if (measuredH > 0)
        l.measuredLine = QRectF(area.left() + 4 * sc, top.bottom() + 3 * sc, area.width() - 8 * sc,
                                measuredH - 2 * sc);
    // L2 takes its room from HBM's panel, which scales its matrices to what it has: the
    // bus holds L2 and two pairs of arrows with their amounts (a 1366 px window leaves it 120 px).
    // Below 500 px (the view's smallest sizes) L2 is left out of the picture and kept in the
    // counters: eleven backward matrices need all of HBM's width there.
    const bool showL2 = model.l2 && bounds.width() >= 500 * sc;
    const qreal hbmShare = showL2 ? 0.47 : 0.53, chipShare = 0.36;
    l.hbmBox = QRectF(top.left(), top.top(), top.width() * hbmShare, top.height());
    l.chipBox = QRectF(top.right() - top.width() * chipShare, top.top(), top.width() * chipShare,
                       top.height());
    l.bus = QRectF(l.hbmBox.right(), top.top(), l.chipBox.left() - l.hbmBox.right(), top.height());
    l.hbmContent = panelContentRect(l.hbmBox, theme, true);
    l.chipContent = panelContentRect(l.chipBox, theme, true);
    layOutHbmMatrices(l, model, theme);
    layOutHighlights(l, model);
    layOutChip(l, model, theme);
    layOutBus(l, model, showL2, theme);
    layOutFlights(l, model, sc);
    layOutCounters(l, sc);
    return l;
}

} // namespace flashviz::gui
