// The controller: what the window shows, step by step, computed by the engine.
#include "session/controller.h"
#include "session/settings.h"
#include "settings_support.h"

#include "core/errors.h"
#include "core/steps.h"
#include "tests/core/test_support.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

#include <set>

using namespace flashviz;
using namespace flashviz::gui;
using flashviz::gui::test::largeSettings;
using flashviz::test::sameState;
using flashviz::test::sameValues;

namespace {

// A problem of n × n at d 64 in 64 × 64 tiles: large enough that its frames (and, from n 1024,
// its build) leave the GUI thread.
VizSettings withPattern(InputPattern pattern) {
    VizSettings s = toySettings();
    s.spec.pattern = pattern;
    return s;
}

} // namespace

class TestController : public QObject {
    Q_OBJECT
  private slots:
    void opensNothingUntilApplied();
    void toyScene();
    void frameIsTheEngineState();
    void stepBackRestoresExactly_data();
    void stepBackRestoresExactly();
    void playAdvances();
    void playStopsAtTheEnd();
    void chaptersJump();
    void bugFailsAndRecovers();
    void bugHidesWhenTheMaximumComesFirst();
    void bugFrameHoldsBothRuns_data();
    void bugFrameHoldsBothRuns();
    void noRunningMaxOverflows();
    void refusesInvalidSettings_data();
    void refusesInvalidSettings();
    void largeSceneBuildsOnAWorker();
    void cancelKeepsThePreviousScene();
    void progressMovesWithinTheLongStages();
    void jumpToTheFirstWrongStep();
    void bugKeyBreaksTheBackward();
    void backwardJumpNoticesSayWhy();
    void newerBuildReplacesTheOlder();
    void framesOnAWorkerShowTheLatestStep();
    void presetSteps();
    void stepExpressionsDoNotOverflow_data();
    void stepExpressionsDoNotOverflow();
};

void TestController::opensNothingUntilApplied() {
    Controller c;
    QVERIFY(!c.scene());
    QCOMPARE(c.stepCount(), 0);
}

void TestController::toyScene() {
    Controller c;
    QVERIFY(c.apply(toySettings()));
    QVERIFY(c.waitUntilIdle());
    const auto scene = c.scene();
    QVERIFY(scene);
    QCOMPARE(scene->settings.spec.queries, 8);
    QCOMPARE(scene->settings.spec.headDim, 4);
    QCOMPARE(scene->settings.options.blockRows, 4);
    // Two query blocks of 3 + 6 * 2 steps each.
    QCOMPARE(c.stepCount(), 30);
    QCOMPARE(c.step(), 0);
    QVERIFY(scene->check.passed());
    QVERIFY(scene->check.maxAbsDiff < 1e-12);
    QCOMPARE(scene->backendName, QStringLiteral("CPU"));
    QCOMPARE(scene->chapters.size(), std::size_t(2));
    QCOMPARE(scene->blockDoneStep, (std::vector<int>{14, 29}));
}

void TestController::frameIsTheEngineState() {
    Controller c;
    c.apply(toySettings());
    const StepEngine engine(makeProblem(toySettings().spec), Algorithm::Flash,
                            toySettings().options);
    for (int step : {0, 5, 11, 13, 29}) {
        c.setStep(step);
        QVERIFY(c.waitUntilIdle());
        QVERIFY(sameState(c.frame()->state, engine.state(step)));
    }
}

void TestController::stepBackRestoresExactly_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<int>("step");
    QTest::newRow("toy, update-sum") << "toy" << 11;
    QTest::newRow("toy, normalise") << "toy" << 13;
    QTest::newRow("paper order") << "paper-order" << 9;
    QTest::newRow("causal") << "causal" << 12;
    QTest::newRow("bug") << "bug-bites" << 12;
    QTest::newRow("standard") << "standard" << 4;
}

void TestController::stepBackRestoresExactly() {
    QFETCH(QString, preset);
    QFETCH(int, step);
    Controller c;
    QVERIFY(c.applyPreset(preset));
    QVERIFY(c.waitUntilIdle());
    c.setStep(step);
    QVERIFY(c.waitUntilIdle());
    const auto before = c.frame();
    c.stepForward();
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(c.step(), step + 1);
    QVERIFY(!sameState(c.frame()->state, before->state));
    c.stepBackward();
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(c.step(), step);
    QVERIFY(sameState(c.frame()->state, before->state));
    QCOMPARE(c.frame()->correct.has_value(), before->correct.has_value());
    if (before->correct) QVERIFY(sameState(*c.frame()->correct, *before->correct));
}

