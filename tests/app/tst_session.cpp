// Sessions (session/session_file.h, shell/session_actions.cpp): what a window shows saved as a
// .flashviz file and opened in a fresh window as it was; files of a newer, broken or foreign
// format refused with a message naming the file and the field, the window keeping what it had;
// the recent list; `flashviz FILE.flashviz`; the MIME type installed for the format.
#include "window_support.h"
#include "flashviz_process.h"

#include "lecture/lecture.h"
#include "pages/analysis/analysis_view.h"
#include "session/controller.h"
#include "session/session_file.h"
#include "shell/command_line.h"
#include "views/frame_feed.h"

#include "core/input_design.h"
#include "core/problem.h"
#include "kernels/backend_registry.h"

#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cmath>

using namespace flashviz::gui;
using flashviz::gui::test::freshWindow;

namespace {

// The window's state a session covers, with its title and file, to compare before and after.
struct Seen {
    Session session;
    QString title, file;
    bool operator==(const Seen&) const = default;
};
Seen seen(const MainWindow& window) {
    return {window.currentSession(), window.windowTitle(), window.sessionFile()};
}

QByteArray withField(const QByteArray& json, const QString& path, const QJsonValue& value) {
    QJsonObject root = QJsonDocument::fromJson(json).object();
    const QStringList keys = path.split(QLatin1Char('.'));
    if (keys.size() == 1) {
        root.insert(keys[0], value);
    } else {
        QJsonObject inner = root.value(keys[0]).toObject();
        inner.insert(keys[1], value);
        root.insert(keys[0], inner);
    }
    return QJsonDocument(root).toJson();
}

void write(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

QStringList recentFiles(const MainWindow& window) {
    QStringList out;
    for (QAction* a : window.recentSessionsMenu()->actions())
        if (!a->data().toString().isEmpty()) out << a->data().toString();
    return out;
}

// An (rows, cols) float64 .npy file as numpy.save lays it out; with `nan`, its first value is NaN:
// the header passes the checks made when the settings are read, the build refuses the data.
void writeNpy(const QString& path, int rows, int cols, bool nan) {
    QByteArray header =
        QStringLiteral("{'descr': '<f8', 'fortran_order': False, 'shape': (%1, %2), }")
            .arg(rows)
            .arg(cols)
            .toLatin1();
    header += QByteArray((64 - (10 + header.size() + 1) % 64) % 64, ' ') + '\n';
    QByteArray bytes("\x93NUMPY\x01\x00", 8);
    bytes += char(header.size() & 0xff);
    bytes += char(header.size() >> 8);
    bytes += header;
    for (int i = 0; i < rows * cols; ++i) {
        const double value = nan && i == 0 ? std::nan("") : 0.25 * (i % 7) - 0.5;
        bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
    }
    write(path, bytes);
}

// A session of the step view whose inputs are .npy files, Q's first value NaN: the file reads,
// the window's checks pass, and the build refuses it.
Session sessionRefusedWhileItBuilds(const QString& folder) {
    const auto npy = [&folder](const char* name) {
        const QString path = folder + QLatin1Char('/') + QLatin1String(name);
        writeNpy(path, 8, 4, QLatin1String(name) == QLatin1String("q.npy"));
        return path.toStdString();
    };
    flashviz::InputFiles files;
    files.q = npy("q.npy");
    files.k = npy("k.npy");
    files.v = npy("v.npy");
    Session session;
    session.settings = toySettings();
    session.settings.spec = flashviz::withInputFiles(session.settings.spec, files);
    return session;
}

using Exit = FlashvizExit;

} // namespace

class TestSession : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void init();
    void openedAsSaved();
    void designedInputsComeAlong();
    void lectureOpensAtItsChapterAndStep();
    void leavesLectureModeForASessionWithout();
    void unwritableFileIsReported();
    void refusedFilesKeepTheWindow_data();
    void refusedFilesKeepTheWindow();
    void sceneBuiltOnAWorkerTakesTheRestWhenShown();
    void cancelledBuildOpensNothing();
    void refusedLectureSessionKeepsTheStepView();
    void refusedSessionKeepsTheLecture_data();
    void refusedSessionKeepsTheLecture();
    void refusedInlineInLectureModeIsReported();
    void missingBackendFallsBackToTheCpu();
    void recentSessionsNewestFirstAtMostEight();
    void missingRecentSessionIsRemovedWithAMessage();
    void clearRecent();
    void commandLineTakesOneSession();
    void commandLineOpensTheSessionHeadless();
    void commandLineReportsABadSessionAndStarts();
    void mimeTypeMatchesTheFormat();

