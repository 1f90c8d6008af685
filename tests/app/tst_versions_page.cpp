// The FlashAttention-2 page (issue #20): its model without a window (the step's tile, the counts
// the engine's passes made, the warp split and the grid from FlashViz's own kernel table, the
// sentences agreeing with the numbers beside them), flashviz-cli versions printing the same
// numbers, the page in the window (its tab, its three settings in the view options, sessions
// keeping them and older sessions opening without them) and lecture chapter 10's figures.
#include "window_support.h"

#include "lecture/lecture.h"
#include "pages/analysis/analysis_charts.h"
#include "pages/analysis/analysis_data.h"
#include "present/versions_model.h"
#include "session/scene.h"
#include "session/session_file.h"
#include "session/settings.h"
#include "style/format.h"

#include "core/units.h"
#include "views/frame_feed.h"
#include "views/versions_view.h"
#include "widgets/versions_controls.h"

#include "core/steps.h"
#include "kernels/kernel_configs.h"
#include "kernels/kernel_shapes.h"

#include <QBarSet>
#include <QBarSeries>
#include <QChart>
#include <QJsonDocument>
#include <QProcess>
#include <QJsonObject>
#include <QSpinBox>
#include <QTabWidget>
#include <QtTest>

#include <numeric>

using namespace flashviz;
using namespace flashviz::gui;

Q_DECLARE_METATYPE(flashviz::gui::VizSettings)

namespace {

VizSettings sized(int n, int d, int br, int bc) {
    VizSettings s = toySettings();
    s.spec.queries = n;
    s.spec.keys = n;
    s.spec.headDim = d;
    s.spec.precision = Precision::Float;
    s.options.blockRows = br;
    s.options.blockCols = bc;
    return s;
}

// The first step whose state holds a tile (a query block and a key block).
int firstTileStep(const Scene& scene) {
    for (int s = 0; s < scene.stepCount(); ++s) {
        const StepInfo info = scene.engine->info(s);
        if (info.queryBlock >= 0 && info.keyBlock >= 0) return s;
    }
    return -1;
}

// The number after `label` on the line of flashviz-cli's output that starts with `row`.
std::vector<std::uint64_t> numbersOnRow(const std::string& out, const std::string& row) {
    std::vector<std::uint64_t> numbers;
    const auto at = out.find("  " + row);
    if (at == std::string::npos) return numbers;
    std::istringstream line(out.substr(at + 2 + row.size(), out.find('\n', at) - at - 2 - row.size()));
    std::uint64_t v = 0;
    while (line >> v) numbers.push_back(v);
    return numbers;
}

struct CliRun {
    int code = -1;
    std::string out;
};

// The real flashviz-cli (its QCoreApplication cannot share this test's QApplication).
CliRun runCli(const QStringList& arguments) {
    QProcess cli;
    cli.start(QStringLiteral(FLASHVIZ_CLI_EXECUTABLE), arguments);
    if (!cli.waitForFinished(60000)) return {};
    return {cli.exitCode(), cli.readAllStandardOutput().toStdString()};
}

} // namespace

class TestVersionsPage : public QObject {
    Q_OBJECT

  private slots:
    void modelFollowsTheStepsTile() {
        const auto scene = buildScene(toySettings(), nullptr);
        QVERIFY(scene->versions);
        const int step = firstTileStep(*scene);
        QVERIFY(step > 0);
        const auto frame = makeFrame(scene, step);
        const VersionsModel m = versionsModel(*frame, ViewOptions{});
        QVERIFY2(m.error.isEmpty(), qPrintable(m.error));
        QVERIFY(m.stepTile);
        QCOMPARE(m.report.tile.rows, frame->state.info.rows);
        QCOMPARE(m.report.tile.cols, frame->state.info.cols);
        const int d = scene->settings.spec.headDim;
        QCOMPARE(m.report.tileOne, tileNonMatmul(FlashVersion::One, m.report.tile, d));
        QCOMPARE(m.report.tileTwo, tileNonMatmul(FlashVersion::Two, m.report.tile, d));
        // Step 0 loads Q: no tile, so the first one is drawn and the subtitle says so.
        const VersionsModel first = versionsModel(*makeFrame(scene, 0), ViewOptions{});
        QVERIFY(!first.stepTile);
        QCOMPARE(first.report.tile.rows, (Range{0, 4}));
        QCOMPARE(first.report.tile.cols, (Range{0, 4}));
        // A later tile of a causal run: its own counts, masked rows and all.
        VizSettings causal = toySettings();
        causal.spec.causal = true;
        const auto causalScene = buildScene(causal, nullptr);
        for (int s = 0; s < causalScene->stepCount(); ++s) {
            const auto f = makeFrame(causalScene, s);
            const VersionsModel c = versionsModel(*f, ViewOptions{});
            if (!c.stepTile) continue;
            QCOMPARE(c.report.tileTwo, tileNonMatmul(FlashVersion::Two, c.report.tile, d));
        }
    }

