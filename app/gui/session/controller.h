#pragma once
// The window's one source of truth: the scene shown, the step, playback. Views read from it and
// never keep results of their own. Large scenes are built on a worker thread with progress and
// cancel; frames too expensive to compute within a frame's time are computed there as well, the
// latest request winning.
#include "session/async_job.h"
#include "session/scene.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <deque>
#include <memory>

namespace flashviz::gui {

struct BuildOutcome {
    std::shared_ptr<const Scene> scene;
    QString error; // the engine's refusal, when there is no scene
    bool cancelled = false;
};

class Controller : public QObject {
    Q_OBJECT
  public:
    explicit Controller(QObject* parent = nullptr);

    // The settings of the scene on screen, and the latest accepted (possibly still building).
    const VizSettings& settings() const { return m_settings; }
    const VizSettings& requestedSettings() const { return m_requested; }
    std::shared_ptr<const Scene> scene() const { return m_scene; }
    std::shared_ptr<const Frame> frame() const { return m_frame; }
    int step() const { return m_step; }
    int stepCount() const;
    bool isPlaying() const { return m_timer.isActive(); }
    double speed() const { return m_speed; }
    bool isBusy() const { return m_jobs.isRunning(BuildJob); }
    bool isIdle() const; // no build or frame pending, and the frame on hand is the current step
    QString lastRefusal() const { return m_lastRefusal; }
    // firstWrongStep() of the scene on screen.
    std::optional<int> firstWrongStep() const;

    // Checks the settings and builds their scene: inline when small, otherwise on a worker.
    // Returns false (and emits refused) when the engine refuses; the current scene stays.
    // `stepSpec` is "" or a step expression (resolveStep); empty keeps the step where the
    // new scene has the same steps, otherwise starts at 0. A `presetId` names the preset the
    // settings come from (see presetId()); without one the last stays.
    bool apply(const VizSettings& settings, const QString& stepSpec = {},
               const QString& presetId = {});
    bool applyPreset(const QString& id);
    // The preset last applied (its id), so that the window can name it even where two presets
    // share their settings; empty before any.
    QString presetId() const { return m_presetId; }
    // Processes events until idle or the timeout; returns whether idle was reached.
    bool waitUntilIdle(int timeoutMs = 120000);
    // Work below these many floating-point operations runs on the GUI thread.
    void setInlineLimits(double buildFlops, double frameFlops);

  public slots:
    void setStep(int step);
    void stepForward();
    void stepBackward();
    void goToStart();
    void goToEnd();
    void nextChapter();
    void previousChapter();
    void play();
    void pause();
    void togglePlay();
    void setSpeed(double stepsPerSecond);
    // The bug B switches: the forward's missing rescale, the backward's missing D.
    void setBug(bool on);
    void toggleBug();
    // To firstWrongStep(); where there is none, the step stays and `notice` says why.
    void jumpToFirstWrongStep();
    void cancelBuild();

  signals:
    void sceneChanged();
    void frameChanged();
    void stepChanged(int step);
    void playingChanged(bool playing);
    void speedChanged(double stepsPerSecond);
    void busyChanged(bool busy);
    void progress(int percent, const QString& stage);
    void refused(const QString& message);
    // What was asked and did not happen, and why (not a refusal of settings).
    void notice(const QString& message);
    void settingsChanged();

  private:
    // The tags of the controller's jobs (AsyncJobs): a newer build or frame request replaces the
    // older one; the prefetch runs beside them.
    enum Job : int { BuildJob, FrameJob, PrefetchJob };
    // The frame a job computes.
    struct FrameRequest {
        std::shared_ptr<const Scene> scene;
        int step = -1;
    };

    bool build(const VizSettings& settings, const QString& stepSpec);
    bool buildInline(const CheckedSettings& checked, const QString& stepSpec, bool wasBusy);
    void startBuildJob(const CheckedSettings& checked, const QString& stepSpec, bool wasBusy);
    void onBuildFinished(const BuildOutcome& outcome, const QString& stepSpec);
    void setScene(std::shared_ptr<const Scene> scene, const QString& stepSpec);
    void refuse(const QString& message);
    void requestFrame();
    void runFrameJob(Job job, FrameRequest request,
                     void (Controller::*done)(std::shared_ptr<const Frame> frame));
    bool isComputing(Job job, const FrameRequest& request) const; // the current step's frame
    std::shared_ptr<const Frame> cached(int step) const;
    void remember(std::shared_ptr<const Frame> frame);
    void deliver(std::shared_ptr<const Frame> frame);
    void prefetch();
    bool isFramePending() const;
    void onFrameFinished(std::shared_ptr<const Frame> frame);
    void onPrefetchFinished(std::shared_ptr<const Frame> frame);
    void tick();

    VizSettings m_settings;
    QString m_presetId;
    VizSettings m_requested;
    std::shared_ptr<const Scene> m_scene;
    std::shared_ptr<const Frame> m_frame;
    int m_step = 0;
    double m_speed = 2.0;
    QTimer m_timer;
    QString m_lastRefusal;
    double m_inlineBuildFlops = 4e6;
    double m_inlineFrameFlops = 1.5e8; // about 2 ms with AVX-512, 15 ms without vector units

    AsyncJobs m_jobs;
    FrameRequest m_frameRequest;    // what the latest frame job computes
    FrameRequest m_prefetchRequest; // and the prefetch
    int m_direction = 1;
    std::deque<std::shared_ptr<const Frame>> m_cache;
};

// The step a step expression names in this scene (see parseStepExpression: a number, "end",
// "first-rescale", "first-rescale+K", "end-K"), clamped to its steps; std::nullopt for "", for
// text that is not a step expression, and for "first-rescale" where the rescale never bites.
std::optional<int> resolveStep(const Scene& scene, const QString& stepSpec);

// Where the rescale bug first changes a value (Scene::firstRescaleStep) while the rescale is
// switched off; std::nullopt with it on (nothing is wrong) and where it never bites. For the
// backward, BackwardScene::firstBugStep.
std::optional<int> firstWrongStep(const Scene& scene);

} // namespace flashviz::gui
