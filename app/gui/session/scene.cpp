#include "session/scene.h"
#include "session/worker_pool.h"

#include "style/format.h"
#include "style/heatmap.h"

#include "core/attention.h"
#include "core/counters.h"
#include "core/errors.h"
#include "core/run.h"
#include "core/tiling.h"
#include "kernels/kernel_shapes.h"

#include <QElapsedTimer>
#include <QThreadPool>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <future>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace flashviz::gui {

namespace {

// Asking the CUDA driver what is present costs a device initialisation: once per run.
const std::vector<BackendAvailability>& backendList() {
    static const std::vector<BackendAvailability> list = listBackends();
    return list;
}

// The tiles of a flash run: query blocks times key blocks.
std::uint64_t tileCount(const ProblemSpec& spec, const FlashOptions& options) {
    return std::uint64_t(blockCount(spec.queries, options.blockRows)) *
           std::uint64_t(blockCount(spec.keys, options.blockCols));
}

void step(BuildProgress* progress, int percent, const QString& stage) {
    if (!progress) return;
    if (progress->cancelled()) throw BuildCancelled{};
    progress->report(percent, stage);
}

// The core's run says only when each of its stages begins, and two of them (ordinary attention,
// then the run itself) are nearly all of a large build: 6.0 s and 4.5 s of 10.7 s at n = 16384,
// d = 64, 128 x 128 tiles, with the bar held at one figure for each. Within such a stage a thread
// reports how far it has got by the time spent against the stage's expected time: its
// multiply-adds at the rate this machine computed ordinary attention at on a few of the same rows
// before the build, then at the rate the finished stages ran at. It stops at 95 % of the stage's
// share, so it never claims a stage done before the core says so.
class PacedProgress final : public BuildProgress {
  public:
    explicit PacedProgress(BuildProgress* progress) : m_progress(progress) {
        m_clock.start();
        m_thread = std::thread([this] { pace(); });
    }
    ~PacedProgress() override {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        m_thread.join();
    }
    PacedProgress(const PacedProgress&) = delete;
    PacedProgress& operator=(const PacedProgress&) = delete;

    // A stage reported at once, without pacing.
    void report(int percent, const QString& stage) override {
        std::lock_guard lock(m_mutex);
        finishStage();
        m_progress->report(percent, stage);
    }
    bool cancelled() const override { return m_progress->cancelled(); }

    void calibrate(double flops, double seconds) {
        std::lock_guard lock(m_mutex);
        setRate(flops, seconds);
    }
    // A stage of `flops` multiply-adds from `from` to `to` percent, paced.
    void beginStage(int from, int to, double flops, const QString& stage) {
        {
            std::lock_guard lock(m_mutex);
            finishStage();
            m_progress->report(from, stage);
            m_stage = stage;
            m_from = from;
            m_to = to;
            m_flops = flops;
            m_stageStart = m_clock.nsecsElapsed();
        }
        m_wake.notify_all();
    }

  private:
    // Under m_mutex.
    void setRate(double flops, double seconds) {
        if (flops > 0 && seconds > 0) m_flopsPerSecond = flops / seconds;
    }
    // Under m_mutex: the stage in flight ended; its time calibrates the next.
    void finishStage() {
        if (m_to <= m_from) return;
        setRate(m_flops, double(m_clock.nsecsElapsed() - m_stageStart) * 1e-9);
        m_to = m_from;
    }
    void pace() {
        std::unique_lock lock(m_mutex);
        int shown = -1;
        while (!m_stop) {
            m_wake.wait_for(lock, std::chrono::milliseconds(100));
            if (m_stop || m_to <= m_from || !(m_flopsPerSecond > 0)) continue;
            const double expected = m_flops / m_flopsPerSecond;
            const double spent = double(m_clock.nsecsElapsed() - m_stageStart) * 1e-9;
            const double share = std::min(0.95, spent / std::max(expected, 1e-9));
            const int percent = m_from + int(share * (m_to - m_from));
            if (percent > shown && percent > m_from) m_progress->report(percent, m_stage);
            shown = percent;
        }
    }

