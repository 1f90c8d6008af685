// Lecture mode: the chapters and their narrative, clicker keys moving through steps and chapters,
// B toggling the bug, fixed seeds replaying identically, Esc leaving with the user's settings back.
#include "core/analysis.h"
#include "core/backward.h"
#include "core/hardware.h"
#include "lecture/lecture.h"
#include "session/controller.h"
#include "session/resources.h"
#include "session/step_why.h"
#include "shell/main_window.h"
#include "style/format.h"
#include "views/frame_view.h"
#include "views/tile_detail.h"
#include "window_support.h"

#include <QCheckBox>
#include <QLabel>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest>

using namespace flashviz;
using namespace flashviz::gui;
using namespace flashviz::gui::test;

class TestLecture : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void chaptersFollowTheExplainer();
    void everyChapterBuildsAndFillsItsNarrative();
    void clickerKeysMoveThroughStepsAndChapters();
    void arrowKeysAndBug();
    void seedsAreFixedPerChapter();
    void escapeLeavesAndRestores();
    void typeFollowsTheWindowSize_data();
    void typeFollowsTheWindowSize();
    void viewOptionsReachTheLecture();
    void bugNarrativeFollowsTheCheck();
    void lectureUsesTheWindowsGpu();
    void narrativesQuoteTheWhyList();
    void memoryBoundChapterFollowsTheGpu();
    void whyFollowsTheSwitches();
    void backwardChapterQuotesTheEngine();
    void backwardBugNarrativeFollowsTheCheck();
    void backwardWhyFollowsTheAlgorithmAndSwitches();
};

void TestLecture::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
}

void TestLecture::chaptersFollowTheExplainer() {
    const auto& chapters = lectureChapters();
    QCOMPARE(int(chapters.size()), 10);
    // The explainer's five steps, the bug and the summary; then the backward pass after them, and
    // what FlashAttention-2 changed.
    const QStringList ids = {
        QStringLiteral("memory"),  QStringLiteral("standard"), QStringLiteral("online"),
        QStringLiteral("tiles"),   QStringLiteral("traffic"),  QStringLiteral("bug"),
        QStringLiteral("summary"), QStringLiteral("backward"), QStringLiteral("backward-bug"),
        QStringLiteral("flash2")};
    for (int i = 0; i < 10; ++i)
        QCOMPARE(chapters[std::size_t(i)].id, ids[i]);
    QCOMPARE(chapters[1].settings.algorithm, Algorithm::Standard);
    QVERIFY(!chapters[5].settings.options.rescale);
    QCOMPARE(chapters[7].settings.algorithm, Algorithm::Backward);
    QVERIFY(!chapters[7].settings.options.backward.anyBug());
    QCOMPARE(chapters[8].settings.algorithm, Algorithm::Backward);
    QVERIFY(!chapters[8].settings.options.backward.subtractRowDot);
}

void TestLecture::everyChapterBuildsAndFillsItsNarrative() {
    Controller c;
    for (const LectureChapter& chapter : lectureChapters()) {
        QVERIFY2(c.apply(chapter.settings),
                 qPrintable(chapter.id + QStringLiteral(": ") + c.lastRefusal()));
        QVERIFY(c.waitUntilIdle());
        const QString text = fillNarrative(chapter.narrative, *c.scene());
        QVERIFY2(!text.contains(QLatin1Char('{')),
                 qPrintable(chapter.id + QStringLiteral(": ") + text));
        QVERIFY(!resolveBeats(chapter, *c.scene()).empty());
        // Two views beside the narrative; the FlashAttention-2 page, three panels of its own,
        // takes the whole area.
        QCOMPARE(chapter.views.size(), chapter.views.contains(QStringLiteral("versions")) ? 1 : 2);
    }
}

