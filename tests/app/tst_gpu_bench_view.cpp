// The GPU benchmark page (app/gui/gpu_bench): availability, saved results, malformed files,
// refused requests. Runs on machines without a GPU; the one test that needs none skips there.
#include "pages/gpu_bench/gpu_bench_results.h"
#include "pages/gpu_bench/gpu_benchmark_view.h"

#include "core/errors.h"
#include "kernels/backend_registry.h"
#include "style/format.h"
#include "style/paint_util.h"

#include <QApplication>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QValueAxis>
#include <QtTest>

#include <array>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

using namespace flashviz;
using namespace flashviz::gui;

namespace {

// A record shaped like a real run: the H200's d = 64 numbers for two sizes (fp32 from the fp32
// FMA kernel), and one standard-attention point that did not fit.
GpuBenchRecord sampleRecord() {
    const char* kFp32Kernel = "d64_br64_bc128_m2_sw_u8x4";
    const char* kFp16Kernel = "tc_d64_br128_bc64_w4_qreg";
    GpuBenchRecord r;
    r.device = QStringLiteral("NVIDIA H200");
    r.measured = QDateTime(QDate(2026, 11, 30), QTime(5, 0), Qt::UTC);
    r.request.sizes = {1024, 2048, 4096};
    r.request.headDim = 64;
    r.request.variants = {kGpuBenchStandardFp32, kGpuBenchFlashFp32, kGpuBenchFlashFp16};
    r.points = {
        {kGpuBenchStandardFp32, 1024, 16, 32, 5.867, 23.43, 2147483648.0, "", ""},
        {kGpuBenchFlashFp32, 1024, 16, 32, 3.457, 39.76, 4194304.0, "", kFp32Kernel},
        {kGpuBenchFlashFp16, 1024, 16, 32, 0.466, 295.21, 0.0, "", kFp16Kernel},
        {kGpuBenchStandardFp32, 2048, 8, 32, 10.293, 26.71, 4294967296.0, "", ""},
        {kGpuBenchFlashFp32, 2048, 8, 32, 6.766, 40.63, 4194304.0, "", kFp32Kernel},
        {kGpuBenchFlashFp16, 2048, 8, 32, 0.881, 311.95, 0.0, "", kFp16Kernel},
        {kGpuBenchStandardFp32, 4096, 4, 32, 0, 0, 8589934592.0, "its 8.0 GiB of scores do not fit",
         ""},
        {kGpuBenchFlashFp32, 4096, 4, 32, 13.581, 40.48, 4194304.0, "", kFp32Kernel},
        {kGpuBenchFlashFp16, 4096, 4, 32, 1.712, 321.20, 0.0, "", kFp16Kernel},
    };
    return r;
}

// A run of the backward (or both passes) shaped like the CUDA side's: the fp32 methods have no
// backward kernel, so their points come back unmeasured with a note; fp16 and bf16 name their
// kernels ("forward + backward" for both).
const char* const kNoBackwardNote = "no backward kernel: FlashViz's fast backward is fp16 / bf16 only";

GpuBenchRecord passRecord(GpuBenchPass pass) {
    const std::string kernel = pass == GpuBenchPass::Forward ? "tc_d64_br128_bc64_w4_qreg"
                               : pass == GpuBenchPass::Backward
                                   ? "tc_bwd_d64_bc64_br64_w4"
                                   : "tc_d64_br128_bc64_w4_qreg + tc_bwd_d64_bc64_br64_w4";
    GpuBenchRecord r;
    r.device = QStringLiteral("NVIDIA H100 80GB HBM3");
    r.measured = QDateTime(QDate(2026, 12, 10), QTime(9, 30), Qt::UTC);
    r.request.sizes = {1024, 2048};
    r.request.pass = pass;
    r.request.variants = {kGpuBenchStandardFp32, kGpuBenchFlashFp32, kGpuBenchFlashFp16,
                          kGpuBenchFlashBf16};
    for (const int n : r.request.sizes) {
        const double ms = n == 1024 ? 1.25 : 2.5;
        r.points.push_back({kGpuBenchStandardFp32, n, 16384 / n, 32, 0, 0, 0, kNoBackwardNote, ""});
        r.points.push_back({kGpuBenchFlashFp32, n, 16384 / n, 32, 0, 0, 0, kNoBackwardNote, ""});
        r.points.push_back({kGpuBenchFlashFp16, n, 16384 / n, 32, ms, 220.0, 2.2e6, "", kernel});
        r.points.push_back({kGpuBenchFlashBf16, n, 16384 / n, 32, ms * 1.1, 200.0, 2.2e6, "", kernel});
    }
    return r;
}

void writeFile(const QString& path, const QByteArray& text) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(text);
}

QLineSeries* seriesOf(QChart* chart, const char* variant) {
    for (QAbstractSeries* s : chart->series())
        if (s->objectName() == QLatin1String(variant)) return qobject_cast<QLineSeries*>(s);
    return nullptr;
}

} // namespace

class TestGpuBenchView : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void init();
    void withoutGpuRunIsOffAndSaysWhy();
    void onAGpuRunsShowsSavesAndCancels();
    void noSavedResultsShowTheShippedH200Run();
    void savedResultsAreDrawnAsMeasured();
    void loadedResultsSetTheControls();
    void jsonRoundTrip();
    void malformedFilesGiveMessages_data();
    void malformedFilesGiveMessages();
    void badFileKeepsShownResults();
    void hostileFilesGiveMessages_data();
    void hostileFilesGiveMessages();
    void oversizedFileIsRefusedUnread();
    void keptH200ResultsLoad();
    void logAxisRangesAreAlwaysUsable();
    void unusualPointsAreDrawnWithoutCrashing();
    void requestValidation_data();
    void requestValidation();
    void viewRefusesAnEmptyRange();
    void controlsMakeTheRequest();
    void passControlMakesTheRequest();
    void runWithoutAMethodForThePassIsRefused();
    void flopsCountThePass();
    void passGoesThroughAFile();
    void filesWithoutAPassAreForward();
    void unknownPassKeepsShownResults();
    void loadedPassIsNamedOnThePage_data();
    void loadedPassIsNamedOnThePage();
    void backwardWithoutKernelsSaysWhy();
    void screenshot();
};

void TestGpuBenchView::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName(QStringLiteral("FlashViz"));
    QApplication::setApplicationName(QStringLiteral("tst_gpu_bench_view"));
}

void TestGpuBenchView::init() {
    QFile::remove(gpuBenchResultsPath());
}

void TestGpuBenchView::withoutGpuRunIsOffAndSaysWhy() {
    const GpuBenchAvailability here = gpuBenchmarkAvailability();
    if (here.available) QSKIP("this machine has a usable GPU");
    QVERIFY(!here.reason.empty());
    GpuBenchmarkView view;
    QVERIFY(!view.canRun());
    auto* run = view.findChild<QPushButton*>(QStringLiteral("gpuBenchRun"));
    QVERIFY(run);
    QVERIFY(!run->isEnabled());
    QVERIFY2(view.statusText().contains(QString::fromStdString(here.reason)),
             qPrintable(view.statusText()));
    // Asking anyway (a shortcut, a script) is a message, not a run.
    view.run();
    QVERIFY(!view.isBusy());
    QVERIFY(view.errorText().contains(QString::fromStdString(here.reason)));
    // The registry refuses the same way, after checking the request.
    try {
        runGpuBenchmark(GpuBenchRequest{});
        QFAIL("runGpuBenchmark ran without a GPU");
    } catch (const EngineError& error) {
        QCOMPARE(error.kind(), ErrorKind::Unsupported);
    }
}

