// flashviz-ui-bench: how responsive the window is at n = 4096 (offscreen). For each
// configuration it measures the time to move to a random step (the controller computing the
// frame and the window repainting it) and the longest stall of the GUI thread while a scene is
// built and while the animation plays. Prints a table of medians over the repeats.
#include "session/controller.h"
#include "session/settings.h"
#include "shell/main_window.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <thread>
#include <vector>

using namespace flashviz;
using namespace flashviz::gui;

namespace {

// CPU time of the calling thread: what a step costs, whatever else the machine is running.
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

QString loadAverage() {
    QFile f(QStringLiteral("/proc/loadavg"));
    if (!f.open(QIODevice::ReadOnly)) return QStringLiteral("unknown");
    return QString::fromLatin1(f.readAll()).section(QLatin1Char(' '), 0, 2);
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5))];
}

// Watches the GUI thread: a 1 ms timer notes the longest gap between its ticks.
class StallMeter {
  public:
    StallMeter() {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const double now = double(m_clock.nsecsElapsed()) * 1e-6;
            m_longest = std::max(m_longest, now - m_last);
            m_last = now;
        });
    }
    void start() {
        m_longest = 0;
        m_clock.start();
        m_last = 0;
        m_timer.start();
    }
    double stop() {
        m_timer.stop();
        return m_longest;
    }

  private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    double m_last = 0;
    double m_longest = 0;
};

// Delivers the pending paint request now: only the views the step changed repaint, as on screen.
void paintNow(QWidget& window) {
    QCoreApplication::sendPostedEvents(&window, QEvent::UpdateRequest);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::UpdateRequest);
}

struct Row {
    QString name;
    std::vector<double> build, buildStall, stepMedian, stepP95, stepMax, frameMedian, paintMedian,
        sequentialMedian, sequentialMax, playStall, frameCpu, paintCpu;
    int steps = 0;
};

