// The analysis views against the engine: every chart is compared, point by point, with what
// core/analysis.h returns for the same settings; settings changes recompute, refusals keep the
// previous charts and show the engine's message.
#include "chart_support.h"
#include "pages/analysis/analysis_charts.h"
#include "pages/analysis/analysis_data.h"
#include "pages/analysis/analysis_view.h"
#include "pages/page.h"
#include "style/format.h"

#include "core/analysis.h"
#include "core/backward.h"
#include "core/hardware.h"
#include "core/l2_traffic.h"
#include "core/units.h"
#include "kernels/gpu_benchmark.h"
#include "kernels/kernel_shapes.h"

#include <QAbstractAxis>
#include <QAbstractBarSeries>
#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QDir>
#include <QFontMetricsF>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPointer>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QXYSeries>

#include <cmath>
#include <memory>

using namespace flashviz;
using namespace flashviz::gui;
using namespace flashviz::gui::test;

namespace {

QAbstractSeries* findSeries(QChart* chart, const QString& name) {
    for (QAbstractSeries* s : chart->series())
        if (s->objectName() == name) return s;
    return nullptr;
}

QXYSeries* xy(QChart* chart, const QString& name) {
    return qobject_cast<QXYSeries*>(findSeries(chart, name));
}

QBarSet* barSet(QChart* chart, const QString& name) {
    for (QAbstractSeries* s : chart->series())
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(s))
            for (QBarSet* set : bars->barSets())
                if (set->objectName() == name) return set;
    return nullptr;
}

bool near(double a, double b, double rel = 1e-12) {
    return std::abs(a - b) <= rel * std::max({1e-300, std::abs(a), std::abs(b)});
}

#define COMPARE_NEAR(actual, expected)                                                             \
    do {                                                                                           \
        const double a_ = (actual), e_ = (expected);                                               \
        if (!near(a_, e_))                                                                         \
            QFAIL(qPrintable(QStringLiteral("%1 = %2, expected %3")                                \
                                 .arg(#actual)                                                     \
                                 .arg(a_, 0, 'g', 17)                                              \
                                 .arg(e_, 0, 'g', 17)));                                           \
    } while (false)

double mbOf(std::uint64_t bytes) {
    return static_cast<double>(bytes) / kBytesPerMB;
}
double gflopOf(std::uint64_t flops) {
    return static_cast<double>(flops) / kFlopsPerGFlop;
}

struct Settings {
    ProblemSpec spec;
    FlashOptions options;
    HardwareProfile hardware;
};

Settings lectureSettings() {
    Settings s;
    s.spec.queries = 64;
    s.spec.keys = 64;
    s.spec.headDim = 64;
    s.spec.seed = 2;
    s.options.blockRows = 64;
    s.options.blockCols = 8; // the explainer streams its softmax row in blocks of 8
    s.hardware = findHardwareProfile("a100-40gb");
    return s;
}

void apply(AnalysisView& view, const Settings& s) {
    view.setSettings(s.spec, s.options, s.hardware);
}

} // namespace

class TestAnalysis : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase();
    void everyChartHasATitle();
    void memoryBoundCaptionFollowsTheRidge();
    void trafficTitlesFollowTheData_data();
    void trafficTitlesFollowTheData();
    void rooflineChartShowsEngineNumbers();
    void otherTitlesFollowTheData();
    void memoryBoundChartShowsEngineNumbers();
    void onlineSoftmaxChartShowsEngineNumbers();
    void tiledChartShowsEngineNumbers();
    void blockSizeChartShowsBudgetAndSpills();
    void backwardChartShowsEngineNumbers();
    void exactnessChartShowsEngineNumbers();
    void flopsChartShowsEngineNumbers();
    void debugCopyChartShowsEngineNumbers();
    void overflowChartNamesInfAndNaN();
    void throughL2ChartDrawsTheModel();
    void throughL2ChartSetsMeasuredBesideModel();
    void changingSettingsRecomputes();
    void invalidSettingKeepsCharts();
    void staleResultsAreDiscarded();
    void cancelKeepsCharts();
    void rapidChangesWhileRunsFinish();
    void areaEdgesGoWithTheirChart();
    void fontsFollowTheWidget();
    void insideLegendsStackEveryEntry();
    void legendLabelsAreWholeOnALaptop();
    void barLabelsPrintWholeNumbers();
    void logScaleGlossWrapsOntoItsOwnLine();
    void insideLegendsLeaveTheDataVisible();
    void showChartPages();
    void cleanupTestCase();

  private:
    // The page's font at `scale` times the default (1.6: a projector's).
    void setFontScale(qreal scale) {
        QFont font;
        font.setPointSizeF(font.pointSizeF() * scale);
        m_view->setFont(font);
    }

    AnalysisView* m_view = nullptr;
    Settings m_settings;
};

void TestAnalysis::initTestCase() {
    m_view = new AnalysisView;
    m_view->resize(1280, 760);
    m_view->show();
    m_settings = lectureSettings();
    apply(*m_view, m_settings);
    QVERIFY(m_view->isBusy());
    QVERIFY(m_view->waitForIdle());
    QVERIFY2(m_view->errorText().isEmpty(), qPrintable(m_view->errorText()));
    QVERIFY(m_view->results() != nullptr);
}

void TestAnalysis::cleanupTestCase() {
    delete m_view;
}

void TestAnalysis::everyChartHasATitle() {
    QCOMPARE(m_view->chartTitles().size(), int(AnalysisChartCount));
    for (int i = 0; i < AnalysisChartCount; ++i) {
        QChart* chart = m_view->chart(i);
        QVERIFY(chart);
        for (int panel = 1; panel < m_view->panelCount(i); ++panel) {
            QChart* second = m_view->chart(i, panel);
            QVERIFY(second && !second->title().isEmpty() && !second->series().isEmpty());
        }
        QVERIFY2(!chart->title().isEmpty(), qPrintable(QString::number(i)));
        QVERIFY(!m_view->chartTitles()[i].isEmpty());
        QVERIFY2(!m_view->caption(i).isEmpty(), qPrintable(QString::number(i)));
        QVERIFY(chart->legend()->isVisible());
        QVERIFY(!chart->series().isEmpty());
        const auto axes = chart->axes();
        QVERIFY(axes.size() >= 2);
        for (QAbstractAxis* axis : axes)
            QVERIFY2(!axis->titleText().isEmpty(), qPrintable(chart->title()));
    }
    QVERIFY(m_view->chart(AnalysisChartCount) == nullptr);
}

// Issue #14: the caption said fp32 cores wait on memory while the plotted 0.063 B/FLOP sat below
// the A100's 0.080; it now says, per arithmetic, which kernels wait, as the rooflines find.
void TestAnalysis::memoryBoundCaptionFollowsTheRidge() {
    const QString caption = m_view->caption(MemoryBoundChart);
    const AnalysisPlan plan;
    const HardwareProfile& hw = m_settings.hardware;
    const FlashOptions& tiles = m_settings.options;
    const Roofline fp32 =
        roofline(hw, Arithmetic::Fp32CudaCores, plan.memoryBoundNs.back(), 64, tiles);
    const Roofline tensor =
        roofline(hw, Arithmetic::Fp16TensorCores, plan.memoryBoundNs.back(), 64, tiles);
    QVERIFY(!fp32.standard[0].memoryBound && fp32.standard[1].memoryBound);
    QVERIFY2(caption.contains(QStringLiteral("fp32 CUDA cores are fed %1 B/FLOP (enough on average "
                                             "for the 0.063 needed), but softmax waits on memory, "
                                             "%2% of the time.")
                                  .arg(QString::number(1 / fp32.ridgeFlopsPerByte, 'g', 3))
                                  .arg(std::round(100 * fp32.standardMemoryBoundShare()))),
             qPrintable(caption));
    for (const RooflinePoint& p : tensor.standard)
        QVERIFY(p.memoryBound);
    QVERIFY2(caption.contains(QStringLiteral("fp16/bf16 tensor cores are fed %1 B/FLOP, less than "
                                             "the 0.0315 needed: every kernel waits on memory.")
                                  .arg(QString::number(1 / tensor.ridgeFlopsPerByte, 'g', 3))),
             qPrintable(caption));
    // The fp16 line moves half the bytes of the fp32 one.
    QXYSeries* fp16 =
        xy(m_view->chart(MemoryBoundChart), QStringLiteral("standard-bytes-per-flop-fp16"));
    QVERIFY(fp16);
    const auto rows = memoryBoundTable(64, plan.memoryBoundNs);
    for (int i = 0; i < fp16->count(); ++i)
        COMPARE_NEAR(fp16->at(i).y(), rows[i].bytesPerFlop / 2);
}