  private:
    QTemporaryDir m_dir;
    // The window every refused file of refusedFilesKeepTheWindow goes to, one after another.
    std::unique_ptr<MainWindow> m_refusing;
    QString path(const QString& name) const { return m_dir.filePath(name); }
};

void TestSession::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
}

void TestSession::init() {
    QSettings().clear();
    if (qstrcmp(QTest::currentTestFunction(), "refusedFilesKeepTheWindow") != 0) m_refusing.reset();
}

// Everything a session holds, set away from its default, saved, and opened in a fresh window.
void TestSession::openedAsSaved() {
    auto a = freshWindow();
    VizSettings s = findPreset(QStringLiteral("causal"))->settings;
    s.spec.seed = 7;
    s.spec.queries = s.spec.keys = 24;
    s.options.blockRows = 8;
    s.tensorCoreCheck = flashviz::HalfType::Fp16; // not the default: the file must carry it
    setClassicBug(s, true);
    QVERIFY(a->controller()->apply(s, QStringLiteral("11")));
    QVERIFY(a->waitUntilIdle());
    a->showAnalysis(2);
    ViewOptions view;
    view.showBackendValues = true;
    a->frameFeed()->setViewOptions(view);
    QVERIFY(a->waitUntilIdle());
    const QString file = path(QStringLiteral("causal.flashviz"));
    QCOMPARE(a->saveSession(file), QString());
    QCOMPARE(a->windowTitle(), QStringLiteral("causal.flashviz — FlashViz"));
    const Session saved = a->currentSession();
    QCOMPARE(saved.step, 11);
    QCOMPARE(saved.tab, SessionTab::Analysis);

    auto b = freshWindow();
    QVERIFY(!(b->currentSession() == saved));
    // The status line says so; the message may time out while a slow (sanitizer) build waits
    // for the analysis page below, so every message shown is kept.
    QSignalSpy messages(b->statusBar(), &QStatusBar::messageChanged);
    QCOMPARE(b->openSession(file), QString());
    QVERIFY(b->waitUntilIdle());
    QCOMPARE(b->controller()->settings(), s);
    QCOMPARE(b->controller()->step(), 11);
    QCOMPARE(b->tabs()->currentWidget(), static_cast<QWidget*>(b->analysis()));
    QCOMPARE(b->analysis()->currentChart(), 2);
    QCOMPARE(b->frameFeed()->viewOptions(), view);
    QVERIFY(!b->isLectureMode());
    QVERIFY(b->currentSession() == saved);
    QCOMPARE(b->sessionFile(), QFileInfo(file).absoluteFilePath());
    QCOMPARE(b->windowTitle(), QStringLiteral("causal.flashviz — FlashViz"));
    QVERIFY(std::any_of(messages.cbegin(), messages.cend(), [](const QList<QVariant>& m) {
        return m.first().toString().startsWith(QStringLiteral("Opened"));
    }));
}

// The settings' own fields travel through settingsToJson / settingsFromJson: the inputs too.
void TestSession::designedInputsComeAlong() {
    Session session;
    session.settings = toySettings();
    session.settings.spec.design =
        flashviz::oneBlockDesign(session.settings.spec, session.settings.options.blockCols, 1, 6.0);
    session.settings.spec.design->rows[3] = {0, 11.0};
    const QString file = path(QStringLiteral("designed.flashviz"));
    QCOMPARE(writeSessionFile(file, session), QString());
    auto window = freshWindow();
    QCOMPARE(window->openSession(file), QString());
    QVERIFY(window->waitUntilIdle());
    QCOMPARE(window->controller()->settings().spec.design, session.settings.spec.design);
}

