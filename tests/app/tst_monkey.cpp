// The monkey: the real window driven by seeded random keys, clicks, drags, wheel turns, resizes
// and tab switches (every tab, the Hopper page's among them) for a bounded time. Any crash or sanitizer report ends the process (and so
// fails the test), a GUI thread that does not answer for FLASHVIZ_MONKEY_HANG_SECONDS (5) fails
// it with the last actions, and so does memory that grew past a stated bound.
//
//   FLASHVIZ_MONKEY_SECONDS (20)   how long to play; CI's sanitizer run plays 150 s
//   FLASHVIZ_MONKEY_SEED           the seed (default fixed, so a failure replays)
//   QTEST_FUNCTION_TIMEOUT         Qt Test's own limit, 300000 ms: raise it for runs over 4 min
//
// Modal dialogs and popups are closed as soon as they open; file dialogs are rejected before
// they can be used, so the monkey never saves, overwrites or deletes a file.
#include "shell/main_window.h"
#include "window_support.h"

#include <QTabWidget>

#include <QAbstractButton>
#include <QApplication>
#include <QDialog>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QMenu>
#include <QStandardPaths>
#include <QTimer>
#include <QWheelEvent>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include <pthread.h>

using namespace flashviz::gui;
using namespace flashviz::gui::test;

namespace {

double envNumber(const char* name, double fallback) {
    const QByteArray value = qgetenv(name);
    bool ok = false;
    const double number = value.toDouble(&ok);
    return ok && number > 0 ? number : fallback;
}

// Resident memory of this process in MiB (Linux).
double residentMiB() {
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly)) return 0;
    const QList<QByteArray> fields = statm.readAll().split(' ');
    return fields.size() > 1 ? fields[1].toDouble() * 4096.0 / (1024.0 * 1024.0) : 0;
}

// The last actions, printed when the monkey fails, so that a failure can be read and replayed.
class ActionLog {
  public:
    void add(const QString& action) {
        std::lock_guard lock(m_mutex);
        m_actions.push_back(action);
        if (m_actions.size() > 40) m_actions.pop_front();
    }
    void print() {
        std::lock_guard lock(m_mutex);
        std::fprintf(stderr, "monkey: the last %zu actions:\n", m_actions.size());
        for (const QString& a : m_actions)
            std::fprintf(stderr, "  %s\n", qPrintable(a));
    }

  private:
    std::mutex m_mutex;
    std::deque<QString> m_actions;
};

// Aborts the process (a failed test) when the GUI thread stops answering.
class Watchdog {
  public:
    Watchdog(ActionLog& log, double hangSeconds)
        : m_log(log), m_limit(hangSeconds), m_guiThread(pthread_self()) {
        m_thread = std::thread([this] { watch(); });
    }
    ~Watchdog() {
        m_stop = true;
        m_thread.join();
    }
    void beat() { m_lastBeat = now(); }

  private:
    static double now() {
        using namespace std::chrono;
        return duration<double>(steady_clock::now().time_since_epoch()).count();
    }
    void watch() {
        beat();
        while (!m_stop) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (now() - m_lastBeat > m_limit) {
                std::fprintf(stderr, "monkey: FAIL: the GUI thread did not answer for %.1f s\n",
                             m_limit);
                m_log.print();
                // Aborted on the GUI thread itself, so that the sanitizers' report (and a core
                // dump) shows where it was stuck.
                pthread_kill(m_guiThread, SIGABRT);
                std::this_thread::sleep_for(std::chrono::seconds(10));
                std::abort();
            }
        }
    }
    ActionLog& m_log;
    double m_limit;
    std::atomic<double> m_lastBeat{0};
    std::atomic<bool> m_stop{false};
    pthread_t m_guiThread;
    std::thread m_thread;
};

// Rejects file dialogs the moment they are shown.
class FileDialogGuard : public QObject {
  public:
    using QObject::QObject;
    int rejected = 0;

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Show)
            if (auto* dialog = qobject_cast<QFileDialog*>(watched)) {
                ++rejected;
                QMetaObject::invokeMethod(dialog, &QDialog::reject, Qt::QueuedConnection);
            }
        return false;
    }
};

// The offscreen platform cannot raise windows or grab the keyboard for popups; it says so at
// every popup. Those lines are counted, not printed; every other message goes through.
QtMessageHandler previousHandler = nullptr;
std::atomic<int> platformNotes{0};
void dropPlatformNotes(QtMsgType type, const QMessageLogContext& context, const QString& text) {
    if (text.startsWith(QLatin1String("This plugin does not support"))) {
        ++platformNotes;
        return;
    }
    previousHandler(type, context, text);
}

} // namespace

// Under AddressSanitizer freed memory waits in a quarantine (256 MiB by default) before reuse;
// a small one keeps the resident size a measure of what the window holds.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FLASHVIZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(FLASHVIZ_ASAN)
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=32"; }
#endif