// Issue #14: with 4 x 4 tiles (the "Long sequence, standard attention" preset, d = 64) flash
// moves more bytes than standard, yet charts 3 and 7 were titled "…less traffic".
void TestAnalysis::trafficTitlesFollowTheData_data() {
    QTest::addColumn<int>("block");
    QTest::addColumn<QString>("words");
    QTest::newRow("4 x 4 tiles") << 4 << "more traffic";
    QTest::newRow("64 x 64 tiles") << 64 << "less traffic";
}

void TestAnalysis::trafficTitlesFollowTheData() {
    QFETCH(int, block);
    QFETCH(QString, words);
    AnalysisInputs inputs{m_settings.spec, m_settings.options, m_settings.hardware};
    inputs.options.blockRows = inputs.options.blockCols = block;
    AnalysisPlan plan;
    plan.tiledNs = {128, 256, 512};
    plan.flopsNs = {512, 1024};
    plan.exactnessHalfWidths = {4, 8};
    const AnalysisOutcome outcome = computeAnalysis(inputs, {}, plan);
    QVERIFY(outcome.results);
    const AnalysisResults& r = *outcome.results;
    // The words follow the data: flash's traffic against standard's at every n.
    for (const TiledRow& row : r.tiled)
        QCOMPARE(row.flash.hbmBytes() > row.standard.hbmBytes(), words.startsWith("more"));
    for (const FlopsRow& row : r.flops)
        QCOMPARE(row.flash.hbmBytes() > row.standard.hbmBytes(), words.startsWith("more"));
    ChartPage tiled = buildAnalysisChart(r, TiledChart);
    ChartPage flops = buildAnalysisChart(r, FlopsChart);
    const auto cleanup = qScopeGuard([&] {
        for (QChart* c : {tiled.chart, tiled.second, flops.chart, flops.second})
            delete c;
    });
    QVERIFY2(tiled.chart->title().contains(words), qPrintable(tiled.chart->title()));
    QVERIFY2(tiled.caption.contains(QStringLiteral("Flash moves ") + words),
             qPrintable(tiled.caption));
    QVERIFY2(flops.second->title().contains(QStringLiteral("…") + words),
             qPrintable(flops.second->title()));
    QCOMPARE(flops.caption.contains(QStringLiteral("only the traffic falls")),
             words.startsWith("less"));
    if (words.startsWith("more")) {
        // How many times the bytes, from the rows: standard ÷ flash inverted.
        double most = 0;
        for (const FlopsRow& row : r.flops)
            most = std::max(most, 1 / row.trafficCut);
        QVERIFY2(flops.caption.contains(QStringLiteral("–%1× the bytes of standard attention")
                                            .arg(QString::number(most, 'f', 1))),
                 qPrintable(flops.caption));
    }
}

// Issue #14: every title's claim is read from its data. A budget no tile fits, tiles as large as
// S (the debug copy then adds no peak), and the backward pass's factors.
void TestAnalysis::otherTitlesFollowTheData() {
    AnalysisInputs inputs{m_settings.spec, m_settings.options, m_settings.hardware};
    inputs.options.blockRows = inputs.options.blockCols = 1024;
    inputs.hardware.sharedMemoryPerSmBytes.value = 1024; // smaller than any tile of the sweep
    AnalysisPlan plan;
    plan.tiledNs = {128, 256};
    plan.flopsNs = {512, 1024};
    plan.exactnessHalfWidths = {4, 8};
    const AnalysisOutcome outcome = computeAnalysis(inputs, {}, plan);
    QVERIFY(outcome.results);
    const AnalysisResults& r = *outcome.results;
    std::vector<ChartPage> pages;
    for (int chart : {BlockSizeChart, BackwardChart, DebugCopyChart})
        pages.push_back(buildAnalysisChart(r, chart));
    const auto cleanup = qScopeGuard([&] {
        for (const ChartPage& page : pages) {
            delete page.chart;
            delete page.second;
        }
    });
    for (const BlockRow& row : r.sweep.rows)
        QVERIFY(!row.fits);
    QVERIFY2(pages[0].chart->title().contains(QStringLiteral("no tile fits the SRAM")),
             qPrintable(pages[0].chart->title()));
    const BackwardRow& first = r.backward.front();
    const BackwardRow& last = r.backward.back();
    const auto kept = [](const BackwardRow& row) {
        const double ratio =
            double(row.costs.standard.storedElements) / double(row.costs.flash.storedElements);
        return QString::number(ratio, 'f', ratio >= 10 ? 0 : 1);
    };
    QVERIFY2(pages[1].second->title().contains(
                 QStringLiteral("…to keep %1–%2× less memory").arg(kept(first), kept(last))),
             qPrintable(pages[1].second->title()));
    QVERIFY2(pages[1].chart->title().contains(
                 QStringLiteral("Pay %1% more FLOPs")
                     .arg(QString::number(100 * last.extraFlopsFraction, 'f', 0))),
             qPrintable(pages[1].chart->title()));
    QCOMPARE(QString::number(r.debugCopy.peakRatio, 'f', 0), QStringLiteral("1"));
    QVERIFY2(!pages[2].chart->title().contains(QStringLiteral("undoes")),
             qPrintable(pages[2].chart->title()));
    QVERIFY2(pages[2].caption.contains(QStringLiteral("adds no peak memory")),
             qPrintable(pages[2].caption));
}

// The roofline: both roofs, each kernel's point where core/analysis.h puts it, and the
// caption is the engine's verdict.
void TestAnalysis::rooflineChartShowsEngineNumbers() {
    QChart* chart = m_view->chart(RooflineChart);
    const AnalysisPlan plan;
    const HardwareProfile& hw = m_settings.hardware;
    for (Arithmetic a : kArithmetics) {
        const bool fp32 = a == Arithmetic::Fp32CudaCores;
        const Roofline roof = roofline(hw, a, plan.rooflineN, 64, m_settings.options);
        QXYSeries* top =
            xy(chart, fp32 ? QStringLiteral("roof-fp32") : QStringLiteral("roof-tensor"));
        QVERIFY(top);
        COMPARE_NEAR(top->at(1).x(), roof.ridgeFlopsPerByte);
        COMPARE_NEAR(top->at(1).y(), peakFlopsPerSecond(hw, a) / 1e12);
        COMPARE_NEAR(top->at(0).y(), top->at(0).x() * hw.hbmBandwidthBytesPerSecond.value / 1e12);
        QXYSeries* standard = xy(chart, fp32 ? QStringLiteral("standard-kernels-fp32")
                                             : QStringLiteral("standard-kernels-tensor"));
        QXYSeries* flash = xy(chart, fp32 ? QStringLiteral("flash-kernel-fp32")
                                          : QStringLiteral("flash-kernel-tensor"));
        QVERIFY(standard && flash);
        QCOMPARE(standard->count(), 3);
        for (int i = 0; i < 3; ++i) {
            COMPARE_NEAR(standard->at(i).x(), roof.standard[i].intensity);
            COMPARE_NEAR(standard->at(i).y(), roof.standard[i].attainableFlopsPerSecond / 1e12);
        }
        COMPARE_NEAR(flash->at(0).x(), roof.flash.intensity);
    }
    const QString verdict =
        QString::fromStdString(memoryBoundVerdict(hw, plan.rooflineN, 64, m_settings.options));
    QVERIFY2(m_view->caption(RooflineChart).startsWith(verdict),
             qPrintable(m_view->caption(RooflineChart)));
}