    // The page's totals are the closed forms; the scene's are what the two passes counted as they
    // ran. They must be one number.
    void totalsEqualWhatThePassesCounted_data() {
        QTest::addColumn<VizSettings>("settings");
        QTest::newRow("toy") << toySettings();
        VizSettings causal = sized(300, 16, 64, 48);
        causal.spec.causal = true;
        QTest::newRow("ragged causal 300 d16") << causal;
        VizSettings paper = sized(96, 8, 32, 16);
        paper.options.loopOrder = LoopOrder::KeyValueOuter;
        QTest::newRow("paper order 96 d8") << paper;
    }
    void totalsEqualWhatThePassesCounted() {
        QFETCH(VizSettings, settings);
        const auto scene = buildScene(settings, nullptr);
        const VersionsModel m = versionsModel(*makeFrame(scene, 0), ViewOptions{});
        QVERIFY(scene->versions);
        QCOMPARE(m.report.one, scene->versions->one.nonMatmul);
        QCOMPARE(m.report.two, scene->versions->two.nonMatmul);
        QCOMPARE(m.report.matmulFlops, scene->versions->two.matmulFlops);
        QCOMPARE(m.report.matmulFlops, scene->totals.flops);
        QVERIFY(m.checkRan);
        QVERIFY(m.checkPassed);
        QVERIFY(m.checkLine.startsWith(QStringLiteral("Both exact")));
    }

    // The grid's kernel is FlashViz's own: the tensor-core default for d = 64 on the A100, the
    // mirror kernel with the user's tiles for the toy's d = 4.
    void gridUsesTheKernelsOwnConfiguration() {
        const auto scene = buildScene(sized(1024, 64, 64, 64), nullptr);
        const HardwareProfile& a100 = findHardwareProfile("a100-40gb");
        const KernelShape expected = *kernels::defaultTensorCoreShape(64, a100);
        QCOMPARE(QString::fromStdString(scene->gridKernel.name), QString::fromStdString(expected.name));
        const kernels::TensorCoreConfig& c = kernels::kTensorCoreConfigs[0];
        QCOMPARE(scene->gridKernel.threads, c.threads());
        QCOMPARE(scene->gridKernel.blockRows, c.blockRows());
        QCOMPARE(scene->gridKernel.rowsPerWarp, c.rowsPerWarp());
        QCOMPARE(scene->gridKernel.sharedBytes, std::uint64_t(c.sharedBytes()));
        ViewOptions view;
        view.gridBatch = 2;
        view.gridHeads = 3;
        const VersionsModel m = versionsModel(*makeFrame(scene, 0), view);
        QCOMPARE(m.report.gridOne.blocks, 6u);
        QCOMPARE(m.report.gridTwo.blocks, 6u * 1024 / std::uint64_t(c.blockRows()));
        // The first wave: no SM holds more than fits, and every resident block is on one.
        for (const auto* wave : {&m.firstWaveOne, &m.firstWaveTwo}) {
            QCOMPARE(int(wave->size()), 108);
            for (int b : *wave) QVERIFY(b <= m.report.gridTwo.occupancy.blocksPerSm);
        }
        QCOMPARE(std::uint64_t(std::accumulate(m.firstWaveTwo.begin(), m.firstWaveTwo.end(), 0)),
                 std::min(m.report.gridTwo.blocks, m.report.gridTwo.residentBlocks));

        const auto toy = buildScene(toySettings(), nullptr);
        QCOMPARE(toy->gridKernel.threads, kernels::kMirrorThreads);
        QCOMPARE(toy->gridKernel.blockRows, 4);
    }

