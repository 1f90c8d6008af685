#pragma once
// The memory stage's model: what the stage shows at one frame (the matrices in HBM and what of
// them is written, the tiles in SRAM and its fill against the budget, the kernels of standard
// attention, the tiles in flight and their direction, the traffic on the bus, the counters),
// and where each piece goes in a given rectangle. Plain values: the view paints them.
#include "present/hbm_contents.h"

#include "core/l2_steps.h"
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
    // The row of the HBM panel it sits in: the backward draws what it only reads above what it
    // writes (D, dQ, dK, dV) and the S, P it never stores; the forward uses one row.
    int tier = 0;
};

// The tiles on the chip. FlashAttention: what is loaded (Q_i, K_j, V_j), then what is computed.
// The backward: the key block's K_j, V_j and its accumulators dK_j, dV_j; the query block's Q_i,
// dO_i, L_i, D_i and dQ_i while it is updated; the tile S_ij, then P_ij in its place, and dP_ij,
// then dS_ij in its place.
enum class ChipSlot {
    Query,
    Key,
    Value,
    Scores,
    Weights,
    Max,
    Sum,
    Accumulator,
    KeyGradient,
    ValueGradient,
    OutputGradient,
    LogSumExp,
    RowDot,
    QueryGradient,
    WeightGradient,
    ScoreGradient
};

struct ChipTile {
    ChipSlot slot = ChipSlot::Query;
    QString name;
    int rows = 0, cols = 0;
    QImage image;
    bool resident = false; // holds values at this step
    bool produced = false; // computed by this step
    int tier = 0;          // the row of tiles it sits in, top first
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
// moves the block of rows `hbmPart` of an HBM matrix. ReadWrite is a round trip (the
// backward's dQ_i: read, added to on chip, written back): up with `image`, back with
// `returnImage`.
struct Flight {
    HbmTraffic direction = HbmTraffic::Read;
    MatrixId matrix = MatrixId::Q;
    QRect hbmPart;
    ChipEnd chipEnd;
    QImage image;       // what is drawn travelling (none for the initial O = 0)
    QRectF imageSource; // the part of `image` carried (null: all of it)
    QString label;
    QImage returnImage; // ReadWrite: what comes back
    QString returnLabel;
    // The part of the step's animation it travels in (0 to 1): a step that reads and then writes
    // (the backward's pre-pass) reads in the first half and writes in the second.
    qreal departs = 0, lands = 1;
    // Where it is at `progress` of the step's animation: 0 at its HBM end, 1 at its chip end;
    // std::nullopt before it departs and after it lands.
    std::optional<qreal> position(qreal progress) const;
    // A round trip on its way back (carrying `returnImage`).
    bool returning(qreal progress) const;
    // On a GPU with L2: the tile's bytes are in L2 already (a read that hits, a rewrite of a line
    // still there), so it travels between L2 and the chip only and HBM is not touched.
    bool viaL2Only = false;
};

// HBM traffic of this step, drawn as the bus's two arrows.
struct BusTraffic {
    bool reading = false, writing = false;
    QString readLabel, writeLabel, readAmount, writeAmount;
};

// L2 between HBM and the chip, on a GPU profile with L2 figures (core/l2_steps.h): its size,
// the run's matrices against the usable half, and the step's traffic on its HBM side.
struct L2Panel {
    QString title, size;   // "L2", "50 MiB"
    QString rate;          // its read rate, "7.51 TB/s"
    double fraction = 0;   // the run's matrices over the usable L2
    bool fits = false;     // L2 keeps the run: re-reads hit
    QString fillText;      // under the bar: "kept" / "too big"
    QString summary;       // the tooltip's sentence, with the sizes
    std::vector<QString> assumptions;
    DramTraffic before, now, total; // L2 ↔ HBM through the previous step, this one, the whole run
    BusTraffic bus;        // the step's bytes between HBM and L2
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
    bool tiled = true;     // tiles on chip (FlashAttention and its backward), not kernels
    bool backward = false; // FlashAttention's backward pass
    QString hbmTitle, hbmSubtitle, chipTitle, chipSubtitle;
    std::vector<StageMatrix> matrices; // left to right
    std::vector<Highlight> highlights; // the parts of HBM this step touches
    std::vector<ChipTile> tiles;       // FlashAttention: loaded, then computed
    std::vector<StageKernel> kernels;  // standard attention
    QString kernelNote;                // standard attention
    std::vector<Flight> flights;
    BusTraffic bus; // between the chip and HBM, or with L2 between the chip and L2
    std::optional<L2Panel> l2;
    QString measuredLine; // these sizes as one launch on this GPU: the counters beside the model
    QString measuredKernel; // which kernel that launch ran
    QString measuredOn;     // the GPU and the date of the measurement
    SramFill sram;
    Counters before, now; // the engine's counters through the previous step and this one
    Counters totals, standardTotals;
    // The backward: the other side of the trade (P stored, or with store-p on, recomputed).
    Counters tradeTotals;
    bool tradeStoresP = true;
    double hbmBandwidth = 0, flopRate = 0;
    // FLOPs per HBM byte at which the fp32 CUDA cores and HBM keep pace (core's ridge point): a
    // run below it waits on memory, above it on arithmetic.
    double ridge = 0;

