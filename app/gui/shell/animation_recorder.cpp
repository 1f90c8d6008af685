#include "shell/animation_recorder.h"

#include "export/animation_writer.h"
#include "lecture/lecture.h"
#include "session/controller.h"
#include "style/format.h"
#include "views/frame_feed.h"

#include "core/errors.h"
#include "core/setup.h"
#include "core/steps.h"

#include <QDockWidget>
#include <QFileInfo>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

// While the copy computes a frame or the encoder's queue is full: look again this much later,
// instead of spinning the GUI thread.
constexpr int kWaitMs = 5;

QString checkStepExpression(const QString& field, const QString& text) {
    try {
        (void)parseStepExpression(text.toStdString());
    } catch (const EngineError& e) {
        return QStringLiteral("%1: %2").arg(field, QString::fromUtf8(e.what()));
    }
    return {};
}

std::optional<int> resolveStepField(const QString& field, const QString& text, const Scene& scene,
                                    QString* error) {
    try {
        return resolveStepOption(text.toStdString(), scene.stepCount(),
                                 [&scene] { return scene.firstRescaleStep; });
    } catch (const EngineError& e) {
        *error = QStringLiteral("%1: %2").arg(field, QString::fromUtf8(e.what()));
    }
    return std::nullopt;
}

// The step view alone fills the frame: the menus, the settings dock, the tabs and the status
// line are the window's tools, not what the audience is shown.
void showStepPageOnly(MainWindow& window) {
    window.menuBar()->hide();
    window.statusBar()->hide();
    if (auto* dock = window.findChild<QDockWidget*>(QStringLiteral("settingsDock"))) dock->hide();
    window.tabs()->setCurrentIndex(0);
    window.tabs()->tabBar()->hide();
}

} // namespace

QString validateAnimationRequest(const AnimationRequest& r) {
    if (const QString bad = checkAnimationFile(r.file); !bad.isEmpty()) return bad;
    const QSize lo = kAnimationMinSize, hi = kAnimationMaxSize;
    if (r.size.width() < lo.width() || r.size.height() < lo.height() ||
        r.size.width() > hi.width() || r.size.height() > hi.height())
        return QObject::tr("The size must be from %1x%2 to %3x%4 (got %5x%6)")
            .arg(lo.width())
            .arg(lo.height())
            .arg(hi.width())
            .arg(hi.height())
            .arg(r.size.width())
            .arg(r.size.height());
    if (const QString bad = checkAnimationSize(*animationFormatForFile(r.file, nullptr), r.size);
        !bad.isEmpty())
        return QObject::tr("The size: %1").arg(bad);
    if (r.fps < kAnimationMinFps || r.fps > kAnimationMaxFps)
        return QObject::tr("The frame rate must be from %1 to %2 fps (got %3)")
            .arg(kAnimationMinFps)
            .arg(kAnimationMaxFps)
            .arg(r.fps);
    if (r.framesPerStep < kAnimationMinFramesPerStep ||
        r.framesPerStep > kAnimationMaxFramesPerStep)
        return QObject::tr("Frames per step must be from %1 to %2 (got %3)")
            .arg(kAnimationMinFramesPerStep)
            .arg(kAnimationMaxFramesPerStep)
            .arg(r.framesPerStep);
    const int chapters = int(lectureChapters().size());
    if (r.view == AnimationView::Lecture && (r.chapter < 0 || r.chapter >= chapters))
        return QObject::tr("The chapter must be from 1 to %1 (got %2)")
            .arg(chapters)
            .arg(r.chapter + 1);
    if (r.range == AnimationRange::Chapter && r.view != AnimationView::Lecture)
        return QObject::tr("A chapter's beats are recorded in the lecture view; choose the "
                           "lecture view, or a step range for the step view");
    if (r.range == AnimationRange::Steps) {
        if (QString bad = checkStepExpression(QObject::tr("From"), r.from); !bad.isEmpty())
            return bad;
        if (QString bad = checkStepExpression(QObject::tr("To"), r.to); !bad.isEmpty()) return bad;
    }
    return {};
}