    BuildProgress* m_progress;
    QElapsedTimer m_clock;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    QString m_stage;
    int m_from = 0, m_to = 0;
    double m_flops = 0;
    qint64 m_stageStart = 0;
    double m_flopsPerSecond = 0;
    std::thread m_thread;
};

// The FLOPs of one pass of attention's two products over these sizes, Q Kᵀ and P V, as the
// counting model counts them.
double attentionFlops(const ProblemSpec& spec, int queries) {
    Counters counted;
    counted.matmul(std::uint64_t(queries), std::uint64_t(spec.headDim), std::uint64_t(spec.keys));
    counted.matmul(std::uint64_t(queries), std::uint64_t(spec.keys), std::uint64_t(spec.headDim));
    return double(counted.flops);
}

// Times ordinary attention on a few of the problem's rows (about 0.5 % of the reference's work):
// the rate the pacer starts from.
void calibrate(PacedProgress& paced, const Problem& problem) {
    const int rows = std::clamp(problem.spec.queries / 200, 1, 64);
    QElapsedTimer timer;
    timer.start();
    const Matrix sample = referenceAttention<double>(problem.q.topRows(rows), problem.k, problem.v,
                                                     problem.scale(), false);
    paced.calibrate(attentionFlops(problem.spec, int(sample.rows())),
                    double(timer.nsecsElapsed()) * 1e-9);
}

// A job started on a pool thread when one is free at once. The caller, once its own share of the
// work is done, takes the job over if no thread has begun it yet (pool busy, core taken by another
// program), so it never waits for a queue: at worst it does the job itself, as without a thread.
template <class T> class SideTask {
  public:
    template <class Job>
    explicit SideTask(Job job) : m_shared(std::make_shared<Shared>(std::move(job))) {
        m_result = m_shared->task.get_future();
        workerPool().tryStart([shared = m_shared] { shared->claimAndRun(); });
    }
    SideTask(const SideTask&) = delete;
    SideTask& operator=(const SideTask&) = delete;
    // Unless taken, the job is dropped when no thread has begun it.
    ~SideTask() { m_shared->claimed.exchange(true); }

    T take() {
        m_shared->claimAndRun();
        return m_result.get();
    }

  private:
    struct Shared {
        template <class Job> explicit Shared(Job job) : task(std::move(job)) {}
        void claimAndRun() {
            if (!claimed.exchange(true)) task();
        }
        std::packaged_task<T()> task;
        std::atomic<bool> claimed{false};
    };
    std::shared_ptr<Shared> m_shared;
    std::future<T> m_result;
};

FlashOptions withoutBugs(FlashOptions options) {
    options.rescale = true;
    options.runningMax = true;
    // The trade (storeWeights) and the upstream gradient are not bugs: the correct run keeps them.
    BackwardOptions& backward = options.backward;
    backward.subtractRowDot = backward.useLogSumExp = backward.accumulateDq =
        backward.maskRecompute = true;
    return options;
}

// The backward's steps of key block j lie in [first, end); within them the query blocks come in
// order, each taking a run of steps.
struct StepSpan {
    int first = 0, end = 0;
};
StepSpan keyBlockSteps(const StepEngine& engine, int keyBlock) {
    const int end = keyBlock + 1 < engine.outerBlockCount()
                        ? engine.firstStepOfOuterBlock(keyBlock + 1)
                        : engine.stepCount();
    return {engine.firstStepOfOuterBlock(keyBlock), end};
}

// The step of `kind` for query block i inside key block j's steps, found by bisection (the
// query blocks are in order): O(log steps), so a causal n = 16384 run does not scan millions.
std::optional<int> backwardTileStep(const StepEngine& engine, int keyBlock, int queryBlock,
                                    StepKind kind) {
    const StepSpan span = keyBlockSteps(engine, keyBlock);
    // The first step whose query block is at least i (LoadKeyValue has none: it counts as before).
    int lo = span.first + 1, hi = span.end - 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (engine.info(mid).queryBlock < queryBlock)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int s = lo; s < span.end; ++s) {
        const StepInfo info = engine.info(s);
        if (info.queryBlock != queryBlock) break;
        if (info.kind == kind) return s;
    }
    return std::nullopt;
}

// Per key block: the step dK_j and dV_j are stored.
std::vector<int> keyBlockDoneSteps(const StepEngine& engine) {
    std::vector<int> done(std::size_t(engine.keyBlockCount()));
    for (int j = 0; j < engine.keyBlockCount(); ++j)
        done[std::size_t(j)] = keyBlockSteps(engine, j).end - 1;
    return done;
}

// Per query block: the step its dQ_i is final in HBM, the UpdateQueryGradient of the last key
// block it sees (-1 for a block that sees no key).
std::vector<int> queryBlockDoneSteps(const StepEngine& engine) {
    std::vector<int> done(std::size_t(engine.queryBlockCount()), -1);
    for (int i = 0; i < engine.queryBlockCount(); ++i) {
        const int visible = engine.visibleKeyBlocks(i);
        if (visible == 0) continue;
        if (const auto s = backwardTileStep(engine, visible - 1, i, StepKind::UpdateQueryGradient))
            done[std::size_t(i)] = *s;
    }
    return done;
}

std::vector<int> doneSteps(const StepEngine& engine, BuildProgress* progress) {
    const int count = engine.stepCount();
    // The backward reads an O the forward already wrote: every row is final from the start.
    if (engine.algorithm() == Algorithm::Backward)
        return std::vector<int>(std::size_t(engine.queryBlockCount()), 0);
    if (engine.algorithm() == Algorithm::Standard) {
        for (int s = 0; s < count; ++s)
            if (engine.info(s).kind == StepKind::WriteOutput) return {s};
        return {count - 1};
    }
    const int queryBlocks = engine.queryBlockCount();
    std::vector<int> done(std::size_t(queryBlocks), 0);
    if (engine.options().loopOrder == LoopOrder::QueryOuter) {
        for (int i = 0; i < queryBlocks; ++i)
            done[std::size_t(i)] =
                (i + 1 < engine.outerBlockCount() ? engine.firstStepOfOuterBlock(i + 1) : count) -
                1;
        return done;
    }
    // Key/value outer: a query block is final after the last key block it sees has visited it.
    std::map<int, std::vector<int>> byLastKeyBlock;
    for (int i = 0; i < queryBlocks; ++i) {
        const int visible = engine.visibleKeyBlocks(i);
        if (visible > 0) byLastKeyBlock[visible - 1].push_back(i);
    }
    int scanned = 0;
    for (const auto& [keyBlock, queryBlockList] : byLastKeyBlock) {
        const int begin = engine.firstStepOfOuterBlock(keyBlock);
        const int end = keyBlock + 1 < engine.outerBlockCount()
                            ? engine.firstStepOfOuterBlock(keyBlock + 1)
                            : count;
        for (int s = begin; s < end; ++s) {
            if ((++scanned & 0xffff) == 0 && progress && progress->cancelled())
                throw BuildCancelled{};
            const StepInfo info = engine.info(s);
            if (info.queryBlock >= 0 && std::find(queryBlockList.begin(), queryBlockList.end(),
                                                  info.queryBlock) != queryBlockList.end())
                done[std::size_t(info.queryBlock)] = s;
        }
    }
    return done;
}