    // Every number a sentence quotes is the one beside it.
    void sentencesAgreeWithTheNumbers() {
        const auto scene = buildScene(sized(2048, 64, 128, 64), nullptr);
        const VersionsModel m = versionsModel(*makeFrame(scene, firstTileStep(*scene)), ViewOptions{});
        const VersionsReport& r = m.report;
        QVERIFY(m.arithmeticFinding.contains(formatRatio(r.nonMatmulRatio()) + QStringLiteral("×")));
        QVERIFY(m.arithmeticFinding.contains(formatShare(r.timeOne.nonMatmulPerMatmul())));
        QVERIFY(m.arithmeticFinding.contains(formatShare(r.timeTwo.nonMatmulPerMatmul())));
        QVERIFY(m.warpFinding.contains(formatBytes(double(r.splitOne.exchangeBytes()))));
        QVERIFY(m.warpFinding.contains(QStringLiteral("32 whole rows"))); // 128 rows, 4 warps
        QVERIFY(m.gridFinding.contains(formatCount(r.gridOne.blocks) + QStringLiteral(" blocks")));
        QVERIFY(m.gridFinding.contains(formatCount(r.gridTwo.blocks) + QStringLiteral(" blocks")));
        QVERIFY(m.gridFinding.contains(formatRatio(r.gridSpeedup()) + QStringLiteral("×")));
        QVERIFY(m.gridFinding.contains(QStringLiteral("if every query block costs the same")));
        QCOMPARE(r.warps, 4); // tc_d64_br128_bc64_w4_qreg's own warps, each 32 rows
        QCOMPARE(r.gridOne.timeUnits(), 16u); // 2048 / 128 query blocks, one wave of 16 blocks
        QVERIFY(m.kernelLine.contains(QString::fromStdString(scene->gridKernel.name)));
    }

    void refusalsAreMessagesNotCrashes() {
        const auto scene = buildScene(toySettings(), nullptr);
        ViewOptions tooMany;
        tooMany.warps = kMaxWarps + 1; // only a corrupted option can ask for it
        const VersionsModel m = versionsModel(*makeFrame(scene, 0), tooMany);
        QVERIFY(m.error.contains(QStringLiteral("at most 32 warps")));
        // The view shows the message and paints without a model of numbers.
        VersionsView view;
        view.resize(900, 600);
        view.setInputs(makeFrame(scene, 0), nullptr, tooMany);
        QVERIFY(view.model() && !view.model()->error.isEmpty());
        view.grab();
    }

    void backwardScenesSayWhereTheCheckRuns() {
        VizSettings s = toySettings();
        s.algorithm = Algorithm::Backward;
        const auto scene = buildScene(s, nullptr);
        QVERIFY(!scene->versions);
        const VersionsModel m = versionsModel(*makeFrame(scene, 0), ViewOptions{});
        QVERIFY(!m.checkRan);
        QVERIFY(m.checkLine.contains(QStringLiteral("FlashAttention")));
        QVERIFY(m.report.one.total() > 0); // the counts still follow the sizes
    }

    // flashviz-cli versions prints what the passes counted: the page's numbers.
    void cliPrintsThePagesNumbers() {
        const CliRun r = runCli({"versions", "--n", "64", "--d", "16", "--br", "16", "--bc", "32",
                                 "--heads", "5", "--warps", "2"});
        QCOMPARE(r.code, 0);
        VizSettings s = sized(64, 16, 16, 32);
        s.spec.precision = Precision::Double;
        const auto scene = buildScene(s, nullptr);
        ViewOptions view;
        view.gridHeads = 5;
        view.warps = 2;
        const VersionsModel m = versionsModel(*makeFrame(scene, 0), view);
        const auto one = numbersOnRow(r.out, "FlashAttention-1 ");
        const auto two = numbersOnRow(r.out, "FlashAttention-2 ");
        QCOMPARE(one, (std::vector<std::uint64_t>{m.report.one.exp, m.report.one.max, m.report.one.add,
                                                  m.report.one.multiply, m.report.one.divide,
                                                  m.report.one.total()}));
        QCOMPARE(two, (std::vector<std::uint64_t>{m.report.two.exp, m.report.two.max, m.report.two.add,
                                                  m.report.two.multiply, m.report.two.divide,
                                                  m.report.two.total()}));
        // The ratios as the page rounds them.
        QVERIFY(r.out.find("-1 does " + formatTimes(m.report.nonMatmulRatio()) + "x") != std::string::npos);
        QVERIFY(r.out.find("FlashAttention-1: 5 thread blocks") != std::string::npos);
        QVERIFY(r.out.find("across 2 warps") != std::string::npos);
        QVERIFY(r.out.find(std::to_string(m.report.gridTwo.blocks) + " thread blocks") != std::string::npos);
        QVERIFY(r.out.find("PASS") != std::string::npos);
        // Options of other commands, and values out of range, are refused by name.
        QCOMPARE(runCli({"versions", "--warps", "33"}).code, 2);
        QCOMPARE(runCli({"versions", "--gpu", "nope"}).code, 2);
        QCOMPARE(runCli({"versions", "--backward"}).code, 2);
        QCOMPARE(runCli({"run", "--heads", "4"}).code, 2);
    }