void TestSession::lectureOpensAtItsChapterAndStep() {
    auto a = freshWindow();
    VizSettings own = toySettings();
    own.spec.seed = 3;
    QVERIFY(a->controller()->apply(own, QStringLiteral("5")));
    QVERIFY(a->waitUntilIdle());
    a->enterLecture(2);
    QVERIFY(a->waitUntilIdle());
    a->lecture()->nextBeat();
    QVERIFY(a->waitUntilIdle());
    const int lectureStep = a->controller()->step();
    QVERIFY(lectureStep > 0);
    const QString file = path(QStringLiteral("lecture.flashviz"));
    QCOMPARE(a->saveSession(file), QString());
    QCOMPARE(a->currentSession().lecture, std::optional(SessionLecture{2, lectureStep}));

    auto b = freshWindow();
    QCOMPARE(b->openSession(file), QString());
    QVERIFY(b->waitUntilIdle());
    QVERIFY(b->isLectureMode());
    QCOMPARE(b->lecture()->chapter(), 2);
    QCOMPARE(b->controller()->step(), lectureStep);
    QCOMPARE(b->controller()->settings(), b->lecture()->chapterSettings(lectureChapters()[2]));
    QVERIFY(b->currentSession() == a->currentSession());
    // Leaving the lecture returns to the session's own settings and step.
    b->leaveLecture();
    QVERIFY(b->waitUntilIdle());
    QCOMPARE(b->controller()->settings(), own);
    QCOMPARE(b->controller()->step(), 5);
}

void TestSession::leavesLectureModeForASessionWithout() {
    auto a = freshWindow();
    QVERIFY(a->controller()->applyPreset(QStringLiteral("bug-bites")));
    QVERIFY(a->waitUntilIdle());
    a->controller()->setStep(4);
    QVERIFY(a->waitUntilIdle());
    const QString file = path(QStringLiteral("desk.flashviz"));
    QCOMPARE(a->saveSession(file), QString());

    auto b = freshWindow();
    b->enterLecture(1);
    QVERIFY(b->waitUntilIdle());
    QCOMPARE(b->openSession(file), QString());
    QVERIFY(b->waitUntilIdle());
    QVERIFY(!b->isLectureMode());
    QCOMPARE(b->controller()->settings(), a->controller()->settings());
    QCOMPARE(b->controller()->step(), 4);
}

void TestSession::unwritableFileIsReported() {
    auto window = freshWindow();
    const Seen before = seen(*window);
    const QString file = path(QStringLiteral("no-such-folder/x.flashviz"));
    const QString error = window->saveSession(file);
    QVERIFY2(error.startsWith(QStringLiteral("Could not write %1: ").arg(file)), qPrintable(error));
    QCOMPARE(window->statusBar()->currentMessage(), error);
    QVERIFY(seen(*window) == before);
    QVERIFY(recentFiles(*window).isEmpty());
}

void TestSession::refusedFilesKeepTheWindow_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    Session valid;
    valid.settings = toySettings();
    const QByteArray good = sessionToJson(valid);
    QTest::newRow("newer version")
        << withField(withField(good, QStringLiteral("version"), kSessionVersion + 1),
                     QStringLiteral("slides"), 3)
        << QStringLiteral("This session was saved by a newer FlashViz (format version %1; this "
                          "one reads up to %2)")
               .arg(kSessionVersion + 1)
               .arg(kSessionVersion);
    QTest::newRow("broken field") << withField(good, QStringLiteral("settings.queries"), 8.5)
                                  << QStringLiteral(
                                         "settings.queries must be a whole number, not 8.5");
    QTest::newRow("step past the run") << withField(good, QStringLiteral("step"), 1000)
                                       << QStringLiteral("step must be a whole number from 0 to");
    QTest::newRow("unknown key") << withField(good, QStringLiteral("colour"), QStringLiteral("red"))
                                 << QStringLiteral("unknown field 'colour'");
    QTest::newRow("unknown view option") << withField(good, QStringLiteral("view.zoom"), 2)
                                         << QStringLiteral("view: unknown field 'zoom'");
    QTest::newRow("chapter past the lecture")
        << withField(good, QStringLiteral("lecture"),
                     QJsonObject{{QStringLiteral("chapter"), 1000}, {QStringLiteral("step"), 0}})
        << QStringLiteral("lecture.chapter must be a whole number from 1 to");
    QTest::newRow("not JSON") << QByteArray("a session, honest")
                              << QStringLiteral("not a FlashViz session: not valid JSON");
    QTest::newRow("another format")
        << withField(good, QStringLiteral("format"), QStringLiteral("something-else"))
        << QStringLiteral("not a FlashViz session (its \"format\" is 'something-else'");
    QTest::newRow("huge") << QByteArray(kMaxSessionBytes + 1, ' ')
                          << QStringLiteral("more than a session holds");
    QTest::newRow("refused by the window")
        << withField(withField(good, QStringLiteral("settings.queries"), 30000),
                     QStringLiteral("settings.blockRows"), 4096)
        << QStringLiteral("its settings are refused: n_q (queries) = 30000 is more than");
}

