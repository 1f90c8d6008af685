#pragma once
// What the analysis charts are drawn from: the engine's nine demonstrations (core/analysis.h)
// run for one set of settings. Plain data, computed off the GUI thread; nothing here draws.
#include "core/analysis.h"
#include "core/counters.h"
#include "core/flash_versions.h"
#include "core/hardware.h"
#include "app/measured/shipped_measurements.h"
#include "core/options.h"
#include "core/problem.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace flashviz::gui {

// The settings a computation depends on.
struct AnalysisInputs {
    ProblemSpec spec;
    FlashOptions options;
    HardwareProfile hardware;
};
// True when the two would draw the same charts: only d, Br, Bc, the seed, the causal mask (chart
// 11) and the hardware's figures enter the demonstrations (n and the pattern do not).
bool sameAnalysis(const AnalysisInputs& a, const AnalysisInputs& b);
// Throws EngineError when the settings cannot be analysed; cheap, safe on the GUI thread.
void validateAnalysisInputs(const AnalysisInputs& inputs);

// The sizes each demonstration runs at: the explainer script's, filled in so that lines have
// enough points to show their shape. The head dimension, tile size, seed and hardware come from
// the settings.
struct AnalysisPlan {
    std::vector<int> memoryBoundNs{128, 256, 512, 1024, 2048, 4096, 8192};
    std::vector<int> tiledNs{128, 256, 512, 1024, 2048};
    int sweepN = 1024;
    std::vector<int> sweepBlocks{16, 32, 64, 128, 256, 512, 1024};
    std::vector<int> backwardNs{512, 1024, 2048, 4096, 8192};
    int exactnessN = 512;
    std::vector<int> exactnessHalfWidths{4, 8, 16, 32, 64, 128, 256, 512};
    int scriptHalfWidth = 64; // the window the script uses, picked out in the chart
    std::vector<int> flopsNs{512, 1024, 2048, 4096};
    int debugCopyN = 1024;
    int rooflineN = 1024; // the lecture's traffic chapter: n = 1024
    std::vector<int> versionsNs{512, 1024, 2048, 4096, 8192};
    std::vector<int> throughL2Ns{512, 1024, 2048, 4096, 8192, 16384}; // the measured sizes
};


struct AnalysisResults {
    AnalysisInputs inputs;
    AnalysisPlan plan;
    int headDim = 0;
    int block = 0; // the square tile the single-block demonstrations use: B = Br

    // 1. memory-bound, judged at the largest n by the rooflines there
    std::vector<TrafficRow> memoryBound;
    std::vector<Roofline> memoryBoundRooflines; // one per arithmetic the profile has
    // 2. online softmax
    OnlineSoftmaxDemo softmax;
    // 3. tiled vs standard, with the paper's IO model at the same sizes
    std::vector<TiledRow> tiled;
    std::vector<PaperIoModel> paperModel; // one per tiled row
    double sramElements = 0;              // M of the paper's model: the per-SM budget in elements
    // 4. block size vs the SRAM budget
    BlockSweep sweep;
    // 5. backward pass: the script's model, and beside it the backward as the engine counts it
    // (the correct one: the settings' tiles, none of their backward switches)
    std::vector<BackwardRow> backward;
    std::vector<CountedBackwardRow> countedBackward;
    FlashOptions countedBackwardOptions;
    // 6. exact vs local window, one run per half-width
    std::vector<ExactnessDemo> exactness;
    // 7. FLOPs vs traffic
    std::vector<FlopsRow> flops;
    // 8. debug copy of S
    DebugCopyDemo debugCopy;
    // 9. overflow without the running max
    OverflowDemo overflow;
    // 10. the roofline at plan.rooflineN, one per arithmetic the profile has
    std::vector<Roofline> rooflines;
    // 11. what FlashAttention-2 changed, one report per plan.versionsNs (Br x Bc tiles and the
    // causal mask of the settings, FlashViz's kernel for d on this GPU, the page's default warps,
    // batch and heads; each report's gridError when that kernel does not fit the GPU); the
    // engine's refusal when none can be made
    std::vector<VersionsReport> versions;
    std::string versionsError;
    // 12. the L2-aware model against the hardware's counters (app/measured)
    measured::ThroughL2 throughL2;
};

struct AnalysisOutcome {
    std::optional<AnalysisResults> results;
    std::string error; // the engine's sentence when it refused the settings
    bool cancelled = false;
};

// True when `previous` ran the algorithms exactly as `inputs` would (same d, B, seed and sizes),
// so its runs can be taken over.
bool sharesRuns(const AnalysisResults& previous, const AnalysisInputs& inputs,
                const AnalysisPlan& plan);

// Progress callback: (steps done, total); returning false stops the computation.
using AnalysisProgress = std::function<bool(int done, int total)>;

// One step per closed-form demonstration and one per run of the algorithms at one size.
int analysisStepCount(const AnalysisPlan& plan);

// Runs every demonstration. Never throws: an EngineError becomes the outcome's error. Runs of
// the algorithms are taken from `previous` when it was computed for the same d, B and seed
// (switching the hardware profile then costs nothing).
AnalysisOutcome computeAnalysis(const AnalysisInputs& inputs, const AnalysisProgress& progress = {},
                                const AnalysisPlan& plan = {},
                                const AnalysisResults* previous = nullptr);

} // namespace flashviz::gui