std::vector<Chapter> chaptersOf(const StepEngine& engine) {
    std::vector<Chapter> out;
    const auto& spec = engine.problem().spec;
    if (engine.algorithm() == Algorithm::Standard) {
        for (int s = 0; s < engine.stepCount(); ++s) {
            switch (engine.info(s).kind) {
            case StepKind::ReadInputs:
                out.push_back({QStringLiteral("Read Q, K, V"), s});
                break;
            case StepKind::ComputeScores:
                out.push_back({QStringLiteral("Scores S = scale·QKᵀ, written to HBM"), s});
                break;
            case StepKind::ReadScores:
                out.push_back({QStringLiteral("Softmax: S read back, P written"), s});
                break;
            case StepKind::ReadWeights:
                out.push_back({QStringLiteral("Output: P read back, O = PV"), s});
                break;
            default:
                break;
            }
        }
        return out;
    }
    if (engine.algorithm() == Algorithm::Backward) {
        out.push_back({QStringLiteral("Pre-pass: D = rowsum(dO ∘ O)"), 0});
        for (int j = 0; j < engine.keyBlockCount(); ++j) {
            const Range keys = blockRange(j, engine.options().blockCols, spec.keys);
            out.push_back({QStringLiteral("Key block %1 · keys %2–%3")
                               .arg(j)
                               .arg(keys.begin)
                               .arg(keys.end - 1),
                           engine.firstStepOfOuterBlock(j)});
        }
        return out;
    }
    const bool queryOuter = engine.options().loopOrder == LoopOrder::QueryOuter;
    if (!queryOuter) out.push_back({QStringLiteral("Initialise O, m, ℓ in HBM"), 0});
    const int size = queryOuter ? engine.options().blockRows : engine.options().blockCols;
    const int total = queryOuter ? spec.queries : spec.keys;
    for (int b = 0; b < engine.outerBlockCount(); ++b) {
        const Range range = blockRange(b, size, total);
        const int first = range.begin, last = range.end - 1;
        out.push_back(
            {queryOuter ? QStringLiteral("Query block %1 · rows %2–%3").arg(b).arg(first).arg(last)
                        : QStringLiteral("Key block %1 · keys %2–%3").arg(b).arg(first).arg(last),
             engine.firstStepOfOuterBlock(b)});
    }
    return out;
}

} // namespace

int Scene::queryBlockOfRow(int row) const {
    if (settings.algorithm == Algorithm::Standard) return 0;
    return row / settings.options.blockRows;
}

bool Scene::rowFinished(int row, int step) const {
    const int block = queryBlockOfRow(row);
    if (block < 0 || block >= int(blockDoneStep.size())) return false;
    return step >= blockDoneStep[std::size_t(block)];
}

int Scene::chapterOf(int step) const {
    int found = 0;
    for (std::size_t i = 0; i < chapters.size(); ++i)
        if (chapters[i].step <= step) found = int(i);
    return found;
}

