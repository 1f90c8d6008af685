#include "session/controller.h"

#include "core/errors.h"

#include <QEventLoop>

#include <cmath>

namespace flashviz::gui {

namespace {

class JobProgress final : public BuildProgress {
  public:
    explicit JobProgress(JobControl& control) : m_control(control) {}
    void report(int percent, const QString& stage) override { m_control.report(percent, stage); }
    bool cancelled() const override { return m_control.cancelled(); }

  private:
    JobControl& m_control;
};

BuildOutcome buildJob(const CheckedSettings& settings, JobControl& control) {
    JobProgress progress(control);
    BuildOutcome outcome;
    try {
        outcome.scene = buildScene(settings, &progress);
    } catch (const EngineError& e) {
        outcome.error = QString::fromStdString(e.what());
    } catch (const BuildCancelled&) {
        outcome.cancelled = true;
    } catch (const std::bad_alloc&) {
        outcome.error = QStringLiteral("This machine ran out of memory for these settings");
    }
    return outcome;
}

} // namespace

std::optional<int> resolveStep(const Scene& scene, const QString& stepSpec) {
    if (stepSpec.isEmpty()) return std::nullopt;
    StepExpression expression;
    try {
        expression = parseStepExpression(stepSpec.toStdString());
    } catch (const EngineError&) {
        return std::nullopt; // the command line refuses these before a scene exists
    }
    const auto step = resolveStepExpression(expression, scene.stepCount(), scene.firstRescaleStep);
    if (!step) return std::nullopt;
    // Exact in 64 bits, then clamped: "first-rescale+1" near the end of a run shows its end.
    return int(std::clamp<std::int64_t>(*step, 0, scene.stepCount() - 1));
}

Controller::Controller(QObject* parent) : QObject(parent) {
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &Controller::tick);
}

int Controller::stepCount() const {
    return m_scene ? m_scene->stepCount() : 0;
}

bool Controller::isIdle() const {
    return !isBusy() && !m_jobs.isRunning(FrameJob) && m_scene && m_frame &&
           m_frame->scene == m_scene && m_frame->step == m_step;
}

bool Controller::isFramePending() const {
    return m_scene && (!m_frame || m_frame->scene != m_scene || m_frame->step != m_step);
}

void Controller::setInlineLimits(double buildFlops, double frameFlops) {
    m_inlineBuildFlops = buildFlops;
    m_inlineFrameFlops = frameFlops;
}

void Controller::refuse(const QString& message) {
    m_lastRefusal = message;
    emit refused(message);
}

bool Controller::apply(const VizSettings& settings, const QString& stepSpec,
                       const QString& presetId) {
    // Set first: building announces the settings, and the window names the preset then.
    const QString previous = m_presetId;
    if (!presetId.isEmpty()) m_presetId = presetId;
    if (build(settings, stepSpec)) return true;
    m_presetId = previous;
    return false;
}

bool Controller::build(const VizSettings& settings, const QString& stepSpec) {
    std::optional<CheckedSettings> checked;
    try {
        checked = validateForWindow(settings);
    } catch (const EngineError& e) {
        refuse(QString::fromStdString(e.what()));
        return false;
    }
    m_lastRefusal.clear();
    const bool wasBusy = isBusy();
    m_jobs.drop(BuildJob); // the worker stops at its next checkpoint
    if (buildCost(settings) <= m_inlineBuildFlops) return buildInline(*checked, stepSpec, wasBusy);
    startBuildJob(*checked, stepSpec, wasBusy);
    return true;
}

bool Controller::buildInline(const CheckedSettings& checked, const QString& stepSpec,
                             bool wasBusy) {
    try {
        auto scene = buildScene(checked, nullptr);
        m_requested = checked.settings();
        setScene(std::move(scene), stepSpec);
    } catch (const EngineError& e) {
        if (wasBusy) emit busyChanged(false);
        refuse(QString::fromStdString(e.what()));
        return false;
    }
    if (wasBusy) emit busyChanged(false);
    return true;
}

void Controller::startBuildJob(const CheckedSettings& checked, const QString& stepSpec,
                               bool wasBusy) {
    m_requested = checked.settings();
    m_jobs.run<BuildOutcome>(
        BuildJob, [checked](JobControl& control) { return buildJob(checked, control); },
        [this, stepSpec](const BuildOutcome& outcome) { onBuildFinished(outcome, stepSpec); },
        [this](int percent, const QString& stage) { emit progress(percent, stage); });
    emit settingsChanged();
    if (!wasBusy) emit busyChanged(true);
    emit progress(0, QStringLiteral("Starting"));
}

bool Controller::applyPreset(const QString& id) {
    const Preset* preset = findPreset(id);
    if (!preset) {
        QStringList known;
        for (const Preset& p : presets())
            known << p.id;
        refuse(QStringLiteral("Unknown preset '%1'; known presets: %2")
                   .arg(id, known.join(QStringLiteral(", "))));
        return false;
    }
    return apply(preset->settings, preset->step, id);
}

void Controller::cancelBuild() {
    if (!isBusy()) return;
    m_jobs.drop(BuildJob);
    m_requested = m_settings;
    emit settingsChanged();
    emit busyChanged(false);
}

