#pragma once
// The memory stage's model: what the stage shows at one frame (the matrices in HBM and what of
// them is written, the tiles in SRAM and its fill against the budget, the kernels of standard
// attention, the tiles in flight and their direction, the traffic on the bus, the counters),
// and where each piece goes in a given rectangle. Plain values: the view paints them.
#include "present/hbm_contents.h"
#include "style/theme.h"

#include <QImage>
#include <QRectF>
#include <QString>

#include <optional>
#include <variant>
#include <vector>

namespace flashviz::gui {

// A matrix in the HBM panel, with its label: name, shape, bytes.
struct StageMatrix {
    HbmMatrix hbm;
    QImage image; // the scene's, as HBM holds it
    QString name, shape, bytes;
    QString bytesShort; // where `bytes` does not fit under the matrix: "0 B" for a never-stored S
};

// FlashAttention's tiles on the chip: what is loaded (Q_i, K_j, V_j), then what is computed.
enum class ChipSlot { Query, Key, Value, Scores, Weights, Max, Sum, Accumulator };

struct ChipTile {
    ChipSlot slot = ChipSlot::Query;
    QString name;
    int rows = 0, cols = 0;
    QImage image;
    bool resident = false; // holds values at this step
    bool produced = false; // computed by this step
};

struct StageKernel {
    StandardKernel kernel = StandardKernel::Scores;
    QString name;
    bool active = false;
};

// The middle of the chip, where the paper order's initial O, m and ℓ come from.
struct ChipCentre {
    bool operator==(const ChipCentre&) const = default;
};
using ChipEnd = std::variant<ChipSlot, StandardKernel, ChipCentre>;

// A tile travelling between HBM and the chip while the step animates. Standard attention
// streams whole matrices (its chip end is a kernel, and a small token travels); FlashAttention
// moves the block of rows `hbmPart` of an HBM matrix.
struct Flight {
    HbmTraffic direction = HbmTraffic::Read;
    MatrixId matrix = MatrixId::Q;
    QRect hbmPart;
    ChipEnd chipEnd;
    QImage image;       // what is drawn travelling (none for the initial O = 0)
    QRectF imageSource; // the part of `image` carried (null: all of it)
    QString label;
};

// HBM traffic of this step, drawn as the bus's two arrows.
struct BusTraffic {
    bool reading = false, writing = false;
    QString readLabel, writeLabel, readAmount, writeAmount;
};

struct SramFill {
    double usedBytes = 0, budgetBytes = 0;
    double fraction = 0;
    bool over = false; // the working set does not fit: the tile spills to HBM
    QString text;
};

struct CounterCell {
    QString label, value, note;
    bool active = false;
};
// The counters' four cells, their values ticking from the previous step's to this one's.
struct CounterReadout {
    CounterCell read, written, flops, time;
};

struct StageModel {
    bool flash = true;
    QString hbmTitle, hbmSubtitle, chipTitle, chipSubtitle;
    std::vector<StageMatrix> matrices; // left to right
    std::vector<Highlight> highlights; // the parts of HBM this step touches
    std::vector<ChipTile> tiles;       // FlashAttention: loaded, then computed
    std::vector<StageKernel> kernels;  // standard attention
    QString kernelNote;                // standard attention
    std::vector<Flight> flights;
    BusTraffic bus;
    SramFill sram;
    Counters before, now; // the engine's counters through the previous step and this one
    Counters totals, standardTotals;
    double hbmBandwidth = 0, flopRate = 0;
    // FLOPs per HBM byte at which the fp32 CUDA cores and HBM keep pace (core's ridge point): a
    // run below it waits on memory, above it on arithmetic.
    double ridge = 0;

    const StageMatrix* matrix(MatrixId id) const;
    const ChipTile* tile(ChipSlot slot) const;
    // A tile arriving from HBM at this step is drawn in flight, not yet in its slot.
    bool arriving(ChipSlot slot) const;
    // At `progress` (0 when the step starts, 1 when its animation has finished).
    CounterReadout counters(double progress) const;
    QString intensityNote(double flops, double bytes) const;
};

StageModel makeStageModel(const Frame& frame);

// Where each piece goes (stage_layout.cpp): laid out when the frame, the theme or the size
// changes, not on every paint.

struct MatrixPlace {
    QRectF rect, nameRect, shapeRect, bytesRect;
    bool bytesShort = false; // the matrix's bytesShort is drawn: its bytes do not fit
    std::vector<ImagePart> held, heldWhileMoving;
    std::vector<QRectF> running, runningWhileMoving; // as HbmMatrix's
};
struct TilePlace {
    QRectF rect, labelRect;
};
struct BusLane {
    qreal y = 0;
    QRectF labelRect, amountRect;
};
struct CounterPlace {
    QRectF label, value, note;
};
struct FlightPath {
    QRectF from, to;
};

struct StageLayout {
    QRectF bounds;
    QRectF hbmBox, chipBox, bus;
    QRectF hbmContent, chipContent;    // inside the panels' titles
    std::vector<MatrixPlace> matrices; // as StageModel::matrices
    std::vector<QRectF> highlights;    // as StageModel::highlights
    std::vector<TilePlace> tiles;      // as StageModel::tiles
    std::vector<QRectF> kernels;       // as StageModel::kernels
    QRectF kernelNote;                 // empty when there is no room for it
    QRectF sramBar, sramTrack, sramText;
    qreal busLeft = 0, busRight = 0;
    BusLane readLane, writeLane;
    std::vector<FlightPath> flights; // as StageModel::flights; null ends are not drawn
    QRectF counterStrip;
    struct {
        CounterPlace read, written, flops, time;
    } counters;
};

StageLayout layOutStage(const StageModel& model, const QRectF& bounds, const Theme& theme);

} // namespace flashviz::gui