namespace {

// validateForWindow's checks, returning the hardware profile they looked up, so that one build
// finds it once.
HardwareProfile checkForWindow(const VizSettings& s) {
    validate(s.spec);
    validate(s.spec, s.options);
    const auto& spec = s.spec;
    for (auto [value, name] :
         {std::pair{spec.queries, "n_q (queries)"}, std::pair{spec.keys, "n_k (keys)"}})
        if (value > kWindowMaxSequence)
            throw EngineError(ErrorKind::LimitExceeded, std::string(name) + " = " +
                                                            std::to_string(value) +
                                                            " is more than the window animates (" +
                                                            std::to_string(kWindowMaxSequence) +
                                                            "); flashviz-cli runs larger problems");
    if (s.algorithm != Algorithm::Standard) {
        const std::uint64_t tiles = tileCount(spec, s.options);
        if (tiles > kWindowMaxTiles)
            throw EngineError(ErrorKind::LimitExceeded,
                              "Br = " + std::to_string(s.options.blockRows) + " and Bc = " +
                                  std::to_string(s.options.blockCols) + " cut this problem into " +
                                  std::to_string(tiles) + " tiles; the window animates up to " +
                                  std::to_string(kWindowMaxTiles) + ", so choose larger blocks");
    }
    // Standard attention's S and P; the backward's reference gradients hold P and dS dense.
    if (s.algorithm != Algorithm::Flash)
        requireScoreMatrixMemory(spec.queries, spec.keys, int(sizeof(double)), 2);
    HardwareProfile hardware = hardwareFor(s);
    for (const auto& b : backendList())
        if (b.kind == s.backend && !b.available)
            throw EngineError(ErrorKind::Unsupported,
                              "The " + b.name + " backend is not available: " + b.reason);
    return hardware;
}

// The step engine, and with a bug switched on the same run without it, to compare against.
void layOutSteps(Scene& scene, const Problem& problem, BuildProgress* progress) {
    const VizSettings& s = scene.settings;
    step(progress, 2, QStringLiteral("Laying out the steps"));
    // The backward's layout runs a forward and a backward pass: a cancelled build stops it.
    const auto poll = [progress] {
        if (progress && progress->cancelled()) throw BuildCancelled{};
    };
    scene.engine = std::make_shared<StepEngine>(problem, s.algorithm, s.options, poll);
    if (s.hasBug() && s.algorithm != Algorithm::Standard)
        scene.correctEngine =
            std::make_shared<StepEngine>(problem, s.algorithm, withoutBugs(s.options), poll);
}

// The run through L2 on a GPU with L2 figures, and the shipped measurement of these sizes as one
// launch when there is one.
void modelL2(Scene& scene) {
    const HardwareProfile& hw = scene.hardware;
    if (!(hw.l2Bytes.value > 0)) return;
    scene.l2 = std::make_shared<const StepL2Model>(scene.engine, usableL2Bytes(hw));
    const ProblemSpec& spec = scene.settings.spec;
    if (scene.isBackward() || spec.causal || spec.queries != spec.keys ||
        !measured::shippedTrafficFor(hw.id))
        return;
    measured::ThroughL2 launch = measured::throughL2(hw, spec.headDim, scene.settings.options.blockRows,
                                                     scene.settings.options.blockCols, {spec.queries});
    if (launch.headDim != spec.headDim || launch.points.empty()) return;
    const measured::ThroughL2Point& point = launch.points.front();
    if (scene.isFlash() ? point.flashMeasured : point.standardMeasured)
        scene.measuredLaunch = std::move(launch);
}

QString refusedNote(const QString& backendName, const std::string& refusal) {
    return QStringLiteral("%1 refused (%2); the CPU computed instead")
        .arg(backendName, QString::fromStdString(refusal));
}

// The chosen backend, or the CPU when it cannot be made here (a context lost to a fault earlier
// in this session); the note says why.
std::unique_ptr<Backend> chooseBackend(Scene& scene) {
    const BackendKind kind = scene.settings.backend;
    try {
        auto backend = makeBackend(kind);
        scene.backendName = QString::fromStdString(backend->name());
        return backend;
    } catch (const EngineError& e) {
        if (kind == BackendKind::Cpu) throw;
        scene.backendNote = refusedNote(QString::fromUtf8(toString(kind)).toUpper(), e.what());
        scene.backendName = QStringLiteral("CPU");
        return makeBackend(BackendKind::Cpu);
    }
}

// The stored S and P of a run (standard attention's, or flash's debug copy of S), to be drawn.
struct StoredMatrices {
    Matrix scores, weights;
};

// One run of the core (forward or backward) as a share of the build's progress bar: what each of
// its stages is called and the multiply-adds it paces by.
struct StagePlan {
    int from = 3, to = 93;
    QString reference, run, alongside, lowPrecision;
    double referenceFlops = 0, runFlops = 0, alongsideFlops = 0, lowPrecisionFlops = 0;
};

// Standard attention or FlashAttention: each stage is one pass of attention over the problem.
StagePlan forwardStages(const Scene& scene, Algorithm algorithm, int from, int to) {
    const QString& name = scene.backendName;
    const bool flash = algorithm != Algorithm::Standard;
    const double flops = attentionFlops(scene.settings.spec, scene.settings.spec.queries);
    return {from,
            to,
            QStringLiteral("Ordinary attention, for the check"),
            flash ? QStringLiteral("FlashAttention on the %1").arg(name)
                  : QStringLiteral("Standard attention: S and P in full"),
            flash ? QStringLiteral("The CPU's run, beside the %1's").arg(name)
                  : QStringLiteral("Standard attention on the %1").arg(name),
            QString(), // the forward has no low-precision stage
            flops,
            flops,
            flops};
}

// The backward: the reference gradients take five products of attention's size (S, dP, dV, dQ,
// dK), a backend's run seven (its forward's two, then S again, dV, dP, dQ, dK); the
// low-precision kernels' judgement twelve on the CPU (the exact and the plain gradients), in the
// format the settings chose, and none when they chose no check.
StagePlan backwardStages(const Scene& scene, int from, int to) {
    const QString& name = scene.backendName;
    const double pass = attentionFlops(scene.settings.spec, scene.settings.spec.queries) / 2;
    return {from,
            to,
            QStringLiteral("Ordinary attention's gradients, for the check"),
            QStringLiteral("The backward pass on the %1").arg(name),
            QStringLiteral("The CPU's backward, beside the %1's").arg(name),
            tensorCoreStageLabel(scene.settings),
            5 * pass,
            7 * pass,
            7 * pass,
            scene.settings.tensorCoreCheck ? 12 * pass : 0};
}

// Reports each stage of the core's run with its share of the plan's span, by its multiply-adds.
std::function<void(RunStage)> stageReporter(const Scene& scene, PacedProgress* paced,
                                            StagePlan plan) {
    return [&scene, paced, plan](RunStage stage) {
        if (!paced) return;
        if (paced->cancelled()) throw BuildCancelled{};
        const bool alongside = scene.settings.backend != BackendKind::Cpu;
        const double extra = alongside ? plan.alongsideFlops + plan.lowPrecisionFlops : 0;
        const double total = plan.referenceFlops + plan.runFlops + extra;
        const auto at = [&](double flops) {
            return plan.from + int(std::lround((plan.to - plan.from) * flops / total));
        };
        const int afterReference = at(plan.referenceFlops);
        const int afterRun = at(plan.referenceFlops + plan.runFlops);
        const int afterAlongside = at(plan.referenceFlops + plan.runFlops + plan.alongsideFlops);
        if (stage == RunStage::Reference)
            paced->beginStage(plan.from, afterReference, plan.referenceFlops, plan.reference);
        else if (stage == RunStage::Run)
            paced->beginStage(afterReference, afterRun, plan.runFlops, plan.run);
        else if (stage == RunStage::Alongside)
            paced->beginStage(afterRun, afterAlongside, plan.alongsideFlops, plan.alongside);
        else
            paced->beginStage(afterAlongside, plan.to, plan.lowPrecisionFlops, plan.lowPrecision);
    };
}

// The run's output, reference and checks into the scene; the stored S and P handed on to draw.
StoredMatrices keepRun(Scene& scene, RunResult run) {
    scene.reference = std::move(run.reference);
    scene.output = std::move(run.output);
    scene.check = std::move(run.check);
    scene.cpuCheck = std::move(run.cpuCheck);
    scene.wrongRow.assign(std::size_t(scene.settings.spec.queries), 0);
    for (int row : scene.check.wrongRows)
        scene.wrongRow[std::size_t(row)] = 1;
    scene.standardTotals = run.standardCounters;
    if (scene.settings.algorithm == Algorithm::Standard &&
        run.fullScores.size() <= kSmallMatrixEntries) {
        scene.smallScores = run.fullScores;
        scene.smallWeights = run.fullWeights;
    }
    return {std::move(run.fullScores), std::move(run.fullWeights)};
}

// The request the core's run takes for these settings (sceneRunRequest), its stages reported to
// the progress bar.
RunRequest runRequest(const Scene& scene, Algorithm algorithm, PacedProgress* paced,
                      StagePlan plan) {
    RunRequest request = sceneRunRequest(scene.settings, algorithm);
    request.onStage = stageReporter(scene, paced, std::move(plan));
    return request;
}

// The core's run-and-check on the backend. A GPU that refuses (a d its kernels do not take, too
// little memory) hands the work to the CPU, which then stands in as `backend`.
StoredMatrices runOnBackend(Scene& scene, const Problem& problem, std::unique_ptr<Backend>& backend,
                            PacedProgress* paced) {
    // The backward's scene shows the forward's O too (what the pre-pass reads): it takes the
    // first 30 % of the run's share of the bar, the gradients the rest.
    const Algorithm forward = scene.isBackward() ? Algorithm::Flash : scene.settings.algorithm;
    const int forwardEnd = scene.isBackward() ? 30 : 93;
    RunResult run = runAndCheck(
        problem, *backend,
        runRequest(scene, forward, paced, forwardStages(scene, forward, 3, forwardEnd)));
    if (!run.cpuStoodIn.empty()) {
        scene.backendNote = refusedNote(scene.backendName, run.cpuStoodIn);
        scene.backendName = QString::fromStdString(run.backendName);
        backend = makeBackend(BackendKind::Cpu);
    }
    return keepRun(scene, std::move(run));
}

// Per row: whether one of the checks finds it wrong.
std::vector<char> rowMarks(int rows, std::initializer_list<const CheckReport*> checks) {
    std::vector<char> marks(std::size_t(rows), 0);
    for (const CheckReport* check : checks)
        for (int row : check->wrongRows)
            if (row >= 0 && row < rows) marks[std::size_t(row)] = 1;
    return marks;
}

// The backward's run-and-check on the backend, after the forward's: the gradients, their
// reference and check into the scene's BackwardScene. A backend without a backward hands it to
// the CPU, as the forward does.
void runBackwardOnBackend(Scene& scene, const Problem& problem, std::unique_ptr<Backend>& backend,
                          PacedProgress* paced) {
    BackwardRunResult run = runBackwardAndCheck(
        problem, *backend,
        runRequest(scene, Algorithm::Backward, paced, backwardStages(scene, 30, 93)));
    if (!run.cpuStoodIn.empty()) {
        scene.backendNote = refusedNote(scene.backendName, run.cpuStoodIn);
        scene.backendName = QString::fromStdString(run.backendName);
        backend = makeBackend(BackendKind::Cpu);
    }
    const ProblemSpec& spec = scene.settings.spec;
    BackwardScene& b = *scene.backward;
    b.dO = std::move(run.dO);
    b.grads = std::move(run.grads);
    b.reference = std::move(run.reference);
    b.check = std::move(run.check);
    b.cpuCheck = std::move(run.cpuCheck);
    b.lowPrecisionCheck = std::move(run.lowPrecisionCheck);
    b.lowPrecisionNote = QString::fromStdString(run.lowPrecisionNote);
    b.wrongQueryRow = rowMarks(spec.queries, {&b.check.dq});
    b.wrongKeyRow = rowMarks(spec.keys, {&b.check.dk, &b.check.dv});
    b.storedElements = run.storedElements;
    b.storedWeightsTotals =
        backwardTrade(spec.queries, spec.keys, spec.headDim, spec.causal, scene.settings.options)
            .stored;
}

// Q, K, V and the output as images, with their colour scales.
void drawInputsAndOutput(Scene& scene, const Problem& problem, BuildProgress* progress) {
    step(progress, 94, QStringLiteral("Drawing the matrices"));
    scene.qScale = finiteAbsMax(problem.q);
    scene.kScale = finiteAbsMax(problem.k);
    scene.vScale = finiteAbsMax(problem.v);
    scene.outputScale = std::max(finiteAbsMax(scene.reference), 1e-300);
    scene.qImage = heatmapImage(problem.q, Colouring::Diverging, scene.qScale);
    scene.kImage = heatmapImage(problem.k, Colouring::Diverging, scene.kScale);
    scene.vImage = heatmapImage(problem.v, Colouring::Diverging, scene.vScale);
    scene.outputImage = heatmapImage(scene.output, Colouring::Diverging, scene.outputScale);
}

// dO and the three gradients as images, each with its reference's colour scale (as O's is).
void drawGradients(BackwardScene& b, BuildProgress* progress) {
    step(progress, 95, QStringLiteral("Drawing dO, dQ, dK and dV"));
    const auto scaleOf = [](const Matrix& m) { return std::max(finiteAbsMax(m), 1e-300); };
    b.dOScale = finiteAbsMax(b.dO);
    b.dqScale = scaleOf(b.reference.dq);
    b.dkScale = scaleOf(b.reference.dk);
    b.dvScale = scaleOf(b.reference.dv);
    b.dOImage = heatmapImage(b.dO, Colouring::Diverging, b.dOScale);
    b.dqImage = heatmapImage(b.grads.dq, Colouring::Diverging, b.dqScale);
    b.dkImage = heatmapImage(b.grads.dk, Colouring::Diverging, b.dkScale);
    b.dvImage = heatmapImage(b.grads.dv, Colouring::Diverging, b.dvScale);
}

// L and D as the step engine saved them, one column each.
void drawRowColumns(BackwardScene& b, const StepEngine& engine) {
    const Matrix lse = engine.logSumExp();
    const Matrix delta = engine.rowDots();
    b.lseScale = std::max(finiteAbsMax(lse), 1e-300);
    b.deltaScale = std::max(finiteAbsMax(delta), 1e-300);
    b.lseImage = heatmapImage(lse, Colouring::Diverging, b.lseScale);
    b.deltaImage = heatmapImage(delta, Colouring::Diverging, b.deltaScale);
}

// The stored n x n matrices as images, averaged down; the numbers are freed when drawn.
void drawStored(Scene& scene, StoredMatrices stored, BuildProgress* progress) {
    if (stored.scores.size() > 0) {
        step(progress, 95, QStringLiteral("Drawing the n × n scores"));
        scene.scoresImage = heatmapImage(stored.scores, Colouring::Diverging,
                                         finiteAbsMax(stored.scores), kLargeImageSide);
    }
    if (stored.weights.size() > 0) {
        step(progress, 96, QStringLiteral("Drawing the n × n weights"));
        scene.weightsImage = heatmapImage(stored.weights, Colouring::Sequential,
                                          finiteAbsMax(stored.weights), kLargeImageSide);
    }
}

// Why no per-tile trace is recorded for these settings; empty when one is.
QString traceRefusal(const VizSettings& s) {
    const auto& spec = s.spec;
    if (spec.queries > kTraceMaxSequence || spec.keys > kTraceMaxSequence)
        return QStringLiteral("per-tile traces are recorded up to n = %1").arg(kTraceMaxSequence);
    const std::uint64_t traceValues = tileCount(spec, s.options) *
                                      std::uint64_t(std::min(s.options.blockRows, spec.queries)) *
                                      std::uint64_t(spec.headDim + 3);
    if (traceValues > kTraceMaxValues)
        return QStringLiteral(
                   "a per-tile trace would hold %1 values; larger blocks keep it smaller")
            .arg(formatCount(traceValues));
    return {};
}

// Why no backward trace is recorded for these settings; empty when one is. Each tile keeps
// dQ_i (Br x d) and dK_j, dV_j (Bc x d each).
QString backwardTraceRefusal(const VizSettings& s) {
    const auto& spec = s.spec;
    if (spec.queries > kTraceMaxSequence || spec.keys > kTraceMaxSequence)
        return QStringLiteral("per-tile traces are recorded up to n = %1").arg(kTraceMaxSequence);
    const std::uint64_t perTile = std::uint64_t(std::min(s.options.blockRows, spec.queries) +
                                                2 * std::min(s.options.blockCols, spec.keys)) *
                                  std::uint64_t(spec.headDim);
    const std::uint64_t traceValues = tileCount(spec, s.options) * perTile;
    if (traceValues > kTraceMaxValues)
        return QStringLiteral(
                   "a per-tile trace would hold %1 values; larger blocks keep it smaller")
            .arg(formatCount(traceValues));
    return {};
}

// The backward's per-tile values as the backend recorded them, or the note why there are none.
void recordBackwardTrace(Scene& scene, const Problem& problem, Backend& backend,
                         BuildProgress* progress) {
    scene.traceNote = backwardTraceRefusal(scene.settings);
    if (!scene.traceNote.isEmpty()) return;
    step(progress, 97,
         QStringLiteral("Recording the %1's per-tile gradients").arg(scene.backendName));
    try {
        scene.backward->trace = std::make_shared<BackwardTrace>(
            backend.backwardTrace(problem, scene.backward->dO, scene.settings.options));
    } catch (const EngineError& e) {
        scene.traceNote = QString::fromStdString(e.what());
    }
}

// When each block's gradient is final, and where the run first goes wrong: at the pre-pass when
// the forward's O is already wrong (it reads that O), else where a backward bug first bites.
void indexBackward(Scene& scene, BuildProgress* progress) {
    BackwardScene& b = *scene.backward;
    const StepEngine& engine = *scene.engine;
    b.keyBlockDoneStep = keyBlockDoneSteps(engine);
    b.queryBlockDoneStep = queryBlockDoneSteps(engine);
    if (!scene.settings.hasBug()) return;
    step(progress, 98, QStringLiteral("Finding where the backward first goes wrong"));
    b.firstBugStep = engine.firstBackwardBugStep();
}

// The per-tile values the backend itself recorded, or the note why there are none.
void recordTrace(Scene& scene, const Problem& problem, Backend& backend, BuildProgress* progress) {
    scene.traceNote = traceRefusal(scene.settings);
    if (!scene.traceNote.isEmpty()) return;
    step(progress, 97, QStringLiteral("Recording the %1's per-tile values").arg(scene.backendName));
    try {
        scene.trace = std::make_shared<FlashTrace>(backend.trace(problem, scene.settings.options));
    } catch (const EngineError& e) {
        scene.traceNote = QString::fromStdString(e.what());
    }
}

// FlashAttention-1 beside -2 on the CPU, both checked (the FlashAttention-2 page), and the kernel
// the grid picture launches.
void compareFlashVersions(Scene& scene, const Problem& problem, BuildProgress* progress) {
    const auto& s = scene.settings;
    scene.gridKernel = kernels::kernelShapeFor(s.spec.headDim, s.options.blockRows,
                                               s.options.blockCols, scene.hardware);
    if (!scene.isFlash()) return;
    step(progress, 98, QStringLiteral("Running FlashAttention-1 beside -2"));
    scene.versions = compareVersions(problem, s.options, scene.reference);
}

// Standard attention: the steps at which S, P and O are written to HBM.
void findWriteSteps(Scene& scene) {
    for (int s = 0; s < scene.engine->stepCount(); ++s) {
        const StepKind kind = scene.engine->info(s).kind;
        if (kind == StepKind::WriteScores) scene.writeScoresStep = s;
        if (kind == StepKind::WriteWeights) scene.writeWeightsStep = s;
        if (kind == StepKind::WriteOutput) scene.writeOutputStep = s;
    }
}

// What the views look up by step: where rows are final, the chapters, the run's totals.
void indexSteps(Scene& scene, BuildProgress* progress) {
    step(progress, 99, QStringLiteral("Indexing the steps"));
    scene.blockDoneStep = doneSteps(*scene.engine, progress);
    scene.chapters = chaptersOf(*scene.engine);
    if (scene.settings.algorithm == Algorithm::Standard) findWriteSteps(scene);
    scene.totals = scene.engine->countersThrough(scene.engine->stepCount() - 1);
}

} // namespace