void Controller::onBuildFinished(const BuildOutcome& outcome, const QString& stepSpec) {
    emit busyChanged(false);
    if (outcome.scene) {
        setScene(outcome.scene, stepSpec);
        return;
    }
    m_requested = m_settings;
    emit settingsChanged();
    if (!outcome.cancelled) refuse(outcome.error);
}

void Controller::setScene(std::shared_ptr<const Scene> scene, const QString& stepSpec) {
    const bool sameSteps = m_scene && m_scene->stepCount() == scene->stepCount() &&
                           m_scene->settings.algorithm == scene->settings.algorithm &&
                           m_scene->settings.options.loopOrder == scene->settings.options.loopOrder;
    int step = sameSteps ? m_step : 0;
    if (auto resolved = resolveStep(*scene, stepSpec)) step = *resolved;
    if (!sameSteps) pause();
    m_scene = std::move(scene);
    m_settings = m_scene->settings;
    m_requested = m_settings;
    m_step = std::clamp(step, 0, m_scene->stepCount() - 1);
    m_frame.reset();
    m_cache.clear();
    emit settingsChanged();
    emit sceneChanged();
    emit stepChanged(m_step);
    requestFrame();
}

void Controller::setStep(int step) {
    if (!m_scene) return;
    step = std::clamp(step, 0, m_scene->stepCount() - 1);
    if (step == m_step && m_frame && m_frame->scene == m_scene) return;
    m_direction = step == m_step - 1 ? -1 : 1;
    m_step = step;
    emit stepChanged(m_step);
    requestFrame();
}

std::shared_ptr<const Frame> Controller::cached(int step) const {
    for (const auto& f : m_cache)
        if (f->scene == m_scene && f->step == step) return f;
    return {};
}

void Controller::remember(std::shared_ptr<const Frame> frame) {
    if (!frame || frame->scene != m_scene || cached(frame->step)) return;
    m_cache.push_front(std::move(frame));
    while (m_cache.size() > 4)
        m_cache.pop_back();
}

void Controller::deliver(std::shared_ptr<const Frame> frame) {
    m_frame = std::move(frame);
    remember(m_frame);
    emit frameChanged();
    prefetch();
}

void Controller::requestFrame() {
    if (!m_scene) return;
    if (m_frame && m_frame->scene == m_scene && m_frame->step == m_step) return;
    if (auto hit = cached(m_step)) {
        deliver(std::move(hit));
        return;
    }
    if (frameCost(*m_scene, m_step) <= m_inlineFrameFlops) {
        deliver(makeFrame(m_scene, m_step));
        return;
    }
    if (isComputing(PrefetchJob, m_prefetchRequest)) return; // on its way
    // One frame job at a time: a running one is not replaced, since its frame goes into the
    // cache when it ends (stepping back to it is then instant) and onFrameFinished asks for the
    // step current by then.
    if (m_jobs.isRunning(FrameJob)) return;
    m_frameRequest = {m_scene, m_step};
    runFrameJob(FrameJob, m_frameRequest, &Controller::onFrameFinished);
}

bool Controller::isComputing(Job job, const FrameRequest& request) const {
    return m_jobs.isRunning(job) && request.scene == m_scene && request.step == m_step;
}

void Controller::runFrameJob(Job job, FrameRequest request,
                             void (Controller::*done)(std::shared_ptr<const Frame> frame)) {
    m_jobs.run<std::shared_ptr<const Frame>>(
        job, [request](JobControl&) { return makeFrame(request.scene, request.step); },
        [this, done](std::shared_ptr<const Frame> frame) { (this->*done)(std::move(frame)); });
}

void Controller::onFrameFinished(std::shared_ptr<const Frame> frame) {
    m_frameRequest = {};
    if (frame->scene == m_scene && frame->step == m_step)
        deliver(std::move(frame));
    else
        remember(std::move(frame));
    if (isFramePending()) requestFrame();
}

// Playing and stepping go one step at a time: the next frame is computed while this one is on
// screen, so that large problems step as fast as small ones. A cache of a few frames keyed by
// (scene, step) is all that is kept; the frames themselves are still functions of the step.
void Controller::prefetch() {
    if (!m_scene || m_jobs.isRunning(PrefetchJob)) return;
    const int next = m_step + m_direction;
    if (next < 0 || next >= m_scene->stepCount() || cached(next)) return;
    if (frameCost(*m_scene, next) <= m_inlineFrameFlops)
        return; // cheap enough to compute on demand
    m_prefetchRequest = {m_scene, next};
    runFrameJob(PrefetchJob, m_prefetchRequest, &Controller::onPrefetchFinished);
}

void Controller::onPrefetchFinished(std::shared_ptr<const Frame> frame) {
    m_prefetchRequest = {};
    remember(std::move(frame));
    if (isFramePending())
        requestFrame();
    else
        prefetch();
}