// One window takes the refused files in turn, as a user trying one file after another would: its
// analysis page (minutes of the sanitizer build's time) is computed once, and each refusal must
// leave the window as the session opened before the first left it.
void TestSession::refusedFilesKeepTheWindow() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    const QString opened = path(QStringLiteral("opened.flashviz"));
    if (!m_refusing) {
        m_refusing = freshWindow();
        QVERIFY(m_refusing->controller()->applyPreset(QStringLiteral("bug-bites")));
        m_refusing->showAnalysis(1);
        QVERIFY(m_refusing->waitUntilIdle());
        QCOMPARE(m_refusing->saveSession(opened), QString());
    }
    MainWindow* window = m_refusing.get();
    QVERIFY(window->waitUntilIdle());
    const Seen before = seen(*window);
    QCOMPARE(before.file, QFileInfo(opened).absoluteFilePath());
    QCOMPARE(before.session.tab, SessionTab::Analysis);
    QCOMPARE(before.session.analysisChart, 1);

    const QString file = path(QStringLiteral("bad.flashviz"));
    write(file, bytes);
    const QString error = window->openSession(file);
    QVERIFY2(error.startsWith(file + QStringLiteral(": ")), qPrintable(error));
    QVERIFY2(error.contains(message), qPrintable(error));
    QCOMPARE(window->statusBar()->currentMessage(), error);
    QVERIFY(window->waitUntilIdle());
    QVERIFY(seen(*window) == before);
    QVERIFY(!recentFiles(*window).contains(file));
}

// A scene built on a worker: the session's tab, chart and view options come with it.
void TestSession::sceneBuiltOnAWorkerTakesTheRestWhenShown() {
    Session session;
    session.settings = findPreset(QStringLiteral("long"))->settings;
    session.step = 3;
    session.tab = SessionTab::Analysis;
    session.analysisChart = 1;
    const QString file = path(QStringLiteral("worker.flashviz"));
    QCOMPARE(writeSessionFile(file, session), QString());
    auto window = freshWindow();
    window->controller()->setInlineLimits(0, 1e12);
    QCOMPARE(window->openSession(file), QString());
    QVERIFY(window->controller()->isBusy());
    QCOMPARE(window->tabs()->currentIndex(), 0); // not yet: the scene is still building
    QVERIFY(window->waitUntilIdle());
    QCOMPARE(window->controller()->settings(), session.settings);
    QCOMPARE(window->controller()->step(), 3);
    QCOMPARE(window->tabs()->currentWidget(), static_cast<QWidget*>(window->analysis()));
    QCOMPARE(window->analysis()->currentChart(), 1);
    QCOMPARE(window->sessionFile(), QFileInfo(file).absoluteFilePath());
}

void TestSession::cancelledBuildOpensNothing() {
    Session session;
    session.settings = findPreset(QStringLiteral("long"))->settings;
    session.tab = SessionTab::Analysis;
    const QString file = path(QStringLiteral("cancelled.flashviz"));
    QCOMPARE(writeSessionFile(file, session), QString());
    auto window = freshWindow();
    const Seen before = seen(*window);
    window->controller()->setInlineLimits(0, 1e12);
    QCOMPARE(window->openSession(file), QString());
    QVERIFY(window->controller()->isBusy());
    window->controller()->cancelBuild();
    QVERIFY(window->waitUntilIdle());
    QTest::qWait(50);
    QVERIFY(seen(*window) == before);
    QVERIFY(window->statusBar()->currentMessage().contains(QStringLiteral("was not opened")));
}

// How a session's scene fails while it builds on a worker: the user cancels it, or the engine
// refuses it.
enum class BuildFailure { Cancelled, Refused };