CheckedSettings validateForWindow(const VizSettings& s) {
    return CheckedSettings(s, checkForWindow(s));
}

double buildCost(const VizSettings& s) {
    const double n2d = double(s.spec.queries) * s.spec.keys * s.spec.headDim;
    switch (s.algorithm) {
    case Algorithm::Standard:
        return 10.0 * n2d;
    // The run and its reference, then FlashAttention-1 and -2 side by side (4 each).
    case Algorithm::Flash:
        return 16.0 * n2d;
    // The forward's run and reference (8), the reference gradients (10), the backend's backward
    // with its own forward (14), the step engine's forward and checkpoint pass (14, twice with a
    // bug switched on: the correct run is laid out too).
    case Algorithm::Backward:
        return (s.hasBug() ? 60.0 : 46.0) * n2d;
    }
    return 8.0 * n2d;
}

namespace {

// A backward state replays the tiles it needs from the engine's nearest checkpoint of the sums:
// the earlier query blocks of its key block (S and dP recomputed, dV and dK added: four products
// each), the earlier key blocks of its query block (S, dP, dQ: three), and its own tile (five).
double backwardFrameCost(const Scene& scene, const StepInfo& info) {
    if (info.keyBlock < 0) return 0; // the pre-pass and dQ = 0 copy O(n d) values
    const StepEngine& engine = *scene.engine;
    const auto& spec = scene.settings.spec;
    const auto& options = scene.settings.options;
    const double product = 2.0 * std::min(options.blockRows, spec.queries) *
                           std::min(options.blockCols, spec.keys) * spec.headDim;
    const int every = engine.backwardCheckpointInterval();
    const int firstQuery = firstQueryBlockSeeing(info.keyBlock, spec.queries, spec.keys,
                                                 options.blockRows, options.blockCols, spec.causal);
    double products = 0;
    if (info.queryBlock >= 0)
        products = 4.0 * ((info.queryBlock - firstQuery) % every) + 3.0 * (info.keyBlock % every) + 5.0;
    else if (info.kind == StepKind::StoreKeyValueGradient)
        products = 4.0 * ((engine.queryBlockCount() - firstQuery) % every);
    return products * product;
}

} // namespace