void TestController::playAdvances() {
    Controller c;
    c.apply(toySettings());
    c.setSpeed(60);
    QSignalSpy steps(&c, &Controller::stepChanged);
    c.play();
    QVERIFY(c.isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(c.step() >= 3, 3000);
    c.pause();
    QVERIFY(!c.isPlaying());
    const int stopped = c.step();
    QTest::qWait(100);
    QCOMPARE(c.step(), stopped);
    QVERIFY(steps.count() >= 3);
}

void TestController::playStopsAtTheEnd() {
    Controller c;
    c.apply(toySettings());
    c.setStep(27);
    c.setSpeed(120);
    c.play();
    QTRY_VERIFY_WITH_TIMEOUT(!c.isPlaying(), 3000);
    QCOMPARE(c.step(), 29);
}

void TestController::chaptersJump() {
    Controller c;
    c.apply(toySettings());
    c.setStep(3);
    c.nextChapter();
    QCOMPARE(c.step(), 15); // query block 1 starts after 15 steps
    c.previousChapter();
    QCOMPARE(c.step(), 0);
}

void TestController::bugFailsAndRecovers() {
    Controller c;
    QVERIFY(c.apply(withPattern(InputPattern::LateMaximum)));
    QVERIFY(c.scene()->check.passed());
    c.setStep(12);
    c.setBug(true);
    QVERIFY(c.waitUntilIdle());
    const auto scene = c.scene();
    QVERIFY(!scene->settings.options.rescale);
    QVERIFY(!scene->check.passed());
    QVERIFY(scene->check.maxAbsDiff > 1e-2);
    QCOMPARE(int(scene->check.wrongRows.size()), 8);
    QVERIFY(scene->firstRescaleStep.has_value());
    QCOMPARE(scene->engine->info(*scene->firstRescaleStep).kind, StepKind::UpdateSum);
    // The step is kept, and the correct run of the same step is there to compare with.
    QCOMPARE(c.step(), 12);
    QVERIFY(c.frame()->correct.has_value());
    QVERIFY(!sameValues(c.frame()->state.accNew, c.frame()->correct->accNew));
    c.jumpToFirstWrongStep();
    QCOMPARE(c.step(), *scene->firstRescaleStep);
    c.toggleBug();
    QVERIFY(c.waitUntilIdle());
    QVERIFY(c.scene()->settings.options.rescale);
    QVERIFY(c.scene()->check.passed());
    QVERIFY(!c.frame()->correct.has_value());
}

void TestController::bugHidesWhenTheMaximumComesFirst() {
    Controller c;
    QVERIFY(c.applyPreset(QStringLiteral("bug-hides")));
    const auto scene = c.scene();
    QVERIFY(!scene->settings.options.rescale);
    QVERIFY(scene->check.passed());
    QVERIFY(!scene->firstRescaleStep.has_value());
}

void TestController::bugFrameHoldsBothRuns_data() {
    QTest::addColumn<bool>("onWorker");
    QTest::newRow("frames on the GUI thread") << false;
    QTest::newRow("frames on a worker") << true;
}

// With the bug on and tiles large enough, a frame's two runs are computed on two threads: the
// values shown must still be exactly the buggy run's and, beside them, the correct run's.
void TestController::bugFrameHoldsBothRuns() {
    QFETCH(bool, onWorker);
    VizSettings s = largeSettings(512, withPattern(InputPattern::LateMaximum));
    s.options.rescale = false;
    Controller c;
    if (onWorker) c.setInlineLimits(4e6, 0); // every frame is computed off the GUI thread
    QVERIFY(c.apply(s));
    QVERIFY(c.waitUntilIdle());
    const auto scene = c.scene();
    QVERIFY(!scene->check.passed());
    const Problem problem = makeProblem(s.spec);
    const StepEngine buggy(problem, Algorithm::Flash, s.options);
    FlashOptions fixed = s.options;
    fixed.rescale = true;
    const StepEngine correct(problem, Algorithm::Flash, fixed);
    QCOMPARE(c.stepCount(), buggy.stepCount());
    int parallel = 0, differing = 0;
    for (int step = 0; step < c.stepCount(); step += 7) {
        c.setStep(step);
        QVERIFY(c.waitUntilIdle());
        const auto frame = c.frame();
        QCOMPARE(frame->step, step);
        QVERIFY(frame->correct.has_value());
        QVERIFY2(sameState(frame->state, buggy.state(step)), qPrintable(QString::number(step)));
        QVERIFY2(sameState(*frame->correct, correct.state(step)),
                 qPrintable(QString::number(step)));
        if (frameCost(*scene, step) > kParallelFrameFlops) ++parallel;
        if (!sameState(frame->state, *frame->correct)) ++differing;
    }
    QVERIFY2(parallel > 20, qPrintable(QString::number(parallel)));   // two threads were used
    QVERIFY2(differing > 20, qPrintable(QString::number(differing))); // the runs differ there
}

void TestController::noRunningMaxOverflows() {
    Controller c;
    QVERIFY(c.applyPreset(QStringLiteral("overflow")));
    QVERIFY(c.waitUntilIdle());
    QVERIFY(!c.scene()->check.passed());
    QVERIFY(c.scene()->check.nonFiniteCount > 0);
    QCOMPARE(c.step(), c.stepCount() - 1);
}

void TestController::refusesInvalidSettings_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("block");
    QTest::addColumn<QString>("hardware");
    QTest::addColumn<QString>("words");
    QTest::newRow("n = 0") << 0 << 4 << 4 << "a100-40gb"
                           << "at least 1";
    QTest::newRow("d = 0") << 8 << 0 << 4 << "a100-40gb"
                           << "at least 1";
    QTest::newRow("Br = 0") << 8 << 4 << 0 << "a100-40gb"
                            << "at least 1";
    QTest::newRow("too long for the window") << 20000 << 4 << 64 << "a100-40gb"
                                             << "16384";
    QTest::newRow("too many tiles") << 16384 << 4 << 2 << "a100-40gb"
                                    << "tiles";
    QTest::newRow("unknown GPU") << 8 << 4 << 4 << "z80"
                                 << "z80";
}

