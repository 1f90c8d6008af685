#pragma once
// What the window shows for one set of settings (a Scene), and what it shows at one step (a
// Frame). A scene is built once, off the GUI thread when it is large; a frame is a function of
// (scene, step) computed by the step engine, so stepping back is as cheap as stepping forward and
// no view keeps a history.
#include "session/settings.h"

#include "core/backend.h"
#include "core/backward.h"
#include "core/check.h"
#include "core/flash_versions.h"
#include "core/hardware.h"
#include "core/l2_steps.h"
#include "core/run.h"
#include "core/steps.h"

#include "app/measured/shipped_measurements.h"

#include <QImage>
#include <QRect>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace flashviz::gui {

// The window animates problems up to this size; flashviz-cli runs larger ones.
inline constexpr int kWindowMaxSequence = 16384;
inline constexpr std::uint64_t kWindowMaxTiles = std::uint64_t(1) << 22;
// Backends record per-tile traces only for problems this small (and this many values).
inline constexpr int kTraceMaxSequence = 1024;
inline constexpr std::uint64_t kTraceMaxValues = std::uint64_t(1) << 22;
// n x n images (S, P) are averaged down to this side: a screen shows them a few hundred pixels
// wide, and every repaint at a new size rescales them.
inline constexpr int kLargeImageSide = 512;
// Standard attention's S and P are kept as numbers (for the tile detail) up to this many entries.
inline constexpr std::int64_t kSmallMatrixEntries = 4096;

struct Chapter {
    QString title;
    int step = 0;
};

// What a backward scene (Algorithm::Backward) holds beside the forward's fields: the gradients,
// their reference and check, when each block's gradient is final, and the images the views draw.
// In a backward scene the Scene's own `output`/`check` are the forward's O against ordinary
// attention (the O the pre-pass reads); `reference` is ordinary attention's O.
struct BackwardScene {
    Matrix dO;                                  // the upstream gradient
    Gradients grads;                            // what the chosen backend computed
    Gradients reference;                        // closed form, double precision
    GradientCheck check;                        // grads against reference
    std::optional<GradientCheck> cpuCheck;      // the CPU engine's, when another backend ran
    // A GPU backend's fast fp16 / bf16 kernels on the same inputs, judged (core/run.h), or why
    // they did not run; the animation stays the mirror kernel's.
    std::optional<LowPrecisionGradientCheck> lowPrecisionCheck;
    QString lowPrecisionNote;
    std::vector<char> wrongQueryRow;            // per query row: dQ's row is wrong
    std::vector<char> wrongKeyRow;              // per key row: dK's or dV's row is wrong
    std::shared_ptr<const BackwardTrace> trace; // per-tile dQ_i, dK_j, dV_j the backend recorded
    // StepEngine::firstBackwardBugStep(), or 0 when the forward's O is already wrong (a forward
    // switch off): the pre-pass reads it.
    std::optional<int> firstBugStep;
    std::vector<int> keyBlockDoneStep;   // per key block: the step dK_j, dV_j reach HBM
    std::vector<int> queryBlockDoneStep; // per query block: the step dQ_i is final (-1: none)
    std::uint64_t storedElements = 0;    // what the forward left for the backward
    Counters storedWeightsTotals;        // backwardTrade().stored: P stored, and the forward writing it
    QImage dOImage, dqImage, dkImage, dvImage;
    double dOScale = 0, dqScale = 0, dkScale = 0, dvScale = 0;
    QImage lseImage, deltaImage; // L and D, one column each (the engine's, as the pass reads them)
    double lseScale = 0, deltaScale = 0;
};

struct Scene {
    VizSettings settings;
    HardwareProfile hardware;
    std::shared_ptr<const StepEngine> engine;        // the run shown, with its switches
    std::shared_ptr<const StepEngine> correctEngine; // the same run without the bug switches
    Matrix reference;                                // ordinary attention, double precision
    Matrix output;                                   // what the chosen backend computed
    CheckReport check;                               // output against the reference
    std::vector<char> wrongRow;          // per query row: the check finds it wrong (quick lookups)
    QString backendName;                 // the backend that produced `output`
    QString backendNote;                 // why the CPU stood in, when the chosen backend refused
    std::optional<CheckReport> cpuCheck; // the CPU engine's output, when another backend ran
    std::shared_ptr<const FlashTrace> trace; // per-tile values the backend recorded
    QString traceNote;                       // why there is no trace
    std::optional<int> firstRescaleStep;
    // Per query block: the step after which its O rows are final (the backward: 0, O is read).
    std::vector<int> blockDoneStep;
    Counters totals;         // the whole run
    Counters standardTotals; // standard attention on the same sizes, for comparison
    QImage qImage, kImage, vImage, outputImage;
    // Colour scales of those images (largest finite |value|), found once per scene so that a
    // repaint of an n = 4096 problem does not scan a million values again.
    double qScale = 0, kScale = 0, vScale = 0, outputScale = 0;
    QImage scoresImage, weightsImage; // the stored S and P (standard, or the debug copy of S)
    Matrix smallScores, smallWeights; // standard attention's S and P kept as numbers when small
    std::vector<Chapter> chapters;
    // Standard attention: the steps at which S, P and O are written to HBM (-1 for flash).
    int writeScoresStep = -1, writeWeightsStep = -1, writeOutputStep = -1;
    double buildSeconds = 0;
    std::optional<BackwardScene> backward; // set exactly when settings.algorithm is Backward
    // FlashAttention-1 and -2 run on the CPU and checked (forward flash scenes), and the kernel
    // FlashViz would launch for these sizes on this GPU (the grid picture's).
    std::optional<VersionComparison> versions;
    KernelShape gridKernel;
    // The run through this GPU's L2 (none where the profile has no L2 figures): the memory
    // stage's third level and its split counters.
    std::shared_ptr<const StepL2Model> l2;
    // These sizes as one launch of FlashViz's kernel at the GPU benchmark's shape, the model beside
    // the counters shipped for this GPU, when they hold this point (forward, n_q = n_k, no mask).
    std::optional<measured::ThroughL2> measuredLaunch;