namespace {

// The steps of a request's range: first … last, or a chapter's beats.
struct StepRange {
    int first = 0;
    int last = -1;
    std::optional<std::vector<int>> beats; // a Chapter range
    qint64 count() const { return beats ? qint64(beats->size()) : qint64(last) - first + 1; }
};

std::optional<StepRange> resolveRange(const AnimationRequest& request, const Scene& scene,
                                      QString* error) {
    StepRange range;
    switch (request.range) {
    case AnimationRange::WholeRun:
        range.last = scene.stepCount() - 1;
        break;
    case AnimationRange::Steps: {
        const auto from = resolveStepField(QObject::tr("From"), request.from, scene, error);
        const auto to =
            from ? resolveStepField(QObject::tr("To"), request.to, scene, error) : std::nullopt;
        if (!from || !to) return std::nullopt;
        if (*from > *to) {
            *error =
                QObject::tr("From (step %1, '%2') comes after to (step %3, '%4')")
                    .arg(QString::number(*from), request.from, QString::number(*to), request.to);
            return std::nullopt;
        }
        range.first = *from;
        range.last = *to;
        break;
    }
    case AnimationRange::Chapter:
        range.beats = resolveBeats(lectureChapters().at(std::size_t(request.chapter)), scene);
        break;
    }
    // In 64 bits: a run can have 2^31 - 1 steps, and 30 frames each.
    const qint64 frames = range.count() * request.framesPerStep;
    if (frames > kAnimationMaxFrames) {
        *error = QObject::tr("The animation would have %1 frames (%2 steps × %3); at most %4 "
                             "(%5 minutes at %6 fps): choose fewer steps or fewer frames per step")
                     .arg(frames)
                     .arg(range.count())
                     .arg(request.framesPerStep)
                     .arg(kAnimationMaxFrames)
                     .arg(kAnimationMaxFrames / kAnimationMaxFps / 60)
                     .arg(kAnimationMaxFps);
        return std::nullopt;
    }
    return range;
}

} // namespace

std::vector<int> animationSteps(const AnimationRequest& request, const Scene& scene,
                                QString* error) {
    std::optional<StepRange> range = resolveRange(request, scene, error);
    if (!range) return {};
    if (range->beats) return std::move(*range->beats);
    std::vector<int> steps;
    for (int s = range->first; s <= range->last; ++s)
        steps.push_back(s);
    return steps;
}

std::optional<AnimationLength> animationLength(const AnimationRequest& request, const Scene& scene,
                                               QString* error) {
    const std::optional<StepRange> range = resolveRange(request, scene, error);
    if (!range || range->count() == 0) return std::nullopt;
    const int steps = int(range->count()); // within kAnimationMaxFrames
    return AnimationLength{steps, steps * request.framesPerStep};
}

QSize animationRenderSize(QSize size, QSize windowMinimum) {
    const double scale = std::max({1.0, double(windowMinimum.width()) / size.width(),
                                   double(windowMinimum.height()) / size.height()});
    return QSize(int(std::ceil(size.width() * scale)), int(std::ceil(size.height() * scale)));
}

AnimationRecorder::AnimationRecorder(QObject* parent) : QObject(parent) {}

AnimationRecorder::~AnimationRecorder() {
    if (m_writer) m_writer->cancel();
    delete m_retired; // a copy whose deleteLater() no event loop ran
}

bool AnimationRecorder::isRunning() const {
    return m_running;
}

bool AnimationRecorder::start(const MainWindow& source, const AnimationRequest& request,
                              QString* error) {
    auto refuse = [error](const QString& message) {
        if (error) *error = message;
        return false;
    };
    if (m_running) return refuse(tr("An animation is being exported already"));
    if (const QString bad = validateAnimationRequest(request); !bad.isEmpty()) return refuse(bad);
    auto writer = std::make_unique<AnimationWriter>();
    QString why;
    if (!writer->open(request.file, request.size, request.fps, &why)) return refuse(why);

    StartOptions options;
    options.restore = false;
    options.save = false;
    options.fullScreen = false;
    auto copy = std::make_unique<MainWindow>(options);
    copy->setAttribute(Qt::WA_DontShowOnScreen);
    copy->frameFeed()->setViewOptions(source.frameFeed()->viewOptions());
    copy->frameFeed()->holdTransition(1.0);
    // The window's settings can be refused by the copy (their .npy files gone since the window
    // read them): a cheap build refuses within apply(), a large one later, through refused().
    connect(copy->controller(), &Controller::refused, this,
            [this](const QString& message) { finish(false, message); });
    const QString firstStep =
        request.range == AnimationRange::Steps ? request.from : QStringLiteral("0");
    if (!copy->controller()->apply(source.controller()->settings(), firstStep))
        return refuse(copy->controller()->lastRefusal());
    if (request.view == AnimationView::Lecture) {
        copy->enterLecture(request.chapter);
        // The chapter's settings, applied by the lecture: refused at once when built inline.
        if (const QString refused = copy->controller()->lastRefusal(); !refused.isEmpty())
            return refuse(refused);
        copy->lecture()->showKeysLine(false); // the keys are the lecturer's, not the audience's
    } else {
        showStepPageOnly(*copy);
    }
    copy->resize(request.size);
    copy->show(); // lays the window out: its minimum size is known from here
    copy->resize(animationRenderSize(request.size, copy->minimumSizeHint()));

    m_request = request;
    m_copy = std::move(copy);
    m_writer = std::move(writer);
    m_steps.clear();
    m_total = 0;
    m_done = 0;
    m_pending = QImage();
    m_running = true;
    scheduleTick(0);
    return true;
}

