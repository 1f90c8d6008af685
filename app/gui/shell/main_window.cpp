#include "shell/main_window.h"

#include "lecture/lecture.h"
#include "lecture/presenter_window.h"
#include "pages/analysis/analysis_view.h"
#include "pages/gpu_bench/gpu_benchmark_view.h"
#include "pages/hopper/hopper_page.h"
#include "session/controller.h"
#include "session/save_file.h"
#include "views/check_panel.h"
#include "views/code_panel.h"
#include "views/frame_feed.h"
#include "views/matrices_view.h"
#include "views/memory_stage.h"
#include "views/tile_detail.h"
#include "views/versions_view.h"
#include "widgets/controls_panel.h"
#include "widgets/key_help.h"
#include "widgets/playback_bar.h"
#include "widgets/versions_controls.h"

#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QCloseEvent>
#include <QDataStream>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QGuiApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>
#include <functional>

namespace flashviz::gui {

GpuBenchmarkView* MainWindow::gpuBenchmark() {
    if (!m_gpuBenchmark) {
        m_gpuBenchmark = new GpuBenchmarkView;
        m_gpuBenchmark->setObjectName(QStringLiteral("gpuBenchmark"));
        m_gpuBenchmarkPage->layout()->setContentsMargins(0, 0, 0, 0);
        m_gpuBenchmarkPage->layout()->addWidget(m_gpuBenchmark);
    }
    return m_gpuBenchmark;
}

HopperPage* MainWindow::hopper() {
    if (!m_hopper) {
        m_hopper = new HopperPage;
        m_hopper->setObjectName(QStringLiteral("hopper"));
        m_hopperPage->layout()->setContentsMargins(0, 0, 0, 0);
        m_hopperPage->layout()->addWidget(m_hopper);
    }
    return m_hopper;
}

MainWindow::MainWindow(const StartOptions& options, QWidget* parent)
    : QMainWindow(parent), m_options(options), m_controller(new Controller(this)),
      m_feed(new FrameFeed(m_controller, this)) {
    setWindowTitle(tr("FlashViz — FlashAttention, tile by tile"));
    setObjectName(QStringLiteral("mainWindow"));
    buildUi();
    buildActions();

    connect(m_controller, &Controller::sceneChanged, this, &MainWindow::onSceneChanged);
    connect(m_controller, &Controller::refused, this, &MainWindow::onRefused);
    connect(m_controller, &Controller::notice, this,
            [this](const QString& message) { statusBar()->showMessage(message, 10000); });
    connect(m_controller, &Controller::busyChanged, this, &MainWindow::onBusyChanged);
    connect(m_controller, &Controller::progress, this, [this](int percent, const QString& stage) {
        m_progress->setValue(percent);
        m_status->setText(stage);
    });
    connect(m_controller, &Controller::settingsChanged, this, [this] {
        m_controls->setSettings(m_controller->requestedSettings(), m_controller->presetId());
    });
    connect(m_controls, &ControlsPanel::settingsRequested, m_controller,
            [this](const VizSettings& s) { m_controller->apply(s); });
    connect(m_controls, &ControlsPanel::presetRequested, m_controller,
            [this](const QString& id) { m_controller->applyPreset(id); });
    connect(m_controls, &ControlsPanel::viewOptionsRequested, m_feed, &FrameFeed::setViewOptions);
    // Return in a field hands the keys back to playback: they moved the text cursor, and Up
    // changed n_k.
    connect(m_controls, &ControlsPanel::fieldCommitted, this, &MainWindow::focusStage);
    connect(m_controls, &ControlsPanel::inputRefused, this, [this](const QString& message) {
        statusBar()->showMessage(tr("Refused: %1").arg(message), 10000);
    });
    connect(m_feed, &FrameFeed::viewOptionsChanged, m_controls, &ControlsPanel::setViewOptions);
    if (options.transition) m_feed->holdTransition(*options.transition);
    connect(m_check, &CheckPanel::jumpRequested, m_controller, &Controller::setStep);

    // Where to start: a preset from the command line, else what was saved, else the toy.
    VizSettings start = toySettings();
    QString step = options.step;
    if (options.restore) {
        restoreState();
        QSettings store;
        if (auto saved = loadSettings(store, &m_restoreProblems)) start = *saved;
        if (!m_restoreProblems.isEmpty())
            statusBar()->showMessage(tr("Some saved settings could not be used and were reset: %1")
                                         .arg(m_restoreProblems.join(QStringLiteral("; "))),
                                     20000);
    }
    bool started = false;
    QString presetId;
    if (!options.preset.isEmpty()) {
        if (const Preset* preset = findPreset(options.preset)) {
            start = preset->settings;
            presetId = preset->id;
            if (step.isEmpty()) step = preset->step;
        } else {
            m_controller->applyPreset(options.preset); // refuses, naming the presets
        }
    }
    if (options.problem) {
        start.spec = options.problem->spec;
        start.options = options.problem->options;
        start.algorithm = options.problem->algorithm;
    }
    if (options.bug) setClassicBug(start, true);
    if (options.backend) start.backend = *options.backend;
    if (options.tensorCoreCheck) start.tensorCoreCheck = *options.tensorCoreCheck;
    if (options.hardwareId) start.hardwareId = *options.hardwareId;
    if (options.backendValues) showBackendValues(true);
    started = m_controller->apply(start, step, presetId);
    if (!started) m_controller->apply(toySettings(), step);

    if (options.lecture) {
        enterLecture(options.chapter);
        // A chapter brings its own settings: --bug is B pressed on its first slide.
        if (options.bug) m_controller->setBug(true);
        // A step on the command line overrides the chapter's first one.
        if (!options.step.isEmpty()) {
            m_controller->waitUntilIdle();
            if (const auto scene = m_controller->scene())
                if (const auto s = resolveStep(*scene, options.step)) m_controller->setStep(*s);
        }
    }
    if (options.analysisChart >= 0) showAnalysis(options.analysisChart);
    if (options.versionsPage) m_tabs->setCurrentWidget(m_versionsPage);
    if (options.hopperPage || !options.hopperTrace.isEmpty()) m_tabs->setCurrentWidget(m_hopperPage);
    if (!options.hopperTrace.isEmpty()) hopper()->openTrace(options.hopperTrace);
    if (!options.session.isEmpty()) openSession(options.session);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildUi() {
    const Theme theme = Theme::desktop();
    buildStepView(theme);
    buildTabs();
    m_playback = new PlaybackBar(m_controller);
    m_playback->applyTheme(theme);

    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(6, 4, 6, 2);
    layout->setSpacing(4);
    layout->addWidget(m_check);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(m_playback);

    m_lecture = new LectureView(m_controller, m_feed);
    // A stacked widget is as large as its largest page; lecture mode's big type must not make the
    // desktop page grow.
    m_lecture->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    m_analysis->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    connect(m_lecture, &LectureView::leaveRequested, this, &MainWindow::leaveLecture);

    m_stack = new QStackedWidget;
    m_stack->addWidget(page);
    m_stack->addWidget(m_lecture);
    setCentralWidget(m_stack);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, theme.background);
    setPalette(pal);

    buildSettingsDock(theme);
    buildStatusBar();
    resize(1600, 1000);
    m_memory->setFocus();
}

// The check (above the tabs) and the step view's four panes in their splitters.
void MainWindow::buildStepView(const Theme& theme) {
    m_memory = new MemoryStageView;
    m_memory->setObjectName(QStringLiteral("memoryStage"));
    m_tile = new TileDetailView;
    m_tile->setObjectName(QStringLiteral("tileDetail"));
    m_matrices = new MatricesView;
    m_matrices->setObjectName(QStringLiteral("matrices"));
    m_code = new CodePanel;
    m_code->setObjectName(QStringLiteral("code"));
    m_check = new CheckPanel;
    m_check->setObjectName(QStringLiteral("check"));
    for (FrameView* v :
         std::initializer_list<FrameView*>{m_memory, m_tile, m_matrices, m_code, m_check}) {
        v->setTheme(theme);
        m_feed->attach(v);
    }
    // A click anywhere on the step view takes the keys back from a settings field.
    for (FrameView* v : std::initializer_list<FrameView*>{m_tile, m_matrices, m_code, m_check})
        if (v->focusPolicy() == Qt::NoFocus) v->setFocusPolicy(Qt::ClickFocus);

    m_top = new QSplitter(Qt::Horizontal);
    m_top->addWidget(m_memory);
    m_top->addWidget(m_code);
    m_top->setStretchFactor(0, 65);
    m_top->setStretchFactor(1, 35);
    m_bottom = new QSplitter(Qt::Horizontal);
    m_bottom->addWidget(m_tile);
    m_bottom->addWidget(m_matrices);
    m_bottom->setStretchFactor(0, 5);
    m_bottom->setStretchFactor(1, 4);
    m_vertical = new QSplitter(Qt::Vertical);
    m_vertical->addWidget(m_top);
    m_vertical->addWidget(m_bottom);
    m_vertical->setStretchFactor(0, 9);
    m_vertical->setStretchFactor(1, 11);
    for (QSplitter* s : {m_top, m_bottom, m_vertical}) {
        s->setChildrenCollapsible(false);
        s->setHandleWidth(6);
    }
}

void MainWindow::buildTabs() {
    m_analysis = new AnalysisView;
    m_analysis->setObjectName(QStringLiteral("analysis"));
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("tabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->setFocusPolicy(Qt::NoFocus);
    m_tabs->addTab(m_vertical, tr("Step by step"));
    m_tabs->addTab(m_analysis, tr("Analysis"));
    // The GPU benchmark page asks the CUDA runtime about the device when it is made, which can
    // take a moment on a GPU machine: it is made the first time its tab is opened.
    m_gpuBenchmarkPage = new QWidget;
    m_gpuBenchmarkPage->setObjectName(QStringLiteral("gpuBenchmarkPage"));
    new QVBoxLayout(m_gpuBenchmarkPage);
    m_tabs->addTab(m_gpuBenchmarkPage, tr("GPU benchmark"));
    m_tabs->addTab(buildVersionsPage(), tr("FlashAttention-2"));
    // The Hopper page asks the CUDA runtime about the device as well: made when first opened. It
    // never sets the window's least size (its picture shrinks to fit).
    m_hopperPage = new QWidget;
    m_hopperPage->setObjectName(QStringLiteral("hopperPage"));
    m_hopperPage->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    new QVBoxLayout(m_hopperPage);
    m_tabs->addTab(m_hopperPage, tr("FlashAttention-3 (Hopper)"));
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        updateAnalysisSettings();
        showDemoChromeForPage();
        if (m_tabs->currentWidget() == m_gpuBenchmarkPage) gpuBenchmark();
        if (m_tabs->currentWidget() == m_hopperPage) hopper();
    });
}