class TestMonkey : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void randomUseNeverCrashesHangsOrGrows();

  private:
    void act(MainWindow& window);
    void pressKey(MainWindow& window);
    void click(MainWindow& window, bool drag);
    void wheel(MainWindow& window);
    void resize(MainWindow& window);
    void switchTab(MainWindow& window);
    QWidget* randomVisibleWidget(MainWindow& window);
    void closeDialogsAndPopups();

    std::mt19937_64 m_random;
    ActionLog m_log;
    int m_actions = 0;
    int m_closedDialogs = 0;
};

void TestMonkey::initTestCase() {
    QStandardPaths::setTestModeEnabled(true); // never the user's settings
    QApplication::setOrganizationName(QStringLiteral("FlashVizTest"));
    QApplication::setApplicationName(QStringLiteral("tst_monkey"));
    previousHandler = qInstallMessageHandler(dropPlatformNotes);
}

QWidget* TestMonkey::randomVisibleWidget(MainWindow& window) {
    QList<QWidget*> candidates;
    for (QWidget* w : window.findChildren<QWidget*>())
        if (w->isVisible() && w->width() > 2 && w->height() > 2) candidates << w;
    if (candidates.isEmpty()) return &window;
    return candidates[int(m_random() % candidates.size())];
}

void TestMonkey::pressKey(MainWindow& window) {
    static const std::vector<std::pair<int, Qt::KeyboardModifiers>> keys = {
        {Qt::Key_Space, {}},      {Qt::Key_Left, {}},      {Qt::Key_Right, {}},
        {Qt::Key_Up, {}},         {Qt::Key_Down, {}},      {Qt::Key_Home, {}},
        {Qt::Key_End, {}},        {Qt::Key_PageUp, {}},    {Qt::Key_PageDown, {}},
        {Qt::Key_B, {}},          {Qt::Key_G, {}},         {Qt::Key_F5, {}},
        {Qt::Key_Escape, {}},     {Qt::Key_Tab, {}},       {Qt::Key_Backtab, Qt::ShiftModifier},
        {Qt::Key_Return, {}},     {Qt::Key_Backspace, {}}, {Qt::Key_1, Qt::ControlModifier},
        {Qt::Key_2, Qt::ControlModifier}, {Qt::Key_3, Qt::ControlModifier},
        {Qt::Key_0, {}}, {Qt::Key_1, {}}, {Qt::Key_2, {}}, {Qt::Key_4, {}}, {Qt::Key_8, {}},
        {Qt::Key_9, {}}, {Qt::Key_Minus, {}}, {Qt::Key_Period, {}}, {Qt::Key_E, {}},
        {Qt::Key_F1, {}}, {Qt::Key_F11, {}}, {Qt::Key_S, Qt::ControlModifier},
        {Qt::Key_Q, Qt::ControlModifier},
    };
    const auto& [key, modifiers] = keys[m_random() % keys.size()];
    QWidget* target = QApplication::focusWidget();
    if (!target || !target->isVisible()) target = &window;
    m_log.add(QStringLiteral("key %1 (modifiers %2) to %3")
                  .arg(QKeySequence(key).toString())
                  .arg(int(modifiers))
                  .arg(QString::fromLatin1(target->metaObject()->className())));
    QTest::keyClick(target, Qt::Key(key), modifiers);
}

void TestMonkey::click(MainWindow& window, bool drag) {
    QWidget* target = randomVisibleWidget(window);
    const QPoint from(int(m_random() % target->width()), int(m_random() % target->height()));
    m_log.add(QStringLiteral("%1 %2 at (%3, %4)")
                  .arg(drag ? QStringLiteral("drag in") : QStringLiteral("click on"),
                       QString::fromLatin1(target->metaObject()->className()))
                  .arg(from.x())
                  .arg(from.y()));
    if (!drag) {
        const bool right = m_random() % 8 == 0;
        QTest::mouseClick(target, right ? Qt::RightButton : Qt::LeftButton, {}, from);
        return;
    }
    const QPoint to(int(m_random() % target->width()), int(m_random() % target->height()));
    QPointer<QWidget> guarded(target);
    QTest::mousePress(target, Qt::LeftButton, {}, from);
    for (int i = 1; i <= 4 && guarded; ++i)
        QTest::mouseMove(target, from + (to - from) * i / 4);
    if (guarded) QTest::mouseRelease(target, Qt::LeftButton, {}, to);
}