void TestController::refusesInvalidSettings() {
    QFETCH(int, queries);
    QFETCH(int, headDim);
    QFETCH(int, block);
    QFETCH(QString, hardware);
    QFETCH(QString, words);
    Controller c;
    QVERIFY(c.apply(toySettings()));
    c.setStep(7);
    const auto scene = c.scene();
    VizSettings bad = toySettings();
    bad.spec.queries = bad.spec.keys = queries;
    bad.spec.headDim = headDim;
    bad.options.blockRows = bad.options.blockCols = block;
    bad.hardwareId = hardware.toStdString();
    QSignalSpy refused(&c, &Controller::refused);
    QVERIFY(!c.apply(bad));
    QCOMPARE(refused.count(), 1);
    QVERIFY2(c.lastRefusal().contains(words), qPrintable(c.lastRefusal()));
    QCOMPARE(c.scene(), scene);
    QVERIFY(c.settings() == toySettings());
    QVERIFY(c.requestedSettings() == toySettings());
    QCOMPARE(c.step(), 7);
}

void TestController::largeSceneBuildsOnAWorker() {
    Controller c;
    c.apply(toySettings());
    VizSettings big = largeSettings(1024);
    QSignalSpy busy(&c, &Controller::busyChanged);
    QVERIFY(c.apply(big));
    QVERIFY(c.isBusy()); // returned at once; the GUI thread is free meanwhile
    QVERIFY(c.scene()->settings == toySettings());
    QVERIFY(c.waitUntilIdle());
    QVERIFY(c.scene()->settings == big);
    QVERIFY(c.scene()->check.passed());
    QCOMPARE(busy.count(), 2);
    QVERIFY(c.scene()->trace); // n <= 1024: the backend's per-tile values are kept
    c.goToEnd();
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(c.frame()->step, c.stepCount() - 1);
}

void TestController::cancelKeepsThePreviousScene() {
    Controller c;
    c.apply(toySettings());
    const auto toy = c.scene();
    VizSettings big = largeSettings(4096);
    QVERIFY(c.apply(big));
    QVERIFY(c.isBusy());
    c.cancelBuild();
    QVERIFY(!c.isBusy());
    QCOMPARE(c.scene(), toy);
    QVERIFY(c.requestedSettings() == toySettings());
    QTest::qWait(50);
    QCOMPARE(c.scene(), toy);
}