void TestAnalysis::memoryBoundChartShowsEngineNumbers() {
    QChart* chart = m_view->chart(MemoryBoundChart);
    const AnalysisPlan plan;
    const auto rows = memoryBoundTable(64, plan.memoryBoundNs);
    QXYSeries* line = xy(chart, QStringLiteral("standard-bytes-per-flop"));
    QVERIFY(line);
    QCOMPARE(line->count(), static_cast<int>(rows.size()));
    for (int i = 0; i < line->count(); ++i) {
        QCOMPARE(line->at(i).x(), double(rows[i].n));
        COMPARE_NEAR(line->at(i).y(), rows[i].bytesPerFlop);
    }
    // The script: 0.063 bytes per FLOP at n = 8192 for d = 64.
    QCOMPARE(QString::number(line->at(line->count() - 1).y(), 'f', 3), QStringLiteral("0.063"));
    const HardwareProfile& hw = m_settings.hardware;
    QXYSeries* fp32 = xy(chart, QStringLiteral("balance-fp32"));
    QVERIFY(fp32);
    COMPARE_NEAR(fp32->at(0).y(),
                 hw.hbmBandwidthBytesPerSecond.value / hw.fp32FlopsPerSecond.value);
    QXYSeries* tensor = xy(chart, QStringLiteral("balance-tensor"));
    QVERIFY(tensor);
    COMPARE_NEAR(tensor->at(0).y(),
                 hw.hbmBandwidthBytesPerSecond.value / hw.fp16TensorFlopsPerSecond.value);
    QVERIFY(m_view->caption(MemoryBoundChart).contains(QStringLiteral("97.0%")));
}

void TestAnalysis::onlineSoftmaxChartShowsEngineNumbers() {
    QChart* chart = m_view->chart(OnlineSoftmaxChart);
    const OnlineSoftmaxDemo demo =
        onlineSoftmaxDemo(scriptSoftmaxRow(), m_settings.options.blockCols);
    for (const auto& [name, values] : {std::pair{QStringLiteral("reference"), demo.reference},
                                       std::pair{QStringLiteral("online"), demo.online},
                                       std::pair{QStringLiteral("broken"), demo.broken}}) {
        QXYSeries* s = xy(chart, name);
        QVERIFY2(s, qPrintable(name));
        QCOMPARE(s->count(), static_cast<int>(values.size()));
        for (int j = 0; j < s->count(); ++j)
            COMPARE_NEAR(s->at(j).y(), values[j]);
    }
    // The explainer's figure: without the rescale the weights sum to 0.190131.
    QVERIFY(xy(chart, QStringLiteral("broken"))->name().contains(QStringLiteral("0.190")));
    QVERIFY(m_view->caption(OnlineSoftmaxChart).contains(QStringLiteral("0.653")));
    // Issue #14: the caption said "every block is off by its own factor"; every point sits the
    // same factor below (the wrong sum's), and the caption now says so.
    for (int j = 0; j < demo.scores.size(); ++j)
        QCOMPARE(QString::number(demo.broken[j] / demo.reference[j], 'f', 3),
                 QString::number(demo.brokenSum, 'f', 3));
    QVERIFY2(m_view->caption(OnlineSoftmaxChart)
                 .contains(QStringLiteral("every weight is off by the same factor, ×%1")
                               .arg(QString::number(demo.brokenSum, 'f', 3))),
             qPrintable(m_view->caption(OnlineSoftmaxChart)));
    int edges = 0;
    for (QAbstractSeries* s : chart->series())
        edges += s->objectName() == QStringLiteral("block-edge");
    QCOMPARE(edges, 32 / 8 - 1);
}

void TestAnalysis::tiledChartShowsEngineNumbers() {
    QChart* chart = m_view->chart(TiledChart);
    const AnalysisPlan plan;
    const auto rows =
        tiledComparison(64, plan.tiledNs, m_settings.options.blockRows, m_settings.spec.seed);
    QXYSeries* stdTraffic = xy(chart, QStringLiteral("standard-traffic"));
    QXYSeries* flashTraffic = xy(chart, QStringLiteral("flash-traffic"));
    QXYSeries* stdPeak = xy(chart, QStringLiteral("standard-peak"));
    QXYSeries* flashPeak = xy(chart, QStringLiteral("flash-peak"));
    QXYSeries* paperStd = xy(chart, QStringLiteral("paper-standard"));
    QXYSeries* paperFlash = xy(chart, QStringLiteral("paper-flash"));
    QVERIFY(stdTraffic && flashTraffic && stdPeak && flashPeak && paperStd && paperFlash);
    QCOMPARE(stdTraffic->count(), static_cast<int>(rows.size()));
    const double sram = m_settings.hardware.sharedMemoryPerSmBytes.value / kBytesPerElement;
    for (int i = 0; i < stdTraffic->count(); ++i) {
        QCOMPARE(stdTraffic->at(i).x(), double(rows[i].n));
        COMPARE_NEAR(stdTraffic->at(i).y(), mbOf(rows[i].standard.hbmBytes()));
        COMPARE_NEAR(flashTraffic->at(i).y(), mbOf(rows[i].flash.hbmBytes()));
        COMPARE_NEAR(stdPeak->at(i).y(), mbOf(rows[i].standard.peakScratchBytes()));
        COMPARE_NEAR(flashPeak->at(i).y(), mbOf(rows[i].flash.peakScratchBytes()));
        const PaperIoModel model = paperIoModel(rows[i].n, 64, sram);
        COMPARE_NEAR(paperStd->at(i).y(), model.standardAccesses * kBytesPerElement / kBytesPerMB);
        COMPARE_NEAR(paperFlash->at(i).y(), model.flashAccesses * kBytesPerElement / kBytesPerMB);
    }
    // The explainer's table: n = 1024 moves 17.00 MB standard, 8.50 MB flash; flash peak 64.5 KB.
    QCOMPARE(stdTraffic->at(3).x(), 1024.0);
    QCOMPARE(QString::number(stdTraffic->at(3).y(), 'f', 2), QStringLiteral("17.00"));
    QCOMPARE(QString::number(flashTraffic->at(3).y(), 'f', 2), QStringLiteral("8.50"));
    QVERIFY(m_view->caption(TiledChart).contains(QStringLiteral("64.5 KB")));
}