void TestLecture::clickerKeysMoveThroughStepsAndChapters() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    w.enterLecture(0);
    QVERIFY(w.isLectureMode());
    LectureView* lecture = w.lecture();
    Controller* c = w.controller();
    QCOMPARE(lecture->chapter(), 0);
    QCOMPARE(lecture->beats(), (std::vector<int>{0, 1, 2}));
    QCOMPARE(c->step(), 0);
    QTest::keyClick(&w, Qt::Key_PageDown);
    QCOMPARE(c->step(), 1);
    QTest::keyClick(&w, Qt::Key_PageDown);
    QCOMPARE(c->step(), 2);
    QTest::keyClick(&w, Qt::Key_PageDown); // past the last beat: the next chapter
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(lecture->chapter(), 1);
    QCOMPARE(c->settings().algorithm, Algorithm::Standard);
    QCOMPARE(c->step(), 0);
    QTest::keyClick(&w, Qt::Key_PageUp); // before the first beat: the previous chapter's last
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(lecture->chapter(), 0);
    QCOMPARE(c->step(), 2);
    QVERIFY(lecture->narrativeText().contains(QStringLiteral("SRAM")));
}

void TestLecture::arrowKeysAndBug() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    w.enterLecture(3);
    LectureView* lecture = w.lecture();
    QCOMPARE(lecture->chapter(), 3);
    QTest::keyClick(&w, Qt::Key_Down);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(lecture->chapter(), 4);
    QCOMPARE(w.controller()->settings().spec.queries, 1024);
    QTest::keyClick(&w, Qt::Key_Down);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(lecture->chapter(), 5);
    QVERIFY(!w.controller()->settings().options.rescale);
    QVERIFY(!w.controller()->scene()->check.passed());
    QCOMPARE(w.controller()->step(), *w.controller()->scene()->firstRescaleStep);
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.controller()->settings().options.rescale);
    QVERIFY(w.controller()->scene()->check.passed());
    QCOMPARE(lecture->chapter(), 5);
    QTest::keyClick(&w, Qt::Key_Up);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(lecture->chapter(), 4);
    QTest::keyClick(&w, Qt::Key_Right);
    QTest::keyClick(&w, Qt::Key_Left);
    QVERIFY(w.isLectureMode());
}

void TestLecture::seedsAreFixedPerChapter() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    w.enterLecture(3);
    QVERIFY(w.waitUntilIdle());
    const Matrix first = w.controller()->scene()->output;
    w.controller()->apply(toySettings()); // the presenter wanders off
    VizSettings other = toySettings();
    other.spec.seed = 99;
    w.controller()->apply(other);
    w.lecture()->start(3);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.controller()->scene()->output == first);
    QCOMPARE(w.controller()->settings().spec.seed, lectureChapters()[3].settings.spec.seed);
}

void TestLecture::escapeLeavesAndRestores() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    VizSettings mine = toySettings();
    mine.spec.queries = mine.spec.keys = 12;
    QVERIFY(w.controller()->apply(mine));
    w.controller()->setStep(7);
    QTest::keyClick(&w, Qt::Key_F5);
    QVERIFY(w.isLectureMode());
    QTest::keyClick(&w, Qt::Key_Down);
    QVERIFY(w.waitUntilIdle());
    QTest::keyClick(&w, Qt::Key_Escape);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!w.isLectureMode());
    QVERIFY(w.controller()->settings() == mine);
    QCOMPARE(w.controller()->step(), 7);
    // Down is a lecture key only: outside, it does not move chapters.
    QTest::keyClick(&w, Qt::Key_Down);
    QCOMPARE(w.controller()->step(), 7);
}

// A 1280 x 800 projector shows the 1920 x 1080 design scaled down: every chapter's narrative
// fits its column at every size (its type shrinks where a chapter is long: at 1920 x 1080 and
// 1366 x 768 the first chapter's last lines were cut off), and the views' type is scaled by the
// same factor.
void TestLecture::typeFollowsTheWindowSize_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1920x1080") << QSize(1920, 1080);
    QTest::newRow("1600x1000") << QSize(1600, 1000);
    QTest::newRow("1366x768") << QSize(1366, 768);
    QTest::newRow("1280x800") << QSize(1280, 800);
}

