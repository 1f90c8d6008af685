// The main window's sessions: File → Open session, Save session, Save session as, Open recent,
// and what opening one does to the window (session/session_file.h holds the file format).
#include "shell/main_window.h"

#include "lecture/lecture.h"
#include "pages/analysis/analysis_view.h"
#include "session/controller.h"
#include "views/frame_feed.h"

#include "core/errors.h"
#include "core/steps.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

namespace flashviz::gui {

namespace {

QString sessionNameFilter() {
    return QObject::tr("FlashViz sessions (*.%1)").arg(QLatin1String(kSessionExtension));
}

// What opening a session may change before its scene is accepted, kept to put back when the
// scene is refused or cancelled: the mode, the lecture's chapter and step, and the user's own
// settings and step (those on screen in the step view; kept aside in lecture mode).
struct WindowBeforeSession {
    bool lecture = false;
    int chapter = 0;
    VizSettings settings; // requested: a scene still building is built again
    int step = 0;
    VizSettings beforeLecture;
    int stepBeforeLecture = 0;
};

} // namespace

void MainWindow::buildSessionActions(QMenu* file) {
    const auto add = [this, file](const QString& text, const QKeySequence& key, auto slot) {
        auto* a = new QAction(text, this);
        a->setShortcut(key);
        a->setShortcutContext(Qt::WindowShortcut);
        connect(a, &QAction::triggered, this, slot);
        addAction(a); // the keys work in lecture mode too, where the menu bar is hidden
        file->addAction(a);
        return a;
    };
    add(tr("Open session…"), QKeySequence(Qt::CTRL | Qt::Key_O),
        [this] { openSessionInteractively(); });
    m_recentSessions = file->addMenu(tr("Open recent"));
    m_recentSessions->setObjectName(QStringLiteral("recentSessions"));
    add(tr("Save session"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S),
        [this] { saveSessionInteractively(false); });
    add(tr("Save session as…"), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S),
        [this] { saveSessionInteractively(true); });
    file->addSeparator();
    updateRecentSessionsMenu();
}

void MainWindow::updateRecentSessionsMenu() {
    m_recentSessions->clear();
    QSettings store;
    const QStringList files = recentSessions(store);
    for (int i = 0; i < files.size(); ++i) {
        const QFileInfo info(files[i]);
        QAction* a = m_recentSessions->addAction(
            tr("&%1  %2   %3")
                .arg(i + 1)
                .arg(info.fileName(), QDir::toNativeSeparators(info.absolutePath())));
        a->setData(files[i]);
        const QString path = files[i];
        connect(a, &QAction::triggered, this, [this, path] { openRecentSession(path); });
    }
    m_recentSessions->addSeparator();
    QAction* clear = m_recentSessions->addAction(tr("Clear recent"));
    clear->setObjectName(QStringLiteral("clearRecentSessions"));
    connect(clear, &QAction::triggered, this, [this] {
        QSettings settings;
        clearRecentSessions(settings);
        updateRecentSessionsMenu();
    });
    m_recentSessions->menuAction()->setEnabled(!files.isEmpty());
}

void MainWindow::openRecentSession(const QString& file) {
    if (!QFileInfo::exists(file)) {
        QSettings store;
        forgetRecentSession(store, file);
        updateRecentSessionsMenu();
        const QString message = tr("%1 is no longer there; it was taken off the recent sessions")
                                    .arg(QDir::toNativeSeparators(file));
        statusBar()->showMessage(message, 20000);
        QMessageBox::warning(this, tr("Open recent"), message);
        return;
    }
    if (const QString error = openSession(file); !error.isEmpty())
        QMessageBox::warning(this, tr("Open session"), error);
}

void MainWindow::openSessionInteractively() {
    const QString start = m_sessionFile.isEmpty() ? QDir::homePath() : m_sessionFile;
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Open session"), start, sessionNameFilter());
    if (file.isEmpty()) return;
    if (const QString error = openSession(file); !error.isEmpty())
        QMessageBox::warning(this, tr("Open session"), error);
}