void TestAnalysis::blockSizeChartShowsBudgetAndSpills() {
    QChart* chart = m_view->chart(BlockSizeChart);
    const AnalysisPlan plan;
    const std::uint64_t budget =
        static_cast<std::uint64_t>(m_settings.hardware.sharedMemoryPerSmBytes.value);
    const BlockSweep sweep = blockSizeSweep(plan.sweepN, 64, plan.sweepBlocks, budget);
    QXYSeries* traffic = xy(chart, QStringLiteral("flash-traffic"));
    QXYSeries* workingSet = xy(chart, QStringLiteral("working-set"));
    QXYSeries* budgetLine = xy(chart, QStringLiteral("sram-budget"));
    QXYSeries* standard = xy(chart, QStringLiteral("standard-traffic"));
    QVERIFY(traffic && workingSet && budgetLine && standard);
    QCOMPARE(traffic->count(), static_cast<int>(sweep.rows.size()));
    for (int i = 0; i < traffic->count(); ++i) {
        QCOMPARE(traffic->at(i).x(), double(sweep.rows[i].block));
        COMPARE_NEAR(traffic->at(i).y(), mbOf(sweep.rows[i].flash.hbmBytes()));
        COMPARE_NEAR(workingSet->at(i).y(), mbOf(sweep.rows[i].flash.peakScratchBytes()));
    }
    COMPARE_NEAR(budgetLine->at(0).y(), mbOf(budget));
    COMPARE_NEAR(standard->at(0).y(), mbOf(sweep.standard.hbmBytes()));
    QCOMPARE(QString::number(standard->at(0).y(), 'f', 2), QStringLiteral("17.00"));

    // The spill region starts between the last block that fits and the first that does not.
    int lastFit = 0, firstSpill = 0;
    for (const BlockRow& row : sweep.rows) {
        if (row.fits)
            lastFit = row.block;
        else if (!firstSpill)
            firstSpill = row.block;
    }
    QVERIFY(firstSpill > 0);
    auto* spills = qobject_cast<QAreaSeries*>(findSeries(chart, QStringLiteral("spills")));
    QVERIFY(spills);
    const double from = spills->upperSeries()->at(0).x();
    QVERIFY2(from > lastFit && from < firstSpill, qPrintable(QString::number(from)));
    QVERIFY(m_view->caption(BlockSizeChart).contains(QStringLiteral("B = %1").arg(lastFit)));
}

void TestAnalysis::backwardChartShowsEngineNumbers() {
    QCOMPARE(m_view->panelCount(BackwardChart), 2);
    QChart* flops = m_view->chart(BackwardChart, 0);
    QChart* memory = m_view->chart(BackwardChart, 1);
    QVERIFY(flops && memory && flops != memory);
    const AnalysisPlan plan;
    const auto rows = backwardTable(64, plan.backwardNs);
    // The engine's count, on the settings' tiles with none of their backward switches.
    const AnalysisResults* results = m_view->results();
    QVERIFY(results);
    FlashOptions tiles = results->inputs.options;
    tiles.backward = {};
    const auto counted = countedBackwardTable(64, plan.backwardNs, tiles);
    QBarSet* stdStored = barSet(memory, QStringLiteral("standard-stored"));
    QBarSet* flashStored = barSet(memory, QStringLiteral("flash-stored"));
    QBarSet* countedStored = barSet(memory, QStringLiteral("counted-flash-stored"));
    QBarSet* stdFlops = barSet(flops, QStringLiteral("standard-flops"));
    QBarSet* flashFlops = barSet(flops, QStringLiteral("flash-flops"));
    QBarSet* countedStdFlops = barSet(flops, QStringLiteral("counted-standard-flops"));
    QBarSet* countedFlashFlops = barSet(flops, QStringLiteral("counted-flash-flops"));
    QVERIFY(stdStored && flashStored && countedStored && stdFlops && flashFlops &&
            countedStdFlops && countedFlashFlops);
    // Bars within 2x of their neighbour stand their labels upright (side by side they ran
    // together): the FLOPs, 20% apart, and the stored bytes of the script's flash beside the
    // engine's (L and O where the script has m and ℓ).
    const auto labelsAngle = [](QChart* chart) {
        return qobject_cast<QAbstractBarSeries*>(chart->series().first())->labelsAngle();
    };
    QCOMPARE(labelsAngle(flops), -90.0);
    QCOMPARE(labelsAngle(memory), -90.0);
    QCOMPARE(stdStored->count(), static_cast<int>(rows.size()));
    QCOMPARE(stdFlops->count(), static_cast<int>(rows.size()));
    QCOMPARE(countedStored->count(), static_cast<int>(counted.size()));
    for (int i = 0; i < stdStored->count(); ++i) {
        COMPARE_NEAR(stdStored->at(i),
                     mbOf(rows[i].costs.standard.storedElements * kBytesPerElement));
        COMPARE_NEAR(flashStored->at(i),
                     mbOf(rows[i].costs.flash.storedElements * kBytesPerElement));
        COMPARE_NEAR(stdFlops->at(i), gflopOf(rows[i].costs.standard.flops));
        COMPARE_NEAR(flashFlops->at(i), gflopOf(rows[i].costs.flash.flops));
        const int n = plan.backwardNs[std::size_t(i)];
        COMPARE_NEAR(countedStored->at(i),
                     mbOf(backwardStoredElements(n, n, 64, tiles.backward) * kBytesPerElement));
        COMPARE_NEAR(countedFlashFlops->at(i),
                     gflopOf(flashBackwardCounts(n, n, 64, false, tiles).flops));
        COMPARE_NEAR(countedStdFlops->at(i), gflopOf(8ull * n * n * 64));
    }
    // The explainer: at n = 8192, 262.00 MB against 6.06 MB, 20% more FLOPs; and the engine's
    // own count beside it.
    const QString caption = m_view->caption(BackwardChart);
    for (const char* figure : {"262.00 MB", "6.06 MB", "20%"})
        QVERIFY2(caption.contains(QString::fromUtf8(figure)), qPrintable(caption));
    FlashOptions withP = tiles;
    withP.backward.storeWeights = true;
    const int n = plan.backwardNs.back();
    for (const std::uint64_t bytes :
         {backwardStoredElements(n, n, 64, tiles.backward) * kBytesPerElement,
          flashBackwardCounts(n, n, 64, false, tiles).hbmBytes(),
          flashBackwardCounts(n, n, 64, false, withP).hbmBytes() + std::uint64_t(n) * n * 4}) {
        const QString figure = formatBytesIn(double(bytes), ByteUnit::MB, 2);
        QVERIFY2(caption.contains(figure), qPrintable(figure + QStringLiteral(" in ") + caption));
    }
    QVERIFY2(caption.contains(QStringLiteral("25% more FLOPs than standard's 4 matmuls")),
             qPrintable(caption));
    QVERIFY(m_view->panelCount(MemoryBoundChart) == 1 &&
            m_view->chart(MemoryBoundChart, 1) == nullptr);
}

void TestAnalysis::exactnessChartShowsEngineNumbers() {
    QChart* chart = m_view->chart(ExactnessChart);
    const AnalysisPlan plan;
    QXYSeries* window = xy(chart, QStringLiteral("window-diff"));
    QXYSeries* flash = xy(chart, QStringLiteral("flash-diff"));
    QVERIFY(window && flash);
    QCOMPARE(window->count(), static_cast<int>(plan.exactnessHalfWidths.size()));
    // Two widths are enough to hold the chart to the engine; each run is a full attention.
    for (int i : {0, 4}) {
        const int w = plan.exactnessHalfWidths[static_cast<std::size_t>(i)];
        const ExactnessDemo demo = exactnessDemo(
            plan.exactnessN, 64, w, m_settings.options.blockRows, m_settings.spec.seed);
        QCOMPARE(window->at(i).x(), double(w));
        COMPARE_NEAR(window->at(i).y(), demo.windowMaxDiff);
        if (demo.flashMaxDiff > 0) COMPARE_NEAR(flash->at(i).y(), demo.flashMaxDiff);
        QVERIFY(!demo.windowAllClose);
        QVERIFY(demo.flashAllClose);
    }
    QXYSeries* mark = xy(chart, QStringLiteral("script-window"));
    QVERIFY(mark);
    QCOMPARE(mark->at(0).x(), double(plan.scriptHalfWidth));
    QVERIFY(mark->name().contains(QStringLiteral("allclose: no")));
}