// A build asked for while another runs replaces it: only the newer scene arrives, with the
// progress of its build, and the window is told once that the work is over.
void TestController::newerBuildReplacesTheOlder() {
    Controller c;
    c.apply(toySettings());
    VizSettings first = largeSettings(1024);
    VizSettings second = first;
    second.spec.seed = first.spec.seed + 1;
    QSignalSpy scenes(&c, &Controller::sceneChanged);
    QSignalSpy busy(&c, &Controller::busyChanged);
    QSignalSpy progress(&c, &Controller::progress);
    QVERIFY(c.apply(first));
    QVERIFY(c.apply(second));
    QVERIFY(c.isBusy());
    QVERIFY(c.waitUntilIdle());
    QVERIFY(c.scene()->settings == second);
    QCOMPARE(scenes.count(), 1);
    QCOMPARE(busy.count(), 2); // busy once, idle once
    QVERIFY(progress.count() > 1);
    QCOMPARE(progress.last().at(0).toInt(), 100);
    QTest::qWait(50); // the replaced build's end, if it came now, must change nothing
    QVERIFY(c.scene()->settings == second);
    QCOMPARE(scenes.count(), 1);
}

// Steps asked for faster than frames are computed: the frame shown at the end is the last step's.
void TestController::framesOnAWorkerShowTheLatestStep() {
    VizSettings s = largeSettings(512);
    Controller c;
    c.setInlineLimits(4e6, 0); // every frame is computed off the GUI thread
    QVERIFY(c.apply(s));
    QVERIFY(c.waitUntilIdle());
    for (const int step : {40, 7, 90, 300, 123})
        c.setStep(step);
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(c.frame()->step, 123);
    QVERIFY(c.frame()->scene == c.scene());
    // A frame computed for a step left before it arrived is kept: going back to it is instant.
    c.setStep(40);
    c.setStep(7);
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(c.frame()->step, 7);
    c.setStep(40);
    QCOMPARE(c.frame()->step, 40); // from the cache, without a job
}

void TestController::presetSteps() {
    Controller c;
    QVERIFY(c.applyPreset(QStringLiteral("rescale")));
    const auto scene = c.scene();
    QVERIFY(scene->firstRescaleStep);
    QCOMPARE(c.step(), *scene->firstRescaleStep + 1);
    // At this step some row's maximum rose, so its correction factor is below 1 and acc changed.
    QCOMPARE(c.frame()->state.info.kind, StepKind::UpdateOutput);
    QVERIFY((c.frame()->state.correction.array() < 1.0).any());
    QVERIFY(!c.applyPreset(QStringLiteral("no-such-preset")));
    QVERIFY(c.lastRefusal().contains(QStringLiteral("bug-bites")));
}

// "first-rescale+K" is added exactly (it wrapped past INT_MAX to a negative step, clamped to 0),
// then clamped to the run; text that is no step expression resolves to nothing.
void TestController::stepExpressionsDoNotOverflow_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("expected"); // "end", "first+K", a number, or "none"
    QTest::newRow("first-rescale+1") << "first-rescale+1"
                                     << "first+1";
    QTest::newRow("first-rescale-1") << "first-rescale-1"
                                     << "first-1";
    QTest::newRow("largest offset") << "first-rescale+2147483646"
                                    << "end";
    QTest::newRow("offset past int") << "first-rescale+2147483647"
                                     << "none";
    QTest::newRow("offset far past int") << "first-rescale+99999999999"
                                         << "none";
    QTest::newRow("largest offset back") << "first-rescale-2147483646"
                                         << "0";
    QTest::newRow("end-2") << "end-2"
                           << "end-2";
    QTest::newRow("end+2147483646") << "end+2147483646"
                                    << "end";
    QTest::newRow("number past the end") << "2147483646"
                                         << "end";
    QTest::newRow("number past int") << "2147483648"
                                     << "none";
    QTest::newRow("garbage after the name") << "first-rescaleX"
                                            << "none";
    QTest::newRow("trailing garbage") << "12abc"
                                      << "none";
}