// Opened from the step view, a lecture session whose chapter's scene is cancelled: the step view
// stays, with its settings and step (and the lecture's return point) as they were.
void TestSession::refusedLectureSessionKeepsTheStepView() {
    Session session;
    session.settings = findPreset(QStringLiteral("long"))->settings;
    session.lecture = SessionLecture{2, 0};
    const QString file = path(QStringLiteral("lecture-refused.flashviz"));
    QCOMPARE(writeSessionFile(file, session), QString());
    auto window = freshWindow();
    VizSettings own = toySettings();
    own.spec.seed = 3;
    QVERIFY(window->controller()->apply(own, QStringLiteral("5")));
    QVERIFY(window->waitUntilIdle());
    const Seen before = seen(*window);
    window->controller()->setInlineLimits(0, 1e12);
    QCOMPARE(window->openSession(file), QString());
    QVERIFY(window->controller()->isBusy());
    QVERIFY(window->isLectureMode()); // the chapter is building
    window->controller()->cancelBuild();
    QVERIFY(window->waitUntilIdle());
    QTest::qWait(50);
    QVERIFY(window->waitUntilIdle());
    QVERIFY(!window->isLectureMode());
    QCOMPARE(window->controller()->settings(), own);
    QCOMPARE(window->controller()->step(), 5);
    QVERIFY(seen(*window) == before);
    QVERIFY2(window->statusBar()->currentMessage().contains(QStringLiteral("was not opened")),
             qPrintable(window->statusBar()->currentMessage()));
}

void TestSession::refusedSessionKeepsTheLecture_data() {
    QTest::addColumn<BuildFailure>("failure");
    QTest::newRow("cancelled") << BuildFailure::Cancelled;
    QTest::newRow("refused") << BuildFailure::Refused;
}

// Opened in lecture mode, a session without it whose scene never comes: the lecture stays at its
// chapter and step, and leaving it still returns to the user's own settings.
void TestSession::refusedSessionKeepsTheLecture() {
    QFETCH(BuildFailure, failure);
    Session session;
    if (failure == BuildFailure::Refused)
        session = sessionRefusedWhileItBuilds(m_dir.path());
    else
        session.settings = findPreset(QStringLiteral("long"))->settings;
    const QString file = path(QStringLiteral("desk-refused.flashviz"));
    QCOMPARE(writeSessionFile(file, session), QString());
    auto window = freshWindow();
    VizSettings own = toySettings();
    own.spec.seed = 3;
    QVERIFY(window->controller()->apply(own, QStringLiteral("5")));
    QVERIFY(window->waitUntilIdle());
    window->enterLecture(2);
    QVERIFY(window->waitUntilIdle());
    window->lecture()->nextBeat();
    QVERIFY(window->waitUntilIdle());
    const int lectureStep = window->controller()->step();
    const VizSettings chapter = window->controller()->settings();
    const Seen before = seen(*window);
    window->controller()->setInlineLimits(0, 1e12);
    QCOMPARE(window->openSession(file), QString());
    QVERIFY(window->controller()->isBusy());
    if (failure == BuildFailure::Cancelled) window->controller()->cancelBuild();
    QVERIFY(window->waitUntilIdle());
    QTest::qWait(50);
    QVERIFY(window->waitUntilIdle());
    QVERIFY(window->isLectureMode());
    QCOMPARE(window->lecture()->chapter(), 2);
    QCOMPARE(window->controller()->settings(), chapter);
    QCOMPARE(window->controller()->step(), lectureStep);
    QVERIFY(seen(*window) == before);
    const QString message = window->statusBar()->currentMessage();
    QVERIFY2(message.contains(QStringLiteral("was not opened")), qPrintable(message));
    if (failure == BuildFailure::Refused)
        QVERIFY2(message.contains(QStringLiteral("not finite")), qPrintable(message));
    window->leaveLecture();
    QVERIFY(window->waitUntilIdle());
    QCOMPARE(window->controller()->settings(), own);
    QCOMPARE(window->controller()->step(), 5);
}

// Refused while it builds inline, in lecture mode: the message says so (not "Opened"), and the
// lecture stays as it was.
void TestSession::refusedInlineInLectureModeIsReported() {
    const QString file = path(QStringLiteral("inline-refused.flashviz"));
    QCOMPARE(writeSessionFile(file, sessionRefusedWhileItBuilds(m_dir.path())), QString());
    auto window = freshWindow();
    window->enterLecture(1);
    QVERIFY(window->waitUntilIdle());
    window->lecture()->nextBeat();
    QVERIFY(window->waitUntilIdle());
    const int lectureStep = window->controller()->step();
    const Seen before = seen(*window);
    const QString error = window->openSession(file);
    QVERIFY2(error.startsWith(file + QStringLiteral(": its settings are refused: ")) &&
                 error.contains(QStringLiteral("not finite")),
             qPrintable(error));
    QCOMPARE(window->statusBar()->currentMessage(), error);
    QVERIFY(window->waitUntilIdle());
    QVERIFY(window->isLectureMode());
    QCOMPARE(window->lecture()->chapter(), 1);
    QCOMPARE(window->controller()->step(), lectureStep);
    QVERIFY(seen(*window) == before);
    QVERIFY(!recentFiles(*window).contains(QFileInfo(file).absoluteFilePath()));
}

