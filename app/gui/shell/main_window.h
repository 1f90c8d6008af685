#pragma once
// The main window: the check across the top (always visible), the step-by-step page (memory
// stage, code, tile detail, matrices) and the analysis page in tabs, playback below, the
// controls in a dock; lecture mode replaces all of it with a full-screen presentation.
#include "session/session_file.h"
#include "session/settings.h"

#include <QMainWindow>

#include <optional>
#include <vector>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTabWidget;

namespace flashviz::gui {

class AnalysisView;
class AnimationRecorder;
class ExportAnimationDialog;
struct AnimationRequest;
class GpuBenchmarkView;
class HopperPage;
class CheckPanel;
class CodePanel;
class Controller;
class ControlsPanel;
class FrameFeed;
class LectureView;
class MatricesView;
class MemoryStageView;
class PlaybackBar;
class PresenterWindow;
class TileDetailView;
class VersionsControls;
class VersionsView;
struct Theme;

struct StartOptions {
    QString preset; // a preset id; empty: the saved settings, or the toy the first time
    QString step;   // a step number, "end" or "first-rescale"
    bool lecture = false;
    int chapter = 0;        // lecture chapter, from 0
    bool restore = true;    // read the saved settings and layout
    bool save = true;       // save them on close
    bool fullScreen = true; // lecture mode takes the whole screen (not when taking a screenshot)
    std::optional<qreal> transition;    // hold animations at this point in [0, 1]
    int analysisChart = -1;             // open the analysis page at this chart
    bool versionsPage = false;          // open the FlashAttention-2 page
    bool hopperPage = false;            // open the Hopper page (FlashAttention-3)
    QString hopperTrace; // a trace file the Hopper page opens (and the page opened with it)
    bool bug = false;                   // switch the rescale off
    bool backendValues = false;         // show the backend's recorded per-tile values
    bool play = false;                  // start playing once shown
    bool presenter = false; // the presenter view beside lecture mode (--presenter)
    std::optional<BackendKind> backend; // compute on this backend (else the preset's or saved one)
    // --tc-check: the backward's tensor-core check (else the preset's or saved one)
    std::optional<LowPrecisionCheck> tensorCoreCheck;
    std::optional<std::string> hardwareId; // --gpu: draw against this profile (else the saved one)
    std::optional<RunSetup> problem;    // --n, --br, ...: the problem, over the preset or the toy
    QString session; // a .flashviz file opened over all of the above (a bad one: a message)
};

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(const StartOptions& options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    // What could not be restored at start (saved layout or settings), one line each, naming the
    // key; shown once in the status bar and on stderr, and the bad keys are removed.
    QStringList restoreProblems() const { return m_restoreProblems; }

    Controller* controller() const { return m_controller; }
    FrameFeed* frameFeed() const { return m_feed; } // what every view of the window observes
    MemoryStageView* memoryStage() const { return m_memory; }
    TileDetailView* tileDetail() const { return m_tile; }
    MatricesView* matrices() const { return m_matrices; }
    CheckPanel* checkPanel() const { return m_check; }
    CodePanel* codePanel() const { return m_code; }
    PlaybackBar* playback() const { return m_playback; }
    ControlsPanel* controls() const { return m_controls; }
    LectureView* lecture() const { return m_lecture; }
    PresenterWindow* presenter() const { return m_presenter; } // null outside lecture mode
    AnalysisView* analysis() const { return m_analysis; }
    VersionsView* versionsView() const { return m_versions; }
    GpuBenchmarkView* gpuBenchmark(); // made on first use
    HopperPage* hopper();             // made on first use
    QTabWidget* tabs() const { return m_tabs; }

    bool isLectureMode() const;
    // The F1 dialog's key help, generated from the window's actions (key_help.h).
    QString keyHelpText() const;
    void enterLecture(int chapter = 0);
    void leaveLecture();
    void showAnalysis(int chart);
    // Processes events until the scene, the frame and a visible analysis or Hopper page are ready.
    bool waitUntilIdle(int timeoutMs = 120000);
    void saveState() const;

    // Sessions (session/session_file.h; shell/session_actions.cpp): what is on screen as a
    // .flashviz file, and back. openSession() returns "" once the file is accepted (a scene
    // still building takes the rest of the session when it is shown) or the message, also
    // in the status bar; the window then keeps what it had.
    Session currentSession() const;
    QString openSession(const QString& file);
    QString saveSession(const QString& file);
    QString sessionFile() const { return m_sessionFile; } // the one opened or saved last
    QMenu* recentSessionsMenu() const { return m_recentSessions; }

    // Exports (shell/export_actions.cpp): the view File → Export view draws (the lecture slide in
    // lecture mode, else the step page or the tab shown); an animation started as the dialog
    // starts it, its progress and Cancel in the status bar: "" or why it did not start.
    QWidget* exportedView() const;
    QString startAnimationExport(const AnimationRequest& request);
    AnimationRecorder* animationRecorder() const { return m_recorder; }
    // Made on first use; keeps the last request, in the view and chapter of the mode now.
    ExportAnimationDialog* exportAnimationDialog();

  public slots:
    void toggleLecture();

  protected:
    void closeEvent(QCloseEvent* event) override;

  private:
    void buildUi();
    void buildStepView(const Theme& theme);
    void buildTabs();
    bool showsDemoPage() const; // a tab that follows the CPU demo's steps, not a kernel page
    void showDemoChromeForPage();
    void placeSettingsDock();
    QWidget* buildVersionsPage();
    void buildSettingsDock(const Theme& theme);
    void buildStatusBar();
    void buildActions();
    void showKeyHints(); // the playback bar's and the lecture's one-line key hints
    void showBugKeyHint(Algorithm algorithm);
    void restoreState();
    void restoreDockLayout(const QByteArray& state);
    void onSceneChanged();
    QString sceneSummary() const; // the status line for the scene on screen
    void cancelBuild();
    void focusStage(); // the keys to playback, as after a click on the step view
    void onRefused(const QString& message);
    void onBusyChanged(bool busy);
    void updateAnalysisSettings();
    void saveScreenshotInteractively();
    void showBackendValues(bool show);
    // View → Presenter view (lecture/presenter_window.h): opened with lecture mode when wanted,
    // closed on leaving it.
    void buildPresenterActions(QMenu* view);
    void showPresenter(bool shown);
    void onLecturePageChanged();
    void buildExportActions(QMenu* file);
    void exportViewInteractively();
    void exportStepDataInteractively();
    void exportAnimationInteractively();
    void onAnimationExportFinished(bool ok, const QString& message);
    void showExportError(const QString& title, const QString& message);
    void buildSessionActions(QMenu* file);
    void openSessionInteractively();
    void saveSessionInteractively(bool askForName);
    void openRecentSession(const QString& file);
    void updateRecentSessionsMenu();
    SessionLimits sessionLimits() const;
    QString applySession(const Session& session, const QString& file);
    void finishOpeningSession(const Session& session, const QString& file, const QString& note);
    void stopWaitingForSessionScene();
    void setSessionFile(const QString& file);

    StartOptions m_options;
    Controller* m_controller;
    FrameFeed* m_feed; // every FrameView, the step view's and the lecture's, observes this
    QStackedWidget* m_stack = nullptr;
    QTabWidget* m_tabs = nullptr;
    MemoryStageView* m_memory = nullptr;
    TileDetailView* m_tile = nullptr;
    MatricesView* m_matrices = nullptr;
    CheckPanel* m_check = nullptr;
    CodePanel* m_code = nullptr;
    PlaybackBar* m_playback = nullptr;
    ControlsPanel* m_controls = nullptr;
    LectureView* m_lecture = nullptr;
    AnalysisView* m_analysis = nullptr;
    QWidget* m_gpuBenchmarkPage = nullptr;
    QWidget* m_versionsPage = nullptr; // the FlashAttention-2 page: its controls above its view
    VersionsControls* m_versionsControls = nullptr;
    VersionsView* m_versions = nullptr;
    GpuBenchmarkView* m_gpuBenchmark = nullptr;
    QWidget* m_hopperPage = nullptr; // the Hopper page's tab, which holds it once made
    HopperPage* m_hopper = nullptr;
    QDockWidget* m_dock = nullptr;
    // The settings dock hidden by the window, not the user (placeSettingsDock): shown again when
    // its settings matter once more, and saved as shown.
    bool m_dockSetAside = false;
    QSplitter* m_vertical = nullptr;
    QSplitter* m_top = nullptr;
    QSplitter* m_bottom = nullptr;
    QLabel* m_status = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    std::vector<QAction*> m_lectureOnly;
    QAction* m_bugAction = nullptr; // B: its hint follows the algorithm on screen
    QAction* m_presenterAction = nullptr; // checked: the presenter view is wanted in lecture mode
    PresenterWindow* m_presenter = nullptr;
    VizSettings m_beforeLecture;
    int m_stepBeforeLecture = 0;
    Qt::WindowStates m_windowStateBeforeLecture; // maximised, say: leaving restores it
    QStringList m_restoreProblems;
    AnimationRecorder* m_recorder = nullptr;
    ExportAnimationDialog* m_exportDialog = nullptr;
    QProgressBar* m_exportProgress = nullptr; // the animation's frames, beside the build's bar
    QPushButton* m_exportCancel = nullptr;
    bool m_exportCancelled = false; // the recorder's finished() then says why in the status line
    QString m_sessionFile;
    QMenu* m_recentSessions = nullptr;
    QObject* m_sessionWaiting = nullptr; // a session opened while its scene builds
};

// Checks of saved layout bytes before they are applied: an empty string when they may be, else
// why not. A splitter's state is decoded as QSplitter writes it (marker, version, one size per
// widget, handle width 0..64, orientation); a window geometry as QWidget writes it (magic,
// version, rectangles of a sane size that meet `desktop` when it is not empty); a main window
// state by its marker, version and length. One flipped bit in a saved splitter (handle width
// 6 -> 16,777,222) took 4.4 GB and crashed every start. Any bytes at all; never throws.
QString checkSplitterState(const QByteArray& state, int widgets, Qt::Orientation orientation);
QString checkWindowGeometry(const QByteArray& geometry, const QRect& desktop);
QString checkWindowState(const QByteArray& state);

// Renders the window at its current state to a PNG (waiting for any work first).
bool saveScreenshot(MainWindow& window, const QString& file, QString* error);

// Shows the window as it is, or maximised when it is larger than its screen's free area (the
// default 1600 x 1000 on a 1366 x 768 laptop would hide the playback bar off the screen).
void showWithinScreen(QWidget& window);

} // namespace flashviz::gui