double frameCost(const Scene& scene, int step) {
    if (step < 0 || step >= scene.stepCount()) return 0;
    if (scene.isBackward()) {
        const double cost = backwardFrameCost(scene, scene.engine->info(step));
        return scene.correctEngine ? 2 * cost : cost;
    }
    if (!scene.isFlash()) return 0;
    const StepInfo info = scene.engine->info(step);
    if (info.queryBlock < 0) return 0;
    const int keyBlocks =
        info.keyBlock >= 0 ? info.keyBlock + 1 : scene.engine->visibleKeyBlocks(info.queryBlock);
    const double keys = double(keyBlocks) * scene.settings.options.blockCols;
    const double cost = 4.0 * info.rows.size() * keys * scene.settings.spec.headDim;
    return scene.correctEngine ? 2 * cost : cost;
}

std::shared_ptr<const Scene> buildScene(const CheckedSettings& checked, BuildProgress* progress) {
    QElapsedTimer timer;
    timer.start();
    auto scene = std::make_shared<Scene>();
    const VizSettings& settings = checked.settings();
    scene->settings = settings;
    scene->hardware = checked.hardware();

    std::optional<PacedProgress> paced; // what the build reports goes through it
    if (progress) paced.emplace(progress);
    progress = paced ? &*paced : nullptr;
    step(progress, 1, QStringLiteral("Making Q, K and V"));
    const Problem problem = makeProblem(settings.spec);
    if (paced) calibrate(*paced, problem);
    layOutSteps(*scene, problem, progress);
    modelL2(*scene);
    std::unique_ptr<Backend> backend = chooseBackend(*scene);
    StoredMatrices stored = runOnBackend(*scene, problem, backend, paced ? &*paced : nullptr);
    if (scene->isBackward()) {
        scene->backward.emplace();
        runBackwardOnBackend(*scene, problem, backend, paced ? &*paced : nullptr);
    }
    drawInputsAndOutput(*scene, problem, progress);
    if (scene->isBackward()) {
        drawGradients(*scene->backward, progress);
        drawRowColumns(*scene->backward, *scene->engine);
    }
    drawStored(*scene, std::move(stored), progress);
    if (scene->isFlash()) {
        recordTrace(*scene, problem, *backend, progress);
        step(progress, 98, QStringLiteral("Finding where the rescale first matters"));
        scene->firstRescaleStep = scene->engine->firstRescaleStep();
    }
    if (scene->isBackward()) {
        recordBackwardTrace(*scene, problem, *backend, progress);
        indexBackward(*scene, progress);
    }
    compareFlashVersions(*scene, problem, progress);
    indexSteps(*scene, progress);
    step(progress, 100, QStringLiteral("Done"));
    scene->buildSeconds = double(timer.nsecsElapsed()) * 1e-9;
    return scene;
}

