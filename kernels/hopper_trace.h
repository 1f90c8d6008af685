#pragma once
// How a Hopper GPU runs FlashViz's wgmma kernel (issue 17), from the kernel's own timestamps:
// the trace mode of kernels/cuda/sm90/hopper_flash.cuh records marks (hopper_marks.h) per
// warpgroup; this turns them into spans of work on a common time axis, sums them up, and reads
// and writes them as JSON. Plain C++, built with or without CUDA: the window's Hopper page, the
// CLI's `hopper-trace` and the tests read traces recorded elsewhere (resources/traces/).
#include "kernels/hopper_marks.h"
#include "kernels/kernel_configs.h"

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
    Scores,        // S_j = Q K_j^T on the tensor cores, from issue until retired
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
// A small run: one launch on fixed random inputs, timed once traced and `repeats` times plain.
inline constexpr int kHopperTraceMaxTokens = 16384; // queries and keys, each
inline constexpr int kHopperTraceMaxHeads = 64;     // batch x heads
inline constexpr int kHopperTraceMaxRepeats = 100;
struct HopperTraceRequest {
    int configRow = -1; // a row of kHopperConfigs for headDim, or -1: the one the GPU runs by default
    int headDim = 128;  // 64 or 128
    bool causal = false;
    std::string element = "fp16"; // or "bf16"
    int queries = 1024, keys = 1024; // d = 128: 8 blocks of 128 rows, each over 8 key tiles
    int heads = 1, batch = 1;
    int repeats = 10;
};
// Throws EngineError (InvalidArgument or LimitExceeded) naming the field and its range. No GPU.
void validateHopperTraceRequest(const HopperTraceRequest& request);
// The row a request runs where the GPU has Hopper's shared memory (227 KiB a block): its own,
// or chooseHopperConfig's for its d and mask.
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
struct HopperWarpgroupTotals {
    double tensorNs = 0;  // union of its products in flight
    double softmaxNs = 0; // its softmax and store
    double waitingNs = 0; // union of its waits
    double copyNs = 0;    // the producer: union of its copies in flight
};
struct HopperBlockSummary {
    double durationNs = 0;
    double tensorBusyNs = 0;       // union over the consumers of products in flight
    double softmaxNs = 0;          // every softmax span, summed
    double softmaxUnderTensorNs = 0; // the part of it while some product was in flight
    std::vector<HopperWarpgroupTotals> warpgroups;
    double tensorBusyFraction() const { return durationNs > 0 ? tensorBusyNs / durationNs : 0; }
    double softmaxHiddenFraction() const { return softmaxNs > 0 ? softmaxUnderTensorNs / softmaxNs : 0; }
};
HopperBlockSummary summarize(const HopperBlockTrace& block, int warpgroups);
// The block the page and the CLI show first: the one that ran longest (under the causal mask
// the one that saw the most keys).
int longestBlock(const HopperTrace& trace);

// ---- files ----
inline constexpr const char* kHopperTraceFormat = "flashviz-hopper-trace";
inline constexpr int kHopperTraceVersion = 1;
std::string hopperTracesJson(const std::vector<HopperTrace>& traces);
// Throws EngineError(InvalidArgument) naming what is wrong: not JSON, another format or
// version, a kernel this build does not have, a span that is not a span.
std::vector<HopperTrace> parseHopperTraces(const std::string& text);

} // namespace flashviz::kernels