void TestAnalysis::flopsChartShowsEngineNumbers() {
    QCOMPARE(m_view->panelCount(FlopsChart), 2);
    QChart* flopsPanel = m_view->chart(FlopsChart, 0);
    QChart* trafficPanel = m_view->chart(FlopsChart, 1);
    const AnalysisPlan plan;
    QBarSet* stdFlops = barSet(flopsPanel, QStringLiteral("standard-flops"));
    QBarSet* flashFlops = barSet(flopsPanel, QStringLiteral("flash-flops"));
    QBarSet* stdTraffic = barSet(trafficPanel, QStringLiteral("standard-traffic"));
    QBarSet* flashTraffic = barSet(trafficPanel, QStringLiteral("flash-traffic"));
    QVERIFY(stdFlops && flashFlops && stdTraffic && flashTraffic);
    QCOMPARE(stdFlops->count(), static_cast<int>(plan.flopsNs.size()));
    // One run of the engine at a size the test can afford; the rest against the shown results
    // and the closed forms the engine's runs are held to (tests/core).
    const std::vector<FlopsRow> small = flopsVersusTraffic(
        64, {plan.flopsNs.front()}, m_settings.options.blockRows, m_settings.spec.seed);
    COMPARE_NEAR(stdFlops->at(0), gflopOf(small[0].standard.flops));
    COMPARE_NEAR(flashTraffic->at(0), mbOf(small[0].flash.hbmBytes()));
    const std::vector<FlopsRow>& rows = m_view->results()->flops;
    for (int i = 0; i < stdFlops->count(); ++i) {
        const int n = plan.flopsNs[static_cast<std::size_t>(i)];
        const Counters standard = standardCounts(n, n, 64);
        QCOMPARE(rows[i].n, n);
        COMPARE_NEAR(stdFlops->at(i), gflopOf(rows[i].standard.flops));
        COMPARE_NEAR(flashFlops->at(i), gflopOf(rows[i].flash.flops));
        COMPARE_NEAR(stdTraffic->at(i), mbOf(rows[i].standard.hbmBytes()));
        COMPARE_NEAR(flashTraffic->at(i), mbOf(rows[i].flash.hbmBytes()));
        COMPARE_NEAR(stdFlops->at(i), gflopOf(standard.flops));
        COMPARE_NEAR(stdTraffic->at(i), mbOf(standard.hbmBytes()));
        COMPARE_NEAR(flashFlops->at(i), stdFlops->at(i));
    }
    // Equal FLOPs are labelled once per pair (the two labels used to run together); the
    // traffic, which differs, keeps both labels.
    QCOMPARE(flashFlops->labelColor().alpha(), 0);
    QVERIFY(stdFlops->labelColor().alpha() > 0);
    QVERIFY(flashTraffic->labelColor().alpha() > 0);
    // The explainer: n = 4096 moves 260.00 MB standard, 130.00 MB flash: 2.0x less.
    QCOMPARE(QString::number(stdTraffic->at(3), 'f', 2), QStringLiteral("260.00"));
    QCOMPARE(QString::number(flashTraffic->at(3), 'f', 2), QStringLiteral("130.00"));
    QVERIFY(m_view->caption(FlopsChart).contains(QStringLiteral("2.0×")));
}

void TestAnalysis::debugCopyChartShowsEngineNumbers() {
    QChart* chart = m_view->chart(DebugCopyChart);
    const AnalysisPlan plan;
    const DebugCopyDemo demo =
        debugCopyDemo(plan.debugCopyN, 64, m_settings.options.blockRows, m_settings.spec.seed);
    QBarSet* clean = barSet(chart, QStringLiteral("clean"));
    QBarSet* kept = barSet(chart, QStringLiteral("kept"));
    QVERIFY(clean && kept);
    COMPARE_NEAR(clean->at(0), mbOf(demo.clean.peakScratchBytes()));
    COMPARE_NEAR(clean->at(1), mbOf(demo.clean.hbmBytes()));
    COMPARE_NEAR(kept->at(0), mbOf(demo.withCopy.peakScratchBytes()));
    COMPARE_NEAR(kept->at(1), mbOf(demo.withCopy.hbmBytes()));
    // The explainer: 64.5 KB -> 4096.0 KB, 8.50 MB -> 12.50 MB, 64x.
    const QString caption = m_view->caption(DebugCopyChart);
    for (const char* figure : {"64.5 KB", "4096.0 KB", "8.50 MB", "12.50 MB", "64×"})
        QVERIFY2(caption.contains(QString::fromUtf8(figure)), qPrintable(caption));
}

void TestAnalysis::overflowChartNamesInfAndNaN() {
    QChart* chart = m_view->chart(OverflowChart);
    const OverflowDemo demo = overflowDemo(scriptOverflowScores());
    QBarSet* safe = barSet(chart, QStringLiteral("safe"));
    QVERIFY(safe);
    QCOMPARE(safe->count(), static_cast<int>(demo.scores.size()));
    for (int i = 0; i < safe->count(); ++i)
        COMPARE_NEAR(safe->at(i), demo.safeWeights[i]);
    QStringList overlays;
    for (QGraphicsItem* item : chart->childItems())
        if (auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(item)) overlays << text->text();
    QCOMPARE(overlays.size(), static_cast<int>(demo.scores.size()));
    for (const QString& text : overlays) {
        QVERIFY2(text.contains(QStringLiteral("inf")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("NaN")), qPrintable(text));
    }
    QVERIFY(m_view->caption(OverflowChart).contains(QStringLiteral("every weight")));
}

// Chart 12 on a GPU FlashViz has no counters for (the A100): the L2-aware model of one launch at
// the GPU benchmark's shape, every point core/l2_traffic's, and a caption that says nothing was
// measured.
void TestAnalysis::throughL2ChartDrawsTheModel() {
    QCOMPARE(m_view->panelCount(ThroughL2Chart), 2);
    QChart* dram = m_view->chart(ThroughL2Chart, 0);
    QChart* l2 = m_view->chart(ThroughL2Chart, 1);
    const HardwareProfile& hw = m_settings.hardware;
    const KernelShape kernel = kernels::kernelShapeFor(64, m_settings.options.blockRows,
                                                       m_settings.options.blockCols, hw);
    const GpuBenchRequest bench;
    const AnalysisPlan plan;
    QXYSeries* flashDram = xy(dram, QStringLiteral("l2-flash-dram-model"));
    QXYSeries* standardDram = xy(dram, QStringLiteral("l2-standard-dram-model"));
    QXYSeries* counted = xy(dram, QStringLiteral("l2-flash-counted-model"));
    QXYSeries* flashL2 = xy(l2, QStringLiteral("l2-flash-l2-model"));
    QXYSeries* standardL2 = xy(l2, QStringLiteral("l2-standard-l2-model"));
    QXYSeries* standardCounted = xy(l2, QStringLiteral("l2-standard-counted-model"));
    QVERIFY(flashDram && standardDram && counted && flashL2 && standardL2 && standardCounted);
    QVERIFY(!xy(dram, QStringLiteral("l2-flash-dram-measured")));
    QCOMPARE(flashDram->count(), int(plan.throughL2Ns.size()));
    for (int i = 0; i < flashDram->count(); ++i) {
        const int n = plan.throughL2Ns[std::size_t(i)];
        const int batch = int(bench.tokens / n), heads = bench.headsTimesDim / 64;
        const TrafficEstimate flash =
            estimateTraffic(flashLaunchShape(n, n, 64, batch, heads, false, kernel, hw), hw);
        const TrafficEstimate standard =
            estimateTraffic(standardLaunchShape(n, n, 64, batch, heads, false), hw);
        QCOMPARE(flashDram->at(i).x(), double(n));
        COMPARE_NEAR(flashDram->at(i).y(), flash.dram.total() / kBytesPerGB);
        COMPARE_NEAR(standardDram->at(i).y(), standard.dram.total() / kBytesPerGB);
        COMPARE_NEAR(counted->at(i).y(), flash.counting.total() / kBytesPerGB);
        COMPARE_NEAR(flashL2->at(i).y(), flash.counting.total() / kBytesPerGB);
        COMPARE_NEAR(standardL2->at(i).y(), standard.l2.total() / kBytesPerGB);
        COMPARE_NEAR(standardCounted->at(i).y(), standard.counting.total() / kBytesPerGB);
        // Through L2 every n re-reads K and V per query block; DRAM sees them about once.
        QVERIFY(flash.dram.total() < flash.counting.total());
    }
    const QString caption = m_view->caption(ThroughL2Chart);
    QVERIFY2(caption.contains(QStringLiteral("has no hardware-counter measurement of the %1")
                                  .arg(QString::fromStdString(hw.name))),
             qPrintable(caption));
    const auto& last = m_view->results()->throughL2.points.back();
    QVERIFY(caption.contains(QString::fromStdString(formatByteAmount(last.flash.dram.total()))));
    // The assumptions, both methods', are the caption's tooltip.
    const QString notes = m_view->notes(ThroughL2Chart);
    for (const auto* estimate : {&last.flash, &last.standard})
        for (const std::string& a : estimate->assumptions)
            QVERIFY2(notes.contains(QString::fromStdString(a)), a.c_str());
}