void TestSession::missingBackendFallsBackToTheCpu() {
    for (const auto& b : flashviz::listBackends())
        if (b.kind == flashviz::BackendKind::Cuda && b.available)
            QSKIP("a CUDA device is present: nothing falls back");
    Session session;
    session.settings = toySettings();
    session.settings.backend = flashviz::BackendKind::Cuda;
    const QString file = path(QStringLiteral("gpu.flashviz"));
    QCOMPARE(writeSessionFile(file, session), QString());
    auto window = freshWindow();
    QCOMPARE(window->openSession(file), QString());
    QVERIFY(window->waitUntilIdle());
    QCOMPARE(window->controller()->settings().backend, flashviz::BackendKind::Cpu);
    QVERIFY(window->statusBar()->currentMessage().contains(QStringLiteral("not available here"),
                                                           Qt::CaseInsensitive));
}

void TestSession::recentSessionsNewestFirstAtMostEight() {
    auto window = freshWindow();
    QVERIFY(!window->recentSessionsMenu()->menuAction()->isEnabled());
    QStringList saved;
    for (int i = 0; i < kMaxRecentSessions + 2; ++i) {
        saved.prepend(path(QStringLiteral("recent-%1.flashviz").arg(i)));
        QCOMPARE(window->saveSession(saved.front()), QString());
    }
    QCOMPARE(recentFiles(*window), saved.mid(0, kMaxRecentSessions));
    // Opening one moves it to the top; the rest keep their order.
    const QString older = saved[5];
    QCOMPARE(window->openSession(older), QString());
    QStringList expected = saved.mid(0, kMaxRecentSessions);
    expected.removeAll(older);
    expected.prepend(older);
    QCOMPARE(recentFiles(*window), expected);
    // A new window reads the same list from QSettings.
    auto other = freshWindow();
    QCOMPARE(recentFiles(*other), expected);
}

void TestSession::missingRecentSessionIsRemovedWithAMessage() {
    auto window = freshWindow();
    const QString kept = path(QStringLiteral("kept.flashviz"));
    const QString gone = path(QStringLiteral("gone.flashviz"));
    QCOMPARE(window->saveSession(kept), QString());
    QCOMPARE(window->saveSession(gone), QString());
    QVERIFY(QFile::remove(gone));
    const Seen before = seen(*window);
    QAction* entry = nullptr;
    for (QAction* a : window->recentSessionsMenu()->actions())
        if (a->data().toString() == gone) entry = a;
    QVERIFY(entry);
    auto boxText = std::make_shared<QString>();
    QTimer::singleShot(0, [boxText] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
            *boxText = box->text();
            box->close();
        }
    });
    entry->trigger();
    QVERIFY2(boxText->contains(gone) && boxText->contains(QStringLiteral("no longer there")),
             qPrintable(*boxText));
    QCOMPARE(recentFiles(*window), QStringList{kept});
    QVERIFY(seen(*window) == before);
}

void TestSession::clearRecent() {
    auto window = freshWindow();
    QCOMPARE(window->saveSession(path(QStringLiteral("a.flashviz"))), QString());
    QVERIFY(window->recentSessionsMenu()->menuAction()->isEnabled());
    auto* clear =
        window->recentSessionsMenu()->findChild<QAction*>(QStringLiteral("clearRecentSessions"));
    QVERIFY(clear);
    clear->trigger();
    QVERIFY(recentFiles(*window).isEmpty());
    QVERIFY(!window->recentSessionsMenu()->menuAction()->isEnabled());
    QSettings store;
    QVERIFY(recentSessions(store).isEmpty());
}