void TestMonkey::wheel(MainWindow& window) {
    QWidget* target = randomVisibleWidget(window);
    const QPointF at(double(m_random() % target->width()), double(m_random() % target->height()));
    const int delta = (m_random() % 2 ? 120 : -120) * int(1 + m_random() % 3);
    m_log.add(QStringLiteral("wheel %1 on %2").arg(delta).arg(
        QString::fromLatin1(target->metaObject()->className())));
    QWheelEvent event(at, target->mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(target, &event);
}

void TestMonkey::resize(MainWindow& window) {
    static const QSize sizes[] = {{1920, 1080}, {1366, 768}, {1280, 800}, {1024, 700},
                                  {800, 600},   {2560, 1440}, {640, 480}};
    const QSize size = sizes[m_random() % std::size(sizes)];
    m_log.add(QStringLiteral("resize to %1 x %2").arg(size.width()).arg(size.height()));
    window.resize(size);
}

// Any tab, as a click on the tab bar would choose it: the pages made on first use are made.
void TestMonkey::switchTab(MainWindow& window) {
    QTabWidget* tabs = window.tabs();
    const int index = int(m_random() % std::uint64_t(tabs->count()));
    m_log.add(QStringLiteral("tab %1 (%2)").arg(index).arg(tabs->tabText(index)));
    tabs->setCurrentIndex(index);
}

void TestMonkey::closeDialogsAndPopups() {
    for (int i = 0; i < 10; ++i) {
        if (QWidget* popup = QApplication::activePopupWidget()) {
            popup->close();
        } else if (QWidget* modal = QApplication::activeModalWidget()) {
            ++m_closedDialogs;
            if (auto* dialog = qobject_cast<QDialog*>(modal))
                dialog->reject();
            else
                modal->close();
        } else {
            return;
        }
        QApplication::processEvents();
    }
}

void TestMonkey::act(MainWindow& window) {
    ++m_actions;
    if (!window.isVisible()) { // Ctrl+Q closed it: a user would open it again
        m_log.add(QStringLiteral("show the window again"));
        window.show();
    }
    // The window's shortcuts work in the active window, as on a desktop after a click on it.
    if (QApplication::activeWindow() != &window) QApplication::setActiveWindow(&window);
    const std::uint64_t roll = m_random() % 100;
    if (roll < 50)
        pressKey(window);
    else if (roll < 75)
        click(window, false);
    else if (roll < 85)
        click(window, true);
    else if (roll < 93)
        wheel(window);
    else if (roll < 97)
        switchTab(window);
    else
        resize(window);
    closeDialogsAndPopups();
}

void TestMonkey::randomUseNeverCrashesHangsOrGrows() {
    const double seconds = envNumber("FLASHVIZ_MONKEY_SECONDS", 20);
    const auto seed = std::uint64_t(envNumber("FLASHVIZ_MONKEY_SEED", 20261201));
    const double hangSeconds = envNumber("FLASHVIZ_MONKEY_HANG_SECONDS", 5);
    m_random.seed(seed);

    FileDialogGuard guard;
    qApp->installEventFilter(&guard);
    StartOptions options = freshOptions();
    options.fullScreen = true; // F5 takes lecture mode to the whole screen, as the application does
    const auto fresh = freshWindow({1366, 768}, options);
    MainWindow& window = *fresh;
    const double startMiB = residentMiB();

    Watchdog watchdog(m_log, hangSeconds);
    // A dialog's own event loop (exec) still answers the watchdog and gets closed.
    QTimer keepAlive;
    connect(&keepAlive, &QTimer::timeout, this, [&] {
        watchdog.beat();
        if (QApplication::activeModalWidget() || QApplication::activePopupWidget())
            QTimer::singleShot(0, this, [this] { closeDialogsAndPopups(); });
    });
    keepAlive.start(50);

    // Memory is sampled through the first half, which meets the large problems and their
    // images; the second half must not grow past that high-water mark by more than the bound.
    double firstHalfPeakMiB = startMiB;
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < seconds * 1000) {
        act(window);
        QTest::qWait(int(m_random() % 40)); // events, timers and worker results arrive
        watchdog.beat();
        if (clock.elapsed() < seconds * 500 && m_actions % 25 == 0)
            firstHalfPeakMiB = std::max(firstHalfPeakMiB, residentMiB());
    }
    // The last computations finish and are shown before measuring; the watchdog still watches
    // (a hang is its to find). The last action may have asked for the analysis at a large d,
    // minutes of work in the sanitizer build on a shared CI core: wait up to 10 minutes, not the
    // default 2 (a local sanitizer run of 2026-12-05 ran past those).
    QVERIFY(window.waitUntilIdle(600000));
    QTest::qWait(200);
    keepAlive.stop();
    const double endMiB = residentMiB();
    // The state shown is a function of (problem, options, step), so memory must not grow with
    // the number of actions: at most 256 MiB past the first half's peak (one n = 16384 scene).
    const double boundMiB = firstHalfPeakMiB + 256;
    std::printf("monkey: seed %llu, %.0f s, %d actions, %d dialogs closed, %d file dialogs "
                "refused; RSS %.0f MiB at the start, first half's peak %.0f MiB, %.0f MiB at "
                "the end (bound %.0f)\n",
                static_cast<unsigned long long>(seed), clock.elapsed() / 1000.0, m_actions,
                m_closedDialogs, guard.rejected, startMiB, firstHalfPeakMiB, endMiB, boundMiB);
    if (endMiB > boundMiB) m_log.print();
    QVERIFY2(endMiB <= boundMiB, "resident memory grew past its bound");
    qApp->removeEventFilter(&guard);
}

QTEST_MAIN(TestMonkey)
#include "tst_monkey.moc"