RunRequest sceneRunRequest(const VizSettings& settings, Algorithm algorithm) {
    RunRequest request;
    request.algorithm = algorithm;
    request.options = settings.options;
    if (settings.algorithm == Algorithm::Backward) request.options.keepFullScores = false;
    request.cpuAlongside = true; // the window shows another backend's values beside the CPU's
    request.lowPrecision = settings.tensorCoreCheck; // the backward's; the forward ignores it
    return request;
}

QString tensorCoreStageLabel(const VizSettings& settings) {
    const LowPrecisionCheck& check = settings.tensorCoreCheck;
    return check ? QStringLiteral("The %1 tensor-core kernels, judged against plain %1")
                       .arg(QLatin1String(toString(*check)))
                 : QString();
}

std::shared_ptr<const Scene> buildScene(const VizSettings& settings, BuildProgress* progress) {
    return buildScene(validateForWindow(settings), progress);
}

std::vector<Range> finishedRowRuns(const Scene& scene, int stepIndex, bool arriving) {
    std::vector<Range> runs;
    const int rows = scene.settings.spec.queries;
    const int br =
        scene.settings.algorithm == Algorithm::Standard ? rows : scene.settings.options.blockRows;
    const int blockTotal = int(scene.blockDoneStep.size());
    int runStart = -1;
    for (int b = 0; b <= blockTotal; ++b) {
        const int doneAt = b < blockTotal ? scene.blockDoneStep[std::size_t(b)] : 0;
        const bool done =
            b < blockTotal && stepIndex >= doneAt && !(arriving && stepIndex == doneAt);
        if (done && runStart < 0) runStart = b * br;
        if (!done && runStart >= 0) {
            runs.push_back({runStart, std::min(rows, b * br)});
            runStart = -1;
        }
    }
    return runs;
}