// The check above the tabs and the player below them belong to the CPU demo's steps, which the
// step view, the analysis and the FlashAttention-2 page follow. The GPU benchmark and Hopper pages
// time and draw the CUDA kernels: there the demo's PASS would read as the kernels' verdict.
bool MainWindow::showsDemoPage() const {
    QWidget* page = m_tabs->currentWidget();
    return page != m_gpuBenchmarkPage && page != m_hopperPage;
}

void MainWindow::showDemoChromeForPage() {
    const bool demo = showsDemoPage();
    m_check->setVisible(demo);
    m_playback->setVisible(demo);
    placeSettingsDock();
}

// The settings dock sets up the demo: the kernel pages (which have their own controls) and the
// lecture (which sets each chapter's) give its width to their own views. The window sets it
// aside there and brings it back after, unless the user closed it; a user who opens it on a
// kernel page keeps it.
void MainWindow::placeSettingsDock() {
    if (!m_dock) return; // tabs made before it
    const bool wanted = !isLectureMode() && showsDemoPage();
    if (!wanted && !m_dock->isHidden() && !m_dockSetAside) {
        m_dockSetAside = true;
        m_dock->hide();
    } else if (wanted && m_dockSetAside) {
        m_dockSetAside = false;
        m_dock->show();
    }
}

