#pragma once
// How a Hopper GPU runs FlashViz's wgmma kernel (issue 17), from the kernel's own timestamps:
// the trace mode of kernels/cuda/sm90/hopper_flash.cuh records marks (hopper_marks.h) per
// warpgroup; this turns them into spans of work on a common time axis, sums them up, and reads
// and writes them as JSON. Plain C++, built with or without CUDA: the window's Hopper page, the
// CLI's `hopper-trace` and the tests read traces recorded elsewhere (resources/traces/).
#include "kernels/hopper_marks.h"
#include "kernels/kernel_configs.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace flashviz::kernels {

// What a span of a warpgroup's time was spent on.
enum class HopperActivity {
    LoadQ,         // a copy in flight: from the producer's issue until a consumer found it arrived
    LoadK,
    LoadV,
    WaitForBuffer, // the producer waits for a consumer to hand a K or V buffer back
    WaitForData,   // a consumer waits for Q, K_j or V_j to arrive
    WaitForTurn,   // a consumer waits for the other one to hand over the tensor cores (ping-pong)
    Scores,        // S_j = Q K_j^T on the tensor cores, from its issue to the wait that retires it
    Values,        // O += P_j V_j likewise
    WaitForValues, // the consumer has nothing left to do but wait for O += P_j V_j
    Softmax,       // the online softmax of S_j on the CUDA cores
    StoreO,        // O = acc / l written out
    Count
};
// Where a span runs: the copy engine, the tensor cores, the CUDA cores, or nowhere (a wait).
enum class HopperUnit { CopyEngine, TensorCores, CudaCores, Waiting };
HopperUnit unitOf(HopperActivity activity);
const char* toString(HopperActivity activity);    // "scores": the JSON's names
const char* describe(HopperActivity activity);    // "S = Q·Kᵀ on the tensor cores"

struct HopperSpan {
    int warpgroup = 0; // 0 the producer, 1 .. consumers
    HopperActivity activity = HopperActivity::Scores;
    int tile = -1; // the key tile j, -1 for Q and the store
    double startNs = 0, endNs = 0; // from the first mark of the launch
    double durationNs() const { return endNs - startNs; }
};

struct HopperBlockTrace {
    int queryBlock = 0, head = 0, batch = 0;
    int sm = -1; // the SM it ran on (%smid)
    std::vector<HopperSpan> spans; // ordered by warpgroup, then start
    double startNs() const;
    double endNs() const;
};

// One traced launch.
struct HopperTrace {
    int configRow = 0; // its row of kHopperConfigs
    std::string kernel; // hopperConfigName of that row
    std::string element = "fp16"; // fp16 or bf16
    bool causal = false;
    int batch = 1, heads = 1, queries = 0, keys = 0, headDim = 0;
    std::string device;   // "NVIDIA H100 80GB HBM3"
    std::string recorded; // the date, "2026-12-06"
    double plainKernelNs = 0;  // the same launch without the trace, median of several
    double tracedKernelNs = 0; // the traced launch
    double nsPerCycle = 0;     // the SM clock as fitted from %globaltimer against clock64
    double timerStepNs = 0;    // the smallest step %globaltimer was seen to take (its resolution)
    std::vector<HopperBlockTrace> blocks; // in launch order

    const HopperConfig& config() const { return kHopperConfigs[configRow]; }
};

// ---- a request for a traced launch (kernels/backend_registry.h: recordHopperTrace) ----
// A small run on fixed random inputs: `repeats` launches back to back plain and as many traced
// (their times), the marks the last one's.
inline constexpr int kHopperTraceMaxTokens = 16384; // queries and keys, each
inline constexpr int kHopperTraceMaxHeads = 64;     // batch x heads
inline constexpr int kHopperTraceMaxRepeats = 100;
inline constexpr long long kHopperTraceMaxBlockTiles = 1 << 14; // blocks x key tiles: ~10 MB of marks
struct HopperTraceRequest {
    int configRow = -1; // a row of kHopperConfigs for headDim, or -1: the one the GPU runs by default
    int headDim = 128;  // 64 or 128
    bool causal = false;
    std::string element = "fp16"; // or "bf16"
    int queries = 1024, keys = 1024; // d = 128: 8 blocks of 128 rows, each over 8 key tiles
    int heads = 1, batch = 1;
    int repeats = 10;
};
// Throws EngineError naming the field and its range (Unsupported for a d the kernel is not built
// for, InvalidArgument, LimitExceeded). No GPU.
void validateHopperTraceRequest(const HopperTraceRequest& request);
// The row a request names, or for -1 the one an H100 runs (chooseHopperConfig with the h100-sxm
// profile's limits): what a page shows without a GPU. On a GPU, -1 is the launcher's own choice.
int hopperTraceRow(const HopperTraceRequest& request);