void MainWindow::saveSessionInteractively(bool askForName) {
    QString file = m_sessionFile;
    if (askForName || file.isEmpty()) {
        QFileDialog dialog(this, tr("Save session"));
        dialog.setAcceptMode(QFileDialog::AcceptSave);
        dialog.setNameFilter(sessionNameFilter());
        dialog.setDefaultSuffix(QLatin1String(kSessionExtension));
        if (file.isEmpty())
            dialog.selectFile(QStringLiteral("session.%1").arg(QLatin1String(kSessionExtension)));
        else
            dialog.selectFile(file);
        if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty()) return;
        file = dialog.selectedFiles().front();
    }
    if (const QString error = saveSession(file); !error.isEmpty())
        QMessageBox::warning(this, tr("Save session"), error);
}

Session MainWindow::currentSession() const {
    Session s;
    // In lecture mode the chapter's settings are on screen; the user's own are the session's.
    s.settings = isLectureMode() ? m_beforeLecture : m_controller->settings();
    s.step = isLectureMode() ? m_stepBeforeLecture : m_controller->step();
    if (m_tabs->currentWidget() == m_analysis)
        s.tab = SessionTab::Analysis;
    else if (m_tabs->currentWidget() == m_gpuBenchmarkPage)
        s.tab = SessionTab::GpuBenchmark;
    else if (m_tabs->currentWidget() == m_versionsPage)
        s.tab = SessionTab::Versions;
    else if (m_tabs->currentWidget() == m_hopperPage)
        s.tab = SessionTab::Hopper;
    s.analysisChart = std::max(0, m_analysis->currentChart());
    s.view = m_feed->viewOptions();
    if (isLectureMode()) s.lecture = SessionLecture{m_lecture->chapter(), m_controller->step()};
    return s;
}

QString MainWindow::saveSession(const QString& file) {
    const QString error = writeSessionFile(file, currentSession());
    if (!error.isEmpty()) {
        statusBar()->showMessage(error, 20000);
        return error;
    }
    setSessionFile(file);
    statusBar()->showMessage(tr("Session saved to %1").arg(QDir::toNativeSeparators(file)), 10000);
    return {};
}

SessionLimits MainWindow::sessionLimits() const {
    SessionLimits limits;
    limits.analysisCharts = int(m_analysis->chartTitles().size());
    for (const LectureChapter& chapter : lectureChapters()) {
        const VizSettings& s = chapter.settings;
        limits.chapterSteps.push_back(countSteps(s.spec, s.algorithm, s.options));
    }
    return limits;
}

QString MainWindow::openSession(const QString& file) {
    const SessionRead read = readSessionFile(file, sessionLimits());
    const QString error = read.session ? applySession(*read.session, file) : read.error;
    if (!error.isEmpty()) {
        statusBar()->showMessage(error, 30000);
        qWarning("flashviz: %s", qPrintable(error));
    }
    return error;
}