    void pageInTheWindow() {
        StartOptions options = gui::test::freshOptions();
        options.versionsPage = true;
        auto window = gui::test::freshWindow({1366, 768}, options);
        auto* tabs = window->findChild<QTabWidget*>(QStringLiteral("tabs"));
        QVERIFY(tabs);
        QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("FlashAttention-2"));
        VersionsView* view = window->versionsView();
        QTRY_VERIFY(view->model() != nullptr);
        QCOMPARE(view->model()->request.warps, kKernelWarps);
        // The page's warps reach the view options, and through them the model.
        auto* warps = window->findChild<QSpinBox*>(QStringLiteral("versionsWarps"));
        auto* heads = window->findChild<QSpinBox*>(QStringLiteral("versionsHeads"));
        QVERIFY(warps && heads);
        warps->setValue(2);
        heads->setValue(40);
        QCOMPARE(window->frameFeed()->viewOptions().warps, 2);
        QCOMPARE(window->frameFeed()->viewOptions().gridHeads, 40);
        QTRY_COMPARE(view->model()->request.warps, 2);
        QCOMPARE(view->model()->report.gridOne.blocks, 40u);
        // ...and a view-options change elsewhere (a session) shows in the boxes.
        ViewOptions other = window->frameFeed()->viewOptions();
        other.warps = 8;
        window->frameFeed()->setViewOptions(other);
        QCOMPARE(warps->value(), 8);
        view->grab();
    }

    void sessionsKeepThePagesOptions() {
        Session s;
        s.settings = toySettings();
        s.tab = SessionTab::Versions;
        s.view.showBackendValues = true;
        s.view.warps = 3;
        s.view.gridBatch = 7;
        s.view.gridHeads = 11;
        SessionLimits limits;
        limits.analysisCharts = 9;
        limits.chapterSteps = {30};
        const SessionRead back = parseSession(sessionToJson(s), QStringLiteral("a.flashviz"), limits);
        QVERIFY2(back.session, qPrintable(back.error));
        QCOMPARE(back.session->view, s.view);
        QCOMPARE(back.session->tab, SessionTab::Versions);
        // A session saved before the page existed has none of the three: the defaults.
        QJsonObject json = QJsonDocument::fromJson(sessionToJson(s)).object();
        json.insert(QStringLiteral("view"), QJsonObject{{QStringLiteral("showBackendValues"), true}});
        const SessionRead older = parseSession(QJsonDocument(json).toJson(), QStringLiteral("b.flashviz"), limits);
        QVERIFY2(older.session, qPrintable(older.error));
        QCOMPARE(older.session->view.warps, kKernelWarps);
        QCOMPARE(older.session->view.gridHeads, kDefaultGridHeads);
        // Out of range is refused with the field's name.
        json.insert(QStringLiteral("view"), QJsonObject{{QStringLiteral("showBackendValues"), true},
                                                        {QStringLiteral("warps"), 33}});
        const SessionRead bad = parseSession(QJsonDocument(json).toJson(), QStringLiteral("c.flashviz"), limits);
        QVERIFY(!bad.session);
        QVERIFY(bad.error.contains(QStringLiteral("view.warps")));
    }

    // Analysis chart 11: the report at each n of its plan, drawn as bars of those numbers.
    void analysisChartDrawsTheReports() {
        AnalysisInputs inputs{toySettings().spec, toySettings().options, findHardwareProfile("h200")};
        inputs.spec.headDim = 64;
        inputs.options.blockRows = inputs.options.blockCols = 128;
        AnalysisPlan plan;
        plan.tiledNs = {128};
        plan.flopsNs = {512};
        plan.exactnessHalfWidths = {4};
        plan.versionsNs = {1024, 4096};
        const AnalysisOutcome outcome = computeAnalysis(inputs, {}, plan);
        QVERIFY(outcome.results);
        const AnalysisResults& r = *outcome.results;
        QCOMPARE(r.versions.size(), std::size_t(2));
        VersionsRequest request;
        request.queries = request.keys = 4096;
        request.headDim = 64;
        request.blockRows = request.blockCols = 128;
        request.kernel = kernels::kernelShapeFor(64, 128, 128, inputs.hardware);
        const VersionsReport expected = versionsReport(request, inputs.hardware);
        QCOMPARE(r.versions[1].one, expected.one);
        QCOMPARE(r.versions[1].gridTwo.blocks, expected.gridTwo.blocks);
        ChartPage page = buildAnalysisChart(r, VersionsChart);
        QVERIFY(page.chart && page.second);
        const auto set = [](QChart* chart, const QString& name) -> QBarSet* {
            for (QAbstractSeries* s : chart->series())
                if (auto* bars = qobject_cast<QBarSeries*>(s))
                    for (QBarSet* b : bars->barSets())
                        if (b->objectName() == name) return b;
            return nullptr;
        };
        QBarSet* fa1 = set(page.chart, QStringLiteral("fa1-nonmatmul"));
        QBarSet* grid2 = set(page.second, QStringLiteral("fa2-grid-time"));
        QVERIFY(fa1 && grid2);
        QCOMPARE(fa1->at(1), double(expected.one.total()) / 1e6);
        QCOMPARE(grid2->at(1), double(expected.gridTwo.timeUnits()));
        QVERIFY(page.caption.contains(formatRatio(expected.nonMatmulRatio()) + QStringLiteral("×")));
        delete page.chart;
        delete page.second;
        // A kernel that fits no SM (the mirror kernel's 1024 x 1024 tiles): the counts stay, the
        // grid's panel goes and the caption says why.
        inputs.spec.headDim = 8;
        inputs.options.blockRows = inputs.options.blockCols = 1024;
        const AnalysisOutcome huge = computeAnalysis(inputs, {}, plan);
        QVERIFY(huge.results);
        QCOMPARE(huge.results->versions.size(), std::size_t(2));
        QVERIFY(!huge.results->versions[0].gridError.empty());
        ChartPage refused = buildAnalysisChart(*huge.results, VersionsChart);
        QVERIFY(refused.chart && !refused.second);
        QVERIFY(refused.caption.contains(QString::fromStdString(huge.results->versions[0].gridError)));
        delete refused.chart;
        // Br x Bc and the mask as the page's: the chart's bar is the page's number.
        inputs.spec.headDim = 64;
        inputs.spec.causal = true;
        inputs.options.blockRows = 128;
        inputs.options.blockCols = 64;
        const AnalysisOutcome pageLike = computeAnalysis(inputs, {}, plan);
        VersionsRequest asPage;
        asPage.queries = asPage.keys = 4096;
        asPage.headDim = 64;
        asPage.causal = true;
        asPage.blockRows = 128;
        asPage.blockCols = 64;
        asPage.kernel = kernels::kernelShapeFor(64, 128, 64, inputs.hardware);
        QCOMPARE(pageLike.results->versions[1].one, versionsReport(asPage, inputs.hardware).one);
    }

    void lectureChapterQuotesThePagesNumbers() {
        const auto& chapters = lectureChapters();
        const auto it = std::find_if(chapters.begin(), chapters.end(),
                                     [](const LectureChapter& c) { return c.id == QStringLiteral("flash2"); });
        QVERIFY(it != chapters.end());
        QVERIFY(it->views.contains(QStringLiteral("versions")));
        const auto scene = buildScene(it->settings, nullptr);
        const QString text = fillNarrative(it->narrative, *scene, ViewOptions{});
        QVERIFY2(!text.contains(QLatin1Char('{')), qPrintable(text));
        const VersionsReport r = versionsReport(versionsRequest(*scene, ViewOptions{}), scene->hardware);
        QVERIFY(text.contains(formatOperations(r.one.total())));
        QVERIFY(text.contains(formatOperations(r.two.total())));
        QVERIFY(text.contains(formatRatio(r.gridSpeedup()) + QStringLiteral("×")));
        QVERIFY(text.contains(QStringLiteral("Both pass")));
        // The notes too.
        const QString notes = fillNarrative(it->notes, *scene, ViewOptions{});
        QVERIFY2(!notes.contains(QLatin1Char('{')), qPrintable(notes));
    }
};

QTEST_MAIN(TestVersionsPage)
#include "tst_versions_page.moc"