// ---- from the device's marks ----
struct HopperRawMark {
    HopperMark mark = HopperMark::QIssued;
    int tile = -1;
    std::uint64_t globalNs = 0;
    std::uint32_t clock = 0; // the low 32 bits of the SM's clock64
};
struct HopperRawBlock {
    int queryBlock = 0, head = 0, batch = 0, sm = -1;
    std::vector<std::vector<HopperRawMark>> warpgroups; // the producer first
};
HopperRawMark unpackMark(const HopperDeviceMark& mark);
// The blocks' spans on one time axis (0 = the launch's first mark). Each SM's clock is mapped to
// nanoseconds by one rate fitted over every block (%globaltimer moves in steps of tens of
// nanoseconds or more; the clock every cycle) and each block's offset by its tightest mark.
// Fills the trace's blocks, nsPerCycle and timerStepNs. `fallbackNsPerCycle` (1 / the SM clock)
// serves when the launch is too short to fit a rate. Throws EngineError(BackendFailure) for marks
// out of order or unpaired (a bug of the trace mode, never hidden).
void setSpansFromMarks(HopperTrace& trace, const std::vector<HopperRawBlock>& blocks,
                       double fallbackNsPerCycle);

// ---- what a block's timeline says ----
// A product's span runs from its issue to the wait that retires it, so it is an upper bound on
// its time on the tensor cores: with overlap a consumer waits for P_j V_j only after the softmax
// of S_{j+1}. The tensor cores' busy share therefore lies between two figures: the share of time
// some product was outstanding (issued, not yet waited for), and the products' count times the
// shortest span of their kind that no softmax of the same warpgroup ran beside (one waited for at
// once), at most the first.
struct HopperWarpgroupTotals {
    double outstandingNs = 0; // union of its products issued and not yet waited for
    double cudaCoresNs = 0;   // its softmax and store
    double waitingNs = 0;     // union of its waits
    double copyNs = 0;        // the producer: union of its copies in flight
};
struct HopperBlockSummary {
    double durationNs = 0;
    double outstandingNs = 0;           // union over the consumers: some product outstanding
    double softmaxNs = 0;               // every softmax span, summed
    double softmaxBesideProductsNs = 0; // the part of it while some product was outstanding
    double scoresOwnNs = 0, valuesOwnNs = 0; // the shortest S and P V spans waited for at once
    double tensorWorkNs = 0;            // every product at its kind's shortest time, at most outstandingNs
    std::vector<HopperWarpgroupTotals> warpgroups;
    double outstandingFraction() const { return durationNs > 0 ? outstandingNs / durationNs : 0; }
    double tensorWorkFraction() const { return durationNs > 0 ? std::min(1.0, tensorWorkNs / durationNs) : 0; }
    double softmaxBesideProductsFraction() const { return softmaxNs > 0 ? softmaxBesideProductsNs / softmaxNs : 0; }
};
HopperBlockSummary summarize(const HopperBlockTrace& block, int warpgroups);
// The block the page and the CLI show first: the one that ran longest.
int longestBlock(const HopperTrace& trace);

// ---- files ----
inline constexpr const char* kHopperTraceFormat = "flashviz-hopper-trace";
inline constexpr int kHopperTraceVersion = 1;
std::string hopperTracesJson(const std::vector<HopperTrace>& traces);
// Throws EngineError(InvalidArgument) naming what is wrong: not JSON, another format or
// version, a kernel this build does not have, a span that is not a span.
std::vector<HopperTrace> parseHopperTraces(const std::string& text);

} // namespace flashviz::kernels