void runOnce(MainWindow& window, const QString& name, const VizSettings& settings, int jumps,
             Row& row, std::mt19937& rng) {
    Controller& c = *window.controller();
    StallMeter meter;
    // Start from the toy so that every repeat builds the scene from scratch.
    c.apply(toySettings());
    c.waitUntilIdle();
    QElapsedTimer timer;
    meter.start();
    timer.start();
    if (!c.apply(settings)) {
        std::fprintf(stderr, "%s refused: %s\n", qPrintable(name), qPrintable(c.lastRefusal()));
        return;
    }
    c.waitUntilIdle(600000);
    row.build.push_back(double(timer.nsecsElapsed()) * 1e-6);
    row.buildStall.push_back(meter.stop());
    row.steps = c.stepCount();

    std::vector<double> times, frames, paints;
    std::uniform_int_distribution<int> pick(0, c.stepCount() - 1);
    for (int i = 0; i < jumps; ++i) {
        const int target = pick(rng);
        timer.restart();
        c.setStep(target);
        c.waitUntilIdle();
        const double frameMs = double(timer.nsecsElapsed()) * 1e-6;
        paintNow(window); // the paint of the new frame, synchronously
        const double totalMs = double(timer.nsecsElapsed()) * 1e-6;
        times.push_back(totalMs);
        frames.push_back(frameMs);
        paints.push_back(totalMs - frameMs);
    }
    row.frameMedian.push_back(median(frames));
    row.paintMedian.push_back(median(paints));

    // The same work measured as CPU time of one thread: computing a frame, and repainting.
    std::vector<double> frameCpu, paintCpu;
    for (int i = 0; i < std::min(jumps, 20); ++i) {
        const int target = pick(rng);
        const double t0 = threadCpuMs();
        const auto frame = makeFrame(c.scene(), target);
        frameCpu.push_back(threadCpuMs() - t0);
        const double t1 = threadCpuMs();
        c.setStep(target);
        c.waitUntilIdle();
        paintNow(window);
        paintCpu.push_back(threadCpuMs() - t1);
    }
    row.frameCpu.push_back(median(frameCpu));
    row.paintCpu.push_back(median(paintCpu));

    // Stepping forward one step at a time (arrow key, playback), from a random place.
    c.setStep(std::max(0, pick(rng) - jumps));
    c.waitUntilIdle();
    std::vector<double> sequential;
    for (int i = 0; i < jumps && c.step() + 1 < c.stepCount(); ++i) {
        QApplication::processEvents(); // what the event loop does between two key presses
        timer.restart();
        c.stepForward();
        c.waitUntilIdle();
        paintNow(window);
        sequential.push_back(double(timer.nsecsElapsed()) * 1e-6);
    }
    row.sequentialMedian.push_back(median(sequential));
    row.sequentialMax.push_back(
        sequential.empty() ? 0 : *std::max_element(sequential.begin(), sequential.end()));
    row.stepMedian.push_back(median(times));
    row.stepP95.push_back(percentile(times, 0.95));
    row.stepMax.push_back(*std::max_element(times.begin(), times.end()));

    // Two seconds of playback at 30 steps a second, with the animation running.
    c.setStep(0);
    c.waitUntilIdle();
    c.setSpeed(30);
    meter.start();
    c.play();
    QElapsedTimer play;
    play.start();
    while (play.elapsed() < 2000)
        QApplication::processEvents(QEventLoop::AllEvents, 5);
    c.pause();
    row.playStall.push_back(meter.stop());
}

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen")
                                                                    : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("FlashViz"));
    QApplication::setApplicationName(QStringLiteral("flashviz-ui-bench"));
    int repeats = 3, jumps = 60, n = 4096;
    QString only; // --only TEXT: just the configurations whose name contains TEXT (to profile one)
    const QStringList args = QApplication::arguments();
    for (int i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--only")) only = args[i + 1];
        if (args[i] == QLatin1String("--repeats")) repeats = std::max(1, args[i + 1].toInt());
        if (args[i] == QLatin1String("--jumps")) jumps = std::max(1, args[i + 1].toInt());
        if (args[i] == QLatin1String("--n")) n = std::max(8, args[i + 1].toInt());
    }
    StartOptions options;
    options.restore = false;
    options.save = false;
    MainWindow window(options);
    window.resize(1600, 1000);
    window.show();
    window.waitUntilIdle();

    struct Config {
        QString name;
        VizSettings settings;
    };
    std::vector<Config> configs;
    configs.push_back({QStringLiteral("toy (n 8, d 4, 4x4)"), toySettings()});
    VizSettings big = toySettings();
    big.spec.queries = big.spec.keys = n;
    big.spec.headDim = 64;
    big.options.blockRows = big.options.blockCols = 64;
    configs.push_back({QStringLiteral("flash n %1 d 64 64x64").arg(n), big});
    VizSettings bigBug = big;
    bigBug.options.rescale = false;
    configs.push_back({QStringLiteral("flash n %1, rescale bug").arg(n), bigBug});
    VizSettings kv = big;
    kv.options.loopOrder = LoopOrder::KeyValueOuter;
    configs.push_back({QStringLiteral("flash n %1 K/V outer").arg(n), kv});
    VizSettings small = big;
    small.options.blockRows = small.options.blockCols = 16;
    configs.push_back({QStringLiteral("flash n %1 16x16 tiles").arg(n), small});
    VizSettings standard = big;
    standard.algorithm = Algorithm::Standard;
    configs.push_back({QStringLiteral("standard n %1 d 64").arg(n), standard});
    VizSettings backward = big;
    backward.algorithm = Algorithm::Backward;
    configs.push_back({QStringLiteral("backward n %1 d 64 64x64").arg(n), backward});
    VizSettings backwardBug = backward;
    backwardBug.options.backward.subtractRowDot = false;
    configs.push_back({QStringLiteral("backward n %1, no-row-dot bug").arg(n), backwardBug});

    const QString loadBefore = loadAverage();
    std::mt19937 rng(7);
    std::vector<Row> rows;
    for (const Config& config : configs) {
        if (!only.isEmpty() && !config.name.contains(only)) continue;
        Row row;
        row.name = config.name;
        for (int r = 0; r < repeats; ++r)
            runOnce(window, config.name, config.settings, jumps, row, rng);
        rows.push_back(row);
    }
    std::printf(
        "flashviz-ui-bench: medians over %d repeats, %d random step jumps each (times in ms)\n",
        repeats, jumps);
    std::printf("%-28s %7s %8s %7s | %8s %8s %8s | %8s %8s | %7s %7s | %7s\n", "", "", "build",
                "build", "jump", "jump", "jump", "next", "next", "frame", "gui", "play");
    std::printf("%-28s %7s %8s %7s | %8s %8s %8s | %8s %8s | %7s %7s | %7s\n", "configuration",
                "steps", "time", "stall", "median", "p95", "max", "median", "max", "cpu", "cpu",
                "stall");
    for (const Row& r : rows)
        std::printf(
            "%-28s %7d %8.1f %7.1f | %8.2f %8.2f %8.2f | %8.2f %8.2f | %7.2f %7.2f | %7.1f\n",
            qPrintable(r.name), r.steps, median(r.build), median(r.buildStall),
            median(r.stepMedian), median(r.stepP95), median(r.stepMax), median(r.sequentialMedian),
            median(r.sequentialMax), median(r.frameCpu), median(r.paintCpu), median(r.playStall));
    std::printf(
        "jump: wall time from setStep(random step) to the repainted window; next: the same "
        "for one step "
        "forward (arrow key, playback);\nframe cpu: the calling thread's CPU time to "
        "compute a frame (with a bug on, the correct run's state goes to a second core "
        "when one is free); gui cpu: the GUI thread's CPU time for the whole step (any frame "
        "computed there, events, the repaint);\nstalls: the "
        "longest gap of a 1 ms GUI-thread timer while a scene builds / while playing at 30 "
        "steps/s\n");
    std::printf("machine: %u hardware threads; load average before %s, after %s\n",
                std::thread::hardware_concurrency(), qPrintable(loadBefore),
                qPrintable(loadAverage()));
    std::printf("targets: step switch <= 16 ms; GUI thread never blocked > 50 ms\n");
    return 0;
}