// The FlashAttention-2 page: its warps, batch and heads above the picture, both kept in the
// window's view options (the feed), so that a session and the lecture see the same.
QWidget* MainWindow::buildVersionsPage() {
    m_versions = new VersionsView;
    m_versions->setObjectName(QStringLiteral("versions"));
    m_versions->setTheme(Theme::desktop());
    m_versions->setFocusPolicy(Qt::ClickFocus);
    m_feed->attach(m_versions);
    m_versionsControls = new VersionsControls;
    m_versionsControls->setObjectName(QStringLiteral("versionsControls"));
    connect(m_versionsControls, &VersionsControls::edited, this, [this] {
        m_feed->setViewOptions(m_versionsControls->applyTo(m_feed->viewOptions()));
    });
    connect(m_feed, &FrameFeed::viewOptionsChanged, m_versionsControls,
            &VersionsControls::setViewOptions);
    m_versionsPage = new QWidget;
    m_versionsPage->setObjectName(QStringLiteral("versionsPage"));
    auto* layout = new QVBoxLayout(m_versionsPage);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_versionsControls);
    layout->addWidget(m_versions, 1);
    return m_versionsPage;
}

void MainWindow::buildSettingsDock(const Theme& theme) {
    m_controls = new ControlsPanel;
    m_controls->setObjectName(QStringLiteral("controls"));
    m_controls->applyTheme(theme);
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_controls);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(m_controls->sizeHint().width() + 20);
    m_dock = new QDockWidget(tr("Settings"), this);
    m_dock->setObjectName(QStringLiteral("settingsDock"));
    m_dock->setWidget(scroll);
    m_dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                        QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, m_dock);
}

// The status line (the scene built, a refusal), and the build's progress with its cancel button.
void MainWindow::buildStatusBar() {
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("status"));
    m_progress = new QProgressBar;
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(220);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("cancel"));
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, this, &MainWindow::cancelBuild);
    statusBar()->addWidget(m_status, 1);
    // A temporary message (a refusal) takes the status line's place. Qt hides the line only if
    // it is already visible, so a refusal made before the window is shown would be drawn over
    // it; hide and show it explicitly instead.
    connect(statusBar(), &QStatusBar::messageChanged, m_status,
            [this](const QString& message) { m_status->setVisible(message.isEmpty()); });
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