void TestLecture::typeFollowsTheWindowSize() {
    QFETCH(QSize, size);
    const auto window = freshWindow(size);
    MainWindow& w = *window;
    w.enterLecture(0);
    LectureView* lecture = w.lecture();
    const auto* narrative = lecture->findChild<QLabel*>(QStringLiteral("lectureNarrative"));
    QVERIFY(narrative);
    for (int chapter = 0; chapter < lecture->chapterCount(); ++chapter) {
        lecture->start(chapter);
        QVERIFY(w.waitUntilIdle());
        QCoreApplication::processEvents();
        QVERIFY2(narrative->heightForWidth(narrative->width()) <= narrative->height(),
                 qPrintable(QStringLiteral("chapter %1: the narrative needs %2 px of %3")
                                .arg(chapter + 1)
                                .arg(narrative->heightForWidth(narrative->width()))
                                .arg(narrative->height())));
        // Never below 70 % of the design's size: a projector must still read it.
        QVERIFY(narrative->font().pointSizeF() >= 0.7 * 12.5 * lecture->frameViews().front()->theme().scale - 0.51);
    }
    const qreal expected = 1.55 * std::min(lecture->width() / 1920.0, lecture->height() / 1080.0);
    for (FrameView* view : lecture->frameViews())
        QVERIFY(std::abs(view->theme().scale - expected) < 1e-9);
}

// The window's one set of view options reaches the lecture's views as it reaches the step
// view's: with the backend's values on, the lecture's own tile detail shows them too, whether
// they were switched on before lecture mode or on the command line.
void TestLecture::viewOptionsReachTheLecture() {
    // Chapter 3, the online softmax, shows the tile detail (and the code).
    const auto shownTile = [](const MainWindow& w) {
        auto* tile = w.lecture()->findChild<TileDetailView*>();
        return tile && tile->isVisible() ? tile : nullptr;
    };
    const auto window = freshWindow();
    control<QCheckBox>(*window, "backendValues")->setChecked(true);
    window->enterLecture(2);
    QVERIFY(window->waitUntilIdle());
    QVERIFY(shownTile(*window));
    QVERIFY(shownTile(*window)->viewOptions().showBackendValues);
    window->leaveLecture();
    control<QCheckBox>(*window, "backendValues")->setChecked(false);
    window->enterLecture(2);
    QVERIFY(window->waitUntilIdle());
    QVERIFY(shownTile(*window));
    QVERIFY(!shownTile(*window)->viewOptions().showBackendValues);

    StartOptions start = freshOptions();
    start.lecture = true;
    start.chapter = 2;
    start.backendValues = true;
    const auto fromCommandLine = freshWindow({1366, 768}, start);
    QVERIFY(shownTile(*fromCommandLine));
    QVERIFY(shownTile(*fromCommandLine)->viewOptions().showBackendValues);

    // --bug with --lecture: a chapter brings its own settings, and --bug is B pressed on its first
    // slide (it was dropped, and a scripted bug demo showed a PASS).
    start.backendValues = false;
    start.bug = true;
    const auto withBug = freshWindow({1366, 768}, start);
    QVERIFY(withBug->waitUntilIdle());
    QVERIFY(withBug->isLectureMode());
    QVERIFY(!withBug->controller()->settings().options.rescale);
    QVERIFY(!withBug->controller()->scene()->check.passed());
}

// Chapter 6, B pressed: the narrative said "The check fails by 9e-16 in 0 rows; the first wrong
// value appears at step 11" beside a PASS banner. It says what the check says now.
void TestLecture::bugNarrativeFollowsTheCheck() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    w.enterLecture(5);
    QVERIFY(w.waitUntilIdle());
    const auto broken = w.controller()->scene();
    QVERIFY(!broken->check.passed());
    const QString failing = w.lecture()->narrativeText();
    QVERIFY2(failing.contains(QStringLiteral("The check fails")) &&
                 failing.contains(QStringLiteral("%1 of %2 rows")
                                      .arg(broken->check.wrongRows.size())
                                      .arg(broken->settings.spec.queries)) &&
                 failing.contains(QStringLiteral("step %1").arg(*broken->firstRescaleStep)) &&
                 failing.contains(QStringLiteral("put the factor back")),
             qPrintable(failing));
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.controller()->scene()->check.passed());
    const QString passing = w.lecture()->narrativeText();
    QVERIFY2(passing.contains(QStringLiteral("The check passes")) &&
                 !passing.contains(QStringLiteral("fails")) &&
                 !passing.contains(QStringLiteral("first wrong")) &&
                 passing.contains(QStringLiteral("take the factor out again")),
             qPrintable(passing));
}