void TestController::stepExpressionsDoNotOverflow() {
    QFETCH(QString, spec);
    QFETCH(QString, expected);
    Controller c;
    QVERIFY(c.applyPreset(QStringLiteral("rescale")));
    const auto scene = c.scene();
    QVERIFY(scene->firstRescaleStep);
    const int first = *scene->firstRescaleStep, end = scene->stepCount() - 1;
    QVERIFY(first >= 2 && first + 1 < end);
    std::optional<int> want;
    if (expected == QLatin1String("end"))
        want = end;
    else if (expected == QLatin1String("end-2"))
        want = end - 2;
    else if (expected == QLatin1String("first+1"))
        want = first + 1;
    else if (expected == QLatin1String("first-1"))
        want = first - 1;
    else if (expected != QLatin1String("none"))
        want = expected.toInt();
    QCOMPARE(resolveStep(*scene, spec), want);
    // Applying the settings with that step lands on it (or keeps the default, step 0).
    QVERIFY(c.apply(scene->settings, spec));
    QVERIFY(c.waitUntilIdle(20000));
    if (want) QCOMPARE(c.step(), *want);
}

// The core's run reports only when a stage begins, and ordinary attention and the run are nearly
// all of a large build: the bar sat at one figure through each (the window showed "1%" through an
// 8 s build). Within them it now moves, and only forward.
void TestController::progressMovesWithinTheLongStages() {
    Controller c;
    QVERIFY(c.apply(toySettings()));
    struct Report {
        int percent;
        QString stage;
        qint64 ms;
    };
    std::vector<Report> reports;
    QElapsedTimer clock;
    clock.start();
    connect(&c, &Controller::progress, &c, [&](int percent, const QString& stage) {
        reports.push_back({percent, stage, clock.elapsed()});
    });
    QVERIFY(c.apply(largeSettings(6144)));
    QVERIFY(c.isBusy());
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(c.scene()->settings.spec.queries, 6144);
    for (std::size_t i = 1; i < reports.size(); ++i)
        QVERIFY2(
            reports[i].percent >= reports[i - 1].percent,
            qPrintable(
                QStringLiteral("%1 after %2").arg(reports[i].percent).arg(reports[i - 1].percent)));
    // The pacer reports every 100 ms, until the stage's expected time (from the rate measured
    // before) has passed: a stage of 200 ms shows a figure besides its first, one of 400 ms two.
    // (No more is asked: a stage slower than expected holds at 95 % of its share.)
    int paced = 0;
    for (const QString& prefix :
         {QStringLiteral("Ordinary attention"), QStringLiteral("FlashAttention")}) {
        std::set<int> figures;
        qint64 first = -1, last = -1;
        for (const Report& r : reports)
            if (r.stage.startsWith(prefix)) {
                figures.insert(r.percent);
                if (first < 0) first = r.ms;
            } else if (first >= 0 && last < 0) {
                last = r.ms;
            }
        QVERIFY2(first >= 0 && last >= first, qPrintable(prefix));
        const int ticks = int(std::min<qint64>((last - first) / 200, 2));
        QVERIFY2(int(figures.size()) >= 1 + ticks,
                 qPrintable(QStringLiteral("%1: %2 figures in %3 ms")
                                .arg(prefix)
                                .arg(figures.size())
                                .arg(last - first)));
        paced += ticks > 0 ? 1 : 0;
    }
    QCOMPARE(reports.back().percent, 100);
    if (paced == 0) QSKIP("both long stages took under 200 ms here: nothing to pace");
}