// On the H100, whose counters FlashViz ships (resources/measured/h100-traffic.json): each
// measured marker is the file's figure, the caption counts the points within 10 % as
// checkTraffic judges them and gives the first miss's reason; a d that was not measured is
// replaced by the nearest one that was, and the subtitle says so.
void TestAnalysis::throughL2ChartSetsMeasuredBesideModel() {
    AnalysisResults results = *m_view->results();
    const HardwareProfile& hw = findHardwareProfile("h100-sxm");
    results.inputs.hardware = hw;
    results.headDim = 48;
    results.throughL2 = measured::throughL2(hw, 48, m_settings.options.blockRows,
                                            m_settings.options.blockCols, results.plan.throughL2Ns);
    const measured::ThroughL2& t = results.throughL2;
    QCOMPARE(t.headDim, 64);
    QCOMPARE(t.measuredDims, (std::vector<int>{64, 128}));
    QCOMPARE(QString::fromStdString(t.measuredOn), QStringLiteral("NVIDIA H100 80GB HBM3, 2026-12-06"));
    const ChartPage page = buildAnalysisChart(results, ThroughL2Chart);
    const std::unique_ptr<QChart> dram(page.chart), l2(page.second);
    QVERIFY(dram && l2);
    QVERIFY(page.caption.startsWith(QStringLiteral("Measured at d = 64, not the settings' d = 48.")));
    QXYSeries* flashDram = xy(dram.get(), QStringLiteral("l2-flash-dram-measured"));
    QXYSeries* standardDram = xy(dram.get(), QStringLiteral("l2-standard-dram-measured"));
    QXYSeries* flashL2 = xy(l2.get(), QStringLiteral("l2-flash-l2-measured"));
    QVERIFY(flashDram && standardDram && flashL2);
    QCOMPARE(flashDram->count(), int(t.points.size()));
    int checks = 0, within = 0;
    for (int i = 0; i < flashDram->count(); ++i) {
        const measured::ThroughL2Point& p = t.points[std::size_t(i)];
        QVERIFY(p.flashMeasured && p.standardMeasured);
        QCOMPARE(p.flashMeasured->shape.blockRows, t.blockRows);
        QCOMPARE(p.flashMeasured->shape.elementBytes, 2.0);
        COMPARE_NEAR(flashDram->at(i).y(),
                     (p.flashMeasured->dramReadBytes + p.flashMeasured->dramWriteBytes) / kBytesPerGB);
        COMPARE_NEAR(flashL2->at(i).y(), p.flashMeasured->l2Bytes / kBytesPerGB);
        // The model drawn for a measured n is the model the check judged.
        COMPARE_NEAR(p.flashCheck->model.dram.total(), p.flash.dram.total());
        for (const auto* c : {&p.flashCheck, &p.standardCheck}) {
            ++checks;
            within += (*c)->dramWithin;
        }
    }
    QVERIFY2(page.caption.contains(QStringLiteral("the L2-aware model of DRAM at %1 of %2 points")
                                       .arg(within)
                                       .arg(checks)),
             qPrintable(page.caption));
    QVERIFY(page.caption.contains(QStringLiteral("Measured on the NVIDIA H100 80GB HBM3")));
    if (within < checks) QVERIFY(page.caption.contains(QStringLiteral("First miss")));
}

void TestAnalysis::changingSettingsRecomputes() {
    QSignalSpy updated(m_view, &AnalysisView::chartsUpdated);
    Settings s = m_settings;
    s.spec.headDim = 32;
    s.hardware = findHardwareProfile("h200");
    apply(*m_view, s);
    QVERIFY(m_view->isBusy());
    QVERIFY(m_view->waitForIdle());
    QCOMPARE(updated.count(), 1);
    QCOMPARE(m_view->results()->headDim, 32);

    const AnalysisPlan plan;
    const auto rows = memoryBoundTable(32, plan.memoryBoundNs);
    QXYSeries* line =
        xy(m_view->chart(MemoryBoundChart), QStringLiteral("standard-bytes-per-flop"));
    QVERIFY(line);
    for (int i = 0; i < line->count(); ++i)
        COMPARE_NEAR(line->at(i).y(), rows[i].bytesPerFlop);
    QXYSeries* budgetLine = xy(m_view->chart(BlockSizeChart), QStringLiteral("sram-budget"));
    COMPARE_NEAR(budgetLine->at(0).y(), s.hardware.sharedMemoryPerSmBytes.value / kBytesPerMB);
    QVERIFY(
        m_view->chart(MemoryBoundChart)->title().contains(QString::fromStdString(s.hardware.name)));

    // The same settings again start nothing.
    apply(*m_view, s);
    QVERIFY(!m_view->isBusy());

    // Going back to settings computed a moment ago takes the kept results: no computation.
    apply(*m_view, m_settings);
    QVERIFY(!m_view->isBusy());
    QCOMPARE(updated.count(), 2);
    QCOMPARE(m_view->results()->headDim, 64);
    QCOMPARE(
        xy(m_view->chart(MemoryBoundChart), QStringLiteral("standard-bytes-per-flop"))->at(0).y(),
        memoryBoundTable(64, plan.memoryBoundNs)[0].bytesPerFlop);
}

void TestAnalysis::invalidSettingKeepsCharts() {
    QChart* before = m_view->chart(TiledChart);
    const QList<QPointF> points = xy(before, QStringLiteral("standard-traffic"))->points();
    QSignalSpy failed(m_view, &AnalysisView::failed);
    Settings bad = m_settings;
    bad.options.blockRows = 0;
    apply(*m_view, bad);
    QVERIFY(m_view->waitForIdle());
    QCOMPARE(failed.count(), 1);
    QVERIFY(!m_view->errorText().isEmpty());
    QVERIFY2(m_view->errorText().contains(QStringLiteral("Br")), qPrintable(m_view->errorText()));
    QCOMPARE(m_view->chart(TiledChart), before);
    QCOMPARE(xy(m_view->chart(TiledChart), QStringLiteral("standard-traffic"))->points(), points);
    QCOMPARE(m_view->results()->inputs.options.blockRows, m_settings.options.blockRows);
    auto* message = m_view->findChild<QLabel*>(QStringLiteral("analysisMessage"));
    QVERIFY(message && message->isVisible());
    QVERIFY(message->text().contains(m_view->errorText()));

    Settings badDim = m_settings;
    badDim.spec.headDim = 0;
    apply(*m_view, badDim);
    QVERIFY(m_view->waitForIdle());
    QCOMPARE(failed.count(), 2);
    QCOMPARE(m_view->chart(TiledChart), before);

    // Valid settings again clear the message.
    apply(*m_view, m_settings);
    QVERIFY(m_view->waitForIdle());
    QVERIFY(m_view->errorText().isEmpty());
    QVERIFY(!message->isVisible());
}