// H200 chosen in the window, the lecture showed the A100 (its chapters' default).
void TestLecture::lectureUsesTheWindowsGpu() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    VizSettings mine = toySettings();
    QVERIFY(mine.hardwareId != "h200");
    mine.hardwareId = "h200";
    QVERIFY(w.controller()->apply(mine));
    QVERIFY(w.waitUntilIdle());
    const QString gpu = QString::fromStdString(w.controller()->scene()->hardware.name);
    w.enterLecture(0);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.controller()->settings().hardwareId, std::string("h200"));
    QVERIFY2(w.lecture()->narrativeText().contains(gpu), qPrintable(w.lecture()->narrativeText()));
    QTest::keyClick(&w, Qt::Key_Down);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.controller()->settings().hardwareId, std::string("h200"));
    QTest::keyClick(&w, Qt::Key_Escape);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.controller()->settings() == mine);
}

// The "why" sentences are read once, from the file the chapters are in: a narrative quotes one by
// its id, an id the list lacks skips the chapter naming it, and a bad entry of the list is skipped
// with a message naming the field.
void TestLecture::narrativesQuoteTheWhyList() {
    const QByteArray file = R"({
      "chapters": [
        {"id": "a", "title": "A", "narrative": "Before. {why:rescale} After.", "beats": ["0"],
         "views": ["tile"]},
        {"id": "b", "title": "B", "narrative": "{why:nothing}", "beats": ["0"], "views": ["tile"]}
      ],
      "why": [
        {"id": "rescale", "steps": ["update-sum"], "text": "Because the maximum rose."},
        {"id": "bad", "steps": ["update-summ"], "text": "Never read."}
      ]
    })";
    const LectureParse chapters = parseLectureChapters(file, QStringLiteral("test.json"));
    QCOMPARE(int(chapters.chapters.size()), 1);
    QCOMPARE(chapters.chapters[0].narrative,
             QStringLiteral("Before. Because the maximum rose. After."));
    QCOMPARE(chapters.errors.size(), 1);
    QVERIFY2(chapters.errors[0].contains(QStringLiteral("{why:nothing}")) &&
                 chapters.errors[0].contains(QStringLiteral("rescale")),
             qPrintable(chapters.errors[0]));
    const StepWhyParse whys = parseStepWhys(file, QStringLiteral("test.json"));
    QCOMPARE(int(whys.entries.size()), 1);
    QCOMPARE(whys.entries[0].steps, std::vector<StepKind>{StepKind::UpdateSum});
    QCOMPARE(whys.errors.size(), 1);
    QVERIFY2(whys.errors[0].contains(QStringLiteral("'bad'")) &&
                 whys.errors[0].contains(QStringLiteral("update-summ")),
             qPrintable(whys.errors[0]));
    // The shipped file: every entry reads, and the step view and the lecture share the words.
    const StepWhyParse shipped = parseResource(QStringLiteral("lecture.json"), parseStepWhys);
    QVERIFY2(shipped.errors.isEmpty(), qPrintable(shipped.errors.join(QLatin1Char('\n'))));
    QCOMPARE(shipped.entries.size(), stepWhys().size());
    const auto rescale =
        std::find_if(shipped.entries.begin(), shipped.entries.end(),
                     [](const StepWhy& why) { return why.id == QLatin1String("rescale"); });
    QVERIFY(rescale != shipped.entries.end());
    QCOMPARE(whyOfStep(StepKind::UpdateSum, FlashOptions{}), rescale->text);
    FlashOptions bug;
    bug.rescale = false;
    QCOMPARE(whyOfStep(StepKind::UpdateOutput, bug), rescale->withoutRescale);
}