// G goes to the first wrong step only where there is one: with the rescale in place (or where it
// never bites) the step stays and a notice says why (it jumped to the first rescale, silently).
// B on a backward scene leaves D out of dS (not the forward's rescale); G goes to where the
// gradients first differ from the correct run's.
void TestController::bugKeyBreaksTheBackward() {
    Controller c;
    QVERIFY(c.applyPreset(QStringLiteral("backward")));
    QVERIFY(c.waitUntilIdle());
    QVERIFY(c.scene()->backward->check.passed());
    QVERIFY(!c.firstWrongStep());
    c.toggleBug();
    QVERIFY(c.waitUntilIdle());
    QVERIFY(!c.settings().options.backward.subtractRowDot);
    QVERIFY(c.settings().options.rescale);
    const auto scene = c.scene();
    QVERIFY(!scene->backward->check.passed());
    QVERIFY(scene->backward->firstBugStep);
    QCOMPARE(c.firstWrongStep(), scene->backward->firstBugStep);
    c.jumpToFirstWrongStep();
    QCOMPARE(c.step(), *scene->backward->firstBugStep);
    QCOMPARE(scene->engine->info(c.step()).kind, StepKind::ComputeScoreGradient);
    // The frame there holds the correct run's state beside the buggy one.
    QVERIFY(c.waitUntilIdle());
    QVERIFY(c.frame()->correct);
    QVERIFY(!sameValues(c.frame()->state.dS, c.frame()->correct->dS));
    c.toggleBug();
    QVERIFY(c.waitUntilIdle());
    QVERIFY(c.settings().options.backward.subtractRowDot);
    QVERIFY(c.scene()->backward->check.passed());
    // The same preset as the shipped bug one, which opens at that step.
    QVERIFY(c.applyPreset(QStringLiteral("backward-bug")));
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(c.step(), *scene->backward->firstBugStep);
    // On the forward B is still the rescale.
    QVERIFY(c.apply(toySettings()));
    c.toggleBug();
    QVERIFY(c.waitUntilIdle());
    QVERIFY(!c.settings().options.rescale);
    QVERIFY(c.settings().options.backward.subtractRowDot);
}

void TestController::backwardJumpNoticesSayWhy() {
    Controller c;
    QSignalSpy notices(&c, &Controller::notice);
    QVERIFY(c.applyPreset(QStringLiteral("backward")));
    c.jumpToFirstWrongStep();
    QCOMPARE(notices.size(), 1);
    const QString right = notices.at(0).at(0).toString();
    QVERIFY2(right.contains(QStringLiteral("No step is wrong")) &&
                 right.contains(QStringLiteral("D")) && !right.contains(QStringLiteral("rescale")),
             qPrintable(right));
    // The forgotten mask on a problem without one changes nothing, and G says why.
    VizSettings s = c.settings();
    s.options.backward.maskRecompute = false;
    QVERIFY(c.apply(s));
    QVERIFY(c.waitUntilIdle());
    QVERIFY(c.scene()->backward->check.passed());
    QVERIFY(!c.firstWrongStep());
    c.jumpToFirstWrongStep();
    QCOMPARE(notices.size(), 2);
    QVERIFY2(notices.at(1).at(0).toString().contains(QStringLiteral("causal mask")),
             qPrintable(notices.at(1).at(0).toString()));
}

void TestController::jumpToTheFirstWrongStep() {
    Controller c;
    QVERIFY(c.apply(withPattern(InputPattern::LateMaximum)));
    QVERIFY(c.scene()->firstRescaleStep);
    QVERIFY(!c.firstWrongStep());
    QSignalSpy notices(&c, &Controller::notice);
    c.setStep(2);
    c.jumpToFirstWrongStep();
    QCOMPARE(c.step(), 2);
    QCOMPARE(notices.size(), 1);
    QVERIFY(notices.at(0).at(0).toString().contains(QStringLiteral("rescale")));
    c.setBug(true);
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(c.firstWrongStep(), c.scene()->firstRescaleStep);
    c.jumpToFirstWrongStep();
    QCOMPARE(c.step(), *c.scene()->firstRescaleStep);
    QCOMPARE(notices.size(), 1);
    QVERIFY(c.applyPreset(QStringLiteral("bug-hides")));
    c.jumpToFirstWrongStep();
    QCOMPARE(notices.size(), 2);
    QVERIFY(notices.at(1).at(0).toString().contains(QStringLiteral("first key block")));
    // No running maximum: the check fails through overflow, at no one step; G must not say
    // that no step is wrong beside a FAIL banner.
    QVERIFY(c.applyPreset(QStringLiteral("overflow")));
    QVERIFY(c.waitUntilIdle());
    QVERIFY(!c.scene()->check.passed());
    c.jumpToFirstWrongStep();
    QCOMPARE(notices.size(), 3);
    const QString overflow = notices.at(2).at(0).toString();
    QVERIFY2(!overflow.contains(QStringLiteral("No step is wrong")) &&
                 overflow.contains(QStringLiteral("overflow")),
             qPrintable(overflow));
}

QTEST_MAIN(TestController)
#include "tst_controller.moc"