std::vector<QRect> storedScoreRegions(const Scene& scene, const StepInfo& info) {
    std::vector<QRect> out;
    const int nq = scene.settings.spec.queries, nk = scene.settings.spec.keys;
    auto add = [&](int r0, int r1, int c0, int c1) {
        if (r1 > r0 && c1 > c0) out.emplace_back(c0, r0, c1 - c0, r1 - r0);
    };
    if (!scene.isFlash() || !scene.settings.options.keepFullScores) return out;
    if (info.index == scene.stepCount() - 1) {
        add(0, nq, 0, nk);
        return out;
    }
    // A tile's scores are copied out when they are computed.
    const bool tileWritten =
        info.keyBlock >= 0 && info.queryBlock >= 0 && info.kind != StepKind::LoadKeyValue &&
        info.kind != StepKind::LoadQuery && info.kind != StepKind::LoadRunningState;
    if (scene.settings.options.loopOrder == LoopOrder::QueryOuter) {
        if (info.queryBlock < 0) return out;
        add(0, info.rows.begin, 0, nk);
        // Loading the query block comes before its first tile; past the inner loop the row is
        // complete.
        const int rowDone = info.kind == StepKind::LoadQuery ? 0 : nk;
        const int colEnd =
            info.keyBlock >= 0 ? (tileWritten ? info.cols.end : info.cols.begin) : rowDone;
        add(info.rows.begin, info.rows.end, 0, colEnd);
    } else if (info.keyBlock >= 0) {
        add(0, nq, 0, info.cols.begin);
        const int rowEnd =
            info.queryBlock >= 0 ? (tileWritten ? info.rows.end : info.rows.begin) : 0;
        add(0, rowEnd, info.cols.begin, info.cols.end);
    }
    return out;
}

std::shared_ptr<const Frame> makeFrame(const std::shared_ptr<const Scene>& scene, int stepIndex) {
    auto frame = std::make_shared<Frame>();
    frame->scene = scene;
    frame->step = std::clamp(stepIndex, 0, scene->stepCount() - 1);
    // With a bug switched on, the correct run of the same step is replayed alongside, on another
    // core when it is worth it (on the GUI thread too: it waits no longer than doing both itself).
    const bool withCorrect =
        scene->correctEngine && frame->step < scene->correctEngine->stepCount();
    std::optional<SideTask<StepState>> correct;
    if (withCorrect && frameCost(*scene, frame->step) > kParallelFrameFlops)
        correct.emplace(
            [engine = scene->correctEngine, step = frame->step] { return engine->state(step); });
    frame->state = scene->engine->state(frame->step);
    if (frame->step > 0) frame->before = scene->engine->countersThrough(frame->step - 1);
    if (correct)
        frame->correct = correct->take();
    else if (withCorrect)
        frame->correct = scene->correctEngine->state(frame->step);
    const StepInfo& info = frame->state.info;
    if (scene->trace && info.queryBlock >= 0) {
        int keyBlock = -1;
        if (info.kind == StepKind::UpdateOutput || info.kind == StepKind::StoreRunningState)
            keyBlock = info.keyBlock;
        else if (info.kind == StepKind::Normalise || info.kind == StepKind::StoreOutput)
            keyBlock = info.keyBlock >= 0 ? info.keyBlock
                                          : scene->engine->visibleKeyBlocks(info.queryBlock) - 1;
        if (keyBlock >= 0) frame->trace = scene->trace->find(info.queryBlock, keyBlock);
    }
    if (scene->backward && scene->backward->trace && info.keyBlock >= 0) {
        // A tile's entry once all three of its gradients are updated; dK_j, dV_j as stored are
        // the key block's last tile's.
        int queryBlock = -1;
        if (info.kind == StepKind::UpdateKeyGradient) queryBlock = info.queryBlock;
        if (info.kind == StepKind::StoreKeyValueGradient)
            queryBlock = scene->engine->queryBlockCount() - 1;
        if (queryBlock >= 0)
            frame->backwardTrace = scene->backward->trace->find(info.keyBlock, queryBlock);
    }
    return frame;
}

} // namespace flashviz::gui