bool Controller::waitUntilIdle(int timeoutMs) {
    if (isIdle()) return true;
    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    auto check = [this, &loop] {
        if (isIdle() || (!isBusy() && !m_jobs.isRunning(FrameJob) &&
                         !(m_jobs.isRunning(PrefetchJob) && isFramePending())))
            loop.quit();
    };
    const auto c1 = connect(this, &Controller::frameChanged, &loop, check, Qt::QueuedConnection);
    const auto c2 = connect(this, &Controller::busyChanged, &loop, check, Qt::QueuedConnection);
    const auto c3 = connect(this, &Controller::refused, &loop, check, Qt::QueuedConnection);
    timeout.start(timeoutMs);
    QTimer::singleShot(0, &loop, check);
    loop.exec();
    disconnect(c1);
    disconnect(c2);
    disconnect(c3);
    return isIdle();
}

void Controller::stepForward() {
    setStep(m_step + 1);
}
void Controller::stepBackward() {
    setStep(m_step - 1);
}
void Controller::goToStart() {
    setStep(0);
}
void Controller::goToEnd() {
    setStep(stepCount() - 1);
}

void Controller::nextChapter() {
    if (!m_scene) return;
    for (const Chapter& c : m_scene->chapters)
        if (c.step > m_step) {
            setStep(c.step);
            return;
        }
    goToEnd();
}

void Controller::previousChapter() {
    if (!m_scene) return;
    int target = 0;
    for (const Chapter& c : m_scene->chapters)
        if (c.step < m_step) target = c.step;
    setStep(target);
}

void Controller::play() {
    if (!m_scene || isPlaying()) return;
    if (m_step >= stepCount() - 1) setStep(0);
    m_timer.start(int(std::lround(1000.0 / m_speed)));
    emit playingChanged(true);
}

void Controller::pause() {
    if (!isPlaying()) return;
    m_timer.stop();
    emit playingChanged(false);
}

void Controller::togglePlay() {
    isPlaying() ? pause() : play();
}

void Controller::setSpeed(double stepsPerSecond) {
    if (!(stepsPerSecond > 0) || stepsPerSecond == m_speed) return;
    m_speed = std::clamp(stepsPerSecond, 0.1, 1000.0);
    if (isPlaying()) m_timer.setInterval(int(std::lround(1000.0 / m_speed)));
    emit speedChanged(m_speed);
}

void Controller::tick() {
    if (m_step >= stepCount() - 1) {
        pause();
        return;
    }
    setStep(m_step + 1);
    if (m_step >= stepCount() - 1) pause();
}

void Controller::setBug(bool on) {
    if (isClassicBugOn(m_requested) == on) return;
    VizSettings s = m_requested;
    setClassicBug(s, on);
    apply(s);
}

void Controller::toggleBug() {
    setBug(!isClassicBugOn(m_requested));
}

std::optional<int> firstWrongStep(const Scene& scene) {
    if (scene.backward) return scene.backward->firstBugStep;
    if (scene.settings.options.rescale) return std::nullopt;
    return scene.firstRescaleStep;
}

namespace {

// Why a backward run has no wrong step: nothing is switched off, or what is switched off changes
// no value on this problem.
QString backwardRightEverywhere(const Scene& scene) {
    const BackwardOptions& b = scene.settings.options.backward;
    if (!b.anyBug())
        return Controller::tr("No step is wrong: dS subtracts D = rowsum(dO ∘ O), P is recomputed "
                              "from L, dQ accumulates and the mask is kept (B leaves D out)");
    QStringList harmless;
    if (!b.maskRecompute && !scene.settings.spec.causal)
        harmless << Controller::tr("this problem has no causal mask to forget");
    if (!b.accumulateDq && scene.engine->keyBlockCount() == 1)
        harmless << Controller::tr("with one key block, overwriting dQ is adding to zero");
    if (harmless.isEmpty())
        harmless << Controller::tr("the switched-off parts change no value on these inputs");
    return Controller::tr("No step is wrong: %1").arg(harmless.join(QStringLiteral("; ")));
}

} // namespace

std::optional<int> Controller::firstWrongStep() const {
    return m_scene ? gui::firstWrongStep(*m_scene) : std::nullopt;
}

void Controller::jumpToFirstWrongStep() {
    if (const auto step = firstWrongStep()) {
        setStep(*step);
        return;
    }
    if (!m_scene) return;
    const FlashOptions& options = m_scene->settings.options;
    if (m_scene->backward) {
        emit notice(m_scene->backward->check.passed()
                        ? backwardRightEverywhere(*m_scene)
                        : tr("The gradients' check fails, but no single step is where it first "
                             "goes wrong"));
        return;
    }
    if (!options.runningMax && !m_scene->check.passed())
        emit notice(tr("No single step is where it goes wrong: without a running maximum exp() "
                       "overflows on large scores, from the first weights on"));
    else if (!m_scene->check.passed())
        emit notice(tr("The check fails, but not at a rescale: no step is where it first goes "
                       "wrong"));
    else if (options.rescale)
        emit notice(tr("No step is wrong: the rescale e^(m_old − m_new) is in place (B removes "
                       "it)"));
    else
        emit notice(tr("No step is wrong: the rescale never changes a value here, since every "
                       "row's maximum is in its first key block"));
}

} // namespace flashviz::gui