void TestAnalysis::staleResultsAreDiscarded() {
    QSignalSpy updated(m_view, &AnalysisView::chartsUpdated);
    Settings a = m_settings;
    a.spec.headDim = 16;
    Settings b = m_settings;
    b.spec.headDim = 48;
    apply(*m_view, a);
    QCoreApplication::processEvents(); // let the first computation start
    apply(*m_view, b);
    QVERIFY(m_view->waitForIdle());
    QTest::qWait(50);
    QCOMPARE(updated.count(), 1);
    QCOMPARE(m_view->results()->headDim, 48);
    QXYSeries* line =
        xy(m_view->chart(MemoryBoundChart), QStringLiteral("standard-bytes-per-flop"));
    const auto rows = memoryBoundTable(48, AnalysisPlan{}.memoryBoundNs);
    COMPARE_NEAR(line->at(0).y(), rows[0].bytesPerFlop);

    apply(*m_view, m_settings);
    QVERIFY(m_view->waitForIdle());
}

void TestAnalysis::cancelKeepsCharts() {
    QChart* before = m_view->chart(TiledChart);
    Settings s = m_settings;
    s.spec.seed = 99;
    apply(*m_view, s);
    QVERIFY(m_view->isBusy());
    m_view->cancel();
    QVERIFY(!m_view->isBusy());
    QTest::qWait(50);
    QCOMPARE(m_view->chart(TiledChart), before);
    QCOMPARE(m_view->results()->inputs.spec.seed, m_settings.spec.seed);
    // Asking again for the cancelled settings computes them.
    apply(*m_view, s);
    QVERIFY(m_view->isBusy());
    QVERIFY(m_view->waitForIdle());
    QCOMPARE(m_view->results()->inputs.spec.seed, std::uint64_t(99));
    apply(*m_view, m_settings);
    QVERIFY(m_view->waitForIdle());
}

// Issue #12: each run's progress poll (a timer owned by the run's watcher, which lives until its
// deferred deletion) read the run through a raw pointer after the run had finished and been
// freed: Up pressed in the seed box every 0.1-0.4 s gave ASan a heap-use-after-free within
// 6-8 presses. Here the settings change quickly while runs finish, and the GUI thread is held
// while a run ends so that its end and its poll come due in the same turn of the event loop
// (processEvents() outside an event loop never runs deferred deletions, so the old poll kept
// firing on the freed run). Whatever the build, a finished run must leave nothing polling.
void TestAnalysis::rapidChangesWhileRunsFinish() {
    int pollingAfterFinish = 0;
    const auto connection = connect(m_view, &AnalysisView::chartsUpdated, this, [&] {
        for (QTimer* timer : m_view->findChildren<QTimer*>())
            if (timer->isActive() && !timer->isSingleShot()) ++pollingAfterFinish;
    });
    const auto restore = qScopeGuard([&] {
        disconnect(connection);
        apply(*m_view, m_settings);
        m_view->waitForIdle();
    });
    Settings s = m_settings;
    for (int press = 0; press < 16; ++press) {
        s.spec.seed = 500 + std::uint64_t(press);
        apply(*m_view, s);
        QCoreApplication::processEvents(); // the run starts
        // Some presses land while a run computes, most after it has finished.
        QThread::msleep(press % 4 == 3 ? 2 : 150);
        for (int turn = 0; turn < 3; ++turn) {
            QCoreApplication::processEvents(); // its end, then its (overdue) poll
            QThread::msleep(60);
        }
    }
    QVERIFY(m_view->waitForIdle());
    QTest::qWait(120);
    QVERIFY2(m_view->errorText().isEmpty(), qPrintable(m_view->errorText()));
    QCOMPARE(m_view->results()->inputs.spec.seed, s.spec.seed);
    QCOMPARE(pollingAfterFinish, 0);
}

// Issue #12: QAreaSeries does not own its upper and lower series, so the line series band()
// made for chart 4's "spills" region were never freed (LeakSanitizer: 11,838 bytes in 75
// allocations a run). Deleting a chart must delete every area's edges too.
void TestAnalysis::areaEdgesGoWithTheirChart() {
    int areas = 0;
    for (int i = 0; i < AnalysisChartCount; ++i) {
        ChartPage page = buildAnalysisChart(*m_view->results(), i);
        QList<QPointer<QLineSeries>> edges;
        for (QChart* chart : {page.chart, page.second})
            if (chart)
                for (QAbstractSeries* series : chart->series())
                    if (auto* area = qobject_cast<QAreaSeries*>(series)) {
                        ++areas;
                        edges << area->upperSeries();
                        if (area->lowerSeries()) edges << area->lowerSeries();
                    }
        delete page.chart;
        delete page.second;
        for (const auto& edge : edges)
            QVERIFY2(edge.isNull(), qPrintable(QStringLiteral("chart %1").arg(i + 1)));
    }
    QVERIFY(areas > 0); // chart 4 shades where the tiles spill
}

void TestAnalysis::fontsFollowTheWidget() {
    QChart* chart = m_view->chart(TiledChart);
    const qreal before = chart->titleFont().pointSizeF();
    QFont big = m_view->font();
    big.setPointSizeF(big.pointSizeF() * 2);
    m_view->setFont(big);
    QVERIFY(chart->titleFont().pointSizeF() > 1.5 * before);
    QVERIFY(chart->axes().first()->labelsFont().pointSizeF() >= big.pointSizeF() * 0.9);
    m_view->setFont(QFont());
    QCOMPARE(chart->titleFont().pointSizeF(), before);
}

// A legend drawn inside the plot lists its entries in one column, at the widget's font and at a
// projector's: chart 4's fifth entry used to wrap into a second column cut off at "f".
void TestAnalysis::insideLegendsStackEveryEntry() {
    for (const qreal scale : {1.0, 1.6}) {
        setFontScale(scale);
        for (int i = 0; i < 9; ++i) {
            m_view->showChart(i);
            QLegend* legend = m_view->chart(i)->legend();
            if (legend->isAttachedToChart()) continue;
            // The entries' label items: one column means one left edge.
            QSet<int> columns;
            // The legend settles once the chart has been laid out, which under the sanitizers on
            // a busy machine takes longer than a fixed pause: wait for it, up to 5 s.
            const auto columnCount = [&] {
                columns.clear();
                for (const QGraphicsTextItem* text : visibleTextItems({legend}))
                    columns.insert(qRound(text->scenePos().x()));
                return columns.size();
            };
            QTRY_COMPARE_WITH_TIMEOUT(columnCount(), qsizetype(1), 5000);
            QVERIFY2(columns.size() == 1,
                     qPrintable(QStringLiteral("chart %1 at %2x: entries in %3 columns")
                                    .arg(i + 1)
                                    .arg(scale)
                                    .arg(columns.size())));
        }
    }
    m_view->setFont(QFont());
    m_view->showChart(0);
}

// At the size the page has on a 1366 x 768 laptop no legend entry is cut to "…" (chart 6's
// third entry was).
void TestAnalysis::legendLabelsAreWholeOnALaptop() {
    const auto restore = qScopeGuard([this] {
        m_view->resize(1280, 760);
        m_view->showChart(0);
    });
    m_view->resize(940, 560); // the page at 1366 x 768 with the settings dock open
    const auto cutEntries = [this](int chart, int panel) {
        QStringList cut;
        for (const QGraphicsTextItem* text : visibleTextItems({m_view->chart(chart, panel)->legend()}))
            if (text->toPlainText().contains(QChar(0x2026)) || text->toPlainText().contains(QStringLiteral("...")))
                cut << text->toPlainText();
        return cut;
    };
    for (int i = 0; i < AnalysisChartCount; ++i) {
        m_view->showChart(i);
        // Until the layout settles: an axis title that wraps (Page::setChart) lays the chart out
        // once more, later under a slow (sanitizer) build than 20 ms.
        for (int panel = 0; panel < m_view->panelCount(i); ++panel)
            QTRY_VERIFY2(cutEntries(i, panel).isEmpty(),
                         qPrintable(QStringLiteral("chart %1: %2")
                                        .arg(i + 1)
                                        .arg(cutEntries(i, panel).join(QStringLiteral(" | ")))));
    }
}