// Chapter 5 said attention is memory-bound whatever the GPU's figures; it now quotes the engine's
// verdict for the chapter's problem on the window's GPU, and the verdict changes with the GPU.
void TestLecture::memoryBoundChapterFollowsTheGpu() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    QStringList verdicts;
    for (const char* gpu : {"a100-40gb", "h200"}) {
        VizSettings mine = toySettings();
        mine.hardwareId = gpu;
        QVERIFY(w.controller()->apply(mine));
        QVERIFY(w.waitUntilIdle());
        w.enterLecture(4);
        QVERIFY(w.waitUntilIdle());
        const Scene& scene = *w.controller()->scene();
        const ProblemSpec& spec = scene.settings.spec;
        const QString verdict = QString::fromStdString(memoryBoundVerdict(
            findHardwareProfile(gpu), spec.queries, spec.headDim, scene.settings.options));
        QVERIFY(!verdict.isEmpty());
        QVERIFY2(w.lecture()->narrativeText().simplified().contains(unbroken(verdict).simplified()),
                 qPrintable(w.lecture()->narrativeText()));
        verdicts << verdict;
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(w.waitUntilIdle());
    }
    QVERIFY(verdicts[0] != verdicts[1]);
}

// The why line said "exp cannot overflow" under the caption "No running maximum: m stays 0, so
// exp(S) may overflow": each switch has its own sentence, as describe() has.
void TestLecture::whyFollowsTheSwitches() {
    FlashOptions noMax;
    noMax.runningMax = false;
    FlashOptions noRescale;
    noRescale.rescale = false;
    FlashOptions both = noMax;
    both.rescale = false;
    for (const StepKind kind : {StepKind::UpdateMax, StepKind::ComputeWeights, StepKind::UpdateSum,
                                StepKind::UpdateOutput}) {
        const QString correct = whyOfStep(kind, FlashOptions{});
        QVERIFY(!correct.isEmpty());
        for (const FlashOptions& withoutMax : {noMax, both}) {
            const QString text = whyOfStep(kind, withoutMax);
            QVERIFY2(text != correct && !text.contains(QStringLiteral("cannot overflow")) &&
                         !text.contains(QStringLiteral("comes out wrong")),
                     qPrintable(text));
        }
    }
    QVERIFY(whyOfStep(StepKind::UpdateSum, noRescale).contains(QStringLiteral("switched off")));
    QCOMPARE(whyOfStep(StepKind::UpdateMax, noRescale), whyOfStep(StepKind::UpdateMax, {}));
}

namespace {

const LectureChapter& chapterNamed(const QString& id) {
    const auto& chapters = lectureChapters();
    const auto it = std::find_if(chapters.begin(), chapters.end(),
                                 [&](const LectureChapter& c) { return c.id == id; });
    if (it == chapters.end()) qFatal("no chapter %s", qPrintable(id));
    return *it;
}

} // namespace

// The backward chapter's figures are the scene's check and the engine's counts, never typed in.
void TestLecture::backwardChapterQuotesTheEngine() {
    const LectureChapter& chapter = chapterNamed(QStringLiteral("backward"));
    for (const char* placeholder : {"{gradCheck}", "{recomputeFlops}", "{keptBytes}",
                                    "{keptBytesWithP}", "{dqTraffic}", "{backwardTraffic}"})
        QVERIFY2(chapter.narrative.contains(QLatin1String(placeholder)), placeholder);
    Controller c;
    QVERIFY2(c.apply(chapter.settings), qPrintable(c.lastRefusal()));
    QVERIFY(c.waitUntilIdle());
    const Scene& scene = *c.scene();
    QVERIFY(scene.backward);
    QVERIFY(scene.backward->check.passed());
    const QString text = fillNarrative(chapter.narrative, scene);
    const auto& spec = scene.settings.spec;
    FlashOptions withP = scene.settings.options;
    withP.backward.storeWeights = true;
    const Counters counted = flashBackwardCounts(spec.queries, spec.keys, spec.headDim, spec.causal,
                                                 scene.settings.options);
    const Counters stored =
        flashBackwardCounts(spec.queries, spec.keys, spec.headDim, spec.causal, withP);
    const QStringList figures{
        QString::fromStdString(scene.backward->check.summary()).simplified(),
        formatFlops(double(counted.flops - stored.flops)),
        formatBytes(double(scene.backward->storedElements * kBytesPerElement)),
        formatBytes(
            double(backwardStoredElements(spec.queries, spec.keys, spec.headDim, withP.backward) *
                   kBytesPerElement)),
        formatBytes(double(counted.hbmBytes())),
        formatBytes(double(scene.backward->storedWeightsTotals.hbmBytes())),
        formatBytes(double(queryGradientRoundTripBytes(spec.queries, spec.keys, spec.headDim,
                                                       spec.causal, scene.settings.options)))};
    for (const QString& figure : figures)
        QVERIFY2(text.contains(unbroken(figure)),
                 qPrintable(figure + QStringLiteral(" in ") + text));
    // The beats walk the pre-pass and the first key block: every step before key block 1.
    const std::vector<int> beats = resolveBeats(chapter, scene);
    QCOMPARE(beats.front(), 0);
    QCOMPARE(beats.back(), scene.engine->firstStepOfOuterBlock(1) - 1);
    QCOMPARE(int(beats.size()), scene.engine->firstStepOfOuterBlock(1));
}