// The real thing, on a machine with an NVIDIA GPU: a small run measures every point with
// progress, draws and saves it; a second, longer run cancelled after its first point stops
// early, saves nothing and leaves the first run's charts on screen.
void TestGpuBenchView::onAGpuRunsShowsSavesAndCancels() {
    const GpuBenchAvailability here = gpuBenchmarkAvailability();
    if (!here.available)
        QSKIP(qPrintable(QStringLiteral("needs a usable NVIDIA GPU: %1")
                             .arg(QString::fromStdString(here.reason))));
    GpuBenchmarkView view;
    view.setResultsPath(QDir::temp().filePath(QStringLiteral("flashviz-gpu-bench-test.json")));
    QFile::remove(view.resultsPath());
    QVERIFY(view.canRun());
    GpuBenchRequest small;
    small.sizes = {1024, 2048};
    small.variants = {kGpuBenchStandardFp32, kGpuBenchFlashFp32, kGpuBenchFlashFp16};
    small.repeats = 2;
    view.setRequest(small);
    QSignalSpy shown(&view, &GpuBenchmarkView::resultsShown);
    auto* progress = view.findChild<QProgressBar*>(QStringLiteral("gpuBenchProgress"));
    QVERIFY(progress);
    view.run();
    QVERIFY(view.isBusy());
    QCOMPARE(progress->maximum(), 6);
    QVERIFY(view.waitForIdle(120000));
    QVERIFY2(view.errorText().isEmpty(), qPrintable(view.errorText()));
    QCOMPARE(shown.count(), 1);
    QVERIFY(view.shownRecord().has_value());
    const GpuBenchRecord first = *view.shownRecord();
    QCOMPARE(first.device, QString::fromStdString(here.deviceName));
    QCOMPARE(int(first.points.size()), 6);
    for (const GpuBenchPoint& point : first.points) {
        QVERIFY2(point.measured(), point.note.c_str());
        QVERIFY(point.tflops > 0 && std::isfinite(point.tflops));
        // Flash points say which kernel ran; standard attention is cuBLAS, named by its variant.
        QCOMPARE(point.kernel.empty(), point.variant == kGpuBenchStandardFp32);
    }
    QVERIFY(seriesOf(view.chart(GpuBenchmarkView::ThroughputChart), kGpuBenchFlashFp16));
    QVERIFY(QFile::exists(view.resultsPath()));

    GpuBenchRequest longer = small;
    longer.sizes = {1024, 2048, 4096, 8192, 16384};
    longer.repeats = 10;
    view.setRequest(longer);
    view.run();
    QVERIFY(view.isBusy());
    QTRY_VERIFY_WITH_TIMEOUT(progress->value() >= 1, 60000);
    view.cancel();
    QVERIFY(view.waitForIdle(120000));
    auto* message = view.findChild<QLabel*>(QStringLiteral("gpuBenchMessage"));
    QVERIFY(message);
    const QRegularExpressionMatch stopped =
        QRegularExpression(QStringLiteral("^Stopped after (\\d+) of (\\d+) points"))
            .match(message->text());
    QVERIFY2(stopped.hasMatch(), qPrintable(message->text()));
    QCOMPARE(stopped.captured(2).toInt(), 15);
    QVERIFY(stopped.captured(1).toInt() >= 1 && stopped.captured(1).toInt() < 15);
    QCOMPARE(shown.count(), 1);
    QCOMPARE(view.shownRecord()->points.size(), first.points.size());
    QFile::remove(view.resultsPath());
}

// Issue #14: the README promised the last saved results without a GPU, and a fresh install showed
// "No saved results" beside three empty charts. Until a run of the user's own is saved, the page
// shows the H200 measurement FlashViz ships, labelled with the GPU, the date and the program,
// and says where the user's own results would go.
void TestGpuBenchView::noSavedResultsShowTheShippedH200Run() {
    GpuBenchmarkView view;
    QVERIFY(view.errorText().isEmpty());
    QVERIFY(view.shownRecord());
    QVERIFY(view.showsShippedResults());
    const QString status = view.statusText();
    for (const char* part : {"results FlashViz ships", "NVIDIA H200", "2026-11-30 05:00 UTC",
                             "FlashViz 0.1.0, commit 0c87131", "d = 64"})
        QVERIFY2(status.contains(QString::fromUtf8(part)), qPrintable(status));
    QVERIFY2(status.contains(gpuBenchResultsPath()), qPrintable(status));
    QVERIFY(!status.contains(QStringLiteral("No saved results")));
    // The charts draw the kept measurement's own numbers.
    QFile kept(QStringLiteral(FLASHVIZ_SOURCE_DIR) +
               QStringLiteral("/kernels/bench/latest/gpu-benchmark-h200.json"));
    QVERIFY(kept.open(QIODevice::ReadOnly));
    const GpuBenchRecord measured = gpuBenchRecordFromJson(kept.readAll());
    for (const char* variant :
         {kGpuBenchStandardFp32, kGpuBenchFlashFp32, kGpuBenchFlashFp16, kGpuBenchFlashBf16}) {
        QLineSeries* series = seriesOf(view.chart(GpuBenchmarkView::ThroughputChart), variant);
        QVERIFY2(series, variant);
        int i = 0;
        for (const GpuBenchPoint& p : measured.points)
            if (p.variant == variant) {
                QCOMPARE(series->at(i).x(), double(p.n));
                QCOMPARE(series->at(i).y(), p.tflops);
                ++i;
            }
        QCOMPARE(series->count(), i);
    }
    QVERIFY(!view.captionText().isEmpty());
    // A run of the user's own, saved, replaces them the next time the page opens.
    saveGpuBenchRecord(sampleRecord(), gpuBenchResultsPath());
    GpuBenchmarkView again;
    QVERIFY(again.shownRecord() && !again.showsShippedResults());
    QVERIFY(!again.statusText().contains(QStringLiteral("FlashViz ships")));
}

// The controls say what the charts show: a saved forward + backward run at d = 128 with the mask
// over 4096 .. 16384 in fp16 and bf16 sets them so, and Run would repeat it.
void TestGpuBenchView::loadedResultsSetTheControls() {
    const std::string kernel = "wgmma_d128_br128_bc128_wg2_s2_overlap_pingpong + "
                               "wgmma_bwd_d128_bc128_br64_wg2_s2_dqturns_tiles";
    GpuBenchRecord saved;
    saved.device = QStringLiteral("NVIDIA H100 80GB HBM3");
    saved.measured = QDateTime(QDate(2026, 12, 7), QTime(10, 30), Qt::UTC);
    saved.request.sizes = {4096, 8192, 16384};
    saved.request.headDim = 128;
    saved.request.causal = true;
    saved.request.repeats = 7;
    saved.request.pass = GpuBenchPass::ForwardBackward;
    saved.request.variants = {kGpuBenchFlashFp16, kGpuBenchFlashBf16};
    for (const int n : saved.request.sizes)
        for (const char* variant : {kGpuBenchFlashFp16, kGpuBenchFlashBf16})
            saved.points.push_back({variant, n, 16384 / n, 16, n / 1024.0, 500.0, 1.4e8, "", kernel});
    saveGpuBenchRecord(saved, gpuBenchResultsPath());
    GpuBenchmarkView view;
    QVERIFY2(view.errorText().isEmpty(), qPrintable(view.errorText()));
    QVERIFY(view.shownRecord() && !view.showsShippedResults());
    QCOMPARE(view.shownRecord()->request.sizes, saved.request.sizes);
    const GpuBenchRequest shown = view.request();
    QCOMPARE(shown.sizes, saved.request.sizes);
    QCOMPARE(shown.headDim, 128);
    QVERIFY(shown.causal);
    QCOMPARE(shown.repeats, 7);
    QCOMPARE(int(shown.pass), int(GpuBenchPass::ForwardBackward));
    QCOMPARE(shown.variants, saved.request.variants);
    // The shipped H200 run (no saved file) sets them to its own request.
    QFile::remove(gpuBenchResultsPath());
    GpuBenchmarkView fresh;
    QVERIFY(fresh.showsShippedResults());
    QCOMPARE(fresh.request().headDim, fresh.shownRecord()->request.headDim);
    QCOMPARE(int(fresh.request().pass), int(fresh.shownRecord()->request.pass));
}

