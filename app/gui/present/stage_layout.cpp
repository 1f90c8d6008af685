// Where the memory stage's pieces go: laid out when the frame or the size changes, not on every
// paint.
#include "present/stage_model.h"

#include "style/paint_util.h"

#include <QFontMetricsF>

#include <algorithm>

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

void layOutHbmMatrices(StageLayout& l, const StageModel& model, const Theme& theme) {
    const qreal sc = theme.scale;
    const qreal labelH = lineHeight(theme.font(8.5, true));
    const qreal smallH = lineHeight(theme.font(8));
    std::vector<QSize> shapes;
    for (const StageMatrix& m : model.matrices)
        shapes.emplace_back(m.hbm.cols, m.hbm.rows);
    const QRectF area = l.hbmContent.adjusted(0, 2 * sc, 0, -(labelH + 2 * smallH + 4));
    // The matrices stay inside the panel however narrow it is: in a small window, narrower than
    // the 44 px a matrix likes (the S, P box ran over the bus's arrows).
    const qreal count = qreal(std::max<std::size_t>(1, shapes.size()));
    const qreal gap = std::min(12 * sc, area.width() * 0.04);
    const qreal minSide = std::min(44 * sc, (area.width() - gap * (count - 1)) / count);
    const std::vector<QRectF> rects = layoutSideBySide(shapes, area, gap, minSide);
    for (std::size_t i = 0; i < rects.size(); ++i) {
        const StageMatrix& m = model.matrices[i];
        const QRectF r = rects[i];
        MatrixPlace place;
        place.rect = r;
        // At most the matrix and a third of the gap to its neighbours (labels ran together:
        // "4096×644096×64").
        const qreal lw = std::min(std::max(r.width(), 60 * sc), r.width() + 4 * sc);
        place.nameRect = QRectF(r.center().x() - lw / 2, r.bottom() + 3, lw, labelH);
        place.nameRect.moveLeft(std::max(place.nameRect.left(), l.hbmContent.left()));
        place.shapeRect = place.nameRect.translated(0, labelH);
        place.shapeRect.setHeight(smallH);
        place.bytesRect = place.shapeRect.translated(0, smallH);
        place.bytesShort = QFontMetricsF(theme.font(8)).horizontalAdvance(m.bytes) >
                           place.bytesRect.width();
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

// Two rows of tiles, to one scale: what is loaded (Q_i, K_j, V_j), then what is computed.
void layOutTiles(StageLayout& l, const StageModel& model, const QRectF& area, const Theme& theme) {
    const qreal sc = theme.scale;
    const qreal lh = lineHeight(theme.font(7.5, true)) + 2;
    const qreal gap = 10 * sc;
    const auto loaded = [](const ChipTile& t) {
        return t.slot == ChipSlot::Query || t.slot == ChipSlot::Key || t.slot == ChipSlot::Value;
    };
    double widths[2] = {0, 0};
    int heights[2] = {0, 0};
    for (const ChipTile& t : model.tiles) {
        const int row = loaded(t) ? 0 : 1;
        widths[row] += t.cols;
        heights[row] = std::max(heights[row], t.rows);
    }
    const double widest = std::max(widths[0], widths[1]);
    const double tallest = double(heights[0]) + double(heights[1]);
    const qreal unit =
        std::min((area.width() - 4 * gap) / widest, (area.height() - 2 * lh - gap) / tallest);
    const auto side = [&](int elements) { return std::max(14 * sc, elements * unit); };
    qreal x = area.left(), y = area.top(), rowHeight = 0;
    bool firstRow = true;
    for (const ChipTile& t : model.tiles) {
        if (firstRow && !loaded(t)) {
            firstRow = false;
            x = area.left();
            y += lh + rowHeight + gap;
            rowHeight = 0;
        }
        const QRectF r(x, y + lh, side(t.cols), side(t.rows));
        l.tiles.push_back({r, QRectF(r.left() - 4, r.top() - lh, r.width() + 40 * sc, lh)});
        x += r.width() + gap;
        rowHeight = std::max(rowHeight, r.height());
    }
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
    if (model.flash)
        layOutTiles(l, model, tileArea, theme);
    else
        layOutKernels(l, model, tileArea, theme);
    l.sramBar =
        QRectF(l.chipContent.left(), l.chipContent.bottom() - barH, l.chipContent.width(), barH);
    l.sramTrack = QRectF(l.sramBar.left(), l.sramBar.top() + textH + 1, l.sramBar.width(),
                         l.sramBar.height() - textH - 1);
    l.sramText = QRectF(l.sramBar.left(), l.sramBar.top(), l.sramBar.width(), textH);
}

void layOutBus(StageLayout& l, qreal sc) {
    l.busLeft = l.bus.left() + 8 * sc;
    l.busRight = l.bus.right() - 8 * sc;
    auto lane = [&](qreal y) {
        return BusLane{y, QRectF(l.bus.left(), y - 30 * sc, l.bus.width(), 20 * sc),
                       QRectF(l.bus.left(), y + 8 * sc, l.bus.width(), 20 * sc)};
    };
    l.readLane = lane(l.bus.center().y() - 26 * sc);
    l.writeLane = lane(l.bus.center().y() + 26 * sc);
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
    for (const Flight& f : model.flights) {
        const HbmMatrix& m = model.matrix(f.matrix)->hbm;
        const QRectF matrixRect = placeOf(l, model, f.matrix)->rect;
        const QRectF hbmEnd = std::holds_alternative<StandardKernel>(f.chipEnd)
                                  ? token(matrixRect, sc)
                                  : elementRect(matrixRect, m.rows, m.cols, f.hbmPart);
        const QRectF chipEnd = chipEndRect(l, model, f.chipEnd, sc);
        l.flights.push_back(f.direction == HbmTraffic::Read ? FlightPath{hbmEnd, chipEnd}
                                                            : FlightPath{chipEnd, hbmEnd});
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
    const QRectF top(area.left(), area.top(), area.width(), area.height() - stripH - 6 * sc);
    l.counterStrip = QRectF(area.left(), area.bottom() - stripH, area.width(), stripH);
    l.hbmBox = QRectF(top.left(), top.top(), top.width() * 0.53, top.height());
    l.chipBox =
        QRectF(top.left() + top.width() * 0.64, top.top(), top.width() * 0.36, top.height());
    l.bus = QRectF(l.hbmBox.right(), top.top(), l.chipBox.left() - l.hbmBox.right(), top.height());
    l.hbmContent = panelContentRect(l.hbmBox, theme, true);
    l.chipContent = panelContentRect(l.chipBox, theme, true);
    layOutHbmMatrices(l, model, theme);
    layOutHighlights(l, model);
    layOutChip(l, model, theme);
    layOutBus(l, sc);
    layOutFlights(l, model, sc);
    layOutCounters(l, sc);
    return l;
}

} // namespace flashviz::gui