void MainWindow::buildActions() {
    auto add = [this](QMenu* menu, const QString& text, const QKeySequence& key, auto slot) {
        auto* a = new QAction(text, this);
        if (!key.isEmpty()) a->setShortcut(key);
        a->setShortcutContext(Qt::WindowShortcut);
        connect(a, &QAction::triggered, this, slot);
        addAction(a); // shortcuts keep working while the menu bar is hidden (lecture mode)
        if (menu) menu->addAction(a);
        return a;
    };
    QMenu* file = menuBar()->addMenu(tr("&File"));
    buildSessionActions(file);
    add(file, tr("Save a screenshot…"), QKeySequence(Qt::CTRL | Qt::Key_S),
        [this] { saveScreenshotInteractively(); });
    buildExportActions(file);
    file->addSeparator();
    add(file, tr("Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q), [this] { close(); });

    QMenu* play = menuBar()->addMenu(tr("&Playback"));
    QAction* playPause = add(play, tr("Play / pause"), QKeySequence(Qt::Key_Space),
                             [this] { m_controller->togglePlay(); });
    QAction* forward = add(play, tr("Step forward"), QKeySequence(Qt::Key_Right),
                           [this] { m_controller->stepForward(); });
    QAction* back = add(play, tr("Step back"), QKeySequence(Qt::Key_Left),
                        [this] { m_controller->stepBackward(); });
    add(play, tr("First step"), QKeySequence(Qt::Key_Home), [this] { m_controller->goToStart(); });
    add(play, tr("Last step"), QKeySequence(Qt::Key_End), [this] { m_controller->goToEnd(); });
    QAction* nextClick =
        add(play, tr("Next chapter (lecture: next click)"), QKeySequence(Qt::Key_PageDown), [this] {
            if (isLectureMode())
                m_lecture->nextBeat();
            else
                m_controller->nextChapter();
        });
    QAction* previousClick = add(play, tr("Previous chapter (lecture: previous click)"),
                                 QKeySequence(Qt::Key_PageUp), [this] {
                                     if (isLectureMode())
                                         m_lecture->previousBeat();
                                     else
                                         m_controller->previousChapter();
                                 });
    play->addSeparator();
    add(play, tr("Go to the first wrong step"), QKeySequence(Qt::Key_G),
        [this] { m_controller->jumpToFirstWrongStep(); });
    m_bugAction = add(play, tr("Bug on / off (the rescale; backward: D)"), QKeySequence(Qt::Key_B),
                      [this] { m_controller->toggleBug(); });
    QAction* bug = m_bugAction;

    QMenu* presetMenu = menuBar()->addMenu(tr("P&resets"));
    for (const Preset& p : presets()) {
        const QString id = p.id;
        QAction* a =
            add(presetMenu, p.title, QKeySequence(), [this, id] { m_controller->applyPreset(id); });
        a->setToolTip(p.description);
    }

    QMenu* view = menuBar()->addMenu(tr("&View"));
    add(view, tr("Lecture mode"), QKeySequence(Qt::Key_F5), [this] { toggleLecture(); });
    add(view, tr("Full screen"), QKeySequence(Qt::Key_F11),
        [this] { isFullScreen() ? showNormal() : showFullScreen(); });
    add(view, tr("Step by step"), QKeySequence(Qt::CTRL | Qt::Key_1),
        [this] { m_tabs->setCurrentIndex(0); });
    add(view, tr("Analysis"), QKeySequence(Qt::CTRL | Qt::Key_2),
        [this] { m_tabs->setCurrentIndex(1); });
    view->addAction(m_dock->toggleViewAction());
    // Shown or hidden from the menu: the user's choice from now on.
    connect(m_dock->toggleViewAction(), &QAction::triggered, this, [this] { m_dockSetAside = false; });
    buildPresenterActions(view);

    // Only in lecture mode: chapters with the arrow keys, Esc to leave.
    QAction* nextChapter = add(nullptr, tr("Next chapter"), QKeySequence(Qt::Key_Down),
                               [this] { m_lecture->nextChapter(); });
    QAction* previousChapter = add(nullptr, tr("Previous chapter"), QKeySequence(Qt::Key_Up),
                                   [this] { m_lecture->previousChapter(); });
    QAction* leave = add(nullptr, tr("Leave lecture mode"), QKeySequence(Qt::Key_Escape),
                         [this] { leaveLecture(); });
    m_lectureOnly = {nextChapter, previousChapter, leave};
    for (QAction* a : m_lectureOnly) {
        setLectureOnly(a);
        a->setEnabled(false);
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    add(help, tr("Keys"), QKeySequence(Qt::Key_F1),
        [this] { QMessageBox::information(this, tr("Keys"), keyHelpText()); });

    // The short words of the one-line key hints (the keys come from the shortcuts).
    setKeyHint(playPause, KeyHelpForm::PlaybackHint, 0, tr("plays"));
    setKeyHint(forward, KeyHelpForm::PlaybackHint, 1, tr("steps"));
    showBugKeyHint(Algorithm::Flash);
    setKeyHint(nextClick, KeyHelpForm::LectureKeys, 0, tr("next / back"));
    setKeyHint(previousClick, KeyHelpForm::LectureKeys, 1, tr("next / back"));
    setKeyHint(back, KeyHelpForm::LectureKeys, 2, tr("one step"));
    setKeyHint(forward, KeyHelpForm::LectureKeys, 3, tr("one step"));
    setKeyHint(nextChapter, KeyHelpForm::LectureKeys, 4, tr("chapter"));
    setKeyHint(previousChapter, KeyHelpForm::LectureKeys, 5, tr("chapter"));
    setKeyHint(bug, KeyHelpForm::LectureKeys, 6, tr("bug on/off"));
    setKeyHint(leave, KeyHelpForm::LectureKeys, 7, tr("leave"));
    // A changed shortcut changes every hint.
    for (QAction* a : actions())
        connect(a, &QAction::changed, this, &MainWindow::showKeyHints);
    showKeyHints();
}

QString MainWindow::keyHelpText() const {
    return keyHelp(actions(), KeyHelpForm::Dialog);
}

// B breaks what the algorithm on screen has to break.
void MainWindow::showBugKeyHint(Algorithm algorithm) {
    setKeyHint(m_bugAction, KeyHelpForm::PlaybackHint, 2,
               algorithm == Algorithm::Backward ? tr("leaves D out") : tr("breaks the rescale"));
}

void MainWindow::showKeyHints() {
    m_playback->setKeysHint(keyHelp(actions(), KeyHelpForm::PlaybackHint));
    m_lecture->setKeysLine(keyHelp(actions(), KeyHelpForm::LectureKeys));
}

bool MainWindow::isLectureMode() const {
    return m_stack->currentWidget() == m_lecture;
}

void MainWindow::onSceneChanged() {
    const auto scene = m_controller->scene();
    if (!scene) return;
    if (m_controller->lastRefusal().isEmpty()) m_controls->showRefusal(QString());
    m_status->setText(sceneSummary());
    showBugKeyHint(scene->settings.algorithm);
    showKeyHints();
    if (scene->settings.backend != BackendKind::Cpu) showBackendValues(true);
    // The chosen backend refused and the CPU stood in: if that backend cannot run any more (a
    // lost GPU context), the list now says so.
    if (!scene->backendNote.isEmpty()) m_controls->refreshBackends();
    updateAnalysisSettings();
}

QString MainWindow::sceneSummary() const {
    const auto scene = m_controller->scene();
    if (!scene) return {};
    return tr("%1 · %2 steps · built in %3 ms")
        .arg(describeSettings(scene->settings))
        .arg(scene->stepCount())
        .arg(scene->buildSeconds * 1000, 0, 'f', 1);
}

// The build's stage ("Making Q, K and V") stayed in the status line after it was cancelled.
void MainWindow::cancelBuild() {
    if (!m_controller->isBusy()) return;
    m_controller->cancelBuild();
    m_status->setText(tr("Build cancelled; still showing %1").arg(sceneSummary()));
}

void MainWindow::focusStage() {
    if (isLectureMode())
        m_lecture->setFocus(Qt::OtherFocusReason);
    else
        m_memory->setFocus(Qt::OtherFocusReason);
}

void MainWindow::showBackendValues(bool show) {
    ViewOptions options = m_feed->viewOptions();
    options.showBackendValues = show;
    m_feed->setViewOptions(options);
}

void MainWindow::updateAnalysisSettings() {
    // The analysis is computed only when it is looked at.
    const auto scene = m_controller->scene();
    if (!scene || m_tabs->currentWidget() != m_analysis) return;
    m_analysis->setSettings(scene->settings.spec, scene->settings.options, scene->hardware);
}

void MainWindow::onRefused(const QString& message) {
    m_controls->setSettings(m_controller->requestedSettings(), m_controller->presetId());
    m_controls->showRefusal(message);
    statusBar()->showMessage(tr("Refused: %1").arg(message), 10000);
}

void MainWindow::onBusyChanged(bool busy) {
    m_progress->setVisible(busy);
    m_cancel->setVisible(busy);
    if (busy)
        m_progress->setValue(0);
    else
        m_status->setText(sceneSummary()); // not the stage the build had reached
}

void MainWindow::toggleLecture() {
    isLectureMode() ? leaveLecture() : enterLecture(0);
}

void MainWindow::enterLecture(int chapter) {
    if (isLectureMode()) {
        m_lecture->start(chapter);
        return;
    }
    m_beforeLecture = m_controller->requestedSettings();
    m_stepBeforeLecture = m_controller->step();
    m_controller->pause();
    m_feed->forgetShownFrames();
    m_stack->setCurrentWidget(m_lecture);
    placeSettingsDock();
    menuBar()->hide();
    statusBar()->hide();
    for (QAction* a : m_lectureOnly)
        a->setEnabled(true);
    m_lecture->useHardware(m_beforeLecture.hardwareId); // the GPU chosen in the window
    m_lecture->start(chapter);
    m_feed->showCurrentFrame();
    m_lecture->setFocus();
    if (m_options.fullScreen) {
        m_windowStateBeforeLecture = windowState();
        showFullScreen();
    }
}

void MainWindow::leaveLecture() {
    if (!isLectureMode()) return;
    m_lecture->setActive(false);
    m_controller->pause();
    m_feed->forgetShownFrames();
    m_stack->setCurrentIndex(0);
    placeSettingsDock();
    menuBar()->show();
    statusBar()->show();
    for (QAction* a : m_lectureOnly)
        a->setEnabled(false);
    // As it was: maximised stays maximised (showNormal() un-maximised it).
    if (m_options.fullScreen) setWindowState(m_windowStateBeforeLecture);
    // The user's own scene may be on screen still (a session refused in lecture mode): no rebuild.
    if (!m_controller->isBusy() && m_controller->settings() == m_beforeLecture)
        m_controller->setStep(m_stepBeforeLecture);
    else
        m_controller->apply(m_beforeLecture, QString::number(m_stepBeforeLecture));
    m_feed->showCurrentFrame();
    m_memory->setFocus();
}

void MainWindow::showAnalysis(int chart) {
    m_tabs->setCurrentWidget(m_analysis);
    if (chart >= 0 && chart < m_analysis->chartTitles().size()) m_analysis->showChart(chart);
}

// F6 in lecture mode shows or hides the presenter view; outside it, starts the lecture with it.
// Checked, it opens with every lecture.
void MainWindow::buildPresenterActions(QMenu* view) {
    m_presenterAction = new QAction(tr("Presenter view"), this);
    m_presenterAction->setShortcut(QKeySequence(Qt::Key_F6));
    m_presenterAction->setShortcutContext(Qt::WindowShortcut);
    m_presenterAction->setCheckable(true);
    m_presenterAction->setChecked(m_options.presenter);
    addAction(m_presenterAction);
    view->addAction(m_presenterAction);
    connect(m_presenterAction, &QAction::triggered, this, [this](bool wanted) {
        if (wanted && !isLectureMode())
            enterLecture(0); // the lecture page opens it
        else
            showPresenter(wanted && isLectureMode());
    });
    connect(m_stack, &QStackedWidget::currentChanged, this, &MainWindow::onLecturePageChanged);
}

void MainWindow::onLecturePageChanged() {
    if (isLectureMode()) {
        showPresenter(m_presenterAction->isChecked());
        return;
    }
    // Leaving lecture mode closes it (from its own keys too: later, not inside its key event);
    // the next lecture starts a new clock.
    showPresenter(false);
    if (m_presenter) m_presenter->deleteLater();
    m_presenter = nullptr;
}

void MainWindow::showPresenter(bool shown) {
    m_lecture->showKeysLine(!shown); // the keys are on the lecturer's screen instead
    if (!shown) {
        // The keys come back to the audience's window, as a clicker's must.
        if (!m_presenter) return;
        const bool hadKeys = m_presenter->isActiveWindow();
        m_presenter->hide();
        if (hadKeys) activateWindow();
        return;
    }
    if (!m_presenter) {
        m_presenter = new PresenterWindow(m_lecture, m_controller, m_feed, this);
        m_presenter->setKeyActions(actions());
        connect(m_presenter, &PresenterWindow::closed, this, [this] {
            m_presenterAction->setChecked(false);
            showPresenter(false);
        });
        placePresenter(*this, *m_presenter);
    }
    m_presenter->show();
}

bool MainWindow::waitUntilIdle(int timeoutMs) {
    QElapsedTimer timer;
    timer.start();
    if (!m_controller->waitUntilIdle(timeoutMs)) return false;
    if (m_tabs->currentWidget() == m_analysis && !isLectureMode())
        if (!m_analysis->waitForIdle(int(std::max<qint64>(1, timeoutMs - timer.elapsed()))))
            return false;
    if (m_hopper && m_tabs->currentWidget() == m_hopperPage && !isLectureMode())
        if (!m_hopper->waitForIdle(int(std::max<qint64>(1, timeoutMs - timer.elapsed()))))
            return false;
    QApplication::processEvents();
    return true;
}

namespace {

constexpr int kMaxSavedSide = 100000; // pixels: a splitter's size, a window's width or height
constexpr int kMaxHandleWidth = 64;
constexpr qsizetype kMaxSavedStateBytes = 64 * 1024;

QString checkRect(const QRect& r, const char* what, const QRect& desktop) {
    // In 64 bits: QRect::width() overflows for the corners a damaged file can hold.
    const qint64 width = qint64(r.right()) - r.left() + 1;
    const qint64 height = qint64(r.bottom()) - r.top() + 1;
    if (width < 1 || height < 1 || width > kMaxSavedSide || height > kMaxSavedSide ||
        std::abs(qint64(r.x())) > kMaxSavedSide || std::abs(qint64(r.y())) > kMaxSavedSide)
        return QStringLiteral("its %1 %2 x %3 at (%4, %5) is not a window's")
            .arg(QLatin1String(what))
            .arg(width)
            .arg(height)
            .arg(r.x())
            .arg(r.y());
    if (!desktop.isEmpty() && !desktop.intersects(r))
        return QStringLiteral("its %1 (%2, %3) is off the screens")
            .arg(QLatin1String(what))
            .arg(r.x())
            .arg(r.y());
    return {};
}

} // namespace

QString checkSplitterState(const QByteArray& state, int widgets, Qt::Orientation orientation) {
    if (state.size() > kMaxSavedStateBytes)
        return QStringLiteral("it is %1 bytes long").arg(state.size());
    QDataStream in(state);
    in.setVersion(QDataStream::Qt_5_0); // as QSplitter::saveState() writes
    qint32 marker = 0, version = 0;
    in >> marker >> version;
    if (in.status() != QDataStream::Ok || marker != 0xff || version < 0 || version > 1)
        return QStringLiteral("it is not a splitter state (marker %1, version %2)")
            .arg(marker)
            .arg(version);
    quint32 count = 0;
    in >> count; // read here, not through QList: a corrupted count reserved gigabytes
    if (in.status() != QDataStream::Ok || count != quint32(widgets))
        return QStringLiteral("it holds %1 sizes for %2 panes").arg(count).arg(widgets);
    for (quint32 i = 0; i < count; ++i) {
        qint32 size = -1;
        in >> size;
        if (in.status() != QDataStream::Ok || size < 0 || size > kMaxSavedSide)
            return QStringLiteral("pane %1's size %2 is out of 0..%3")
                .arg(i + 1)
                .arg(size)
                .arg(kMaxSavedSide);
    }
    bool collapsible = false, opaque = false;
    qint32 handle = -1, savedOrientation = 0;
    in >> collapsible >> handle >> opaque >> savedOrientation;
    if (in.status() != QDataStream::Ok) return QStringLiteral("it is cut short");
    if (handle < 0 || handle > kMaxHandleWidth)
        return QStringLiteral("its handle width %1 is out of 0..%2")
            .arg(handle)
            .arg(kMaxHandleWidth);
    if (savedOrientation != qint32(orientation))
        return QStringLiteral("its orientation %1 is not this splitter's").arg(savedOrientation);
    if (version >= 1) {
        bool opaqueSet = false;
        in >> opaqueSet;
    }
    if (in.status() != QDataStream::Ok || !in.atEnd())
        return QStringLiteral("it has %1 bytes that are not a splitter state").arg(state.size());
    return {};
}

QString checkWindowGeometry(const QByteArray& geometry, const QRect& desktop) {
    if (geometry.size() > kMaxSavedStateBytes)
        return QStringLiteral("it is %1 bytes long").arg(geometry.size());
    QDataStream in(geometry);
    in.setVersion(QDataStream::Qt_4_0); // as QWidget::saveGeometry() writes
    quint32 magic = 0;
    quint16 major = 0, minor = 0;
    in >> magic >> major >> minor;
    if (in.status() != QDataStream::Ok || magic != 0x1D9D0CB || major < 1 || major > 3)
        return QStringLiteral("it is not a window geometry (version %1.%2)").arg(major).arg(minor);
    QRect frame, normal;
    qint32 screen = 0;
    quint8 maximized = 0, fullScreen = 0;
    in >> frame >> normal >> screen >> maximized >> fullScreen;
    qint32 screenWidth = 1;
    if (major >= 2) in >> screenWidth;
    QRect widget = normal;
    if (major >= 3) in >> widget;
    if (in.status() != QDataStream::Ok) return QStringLiteral("it is cut short");
    if (!in.atEnd()) return QStringLiteral("it has trailing bytes");
    for (const auto& [rect, what] :
         {std::pair{frame, "frame"}, std::pair{normal, "normal size"}, std::pair{widget, "size"}})
        if (QString why = checkRect(rect, what, desktop); !why.isEmpty()) return why;
    if (screen < -1 || screen > 64 || screenWidth < 0 || screenWidth > kMaxSavedSide)
        return QStringLiteral("its screen %1 (%2 px wide) is not one").arg(screen).arg(screenWidth);
    return {};
}

QString checkWindowState(const QByteArray& state) {
    if (state.size() > kMaxSavedStateBytes)
        return QStringLiteral("it is %1 bytes long").arg(state.size());
    QDataStream in(state);
    in.setVersion(QDataStream::Qt_5_0); // as QMainWindow::saveState() writes
    qint32 marker = 0, version = -1;
    in >> marker >> version;
    // QMainWindow::restoreState() checks the rest (the docks' layout) before applying it.
    if (in.status() != QDataStream::Ok || marker != 0xff || version != 0)
        return QStringLiteral("it is not a window state (marker %1, version %2)")
            .arg(marker)
            .arg(version);
    return {};
}

// Qt reads the docks' layout itself (and keeps a floating panel on the screens); a layout it
// refuses is reported like the others.
void MainWindow::restoreDockLayout(const QByteArray& state) {
    if (QMainWindow::restoreState(state)) return;
    m_restoreProblems << QStringLiteral("window/state: Qt could not read it; the default is used");
    qWarning("flashviz: saved layout window/state: Qt could not read it; the default is used");
    QSettings().remove(QStringLiteral("window/state"));
}

void MainWindow::restoreState() {
    QSettings store;
    // Each saved layout is checked before it is applied; a bad one is dropped (and removed, so
    // that it is reported once) and the default layout kept.
    const auto checked = [&](const QString& key,
                             const std::function<QString(const QByteArray&)>& check) {
        const QVariant value = store.value(key);
        if (!value.isValid()) return QByteArray();
        const QByteArray bytes = value.toByteArray();
        QString why = bytes.isEmpty() ? QStringLiteral("it is empty") : check(bytes);
        if (why.isEmpty()) return bytes;
        m_restoreProblems << QStringLiteral("%1: %2; the default is used").arg(key, why);
        qWarning("flashviz: saved layout %s: %s; the default is used", qPrintable(key),
                 qPrintable(why));
        store.remove(key);
        return QByteArray();
    };
    QRect desktop;
    for (const QScreen* screen : QGuiApplication::screens())
        desktop |= screen->geometry();
    if (const QByteArray g =
            checked(QStringLiteral("window/geometry"),
                    [&](const QByteArray& b) { return checkWindowGeometry(b, desktop); });
        !g.isEmpty())
        restoreGeometry(g);
    if (const QByteArray s = checked(QStringLiteral("window/state"), checkWindowState);
        !s.isEmpty())
        restoreDockLayout(s);
    const std::pair<QSplitter*, const char*> splitters[] = {{m_vertical, "window/splitVertical"},
                                                            {m_top, "window/splitTop"},
                                                            {m_bottom, "window/splitBottom"}};
    for (const auto& [splitter, key] : splitters) {
        QSplitter* const target = splitter;
        if (const QByteArray s = checked(QLatin1String(key),
                                         [target](const QByteArray& b) {
                                             return checkSplitterState(b, target->count(),
                                                                       target->orientation());
                                         });
            !s.isEmpty())
            target->restoreState(s);
    }
    m_controller->setSpeed(store.value(QStringLiteral("playback/speed"), 2.0).toDouble());
    showBackendValues(store.value(QStringLiteral("view/backendValues"), false).toBool());
    // The FlashAttention-2 page's, each back to its default when out of range.
    ViewOptions view = m_feed->viewOptions();
    for (const ViewOptionRange& o : kPageOptionRanges) {
        bool ok = false;
        const int v = store.value(QStringLiteral("view/%1").arg(QLatin1String(o.key)), o.fallback).toInt(&ok);
        view.*o.field = ok && v >= o.lowest && v <= o.highest ? v : o.fallback;
    }
    m_feed->setViewOptions(view);
    m_tabs->setCurrentIndex(store.value(QStringLiteral("view/tab"), 0).toInt() == 1 ? 1 : 0);
}

void MainWindow::saveState() const {
    QSettings store;
    // In lecture mode the chapter's settings are on screen; the user's own are the ones to keep.
    saveSettings(store, isLectureMode() ? m_beforeLecture : m_controller->settings());
    store.setValue(QStringLiteral("window/geometry"), saveGeometry());
    store.setValue(QStringLiteral("window/state"), QMainWindow::saveState());
    store.setValue(QStringLiteral("window/splitVertical"), m_vertical->saveState());
    store.setValue(QStringLiteral("window/splitTop"), m_top->saveState());
    store.setValue(QStringLiteral("window/splitBottom"), m_bottom->saveState());
    store.setValue(QStringLiteral("playback/speed"), m_controller->speed());
    store.setValue(QStringLiteral("view/backendValues"), m_feed->viewOptions().showBackendValues);
    for (const ViewOptionRange& o : kPageOptionRanges)
        store.setValue(QStringLiteral("view/%1").arg(QLatin1String(o.key)), m_feed->viewOptions().*o.field);
    store.setValue(QStringLiteral("view/tab"), m_tabs->currentIndex());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    m_controller->pause();
    if (m_options.save) {
        // The layout the user chose: a dock the window set aside is saved as shown.
        if (m_dockSetAside) {
            m_dockSetAside = false;
            m_dock->show();
        }
        saveState();
    }
    event->accept();
}

void MainWindow::saveScreenshotInteractively() {
    const QString file = QFileDialog::getSaveFileName(
        this, tr("Save a screenshot"), QStringLiteral("flashviz.png"), tr("PNG images (*.png)"));
    if (file.isEmpty()) return;
    QString error;
    if (!saveScreenshot(*this, file, &error)) QMessageBox::warning(this, tr("Screenshot"), error);
}

bool saveScreenshot(MainWindow& window, const QString& file, QString* error) {
    if (!window.waitUntilIdle()) {
        if (error) *error = QObject::tr("The computation did not finish in time");
        return false;
    }
    QByteArray png;
    QBuffer buffer(&png);
    const QImage image = window.grab().toImage();
    if (image.isNull() || !buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG")) {
        if (error) *error = QObject::tr("Could not write %1").arg(file);
        return false;
    }
    return writeFileSafely(file, png, error);
}

void showWithinScreen(QWidget& window) {
    const QScreen* screen = window.screen();
    const QSize room = screen ? screen->availableGeometry().size() : QSize();
    if (room.isValid() && (window.width() > room.width() || window.height() > room.height()))
        window.showMaximized();
    else
        window.show();
}

} // namespace flashviz::gui