void TestLecture::backwardBugNarrativeFollowsTheCheck() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    const int index = int(&chapterNamed(QStringLiteral("backward-bug")) - &lectureChapters()[0]);
    w.enterLecture(index);
    QVERIFY(w.waitUntilIdle());
    const auto broken = w.controller()->scene();
    QVERIFY(broken->backward);
    const GradientCheck& check = broken->backward->check;
    QVERIFY(!check.passed());
    const auto first = broken->backward->firstBugStep;
    QVERIFY(first);
    // The first beat is the first wrong step, where dS leaves D out.
    QCOMPARE(w.controller()->step(), *first);
    QCOMPARE(broken->engine->info(*first).kind, StepKind::ComputeScoreGradient);
    const QString failing = w.lecture()->narrativeText();
    QVERIFY2(failing.contains(QStringLiteral("The check fails: dQ by up to %1 in %2 of %3 rows")
                                  .arg(formatValue(check.dq.maxAbsDiff, 2))
                                  .arg(check.dq.wrongRows.size())
                                  .arg(broken->settings.spec.queries)) &&
                 failing.contains(QStringLiteral("step %1").arg(*first)) &&
                 failing.contains(QStringLiteral("put D back")) &&
                 !failing.contains(QStringLiteral("dV by")),
             qPrintable(failing));
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.controller()->settings().options.backward.subtractRowDot);
    QVERIFY(w.controller()->scene()->backward->check.passed());
    const QString passing = w.lecture()->narrativeText();
    QVERIFY2(passing.contains(QStringLiteral("The check passes: dQ, dK and dV")) &&
                 !passing.contains(QStringLiteral("fails")) &&
                 !passing.contains(QStringLiteral("first wrong")) &&
                 passing.contains(QStringLiteral("leave D out again")),
             qPrintable(passing));
}

// The backward's step kinds have their sentences, the shared load-key-value its backward one,
// and each bug switch the sentence of the step it breaks.
void TestLecture::backwardWhyFollowsTheAlgorithmAndSwitches() {
    const FlashOptions correct;
    for (int k = int(StepKind::ComputeRowDots); k <= int(StepKind::StoreKeyValueGradient); ++k)
        QVERIFY2(!whyOfStep(StepKind(k), correct, Algorithm::Backward).isEmpty(),
                 toString(StepKind(k)));
    const QString keyBlock = whyOfStep(StepKind::LoadKeyValue, correct, Algorithm::Backward);
    QVERIFY2(keyBlock.contains(QStringLiteral("dK_j")), qPrintable(keyBlock));
    QVERIFY(whyOfStep(StepKind::LoadKeyValue, correct, Algorithm::Flash) != keyBlock);
    const std::pair<const char*, StepKind> broken[] = {
        {"no-row-dot", StepKind::ComputeScoreGradient},
        {"no-lse", StepKind::RecomputeWeights},
        {"overwrite-dq", StepKind::UpdateQueryGradient},
        {"no-mask-recompute", StepKind::RecomputeScores}};
    for (const auto& [name, kind] : broken) {
        FlashOptions bug;
        for (const BackwardSwitch& flag : backwardSwitches())
            if (QLatin1String(flag.name) == QLatin1String(name))
                bug.backward.*flag.field = flag.onValue;
        QVERIFY(bug.backward.anyBug());
        const QString text = whyOfStep(kind, bug, Algorithm::Backward);
        QVERIFY2(text != whyOfStep(kind, correct, Algorithm::Backward), name);
    }
}

QTEST_MAIN(TestLecture)
#include "tst_lecture.moc"