    const StageMatrix* matrix(MatrixId id) const;
    const ChipTile* tile(ChipSlot slot) const;
    // A tile arriving from HBM at this step (or making a round trip) is drawn in flight, not in
    // its slot.
    bool arriving(ChipSlot slot) const;
    // At `progress` (0 when the step starts, 1 when its animation has finished).
    CounterReadout counters(double progress) const;
    QString intensityNote(double flops, double bytes) const;
};

StageModel makeStageModel(const Frame& frame);

// Where each piece goes (stage_layout.cpp): laid out when the frame, the theme or the size
// changes, not on every paint.

struct MatrixPlace {
    QRectF rect, nameRect, bytesRect;
    QRectF shapeRect;        // null where two rows of matrices leave no room for it
    bool bytesShort = false; // the matrix's bytesShort is drawn: its bytes do not fit
    std::vector<ImagePart> held, heldWhileMoving;
    std::vector<QRectF> running, runningWhileMoving; // as HbmMatrix's
};
struct TilePlace {
    QRectF rect, labelRect;
};
struct BusLane {
    qreal x0 = 0, x1 = 0; // the arrow's ends
    qreal y = 0;
    QRectF labelRect, amountRect;
};
struct CounterPlace {
    QRectF label, value, note;
};
// A flight's two ends, as Flight::position measures it (0 at HBM, 1 on chip); a null end is not
// drawn.
struct FlightPath {
    QRectF hbm, chip;
};

struct StageLayout {
    QRectF bounds;
    QRectF hbmBox, chipBox, bus;
    // With L2: its panel in the bus, the fill's track and word (null below 600 px wide, where the
    // counters alone show it).
    QRectF l2Box, l2Track, l2Text;
    QRectF l2Rate; // null where the read rate does not fit
    QRectF measuredLine;           // above the counters, where the model has one
    QRectF hbmContent, chipContent;    // inside the panels' titles
    std::vector<MatrixPlace> matrices; // as StageModel::matrices
    std::vector<QRectF> highlights;    // as StageModel::highlights
    std::vector<TilePlace> tiles;      // as StageModel::tiles
    std::vector<QRectF> kernels;       // as StageModel::kernels
    QRectF kernelNote;                 // empty when there is no room for it
    QRectF sramBar, sramTrack, sramText;
    BusLane readLane, writeLane;          // chip ↔ HBM, or chip ↔ L2
    BusLane l2ReadLane, l2WriteLane;      // L2 ↔ HBM (with L2)
    std::vector<FlightPath> flights; // as StageModel::flights
    QRectF counterStrip;
    struct {
        CounterPlace read, written, flops, time;
    } counters;
};

StageLayout layOutStage(const StageModel& model, const QRectF& bounds, const Theme& theme);

} // namespace flashviz::gui