// The settings are checked before anything changes; the rest (the tab, the chart, the view
// options, the lecture's step) follows once their scene is on screen. A scene refused or cancelled
// while it builds puts the window back as it was, lecture mode included.
QString MainWindow::applySession(const Session& session, const QString& file) {
    Session s = session;
    const QString note = fallBackToAvailableBackend(s.settings);
    const QString name = QDir::toNativeSeparators(file);
    try {
        (void)validateForWindow(s.settings);
    } catch (const EngineError& e) {
        return tr("%1: its settings are refused: %2").arg(name, QString::fromUtf8(e.what()));
    }
    stopWaitingForSessionScene(); // an earlier session still waiting for its scene gives way
    const WindowBeforeSession before{
        isLectureMode(),      m_lecture->chapter(), m_controller->requestedSettings(),
        m_controller->step(), m_beforeLecture,      m_stepBeforeLecture};
    const auto putBack = [this, before] {
        if (before.lecture) {
            m_lecture->useHardware(before.beforeLecture.hardwareId);
            enterLecture(before.chapter); // its scene is still on screen: only the step moves
            m_controller->setStep(before.step);
        } else if (isLectureMode()) {
            m_beforeLecture = before.settings;
            m_stepBeforeLecture = before.step;
            leaveLecture();
        }
        m_beforeLecture = before.beforeLecture;
        m_stepBeforeLecture = before.stepBeforeLecture;
    };
    // Refused inline, the scene on screen stays, and so does everything else.
    bool refused = false;
    const QMetaObject::Connection watch =
        connect(m_controller, &Controller::refused, this, [&refused] { refused = true; });
    if (s.lecture) {
        if (!isLectureMode()) enterLecture(s.lecture->chapter);
        m_beforeLecture = s.settings;
        m_stepBeforeLecture = s.step;
        m_lecture->useHardware(s.settings.hardwareId);
        m_lecture->start(s.lecture->chapter);
    } else if (isLectureMode()) {
        m_beforeLecture = s.settings;
        m_stepBeforeLecture = s.step;
        leaveLecture(); // builds the settings, at the step
    } else {
        m_controller->apply(s.settings, QString::number(s.step));
    }
    disconnect(watch);
    if (refused) {
        const QString why = m_controller->lastRefusal();
        putBack();
        return tr("%1: its settings are refused: %2").arg(name, why);
    }
    const VizSettings expected = m_controller->requestedSettings();
    if (!m_controller->isBusy() && m_controller->settings() == expected) {
        finishOpeningSession(s, file, note);
        return {};
    }
    m_sessionWaiting = new QObject(this);
    connect(m_controller, &Controller::sceneChanged, m_sessionWaiting,
            [this, s, file, note, expected] {
                if (m_controller->settings() == expected) finishOpeningSession(s, file, note);
            });
    // Refused, cancelled or replaced by other settings while it built: the rest is not applied.
    // Where no other scene came instead, the window goes back to what it was.
    const std::shared_ptr<const Scene> shown = m_controller->scene();
    connect(m_controller, &Controller::settingsChanged, m_sessionWaiting,
            [this, name, expected, shown, putBack] {
                if (m_controller->isBusy() || m_controller->requestedSettings() == expected) return;
                stopWaitingForSessionScene();
                if (m_controller->scene() == shown) putBack();
                // After the refusal's own message, which the controller sends next.
                QTimer::singleShot(0, this, [this, name] {
                    const QString why = m_controller->lastRefusal().isEmpty()
                                            ? tr("its scene was cancelled or replaced")
                                            : m_controller->lastRefusal();
                    statusBar()->showMessage(tr("%1 was not opened: %2").arg(name, why), 30000);
                });
            });
    return {};
}

// Called from the waiting object's own connections too: they end now, the object a little later.
void MainWindow::stopWaitingForSessionScene() {
    if (!m_sessionWaiting) return;
    QObject::disconnect(m_controller, nullptr, m_sessionWaiting, nullptr);
    m_sessionWaiting->deleteLater();
    m_sessionWaiting = nullptr;
}

void MainWindow::finishOpeningSession(const Session& s, const QString& file, const QString& note) {
    stopWaitingForSessionScene();
    if (s.lecture) m_controller->setStep(s.lecture->step);
    switch (s.tab) {
    case SessionTab::StepByStep:
        m_tabs->setCurrentWidget(m_vertical);
        break;
    case SessionTab::Analysis:
        m_tabs->setCurrentWidget(m_analysis);
        break;
    case SessionTab::GpuBenchmark:
        m_tabs->setCurrentWidget(m_gpuBenchmarkPage);
        break;
    case SessionTab::Versions:
        m_tabs->setCurrentWidget(m_versionsPage);
        break;
    case SessionTab::Hopper:
        m_tabs->setCurrentWidget(m_hopperPage);
        break;
    }
    m_analysis->showChart(s.analysisChart);
    m_feed->setViewOptions(s.view);
    setSessionFile(file);
    const QString opened = tr("Opened %1").arg(QDir::toNativeSeparators(file));
    statusBar()->showMessage(note.isEmpty() ? opened : opened + QStringLiteral(". ") + note,
                             note.isEmpty() ? 10000 : 30000);
}

void MainWindow::setSessionFile(const QString& file) {
    m_sessionFile = QFileInfo(file).absoluteFilePath();
    setWindowTitle(tr("%1 — FlashViz").arg(QFileInfo(file).fileName()));
    QSettings store;
    rememberRecentSession(store, m_sessionFile);
    updateRecentSessionsMenu();
}

} // namespace flashviz::gui