void AnimationRecorder::cancel() {
    if (!m_running) return;
    m_writer->cancel();
    finish(false, tr("Export cancelled"));
}

void AnimationRecorder::scheduleTick(int delayMs) {
    if (m_tickQueued) return;
    m_tickQueued = true;
    QTimer::singleShot(delayMs, this, [this] {
        m_tickQueued = false;
        tick();
    });
}

// One turn of the event loop: at most one frame drawn, so the window answers between frames.
void AnimationRecorder::tick() {
    if (!m_running) return;
    if (m_writer->hasFailed()) return finish(false, m_writer->error());
    if (m_done == m_total && m_total > 0) { // every frame handed over: the file completes
        if (!m_writer->isDone()) return scheduleTick(kWaitMs);
        QString error;
        if (!m_writer->finish(&error)) return finish(false, error);
        const double seconds = double(m_total) / m_request.fps;
        // One arg() for all: a file name with "%2" in it stays as it is.
        return finish(true,
                      tr("Wrote %1: %2 frames, %3x%4, %5 s at %6 fps (%7)")
                          .arg(QFileInfo(m_request.file).fileName(), QString::number(m_total),
                               QString::number(m_request.size.width()),
                               QString::number(m_request.size.height()),
                               QString::number(seconds, 'f', 1), QString::number(m_request.fps),
                               formatBytes(double(QFileInfo(m_request.file).size()))));
    }
    if (!m_pending.isNull()) {
        if (!m_writer->tryAddFrame(m_pending)) return scheduleTick(kWaitMs);
        m_pending = QImage();
        ++m_done;
        emit progress(m_done, m_total);
        if (!m_running) return; // cancelled from the signal
        if (m_done == m_total) m_writer->close();
        return scheduleTick(0);
    }
    if (m_steps.empty() && !prepareSteps()) return;
    if (m_running) renderFrame(); // not cancelled from progress()
}

// Once the copy's scene is built (and, in the lecture, its chapter's beats known): the steps.
bool AnimationRecorder::prepareSteps() {
    Controller* controller = m_copy->controller();
    const bool lectureReady =
        m_request.view != AnimationView::Lecture || !m_copy->lecture()->beats().empty();
    if (!controller->isIdle() || !lectureReady) {
        scheduleTick(kWaitMs);
        return false;
    }
    QString error;
    m_steps = animationSteps(m_request, *controller->scene(), &error);
    if (m_steps.empty()) {
        finish(false, error);
        return false;
    }
    m_total = int(m_steps.size()) * m_request.framesPerStep;
    emit progress(0, m_total);
    return true;
}

void AnimationRecorder::renderFrame() {
    const int segment = m_done / m_request.framesPerStep;
    const int inSegment = m_done % m_request.framesPerStep;
    const int step = m_steps[std::size_t(segment)];
    Controller* controller = m_copy->controller();
    if (controller->step() != step) controller->setStep(step);
    if (!controller->isIdle()) return scheduleTick(kWaitMs);
    // The first step still; each later one its movement from the step before, ending at rest.
    const qreal t = segment == 0 ? 1.0 : qreal(inSegment + 1) / m_request.framesPerStep;
    m_copy->frameFeed()->holdTransition(t);
    m_pending = m_copy->grab().toImage();
    scheduleTick(0);
}

void AnimationRecorder::finish(bool ok, const QString& message) {
    if (!m_running) return;
    m_running = false;
    m_writer.reset(); // unfinished: its temporary file removed
    m_pending = QImage();
    // Not deleted here: finish() can run inside a signal of the copy's controller.
    if (m_copy) {
        m_retired = m_copy.release();
        m_retired->deleteLater();
    }
    emit finished(ok, message);
}

} // namespace flashviz::gui