void TestGpuBenchView::savedResultsAreDrawnAsMeasured() {
    const GpuBenchRecord saved = sampleRecord();
    saveGpuBenchRecord(saved, gpuBenchResultsPath());
    GpuBenchmarkView view; // loads the last saved results on start
    QVERIFY2(view.errorText().isEmpty(), qPrintable(view.errorText()));
    QVERIFY(view.shownRecord());
    QVERIFY(view.statusText().contains(QStringLiteral("NVIDIA H200")));
    QVERIFY(view.statusText().contains(QStringLiteral("2026-11-30")));

    const char* variants[] = {kGpuBenchStandardFp32, kGpuBenchFlashFp32, kGpuBenchFlashFp16};
    for (const char* variant : variants) {
        std::vector<GpuBenchPoint> expected;
        for (const GpuBenchPoint& p : saved.points)
            if (p.variant == variant && p.measured()) expected.push_back(p);
        for (int c = 0; c < GpuBenchmarkView::ChartCount; ++c) {
            QLineSeries* series = seriesOf(view.chart(c), variant);
            QVERIFY2(series, variant);
            QCOMPARE(series->count(), qsizetype(expected.size()));
            for (std::size_t i = 0; i < expected.size(); ++i) {
                const QPointF at = series->at(int(i));
                QCOMPARE(at.x(), double(expected[i].n));
                const double y = c == GpuBenchmarkView::TimeChart ? expected[i].medianMs
                                 : c == GpuBenchmarkView::ThroughputChart
                                     ? expected[i].tflops
                                     : gpuBenchWorkingBytes(saved.request, expected[i]) /
                                           (1024.0 * 1024.0 * 1024.0);
                QCOMPARE(at.y(), y);
            }
        }
    }
    // No bf16 in the file: no bf16 line.
    QVERIFY(!seriesOf(view.chart(GpuBenchmarkView::TimeChart), kGpuBenchFlashBf16));
    // One legend above the three charts, wrapped rather than cut short in each of them: the
    // methods drawn, each in its line's colour.
    auto* legend = view.findChild<QLabel*>(QStringLiteral("gpuBenchLegend"));
    QVERIFY(legend && legend->wordWrap());
    for (int c = 0; c < GpuBenchmarkView::ChartCount; ++c)
        QVERIFY(!view.chart(c)->legend()->isVisible());
    for (const char* variant : variants) {
        QLineSeries* series = seriesOf(view.chart(GpuBenchmarkView::TimeChart), variant);
        QVERIFY2(legend->text().contains(series->name()), qPrintable(legend->text()));
        QVERIFY2(legend->text().contains(series->pen().color().name()), qPrintable(legend->text()));
    }
    QVERIFY(!legend->text().contains(QStringLiteral("bf16")));
    // The caption reads the ratio from the data (n = 2048: 10.293 / 0.881 = 11.7) and says
    // which point was not measured.
    const QString caption = view.captionText();
    QVERIFY2(caption.contains(QStringLiteral("n = 2048")), qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("11.7×")), qPrintable(caption));
    // Times in one unit, memory in the binary units the CUDA tools print (style/format.h).
    QVERIFY2(
        caption.contains(QStringLiteral("takes 0.88 ms where standard attention takes 10.3 ms")),
        qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("iB at n = ")), qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("flat")), qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("do not fit")), qPrintable(caption));
    // ... and which arithmetic flash fp32 was, from its kernel's name.
    QVERIFY2(caption.contains(QStringLiteral("flash fp32 ran d64_br64_bc128_m2_sw_u8x4: fp32 "
                                             "multiply-adds")),
             qPrintable(caption));
    GpuBenchRecord tensorCores = saved;
    for (GpuBenchPoint& p : tensorCores.points)
        if (p.variant == kGpuBenchFlashFp32) p.kernel = "tf32x3_d64_br128_bc64_m1";
    const QString path = QDir::temp().filePath(QStringLiteral("flashviz-gpu-bench-tf32x3.json"));
    saveGpuBenchRecord(tensorCores, path);
    QVERIFY(view.loadResults(path));
    QVERIFY2(view.captionText().contains(QStringLiteral(
                 "flash fp32 ran tf32x3_d64_br128_bc64_m1: tensor cores, each fp32 product as "
                 "three TF32 products")),
             qPrintable(view.captionText()));
    // ... and which tensor-core family fp16 / bf16 ran: the Hopper kernel or the mma.sync one.
    for (GpuBenchPoint& p : tensorCores.points)
        if (p.variant == kGpuBenchFlashFp16 || p.variant == kGpuBenchFlashBf16)
            p.kernel = "wgmma_d64_br192_bc128_wg3_s2_overlap";
    saveGpuBenchRecord(tensorCores, path);
    QVERIFY(view.loadResults(path));
    QVERIFY2(view.captionText().contains(QStringLiteral(
                 "flash fp16 and bf16 ran wgmma_d64_br192_bc128_wg3_s2_overlap: the Hopper kernel")),
             qPrintable(view.captionText()));
    for (GpuBenchPoint& p : tensorCores.points)
        if (p.variant == kGpuBenchFlashFp16 || p.variant == kGpuBenchFlashBf16) p.kernel = "tc_d64_br128_bc64_w4_qreg";
    saveGpuBenchRecord(tensorCores, path);
    QVERIFY(view.loadResults(path));
    QVERIFY2(view.captionText().contains(QStringLiteral(
                 "flash fp16 and bf16 ran tc_d64_br128_bc64_w4_qreg: the mma.sync tensor-core kernel")),
             qPrintable(view.captionText()));
    QFile::remove(path);
}

