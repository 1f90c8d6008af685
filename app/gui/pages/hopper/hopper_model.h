#pragma once
// The Hopper page's model (issue 17): how FlashViz's wgmma kernel runs on a Hopper GPU, as plain
// values from the kernel's configuration (kernels/kernel_configs.h) and from one traced launch
// (kernels/hopper_trace.h); nothing here paints, so it is tested without a window. Three parts,
// the page's three panels:
//   A  the block as the kernel configures it: its warpgroups, their registers, shared memory to
//      scale against what a Hopper block may use, and the variant's schedule in words;
//   B  one block's timeline: a lane per warpgroup, a track per unit it keeps busy, a bar per span
//      of the trace, on a time axis that can be zoomed and panned (the arithmetic is here);
//   C  what the trace says: kernels::summarize()'s numbers as they are (never recomputed here),
//      and where and how the trace was recorded.
// It lives beside the page (pages/ may read kernels/, present/ may not).
#include "kernels/hopper_trace.h"
#include "kernels/kernel_configs.h"

#include <QRectF>
#include <QString>
#include <QStringList>

#include <cstddef>
#include <vector>

namespace flashviz::gui {

// ---- the variants ----
struct HopperVariant {
    int row = 0;            // of kernels::kHopperConfigs
    QString label;          // "BR 128 · Bc 128 · 2 consumers · 2 stages · overlap, ping-pong"
    QString kernel;         // hopperConfigName()
    bool isDefault = false; // the one a Hopper GPU runs for this d and mask
};
// The rows built for d, in the table's order.
std::vector<HopperVariant> hopperVariants(int headDim, bool causal);
// The row a Hopper GPU runs for d and the mask (kernels::hopperTraceRow of a request for -1).
int defaultHopperRow(int headDim, bool causal);
QString hopperScheduleName(const kernels::HopperConfig& config); // "overlap, ping-pong"

// ---- A: the block ----
struct HopperWarpgroupBox {
    int warpgroup = 0; // 0 the producer
    QString title;     // "Producer", "Consumer 1"
    int threads = 0;
    int registers = 0;               // per thread, after setmaxnreg
    int firstRow = -1, lastRow = -1; // the block's query rows it owns (consumers)
    QString role;
};
enum class HopperBuffer { Q, K, V, Barriers, Alignment };
struct HopperSharedPart {
    HopperBuffer buffer = HopperBuffer::Q;
    int stage = -1; // K and V: the buffer's index
    double bytes = 0;
    QString name; // "Q", "K0", "V1", "barriers", "alignment"
};
struct HopperBlockPicture {
    int row = 0;
    kernels::HopperConfig config{};
    QString kernel; // hopperConfigName()
    std::vector<HopperWarpgroupBox> warpgroups;
    std::vector<HopperSharedPart> shared; // in the kernel's address order; they sum to sharedBytes
    double sharedBytes = 0;               // config.sharedBytes()
    double budgetBytes = 0;               // what one block may use on a Hopper SM
    QString sharedLine;                   // the parts and their sizes, against the budget
    QString registersLine;                // the block's registers against the SM's
    QString schedule;                     // what overlap and ping-pong mean for this variant
    QString pipeline;                     // the K and V buffers
};
HopperBlockPicture hopperBlockPicture(int row);

// ---- B: one block's timeline ----
enum class HopperTrackKind { Copies, ProducerThread, Scores, Values, ConsumerThread };
struct HopperTrack {
    int warpgroup = 0;
    HopperTrackKind kind = HopperTrackKind::Scores;
    int buffer = -1;   // copies: K_j and V_j land in buffer j mod stages; -1 for Q
    QString label;     // "K buffers 0–1" (each of them), "S = Q·Kᵀ": neighbours alike share it
    double weight = 1; // its share of the chart's height
};
struct HopperLane { // one warpgroup
    int warpgroup = 0;
    QString title, subtitle; // "Consumer 1", "rows 0–63"
    int firstTrack = 0, trackCount = 0;
};
struct HopperBar {
    int track = 0;
    std::size_t span = 0; // its index in the block's spans
    kernels::HopperActivity activity = kernels::HopperActivity::Scores;
    int warpgroup = 0;
    int tile = -1;
    double startNs = 0, endNs = 0; // from the block's first mark
    QStringList labels; // inside the bar, the longest that fits: {"softmax 3", "sm3", "3"}
};
struct HopperTimeline {
    std::vector<HopperLane> lanes;
    std::vector<HopperTrack> tracks;
    std::vector<HopperBar> bars; // by track, then start
    double originNs = 0;         // the block's first mark on the launch's time axis
    double durationNs = 0;       // its last mark, from its first
    int tiles = 0;               // key tiles the block visited
};
HopperTimeline hopperTimeline(const kernels::HopperBlockTrace& block,
                              const kernels::HopperConfig& config);
// The legend's name of an activity ("S = Q·Kᵀ", "wait: turn").
QString hopperActivityName(kernels::HopperActivity activity);
// What a bar's tooltip says: the activity as the trace mode describes it, the warpgroup and tile,
// its start, end and duration.
QString hopperBarToolTip(const HopperBar& bar, const HopperTimeline& timeline);

// The time shown across the chart, in ns from the block's first mark.
struct HopperTimeWindow {
    double startNs = 0, endNs = 1;
    double spanNs() const { return endNs - startNs; }
    bool operator==(const HopperTimeWindow&) const = default;
};
HopperTimeWindow hopperWholeBlock(const HopperTimeline& timeline);
// The narrowest window the chart zooms to: a few nanoseconds, or the whole of a shorter block.
double hopperMinimumSpanNs(const HopperTimeline& timeline);
// `window` zoomed by `factor` (> 1 zooms in) about `aroundNs`, then kept inside the block.
HopperTimeWindow hopperZoomed(const HopperTimeWindow& window, double factor, double aroundNs,
                              const HopperTimeline& timeline);
// `window` moved by `deltaNs`, kept inside the block.
HopperTimeWindow hopperPanned(const HopperTimeWindow& window, double deltaNs,
                              const HopperTimeline& timeline);
// Each track's rectangle in `area`, stacked by weight, lanes `laneGap` apart.
std::vector<QRectF> hopperTrackRects(const HopperTimeline& timeline, const QRectF& area,
                                     qreal laneGap);
qreal hopperX(double ns, const HopperTimeWindow& window, const QRectF& chart);
double hopperNsAt(qreal x, const HopperTimeWindow& window, const QRectF& chart);
// A bar's rectangle in its track's, at least one pixel wide (a span shorter than the timer's
// step stays visible); empty when it lies outside the window.
QRectF hopperBarRect(const HopperBar& bar, const QRectF& track, const HopperTimeWindow& window,
                     const QRectF& chart);
// Axis ticks at 1, 2 or 5 × 10^k ns, at most `maxTicks` inside the window.
std::vector<double> hopperTicks(const HopperTimeWindow& window, int maxTicks);

// ---- C: what the trace says ----
// A warpgroup's totals, the columns flashviz-cli hopper-trace prints: copies in flight, products
// on the tensor cores, softmax and store on the CUDA cores, waiting.
struct HopperWarpgroupRow {
    QString name;                               // "Producer", "Consumer 1"
    QString copies, outstanding, cudaCores, waiting; // "–" where the warpgroup does none
};
struct HopperFindings {
    kernels::HopperBlockSummary summary; // summarize() of the block, as it returned
    QString blockLine;                   // which block, where it ran, its key tiles
    QString headline;                    // its duration, products outstanding, softmax beside them
    std::vector<HopperWarpgroupRow> rows;
    QString recordedLine; // the device, date and sizes
    QString timingLine;   // plain and traced kernel time, the timer's step
    QString note;         // what a bar's length bounds
};
HopperFindings hopperFindings(const kernels::HopperTrace& trace, int block);

// ---- which trace a (variant, mask) shows ----
// The user's own (recorded here or opened) where one matches, else the one FlashViz ships, else
// none.
struct HopperTraceChoice {
    const kernels::HopperTrace* trace = nullptr;
    bool own = false;
};
HopperTraceChoice chooseHopperTrace(const std::vector<kernels::HopperTrace>& own,
                                    const std::vector<kernels::HopperTrace>& shipped, int row,
                                    bool causal);
// What the page says when there is none: which variant, why none, how to record one.
QString hopperNoTraceText(int row, bool causal, bool canRecord, const QString& whyNot);
// The flashviz-cli command that records this variant's trace to trace.json.
QString hopperRecordCommand(int row, bool causal);

} // namespace flashviz::gui
