#pragma once
// Animation export: the window's views, step by step with the tile movements in between, to an
// MP4 (H.264), an animated GIF or an animated WebP (export/animation_writer.h writes the file).
//
// What the frames are. The steps of the range, s_0 … s_k-1, each get framesPerStep frames:
//   - s_0 is shown still (its transition held at t = 1) for framesPerStep frames: the animation
//     opens on where it starts, and a looping GIF pauses there before it plays again;
//   - every later s_i is the views' own transition from s_i-1 to s_i, held at
//     t = (j + 1) / framesPerStep for j = 0 … framesPerStep - 1, so that its last frame is s_i
//     at rest: the last frame of the file is the last step, settled. There is no extra frame.
// So a file has k × framesPerStep frames and lasts k × framesPerStep / fps seconds.
//
// The views are those the user sees, drawn by an offscreen copy of the window (a second
// MainWindow, never on screen, at the export size; the user's window is never resized):
//   - the step view: the window's step page (the check, the memory stage, the code, the tile
//     detail, the matrices and the playback bar) filling the frame, without the menus, the
//     settings dock, the tabs and the status line, whatever tab the window is on;
//   - the lecture view: the lecture's slide for the chapter (its title, narrative, views, caption
//     and check; not the key line, which is the lecturer's), with the chapter's own settings on
//     the window's GPU, as in lecture mode.
// The settings are the scene on screen in the window (in lecture mode, the chapter's), with the
// window's view options.
//
// What the ranges are, as a lecturer expects them:
//   - WholeRun: every step of the run, 0 … end;
//   - Steps: from … to, the window's step expressions (a number, "end", "first-rescale", either
//     optionally +K / -K; core/setup.h's resolveStepOption), refused when the run lacks one;
//   - Chapter (the lecture view only): the chapter's beats, the steps PageDown walks through in
//     lecture mode, each beat animated from the one before exactly as the click shows it (a jump
//     of several steps is one movement, as on screen); nothing of the next chapter.
// The lecture view with WholeRun or Steps runs over that chapter's scene.
#include "shell/main_window.h"

#include <QImage>
#include <QObject>
#include <QPointer>
#include <QSize>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace flashviz::gui {

class AnimationWriter;
struct Scene;

enum class AnimationView { Step, Lecture };
enum class AnimationRange { WholeRun, Steps, Chapter };

// The limits and defaults of an animation, the window's dialog and `flashviz --export` both.
// 6 frames per step at 12 fps is two steps a second, the window's own playback speed.
inline constexpr QSize kAnimationMinSize{320, 240};
inline constexpr QSize kAnimationMaxSize{3840, 2160};
inline constexpr QSize kAnimationDefaultSize{1280, 720};
inline constexpr int kAnimationMinFps = 1;
inline constexpr int kAnimationMaxFps = 60;
inline constexpr int kAnimationDefaultFps = 12;
inline constexpr int kAnimationMinFramesPerStep = 1;
inline constexpr int kAnimationMaxFramesPerStep = 30;
inline constexpr int kAnimationDefaultFramesPerStep = 6;
// Ten minutes at the highest frame rate (60 fps): longer is no animation for a slide, and a
// run of millions of steps would take hours to draw and gigabytes to store. The dialog and
// --export refuse a request over it before a frame is drawn.
inline constexpr int kAnimationMaxFrames = 36000;

struct AnimationRequest {
    QString file; // .mp4, .gif or .webp (availableAnimationFormats()); written only when done
    AnimationView view = AnimationView::Step;
    AnimationRange range = AnimationRange::WholeRun;
    QString from = QStringLiteral("0"); // Steps: the first step, a step expression
    QString to = QStringLiteral("end"); // Steps: the last step (at or after `from`)
    int chapter = 0;                    // the lecture view's chapter, from 0
    QSize size = kAnimationDefaultSize; // pixels, WxH
    int framesPerStep = kAnimationDefaultFramesPerStep;
    int fps = kAnimationDefaultFps;
};

// Everything that can be checked before a scene is built: the file's extension and folder, the
// size (and an even one for MP4), fps, frames per step, the chapter, the step expressions' form,
// a Chapter range with the step view. An empty string when the request may be recorded, else one
// sentence naming the field and what is allowed.
QString validateAnimationRequest(const AnimationRequest& request);

// The steps a request records in a built scene (the lecture's beats for a Chapter range), in
// order; empty with *error set when the run lacks a step of the range, from comes after to, or
// the animation would have more than kAnimationMaxFrames frames.
std::vector<int> animationSteps(const AnimationRequest& request, const Scene& scene,
                                QString* error);
// How many steps and frames animationSteps() gives, counted without listing the steps (the
// dialog asks at every keystroke); std::nullopt with animationSteps()'s *error.
struct AnimationLength {
    int steps = 0;
    int frames = 0; // steps × framesPerStep, at most kAnimationMaxFrames
};
std::optional<AnimationLength> animationLength(const AnimationRequest& request, const Scene& scene,
                                               QString* error);

// The size the views are drawn at for frames of `size`: `size` itself where the window can take
// it, else the smallest size of the same aspect at or above `windowMinimum` (the frames are then
// scaled down to `size`, so that a small export shows the same layout, only smaller).
QSize animationRenderSize(QSize size, QSize windowMinimum);

// Records one request at a time. start() copies the window's state into an offscreen window and
// returns at once; the frames are then drawn one per turn of the event loop (the window stays
// responsive) and encoded on a worker thread. progress() follows each frame handed to the
// encoder; finished() comes exactly once per successful start().
class AnimationRecorder : public QObject {
    Q_OBJECT
  public:
    explicit AnimationRecorder(QObject* parent = nullptr);
    ~AnimationRecorder() override; // a recording still running is cancelled (its file removed)

    // False, with *error (validateAnimationRequest's message, or why the file cannot be
    // written), when nothing was started; finished() then does not come.
    bool start(const MainWindow& source, const AnimationRequest& request, QString* error);
    bool isRunning() const;
    // Stops a recording: the partial file is removed (a file that was there before is kept) and
    // finished(false, "Export cancelled") follows.
    void cancel();
    // The frames of the recording under way, once its scene is built (0 before).
    int frameCount() const { return m_total; }

  signals:
    void progress(int done, int total);
    // ok: the file is written (message says what: file, frames, size, duration); otherwise why
    // not (refused range, encoder error, cancelled) and no partial file is left.
    void finished(bool ok, const QString& message);

  private:
    void tick();
    bool prepareSteps();
    void renderFrame();
    void finish(bool ok, const QString& message);
    void scheduleTick(int delayMs);

    AnimationRequest m_request;
    std::unique_ptr<MainWindow> m_copy;
    QPointer<MainWindow> m_retired; // the last copy, until its deleteLater() runs
    std::unique_ptr<AnimationWriter> m_writer;
    std::vector<int> m_steps;
    int m_total = 0;
    int m_done = 0;   // frames handed to the writer
    QImage m_pending; // a frame drawn but not yet taken by a full queue
    bool m_running = false;
    bool m_tickQueued = false;
};

} // namespace flashviz::gui