    int stepCount() const { return engine->stepCount(); }
    bool isFlash() const { return settings.algorithm == Algorithm::Flash; }
    bool isBackward() const { return settings.algorithm == Algorithm::Backward; }
    // FlashAttention's totals on these sizes and options, for the comparison with standardTotals:
    // this run's own, or beside standard attention the engine's closed form of a flash run.
    Counters flashTotals() const {
        const ProblemSpec& spec = settings.spec;
        return isFlash() ? totals
                         : flashCounts(spec.queries, spec.keys, spec.headDim, spec.causal,
                                       settings.options);
    }
    int queryBlockOfRow(int row) const;
    bool rowFinished(int row, int step) const;
    int chapterOf(int step) const;
    bool isRowWrong(int row) const {
        return row >= 0 && row < int(wrongRow.size()) && wrongRow[std::size_t(row)];
    }
};

struct Frame {
    std::shared_ptr<const Scene> scene;
    int step = 0;
    StepState state;
    Counters before;                  // totals through the previous step
    std::optional<StepState> correct; // the same step without the bug switches
    const TileTrace* trace = nullptr; // the backend's record of this tile once it is updated
    // The same for a backward tile, once its three gradients are updated (UpdateKeyGradient); at
    // StoreKeyValueGradient the key block's last tile, whose dK_j, dV_j are the ones stored.
    const BackwardTileTrace* backwardTrace = nullptr;
};

// Reports progress from a build and asks whether to stop.
class BuildProgress {
  public:
    virtual ~BuildProgress() = default;
    virtual void report(int percent, const QString& stage) = 0;
    virtual bool cancelled() const = 0;
};

struct BuildCancelled {};

// Settings validateForWindow accepted, with the hardware profile its checks looked up: what
// buildScene takes, so that one build checks its settings once.
class CheckedSettings {
  public:
    const VizSettings& settings() const { return m_settings; }
    const HardwareProfile& hardware() const { return m_hardware; }

  private:
    friend CheckedSettings validateForWindow(const VizSettings& settings);
    CheckedSettings(const VizSettings& settings, HardwareProfile hardware)
        : m_settings(settings), m_hardware(std::move(hardware)) {}
    VizSettings m_settings;
    HardwareProfile m_hardware;
};

// Cheap checks done before any work: the engine's own validation, this window's limits, the
// hardware id and the backend's availability. Throws EngineError with a readable message.
CheckedSettings validateForWindow(const VizSettings& settings);

// Throws EngineError when the engine refuses, BuildCancelled when progress->cancelled().
std::shared_ptr<const Scene> buildScene(const CheckedSettings& settings, BuildProgress* progress);
// validateForWindow, then the build: for callers that have not checked the settings yet.
std::shared_ptr<const Scene> buildScene(const VizSettings& settings, BuildProgress* progress);

// The request the core's run takes for these settings (the progress reporter aside): the
// backward's forward is FlashAttention with the forward's switches, without the debug copy of S;
// another backend's values are checked beside the CPU's; the backward's tensor-core check is
// settings.tensorCoreCheck.
RunRequest sceneRunRequest(const VizSettings& settings, Algorithm algorithm);
// The build's stage in which a GPU backend's tensor-core kernels run and are judged, as the
// progress bar names it ("The fp16 tensor-core kernels, judged against plain fp16"); empty when
// the settings ask for no check.
QString tensorCoreStageLabel(const VizSettings& settings);

// An estimate, in floating-point operations, of what a build costs (to decide whether to run it
// on a worker thread) and of what computing one frame costs.
double buildCost(const VizSettings& settings);
double frameCost(const Scene& scene, int step);
// With a bug switched on, frames costing more than this compute the correct run's state on a
// second core while the calling thread computes the buggy run's.
inline constexpr double kParallelFrameFlops = 4e6;

// Runs of query rows whose output is final in HBM at `step` (`arriving` leaves out the block
// being written at this very step, while its animation runs).
std::vector<Range> finishedRowRuns(const Scene& scene, int step, bool arriving = false);
// Parts of the debug copy of S (keepFullScores) written by this step, in element coordinates
// (x = key, y = query row).
std::vector<QRect> storedScoreRegions(const Scene& scene, const StepInfo& info);

std::shared_ptr<const Frame> makeFrame(const std::shared_ptr<const Scene>& scene, int step);

} // namespace flashviz::gui