void TestGpuBenchView::jsonRoundTrip() {
    const GpuBenchRecord a = sampleRecord();
    const GpuBenchRecord b = gpuBenchRecordFromJson(gpuBenchRecordToJson(a));
    QCOMPARE(b.device, a.device);
    QCOMPARE(b.measured, a.measured);
    QCOMPARE(b.request.sizes, a.request.sizes);
    QCOMPARE(b.request.variants, a.request.variants);
    QCOMPARE(b.request.pass, GpuBenchPass::Forward);
    QCOMPARE(b.points.size(), a.points.size());
    for (std::size_t i = 0; i < a.points.size(); ++i) {
        QCOMPARE(b.points[i].variant, a.points[i].variant);
        QCOMPARE(b.points[i].medianMs, a.points[i].medianMs);
        QCOMPARE(b.points[i].scratchBytes, a.points[i].scratchBytes);
        QCOMPARE(b.points[i].note, a.points[i].note);
        QCOMPARE(b.points[i].kernel, a.points[i].kernel);
    }
    // The program that measured a record goes through a file; files before it load without one.
    GpuBenchRecord named = a;
    named.program = QStringLiteral("FlashViz 0.1.0");
    QCOMPARE(gpuBenchRecordFromJson(gpuBenchRecordToJson(named)).program, named.program);
    QVERIFY(b.program.isEmpty());
    QVERIFY(!gpuBenchRecordToJson(a).contains("\"program\""));
    // Files written before points named their kernel still load, with the kernel unknown.
    nlohmann::json old = nlohmann::json::parse(gpuBenchRecordToJson(a).toStdString());
    for (auto& point : old["points"])
        point.erase("kernel");
    const GpuBenchRecord c = gpuBenchRecordFromJson(QByteArray::fromStdString(old.dump()));
    QCOMPARE(c.points.size(), a.points.size());
    for (const GpuBenchPoint& p : c.points)
        QVERIFY(p.kernel.empty());
}

void TestGpuBenchView::malformedFilesGiveMessages_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    const QByteArray good = gpuBenchRecordToJson(sampleRecord());
    auto edited = [&good](const std::function<void(nlohmann::json&)>& edit) {
        nlohmann::json doc = nlohmann::json::parse(good.toStdString());
        edit(doc);
        return QByteArray::fromStdString(doc.dump());
    };
    QTest::newRow("not json") << QByteArray("{ \"format\": ") << "not valid JSON";
    QTest::newRow("empty") << QByteArray() << "not valid JSON";
    QTest::newRow("other file") << QByteArray("{\"presets\": []}")
                                << "not a FlashViz GPU benchmark";
    QTest::newRow("array") << QByteArray("[1, 2]") << "not a FlashViz GPU benchmark";
    QTest::newRow("newer version")
        << edited([](nlohmann::json& d) { d["version"] = 7; }) << "version 7";
    QTest::newRow("no points") << edited([](nlohmann::json& d) { d.erase("points"); })
                               << "missing or has the wrong type";
    QTest::newRow("n as text") << edited([](nlohmann::json& d) { d["points"][0]["n"] = "many"; })
                               << "missing or has the wrong type";
    QTest::newRow("bad date") << edited([](nlohmann::json& d) { d["measured"] = "yesterday"; })
                              << "ISO 8601";
    QTest::newRow("unknown method")
        << edited([](nlohmann::json& d) { d["points"][0]["variant"] = "magic"; }) << "magic";
    QTest::newRow("negative time")
        << edited([](nlohmann::json& d) { d["points"][1]["medianMs"] = -1.0; }) << "negative";
    QTest::newRow("bad d") << edited([](nlohmann::json& d) { d["request"]["headDim"] = 96; })
                           << "head dimensions 64 and 128";
    QTest::newRow("unknown pass")
        << edited([](nlohmann::json& d) { d["request"]["pass"] = "sideways"; }) << "\"sideways\"";
    QTest::newRow("pass as a number")
        << edited([](nlohmann::json& d) { d["request"]["pass"] = 2; })
        << "\"request.pass\" must be text";
    QTest::newRow("empty pass") << edited([](nlohmann::json& d) { d["request"]["pass"] = ""; })
                                << "not a pass FlashViz measures";
}

void TestGpuBenchView::malformedFilesGiveMessages() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    writeFile(gpuBenchResultsPath(), text);
    GpuBenchmarkView view;
    QVERIFY(view.showsShippedResults()); // in place of the file it could not read
    QVERIFY2(view.errorText().contains(QStringLiteral("could not be read")),
             qPrintable(view.errorText()));
    QVERIFY2(view.errorText().contains(expected), qPrintable(view.errorText()));
    QVERIFY(view.errorText().contains(gpuBenchResultsPath()));
    auto* message = view.findChild<QLabel*>(QStringLiteral("gpuBenchMessage"));
    QVERIFY(message && !message->isHidden());
}

void TestGpuBenchView::badFileKeepsShownResults() {
    saveGpuBenchRecord(sampleRecord(), gpuBenchResultsPath());
    GpuBenchmarkView view;
    QVERIFY(view.shownRecord());
    const QString other = QDir::temp().filePath(QStringLiteral("tst_gpu_bench_bad.json"));
    writeFile(other, "not json at all");
    QVERIFY(!view.loadResults(other));
    QVERIFY(view.shownRecord());
    QCOMPARE(view.shownRecord()->points.size(), sampleRecord().points.size());
    QVERIFY(seriesOf(view.chart(GpuBenchmarkView::TimeChart), kGpuBenchStandardFp32));
    QVERIFY(view.errorText().contains(QStringLiteral("not valid JSON")));
    QVERIFY(!view.loadResults(QDir::temp().filePath(QStringLiteral("no/such/file.json"))));
    QVERIFY(view.errorText().contains(QStringLiteral("could not be opened")));
    QFile::remove(other);
}

// Issue #12: numbers and text that crashed, froze or were silently misread. Each is refused
// with a message that names the field and the value as written; the page keeps running.
void TestGpuBenchView::hostileFilesGiveMessages_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QStringList>("expected");
    const QByteArray good = gpuBenchRecordToJson(sampleRecord());
    // The sample as one line, with the first occurrence of `from` replaced by `to` (raw text,
    // for numbers nlohmann would not write, such as 1e999).
    const QByteArray compact =
        QByteArray::fromStdString(nlohmann::json::parse(good.toStdString()).dump());
    auto replaced = [&compact](const char* from, const char* to) {
        QByteArray text = compact;
        const qsizetype at = text.indexOf(from);
        if (at < 0) qFatal("the sample has no %s", from);
        return text.replace(at, qsizetype(qstrlen(from)), to);
    };
    QTest::newRow("medianMs 1e308 (SIGSEGV)")
        << replaced("\"medianMs\":5.867", "\"medianMs\":1e308")
        << QStringList{"points[0].medianMs", "1e+308", "ms"};
    QTest::newRow("medianMs 1e999 (SIGABRT)")
        << replaced("\"medianMs\":5.867", "\"medianMs\":1e999")
        << QStringList{"not valid JSON", "1e999"};
    QTest::newRow("n 2.048e92 (undefined conversion)")
        << replaced("\"n\":1024", "\"n\":2.048e92")
        << QStringList{"points[0].n", "whole number from 1 to 16777216", "2.048e+92"};
    QTest::newRow("version 1e300 (read as -2147483648)")
        << replaced("\"version\":2", "\"version\":1e300") << QStringList{"\"version\"", "1e+300"};
    QTest::newRow("n 1e12 (read as -727379968)") << replaced("\"n\":1024", "\"n\":1000000000000")
                                                 << QStringList{"points[0].n", "1000000000000"};
    QTest::newRow("size 2^32 + 1024 (read as 1024)")
        << replaced("\"sizes\":[1024", "\"sizes\":[4294968320")
        << QStringList{"request.sizes[0]", "4294968320"};
    QTest::newRow("fractional d") << replaced("\"headDim\":64", "\"headDim\":64.5")
                                  << QStringList{"request.headDim", "whole number", "64.5"};
    QTest::newRow("repeats 1e6") << replaced("\"repeats\":10", "\"repeats\":1000000")
                                 << QStringList{"request.repeats", "1000000"};
    QTest::newRow("tflops 1e30") << replaced("\"tflops\":23.43", "\"tflops\":1e30")
                                 << QStringList{"points[0].tflops", "1e+30", "TFLOP/s"};
    QTest::newRow("scratch -1") << replaced("\"scratchBytes\":2147483648", "\"scratchBytes\":-1")
                                << QStringList{"points[0].scratchBytes", "negative"};
    QTest::newRow("time of 1e-300 ms") << replaced("\"medianMs\":5.867", "\"medianMs\":1e-300")
                                       << QStringList{"points[0].medianMs", "1e-300"};
    QTest::newRow("causal as text") << replaced("\"causal\":false", "\"causal\":\"no\"")
                                    << QStringList{"request.causal", "wrong type", "\"no\""};
    QTest::newRow("device a number") << replaced("\"device\":\"NVIDIA H200\"", "\"device\":7")
                                     << QStringList{"\"device\"", "wrong type"};
    QTest::newRow("long device name")
        << replaced("\"device\":\"NVIDIA H200\"",
                    ("\"device\":\"" + std::string(1000, 'G') + "\"").c_str())
        << QStringList{"\"device\"", "1000 characters", "200"};
    QTest::newRow("point not in the sizes")
        << replaced("\"n\":1024", "\"n\":512") << QStringList{"n = 512", "does not list"};
    QTest::newRow("points not a list") << replaced("\"points\":[", "\"points\":7,\"old\":[")
                                       << QStringList{"\"points\"", "a list", "7"};
    QTest::newRow("deeply nested")
        << QByteArray(100000, '[') << QStringList{"nested", "levels deep"};
    QTest::newRow("format a number")
        << QByteArray("{\"format\": 12}") << QStringList{"not a FlashViz GPU benchmark"};
    QTest::newRow("invalid UTF-8")
        << replaced("NVIDIA H200", "NVIDIA \xff\xfe") << QStringList{"not valid JSON"};
}