// A bar of 1000 or more is labelled with its digits ("2048"), not Qt's 'g' form ("2.05e+03")
// beside "512": chart 11's grid times are whole numbers and read as such.
void TestAnalysis::barLabelsPrintWholeNumbers() {
    const auto restore = qScopeGuard([this] {
        apply(*m_view, m_settings);
        m_view->showChart(0);
    });
    Settings small = m_settings;
    small.spec.headDim = 32;     // no tensor-core kernel: the grid launches the mirror kernel,
    small.options.blockRows = 8; // whose 8-row tiles make 1024 query blocks at n = 8192
    apply(*m_view, small);
    QVERIFY(m_view->waitForIdle());
    m_view->showChart(VersionsChart);
    QChart* grid = m_view->chart(VersionsChart, 1);
    QVERIFY(grid);
    const auto* bars = qobject_cast<QAbstractBarSeries*>(grid->series().front());
    QVERIFY(bars);
    QStringList expected;
    for (const QBarSet* set : bars->barSets())
        for (int i = 0; i < set->count(); ++i)
            if (set->at(i) >= 1000) expected << QString::number(qint64(set->at(i)));
    QVERIFY2(!expected.isEmpty(), "no grid time of 1000 or more at these settings: nothing to check");
    const auto labels = [grid] {
        QStringList shown;
        for (const QGraphicsTextItem* text : visibleTextItems(grid->childItems())) shown << text->toPlainText();
        return shown;
    };
    // The category axis names n (512 … 8192), which the times may equal: count both.
    const QStringList categories = qobject_cast<QBarCategoryAxis*>(grid->axes(Qt::Horizontal).front())->categories();
    for (const QString& number : expected)
        QTRY_VERIFY2(labels().count(number) >= expected.count(number) + categories.count(number),
                     qPrintable(number + QStringLiteral(" missing among ") + labels().join(QStringLiteral(" | "))));
    for (const QString& label : labels())
        QVERIFY2(!label.contains(QRegularExpression(QStringLiteral("\\de\\+"))), qPrintable(label));
}

// A title too long for its axis breaks before its trailing "(log scale)", which then reads as a
// line of its own, where that takes no more lines than breaking elsewhere ("… query blocks'" /
// "work (log scale)" was the balanced break); where it would, the fewest lines win.
void TestAnalysis::logScaleGlossWrapsOntoItsOwnLine() {
    const QString title = QStringLiteral("time, in query blocks' work (log scale)");
    const QFont font = m_view->chart(VersionsChart, 1)->axes(Qt::Vertical).front()->titleFont();
    const QFontMetricsF fm(font);
    const qreal margin = 20; // above what Qt Charts adds around a title
    const qreal head = fm.horizontalAdvance(QStringLiteral("time, in query blocks' work"));
    QCOMPARE(wrappedAxisTitle(title, font, fm.horizontalAdvance(title) + margin), title);
    QCOMPARE(wrappedAxisTitle(title, font, head + margin),
             QStringLiteral("time, in query blocks' work<br>(log scale)"));
    // Too short for that head on one line: two balanced lines beat three with the gloss alone.
    const qreal balanced = fm.horizontalAdvance(QStringLiteral("work (log scale)"));
    const qreal twoLines = std::max(balanced, fm.horizontalAdvance(QStringLiteral("time, in query blocks'")));
    QVERIFY(twoLines + margin < head + 12); // 12: page.cpp's kTitleMargin; the head alone no longer fits
    QCOMPARE(wrappedAxisTitle(title, font, twoLines + margin),
             QStringLiteral("time, in query blocks'<br>work (log scale)"));
    // The unit's gloss keeps its parenthesis whole.
    QCOMPARE(wrappedAxisTitle(QStringLiteral("GiB (Q, K, V, O, scratch)"), font,
                              fm.horizontalAdvance(QStringLiteral("(Q, K, V, O, scratch)")) + margin),
             QStringLiteral("GiB<br>(Q, K, V, O, scratch)"));
}

// A legend inside the plot covers no data point (chart 3's covered the lines' first points at
// 1366 px).
void TestAnalysis::insideLegendsLeaveTheDataVisible() {
    const auto restore = qScopeGuard([this] {
        m_view->setFont(QFont());
        m_view->resize(1280, 760);
        m_view->showChart(0);
    });
    // A 1366 x 768 laptop's page with the default font; a larger one with it and a projector's.
    const std::pair<QSize, qreal> cases[] = {
        {QSize(940, 560), 1.0}, {QSize(1280, 760), 1.0}, {QSize(1280, 760), 1.6}};
    for (const auto& [size, scale] : cases) {
        m_view->resize(size);
        setFontScale(scale);
        for (int i = 0; i < 9; ++i) {
            m_view->showChart(i);
            QTest::qWait(20);
            QChart* chart = m_view->chart(i);
            QLegend* legend = chart->legend();
            // Charts 3 and 4 keep theirs inside the plot.
            if (i == TiledChart || i == BlockSizeChart) QVERIFY(!legend->isAttachedToChart());
            if (legend->isAttachedToChart()) continue;
            for (QAbstractSeries* series : chart->series()) {
                auto* line = qobject_cast<QXYSeries*>(series);
                if (!line || !line->isVisible()) continue;
                for (const QPointF& point : line->points()) {
                    const QPointF at = chart->mapToPosition(point, line);
                    QVERIFY2(!legend->geometry().contains(at),
                             qPrintable(QStringLiteral("chart %1 at %2x%3, font x%4: the legend "
                                                       "covers %5 (%6, %7)")
                                            .arg(i + 1)
                                            .arg(size.width())
                                            .arg(size.height())
                                            .arg(scale)
                                            .arg(line->name())
                                            .arg(point.x())
                                            .arg(point.y())));
                }
            }
        }
    }
}

void TestAnalysis::showChartPages() {
    QCOMPARE(m_view->currentChart(), 0);
    const QString dir = qEnvironmentVariable("FLASHVIZ_ANALYSIS_SHOTS");
    if (!dir.isEmpty()) {
        QFont projector = m_view->font();
        projector.setPointSizeF(qEnvironmentVariableIntValue("FLASHVIZ_ANALYSIS_SHOTS_PT") > 0
                                    ? qEnvironmentVariableIntValue("FLASHVIZ_ANALYSIS_SHOTS_PT")
                                    : 12);
        m_view->setFont(projector);
    }
    for (int i = 0; i < AnalysisChartCount; ++i) {
        m_view->showChart(i);
        QCOMPARE(m_view->currentChart(), i);
        auto* caption = m_view->findChild<QLabel*>(QStringLiteral("analysisCaption"));
        QCOMPARE(caption->text(), unbroken(m_view->caption(i))); // no break inside "B/FLOP"
        if (!dir.isEmpty()) {
            QTest::qWait(100); // the chart lays out its legend and axes on the next turn
            QDir().mkpath(dir);
            QVERIFY(m_view->grab().save(
                QDir(dir).filePath(QStringLiteral("analysis-%1.png").arg(i + 1))));
        }
    }
    m_view->showChart(42);
    QCOMPARE(m_view->currentChart(), AnalysisChartCount - 1);
    m_view->showChart(0);
    m_view->setFont(QFont());
}

QTEST_MAIN(TestAnalysis)
#include "tst_analysis.moc"