void TestSession::commandLineTakesOneSession() {
    const CommandLine one = parseCommandLine({"flashviz", "lesson.flashviz", "--step", "3"});
    QVERIFY2(one.error.isEmpty(), qPrintable(one.error));
    QCOMPARE(one.start.session, QStringLiteral("lesson.flashviz"));
    const CommandLine two = parseCommandLine({"flashviz", "a.flashviz", "b.flashviz"});
    QVERIFY(two.error.contains(QStringLiteral("one session at a time")));
    QVERIFY(
        parseCommandLine({"flashviz", "--help"}).output.contains(QStringLiteral("FILE.flashviz")));
}

// Headless, as the tests and a lecturer's script run it: the screenshot shows the session's step
// (the same pixels as that preset at that step, above the status line), not its first.
void TestSession::commandLineOpensTheSessionHeadless() {
    Session session;
    session.settings = findPreset(QStringLiteral("bug-bites"))->settings;
    session.step = 9;
    const QString file = path(QStringLiteral("headless.flashviz"));
    QCOMPARE(writeSessionFile(file, session), QString());
    const auto shot = [this](const QString& name, const QStringList& args) {
        const QString png = path(name);
        const Exit run =
            runFlashviz(args + QStringList{QStringLiteral("--screenshot"), png,
                                           QStringLiteral("--size"), QStringLiteral("1280x800")});
        if (run.code != 0) qWarning("%s", run.err.constData());
        const QImage image(png);
        return image.copy(0, 0, image.width(), image.height() - 40); // not the status line
    };
    const QImage fromSession = shot(QStringLiteral("session.png"), {file});
    const QImage atStep =
        shot(QStringLiteral("step9.png"), {QStringLiteral("--preset"), QStringLiteral("bug-bites"),
                                           QStringLiteral("--step"), QStringLiteral("9")});
    const QImage atStart =
        shot(QStringLiteral("step0.png"), {QStringLiteral("--preset"), QStringLiteral("bug-bites"),
                                           QStringLiteral("--step"), QStringLiteral("0")});
    QVERIFY(!fromSession.isNull() && !atStep.isNull() && !atStart.isNull());
    QVERIFY(fromSession == atStep);
    QVERIFY(fromSession != atStart);
}

void TestSession::commandLineReportsABadSessionAndStarts() {
    const QString file = path(QStringLiteral("broken.flashviz"));
    write(file, "{\"format\": \"flashviz-session\", \"version\": 99}");
    const QString png = path(QStringLiteral("broken.png"));
    const Exit run = runFlashviz({file, QStringLiteral("--screenshot"), png});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.err.contains(file.toUtf8() + ": This session was saved by a newer FlashViz"),
             run.err.constData());
    QVERIFY(!QImage(png).isNull());
}

// The MIME type installed for the format matches what the writer writes.
void TestSession::mimeTypeMatchesTheFormat() {
    const QString desktop = QStringLiteral(FLASHVIZ_SOURCE_DIR "/resources/desktop/");
    QFile xml(desktop + QStringLiteral("io.github.flashviz.flashviz.xml"));
    QVERIFY(xml.open(QIODevice::ReadOnly));
    const QString mime = QString::fromUtf8(xml.readAll());
    QVERIFY(mime.contains(
        QStringLiteral("<glob pattern=\"*.%1\"/>").arg(QLatin1String(kSessionExtension))));
    const QString magic = QStringLiteral("\"format\": \"%1\"").arg(QLatin1String(kSessionFormat));
    QVERIFY(mime.contains(
        QStringLiteral("offset=\"0:256\" value=\"%1\"")
            .arg(QString(magic).replace(QLatin1Char('"'), QStringLiteral("&quot;")))));
    // Where the magic looks: the first 256 bytes of what FlashViz writes, with the largest
    // settings a session can hold in front of the format.
    Session session;
    session.settings = findPreset(QStringLiteral("backward-long"))->settings;
    session.analysisChart = 99;
    QVERIFY(sessionToJson(session).left(256).contains(magic.toUtf8()));
    QFile entry(desktop + QStringLiteral("io.github.flashviz.flashviz.desktop"));
    QVERIFY(entry.open(QIODevice::ReadOnly));
    const QByteArray lines = entry.readAll();
    QVERIFY(lines.contains("MimeType=application/x-flashviz-session;"));
    QVERIFY(mime.contains(QStringLiteral("<mime-type type=\"application/x-flashviz-session\">")));
    QVERIFY(lines.contains("Exec=flashviz %f"));
}

QTEST_MAIN(TestSession)
#include "tst_session.moc"