void TestGpuBenchView::hostileFilesGiveMessages() {
    QFETCH(QByteArray, text);
    QFETCH(QStringList, expected);
    try {
        (void)gpuBenchRecordFromJson(text);
        QFAIL("the text was read");
    } catch (const EngineError& error) {
        for (const QString& part : expected)
            QVERIFY2(QString::fromUtf8(error.what()).contains(part), error.what());
    }
    writeFile(gpuBenchResultsPath(), text);
    GpuBenchmarkView view;
    QVERIFY(view.showsShippedResults());
    QVERIFY2(view.errorText().contains(QStringLiteral("could not be read")),
             qPrintable(view.errorText()));
    for (const QString& part : expected)
        QVERIFY2(view.errorText().contains(part), qPrintable(view.errorText()));
}

// A 10 MB device name froze the window for 33 s; a file past 4 MiB is now refused before it is
// read or parsed.
void TestGpuBenchView::oversizedFileIsRefusedUnread() {
    const QByteArray good = gpuBenchRecordToJson(sampleRecord());
    QByteArray huge = good;
    huge.replace("NVIDIA H200", QByteArray(10 * 1024 * 1024, 'G'));
    writeFile(gpuBenchResultsPath(), huge);
    QElapsedTimer timer;
    timer.start();
    GpuBenchmarkView view;
    QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
    QVERIFY(view.showsShippedResults());
    QVERIFY2(view.errorText().contains(QStringLiteral("bytes long")), qPrintable(view.errorText()));
    QVERIFY2(view.errorText().contains(QString::number((4 * 1024 * 1024))),
             qPrintable(view.errorText()));
    try {
        (void)gpuBenchRecordFromJson(huge);
        QFAIL("the text was read");
    } catch (const EngineError& error) {
        QVERIFY2(QString::fromUtf8(error.what()).contains(QStringLiteral("bytes long")),
                 error.what());
    }
}

// The kept H200 measurement reads under the checks (every point's n is one of the sizes, every
// number in range).
void TestGpuBenchView::keptH200ResultsLoad() {
    QFile file(QStringLiteral(FLASHVIZ_SOURCE_DIR) +
               QStringLiteral("/kernels/bench/latest/gpu-benchmark-h200.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    try {
        const GpuBenchRecord record = gpuBenchRecordFromJson(file.readAll());
        QCOMPARE(record.device, QStringLiteral("NVIDIA H200"));
        QVERIFY(!record.points.empty());
        // The compiled-in copy is this measurement, with the program that made it named.
        const GpuBenchRecord shipped = shippedGpuBenchRecord();
        QCOMPARE(shipped.request.pass, GpuBenchPass::Forward); // written before the pass was
        QCOMPARE(record.request.pass, GpuBenchPass::Forward);
        QCOMPARE(shipped.program, QStringLiteral("FlashViz 0.1.0, commit 0c87131"));
        GpuBenchRecord unnamed = shipped;
        unnamed.program.clear();
        QCOMPARE(gpuBenchRecordToJson(unnamed), gpuBenchRecordToJson(record));
    } catch (const EngineError& error) {
        QFAIL(error.what());
    }
}

namespace {

// Every log axis of a chart has a range Qt Charts can lay out.
void verifyLogAxes(QChart* chart) {
    for (QAbstractAxis* axis : chart->axes())
        if (auto* log = qobject_cast<QLogValueAxis*>(axis)) {
            QVERIFY2(std::isfinite(log->min()) && std::isfinite(log->max()) && log->min() > 0 &&
                         log->max() > log->min(),
                     qPrintable(QStringLiteral("%1: %2 .. %3")
                                    .arg(chart->title())
                                    .arg(log->min())
                                    .arg(log->max())));
        } else if (auto* value = qobject_cast<QValueAxis*>(axis)) {
            QVERIFY(std::isfinite(value->min()) && std::isfinite(value->max()));
            QVERIFY(value->max() > value->min());
        }
}

} // namespace

// Issue #12: a log axis given a non-positive, non-finite or empty range recursed without end in
// Qt Charts (QLogValueAxisPrivate::setRange <-> LogXLogYDomain::setRange, >72,900 frames).
void TestGpuBenchView::logAxisRangesAreAlwaysUsable() {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::pair<double, double> ranges[] = {
        {0, 0},         {-1, 5},        {5, 5},     {0, 10},          {inf, inf},   {-inf, inf},
        {nan, 1},       {1, nan},       {nan, nan}, {1e-320, 1e-320}, {1e308, inf}, {10, 1},
        {1e300, 1e308}, {1, 1.0000001}, {2.5, 2.5}, {1e-300, 1e300}};
    for (const double base : {2.0, 10.0, 1000.0}) {
        for (const auto& [lo, hi] : ranges) {
            const auto [safeLo, safeHi] = safeLogRange(lo, hi, base);
            const QString what = QStringLiteral("base %1, [%2, %3] -> [%4, %5]")
                                     .arg(base)
                                     .arg(lo)
                                     .arg(hi)
                                     .arg(safeLo)
                                     .arg(safeHi);
            QVERIFY2(std::isfinite(safeLo) && std::isfinite(safeHi), qPrintable(what));
            QVERIFY2(safeLo >= kLogAxisFloor && safeHi <= kLogAxisCeiling, qPrintable(what));
            QVERIFY2(safeHi >= safeLo * kLogAxisMinRatio, qPrintable(what));
            // A usable range is kept as it is.
            if (lo > 0 && hi >= lo * kLogAxisMinRatio && lo >= kLogAxisFloor &&
                hi <= kLogAxisCeiling) {
                QCOMPARE(safeLo, lo);
                QCOMPARE(safeHi, hi);
            }
            // ... and a chart takes it: the axis in a laid-out chart with a series on it.
            QChart chart;
            auto* series = new QLineSeries;
            series->append(1, 1);
            series->append(2, 2);
            chart.addSeries(series);
            auto* x = new QLogValueAxis;
            auto* y = new QLogValueAxis;
            x->setBase(base);
            y->setBase(base);
            chart.addAxis(x, Qt::AlignBottom);
            chart.addAxis(y, Qt::AlignLeft);
            series->attachAxis(x);
            series->attachAxis(y);
            chart.resize(400, 300);
            setLogAxisRange(x, lo, hi);
            setLogAxisRange(y, lo, hi);
            QCOMPARE(y->min(), safeLo);
            QCOMPARE(y->max(), safeHi);
            verifyLogAxes(&chart);
        }
    }
}

// A record shown directly (not read from a file) may hold anything: the page draws what can be
// drawn and never gives an axis an unusable range. 1e308 ms made the time axis end at +inf.
void TestGpuBenchView::unusualPointsAreDrawnWithoutCrashing() {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto withPoints = [](std::vector<std::array<double, 4>> values) {
        GpuBenchRecord r = sampleRecord();
        r.points.clear();
        for (const auto& [n, ms, tflops, scratch] : values)
            r.points.push_back({kGpuBenchFlashFp16, int(n), 1, 32, ms, tflops, scratch, "", ""});
        return r;
    };
    std::vector<std::pair<const char*, GpuBenchRecord>> records = {
        {"all zero (nothing measured)", withPoints({{1024, 0, 0, 0}, {2048, 0, 0, 0}})},
        {"equal values", withPoints({{1024, 2.5, 10, 0}, {2048, 2.5, 10, 0}, {4096, 2.5, 10, 0}})},
        {"a power of ten", withPoints({{1024, 1, 1, 0}})},
        {"huge values", withPoints({{1024, 1e308, 1e308, 1e308}, {2048, 1.7e308, 1.7e308, 1e300}})},
        {"tiny values", withPoints({{1024, 1e-300, 1e-300, 0}, {2048, 5e-324, 0, 0}})},
        {"non-finite", withPoints({{1024, inf, nan, inf}, {2048, nan, inf, nan}, {4096, 3, 3, 3}})},
        {"zero throughput", withPoints({{1024, 5, 0, 0}, {2048, 6, 0, 0}})},
        {"n of zero", withPoints({{0, 5, 1, 0}, {-4, 6, 1, 0}})},
    };
    GpuBenchRecord noSizes = sampleRecord();
    noSizes.request.sizes.clear();
    records.emplace_back("no sizes", noSizes);
    GpuBenchRecord longName = sampleRecord();
    longName.device = QString(1 << 20, QLatin1Char('G'));
    records.emplace_back("a 1 MB device name", longName);

    GpuBenchmarkView view;
    view.resize(1400, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    for (const auto& [what, record] : records) {
        QElapsedTimer timer;
        timer.start();
        view.showRecord(record);
        QTest::qWait(20); // lay the charts out
        QVERIFY2(timer.elapsed() < 5000, what);
        QVERIFY2(view.shownRecord(), what);
        for (int c = 0; c < GpuBenchmarkView::ChartCount; ++c) {
            verifyLogAxes(view.chart(c));
            if (QTest::currentTestFailed()) QFAIL(what);
            for (QAbstractSeries* s : view.chart(c)->series())
                for (const QPointF& at : qobject_cast<QLineSeries*>(s)->points())
                    QVERIFY2(std::isfinite(at.x()) && std::isfinite(at.y()) && at.x() > 0, what);
        }
        QVERIFY2(view.statusText().size() < 2000, what);
    }
    // The points that can be drawn are: the finite one of "non-finite".
    view.showRecord(records[5].second);
    QLineSeries* fp16 = seriesOf(view.chart(GpuBenchmarkView::TimeChart), kGpuBenchFlashFp16);
    QVERIFY(fp16);
    QCOMPARE(fp16->count(), 1);
    QCOMPARE(fp16->at(0), QPointF(4096, 3));
}

void TestGpuBenchView::requestValidation_data() {
    QTest::addColumn<std::vector<int>>("sizes");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<std::vector<std::string>>("variants");
    QTest::addColumn<int>("repeats");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("expected");
    const std::vector<std::string> all = gpuBenchVariantNames();
    const int invalid = int(ErrorKind::InvalidArgument), unsupported = int(ErrorKind::Unsupported);
    QTest::newRow("empty sizes") << std::vector<int>{} << 64 << all << 10 << invalid
                                 << "at least one sequence length";
    QTest::newRow("d 96") << std::vector<int>{1024} << 96 << all << 10 << unsupported
                          << "64 and 128, not 96";
    QTest::newRow("d 0") << std::vector<int>{1024} << 0 << all << 10 << unsupported << "not 0";
    QTest::newRow("n not dividing")
        << std::vector<int>{1000} << 64 << all << 10 << invalid << "n = 1000";
    QTest::newRow("n zero") << std::vector<int>{0} << 64 << all << 10 << invalid << "n = 0";
    QTest::newRow("no methods") << std::vector<int>{1024} << 64 << std::vector<std::string>{} << 10
                                << invalid << "at least one method";
    QTest::newRow("unknown method")
        << std::vector<int>{1024} << 64 << std::vector<std::string>{"flash-fp8"} << 10 << invalid
        << "flash-fp8";
    QTest::newRow("no repeats") << std::vector<int>{1024} << 64 << all << 0 << invalid << "repeats";
}

void TestGpuBenchView::requestValidation() {
    QFETCH(std::vector<int>, sizes);
    QFETCH(int, headDim);
    QFETCH(std::vector<std::string>, variants);
    QFETCH(int, repeats);
    QFETCH(int, kind);
    QFETCH(QString, expected);
    GpuBenchRequest request;
    request.sizes = sizes;
    request.headDim = headDim;
    request.variants = variants;
    request.repeats = repeats;
    // Checked first, by the request's own check and by the registry, GPU or not.
    for (int via = 0; via < 2; ++via) {
        try {
            if (via == 0)
                validateGpuBenchRequest(request);
            else
                runGpuBenchmark(request);
            QFAIL("the request was accepted");
        } catch (const EngineError& error) {
            QCOMPARE(int(error.kind()), kind);
            QVERIFY2(QString::fromUtf8(error.what()).contains(expected), error.what());
        }
    }
}

void TestGpuBenchView::viewRefusesAnEmptyRange() {
    GpuBenchmarkView view;
    auto* from = view.findChild<QComboBox*>(QStringLiteral("gpuBenchFrom"));
    auto* to = view.findChild<QComboBox*>(QStringLiteral("gpuBenchTo"));
    from->setCurrentIndex(from->findData(8192));
    to->setCurrentIndex(to->findData(1024));
    QVERIFY(view.request().sizes.empty());
    view.run();
    QVERIFY(!view.isBusy());
    QVERIFY2(view.errorText().contains(QStringLiteral("at least one sequence length")),
             qPrintable(view.errorText()));
}

void TestGpuBenchView::controlsMakeTheRequest() {
    GpuBenchmarkView view;
    GpuBenchRequest wanted;
    wanted.sizes = {2048, 4096, 8192};
    wanted.headDim = 128;
    wanted.causal = true;
    wanted.variants = {kGpuBenchStandardFp32, kGpuBenchFlashBf16};
    wanted.repeats = 5;
    view.setRequest(wanted);
    const GpuBenchRequest got = view.request();
    QCOMPARE(got.sizes, wanted.sizes);
    QCOMPARE(got.headDim, 128);
    QVERIFY(got.causal);
    QCOMPARE(got.variants, wanted.variants);
    QCOMPARE(got.repeats, 5);
    QCOMPARE(got.tokens, 16384L);
    QCOMPARE(got.headsTimesDim, 2048);
}

void TestGpuBenchView::passControlMakesTheRequest() {
    GpuBenchmarkView view;
    auto* pass = view.findChild<QComboBox*>(QStringLiteral("gpuBenchPass"));
    QVERIFY(pass);
    QCOMPARE(pass->count(), 3);
    QCOMPARE(view.request().pass, GpuBenchPass::Forward);
    GpuBenchRequest wanted;
    wanted.pass = GpuBenchPass::Backward;
    view.setRequest(wanted);
    QCOMPARE(pass->currentText(), QStringLiteral("Backward"));
    GpuBenchRequest got = view.request();
    QCOMPARE(got.pass, GpuBenchPass::Backward);
    // The methods without a backward kernel are off, say why, and are left out.
    QCOMPARE(got.variants, (std::vector<std::string>{kGpuBenchFlashFp16, kGpuBenchFlashBf16}));
    for (const char* id : {kGpuBenchStandardFp32, kGpuBenchFlashFp32}) {
        auto* box = view.findChild<QCheckBox*>(QStringLiteral("gpuBenchVariant-%1").arg(QLatin1String(id)));
        QVERIFY(box && !box->isEnabled() && box->isChecked());
        QVERIFY2(box->toolTip().contains(QStringLiteral("fp16 / bf16 only")), qPrintable(box->toolTip()));
    }
    auto* fp16 = view.findChild<QCheckBox*>(QStringLiteral("gpuBenchVariant-flash-fp16"));
    QVERIFY(fp16->isEnabled() && fp16->toolTip().isEmpty());
    // Chosen by hand: both passes, then the forward again with every method back.
    pass->setCurrentIndex(pass->findText(QStringLiteral("Forward + backward")));
    QCOMPARE(view.request().pass, GpuBenchPass::ForwardBackward);
    QCOMPARE(view.request().variants.size(), std::size_t(2));
    pass->setCurrentIndex(pass->findText(QStringLiteral("Forward")));
    got = view.request();
    QCOMPARE(got.pass, GpuBenchPass::Forward);
    QCOMPARE(got.variants, wanted.variants);
    for (const QCheckBox* box : view.findChildren<QCheckBox*>(
             QRegularExpression(QStringLiteral("^gpuBenchVariant-"))))
        QVERIFY(box->isEnabled() && box->toolTip().isEmpty());
}

void TestGpuBenchView::runWithoutAMethodForThePassIsRefused() {
    GpuBenchmarkView view;
    GpuBenchRequest fp32Only;
    fp32Only.variants = {kGpuBenchStandardFp32, kGpuBenchFlashFp32};
    fp32Only.pass = GpuBenchPass::ForwardBackward;
    view.setRequest(fp32Only);
    QVERIFY(view.request().variants.empty());
    view.run();
    QVERIFY(!view.isBusy());
    QVERIFY2(view.errorText().contains(
                 QStringLiteral("only flash fp16 and bf16 have a forward + backward kernel")),
             qPrintable(view.errorText()));
}

void TestGpuBenchView::flopsCountThePass() {
    GpuBenchRequest r; // d = 64, 16384 tokens, heads x d = 2048
    const double forward = 4.0 * 1024.0 * 1024.0 * 64 * (16384 / 1024) * (2048 / 64);
    QCOMPARE(gpuBenchFlops(r, 1024), forward);
    r.pass = GpuBenchPass::Backward;
    QCOMPARE(gpuBenchFlops(r, 1024), 2.5 * forward);
    r.pass = GpuBenchPass::ForwardBackward;
    QCOMPARE(gpuBenchFlops(r, 1024), 3.5 * forward);
    r.causal = true;
    QCOMPARE(gpuBenchFlops(r, 1024), 1.75 * forward);
}

void TestGpuBenchView::passGoesThroughAFile() {
    for (const GpuBenchPass pass : kGpuBenchPasses) {
        const GpuBenchRecord record = passRecord(pass);
        const QByteArray text = gpuBenchRecordToJson(record);
        const QByteArray named = "\"pass\": \"" + QByteArray::fromStdString(gpuBenchPassName(pass)) + "\"";
        QVERIFY2(text.contains(named), text.constData());
        QCOMPARE(gpuBenchRecordFromJson(text).request.pass, pass);
        saveGpuBenchRecord(record, gpuBenchResultsPath());
        GpuBenchmarkView view; // loads the saved file on start
        QVERIFY(!view.showsShippedResults());
        QCOMPARE(view.shownRecord()->request.pass, pass);
    }
}

void TestGpuBenchView::filesWithoutAPassAreForward() {
    // As written before the pass was measured: format version 1, no "pass".
    nlohmann::json old = nlohmann::json::parse(gpuBenchRecordToJson(sampleRecord()).toStdString());
    old["version"] = 1;
    old["request"].erase("pass");
    writeFile(gpuBenchResultsPath(), QByteArray::fromStdString(old.dump(2)));
    GpuBenchmarkView view;
    QVERIFY2(!view.showsShippedResults(), qPrintable(view.errorText()));
    QCOMPARE(view.shownRecord()->request.pass, GpuBenchPass::Forward);
    QVERIFY(view.findChild<QLabel*>(QStringLiteral("gpuBenchLegend"))->text().startsWith(
        QStringLiteral("<b>Forward pass:</b>")));
    // A newer format is refused by name rather than misread.
    old["version"] = 3;
    QVERIFY_THROWS_EXCEPTION(EngineError, gpuBenchRecordFromJson(QByteArray::fromStdString(old.dump())));
}

void TestGpuBenchView::unknownPassKeepsShownResults() {
    saveGpuBenchRecord(passRecord(GpuBenchPass::Backward), gpuBenchResultsPath());
    GpuBenchmarkView view;
    QCOMPARE(view.shownRecord()->request.pass, GpuBenchPass::Backward);
    const QString caption = view.captionText();
    nlohmann::json doc = nlohmann::json::parse(
        gpuBenchRecordToJson(passRecord(GpuBenchPass::ForwardBackward)).toStdString());
    doc["request"]["pass"] = "sideways";
    const QString other = QDir::temp().filePath(QStringLiteral("tst_gpu_bench_pass.json"));
    writeFile(other, QByteArray::fromStdString(doc.dump()));
    QVERIFY(!view.loadResults(other));
    QVERIFY2(view.errorText().contains(QStringLiteral("\"request.pass\" is \"sideways\"")),
             qPrintable(view.errorText()));
    QVERIFY2(view.errorText().contains(QStringLiteral("\"forward\", \"backward\", \"forward+backward\"")),
             qPrintable(view.errorText()));
    QCOMPARE(view.shownRecord()->request.pass, GpuBenchPass::Backward);
    QCOMPARE(view.captionText(), caption);
    QVERIFY(view.findChild<QLabel*>(QStringLiteral("gpuBenchLegend"))->text().startsWith(
        QStringLiteral("<b>Backward pass:</b>")));
    QFile::remove(other);
}

void TestGpuBenchView::loadedPassIsNamedOnThePage_data() {
    QTest::addColumn<int>("pass");
    QTest::addColumn<QString>("legend"); // the pass as the legend above the charts names it
    QTest::addColumn<QString>("axis"); // the throughput's: its unit; the caption says how it counts
    QTest::addColumn<QString>("caption");
    QTest::addColumn<QString>("status");
    QTest::newRow("forward") << int(GpuBenchPass::Forward) << "<b>Forward pass:</b>"
                             << "TFLOP/s"
                             << "Forward pass: TFLOP/s counts its two matrix products, 4·n²·d·B·H."
                             << "(forward pass, d = 64";
    QTest::newRow("backward") << int(GpuBenchPass::Backward) << "<b>Backward pass:</b>"
                              << "TFLOP/s"
                              << "TFLOP/s counts 2.5 × 4·n²·d·B·H (its five matrix products), as "
                                 "FlashAttention reports."
                              << "(backward pass, d = 64";
    QTest::newRow("both") << int(GpuBenchPass::ForwardBackward)
                          << "<b>Forward + backward pass:</b>" << "TFLOP/s"
                          << "TFLOP/s counts 3.5 × 4·n²·d·B·H (the forward's 1 and the backward's "
                             "2.5), as FlashAttention reports."
                          << "(forward + backward pass, d = 64";
}

void TestGpuBenchView::loadedPassIsNamedOnThePage() {
    QFETCH(int, pass);
    QFETCH(QString, legend);
    QFETCH(QString, axis);
    QFETCH(QString, caption);
    QFETCH(QString, status);
    GpuBenchmarkView view;
    const QString path = QDir::temp().filePath(QStringLiteral("tst_gpu_bench_pass.json"));
    saveGpuBenchRecord(passRecord(GpuBenchPass(pass)), path);
    QVERIFY(view.loadResults(path));
    QVERIFY2(view.findChild<QLabel*>(QStringLiteral("gpuBenchLegend"))->text().startsWith(legend),
             qPrintable(view.findChild<QLabel*>(QStringLiteral("gpuBenchLegend"))->text()));
    QChart* throughput = view.chart(GpuBenchmarkView::ThroughputChart);
    QCOMPARE(writtenAxisTitle(throughput->axes(Qt::Vertical).front()), axis);
    QVERIFY2(view.captionText().contains(unbroken(caption)), qPrintable(view.captionText()));
    QVERIFY2(view.statusText().contains(status), qPrintable(view.statusText()));
    // The numbers the caption reads are the file's: fp16 at the largest n.
    QVERIFY2(view.captionText().contains(
                 unbroken(QStringLiteral("flash fp16 (tensor cores) takes 2.50 ms (220 TFLOP/s)"))),
             qPrintable(view.captionText()));
    QFile::remove(path);
}

void TestGpuBenchView::backwardWithoutKernelsSaysWhy() {
    const GpuBenchRecord record = passRecord(GpuBenchPass::ForwardBackward);
    GpuBenchmarkView view;
    view.showRecord(record);
    const QString caption = view.captionText();
    // The fp32 methods' points are not drawn, and their note is shown as for any point not measured.
    for (int c = 0; c < GpuBenchmarkView::ChartCount; ++c) {
        QVERIFY(!seriesOf(view.chart(c), kGpuBenchStandardFp32));
        QVERIFY(!seriesOf(view.chart(c), kGpuBenchFlashFp32));
        QVERIFY(seriesOf(view.chart(c), kGpuBenchFlashBf16));
    }
    QVERIFY2(caption.contains(QStringLiteral("4 point(s) not measured")), qPrintable(caption));
    QVERIFY2(caption.contains(unbroken(QLatin1String(kNoBackwardNote))), qPrintable(caption));
    // Both kernels are named, each as what it is.
    QVERIFY2(caption.contains(unbroken(QStringLiteral(
                 "flash fp16 and bf16's forward ran tc_d64_br128_bc64_w4_qreg: the mma.sync"))),
             qPrintable(caption));
    QVERIFY2(caption.contains(unbroken(QStringLiteral(
                 "flash fp16 and bf16's backward ran tc_bwd_d64_bc64_br64_w4: the mma.sync "
                 "tensor-core backward"))),
             qPrintable(caption));
    // On Hopper both passes are the wgmma kernels', each named as what it is.
    GpuBenchRecord hopper = record;
    for (GpuBenchPoint& p : hopper.points)
        if (!p.kernel.empty())
            p.kernel = "wgmma_d64_br192_bc128_wg3_s2_overlap + wgmma_bwd_d64_bc128_br64_wg2_s2";
    view.showRecord(hopper);
    for (const QString& expected :
         {QStringLiteral("flash fp16 and bf16's forward ran wgmma_d64_br192_bc128_wg3_s2_overlap: the "
                         "Hopper kernel"),
          QStringLiteral("flash fp16 and bf16's backward ran wgmma_bwd_d64_bc128_br64_wg2_s2: the "
                         "Hopper backward (a producer warpgroup")})
        QVERIFY2(view.captionText().contains(unbroken(expected)), qPrintable(view.captionText()));
    // The memory holds the gradients too: Q, K, V, O, dO, dQ, dK, dV in 16 bits and the scratch.
    // Under 1 GiB the axis reads MiB, the unit of the caption's figure below it (514 MiB).
    QChart* memory = view.chart(GpuBenchmarkView::MemoryChart);
    QCOMPARE(writtenAxisTitle(memory->axes(Qt::Vertical).front()),
             QStringLiteral("MiB (Q, K, V, O, dO, dQ, dK, dV, scratch)"));
    const double bytes = 8.0 * 16384 * 2048 * 2 + 2.2e6;
    QCOMPARE(gpuBenchWorkingBytes(record.request, record.points[2]), bytes);
    QCOMPARE(seriesOf(memory, kGpuBenchFlashFp16)->at(0).y(), bytes / (1024.0 * 1024.0));
    QVERIFY2(caption.contains(unbroken(QStringLiteral("flash never stores the n × n scores, so its memory "
                                                      "stays flat (514 MiB)"))),
             qPrintable(caption));
}

void TestGpuBenchView::screenshot() {
    const QString shot = qEnvironmentVariable("FLASHVIZ_GPUBENCH_SHOT");
    if (shot.isEmpty()) QSKIP("set FLASHVIZ_GPUBENCH_SHOT=<file.png> to render the page");
    GpuBenchmarkView view; // no saved results (init() removed them): the shipped H200 run
    QVERIFY(view.showsShippedResults());
    QFont font = view.font();
    font.setPointSizeF(qEnvironmentVariableIntValue("FLASHVIZ_GPUBENCH_SHOT_PT") > 0
                           ? qEnvironmentVariableIntValue("FLASHVIZ_GPUBENCH_SHOT_PT")
                           : 11);
    view.setFont(font);
    const QSize size = qEnvironmentVariableIsSet("FLASHVIZ_GPUBENCH_SHOT_SIZE")
                           ? QSize(qEnvironmentVariable("FLASHVIZ_GPUBENCH_SHOT_SIZE")
                                       .section(QLatin1Char('x'), 0, 0)
                                       .toInt(),
                                   qEnvironmentVariable("FLASHVIZ_GPUBENCH_SHOT_SIZE")
                                       .section(QLatin1Char('x'), 1, 1)
                                       .toInt())
                           : QSize(1600, 900);
    view.resize(size);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTest::qWait(100);
    QVERIFY(view.grab().save(shot));
}

QTEST_MAIN(TestGpuBenchView)
#include "tst_gpu_bench_view.moc"
