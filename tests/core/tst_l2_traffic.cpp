// The L2-aware traffic model (core/l2_traffic.h): its counting level equals the counting model's,
// its L2 and DRAM levels follow the written assumptions (counted here by hand), the issue's own
// Nsight Compute figures are within the 10 % it asks for, the measured file is read strictly.
#include "core/counters.h"
#include "core/errors.h"
#include "core/hardware.h"
#include "core/l2_traffic.h"
#include "core/options.h"
#include "core/units.h"

#include <QtTest>

#include <cmath>
#include <string>

using namespace flashviz;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TrafficShape issueShape() { // issue #19's measurement: fp16, d 64, n 4096, 4 x 32 heads, Br 128
    TrafficShape s;
    s.queries = s.keys = 4096;
    s.headDim = 64;
    s.batch = 4;
    s.heads = 32;
    s.elementBytes = 2;
    s.blockRows = 128;
    s.blockCols = 64;
    return s;
}

std::string pointJson(const std::string& method, int d, int n, const std::string& extra = {}) {
    return R"({"method": ")" + method + R"(", "variant": "x", "d": )" + std::to_string(d) +
           R"(, "n": )" + std::to_string(n) + R"(, "batch": 4, "heads": 32, "blockRows": 128,
              "blockCols": 64, "dramReadBytes": 2.01e8, "dramWriteBytes": 5.8e7,
              "l2Bytes": 4.36e9, "durationNs": 1e6)" + extra + "}";
}

std::string fileJson(const std::string& points) {
    return R"({"format": "flashviz-measured-traffic", "version": 1, "gpu": "NVIDIA H200",
               "date": "2026-12-05", "bandwidth": {"l2ReadBytesPerSecond": 1e13,
               "dramReadBytesPerSecond": 4e12, "l2Bytes": 6e7}, "points": [)" +
           points + "]}";
}

} // namespace

class TestL2Traffic : public QObject {
    Q_OBJECT
  private slots:
    void countingLevelIsTheCountingModel();
    void issueFiguresByHand();
    void issueMeasurementIsWithinTenPercent();
    void keyValueRereadsWhenAHeadSpansWavesAndOverflowsL2();
    void standardByHand();
    void standardKeptInL2WhenItFitsAndIsNotFlushed();
    void badShapesAreRefused();
    void everyProfileHasL2FiguresWithSources();
    void measuredFileIsRead();
    void missesAreExplainedByTheCountersParts();
    void brokenMeasuredFilesAreRefused_data();
    void brokenMeasuredFilesAreRefused();
    void gpuNamesMapToProfiles();
    void bytesAreWrittenOneWay();
};

void TestL2Traffic::countingLevelIsTheCountingModel() {
    const HardwareProfile& hw = findHardwareProfile("h200");
    for (const bool causal : {false, true})
        for (const int n : {100, 1024, 3000}) {
            TrafficShape s;
            s.queries = n;
            s.keys = n + 37;
            s.headDim = 48;
            s.batch = 2;
            s.heads = 3;
            s.causal = causal;
            s.blockRows = 64;
            s.blockCols = 32;
            FlashOptions options;
            options.blockRows = 64;
            options.blockCols = 32;
            const Counters c = flashCounts(n, n + 37, 48, causal, options);
            const TrafficEstimate e = estimateTraffic(s, hw);
            QCOMPARE(e.counting.read, 6.0 * double(c.hbmReadBytes));
            QCOMPARE(e.counting.write, 6.0 * double(c.hbmWriteBytes));
            QCOMPARE(e.l2.read, e.counting.read);
            s.elementBytes = 2; // half the bytes, same elements
            QCOMPARE(estimateTraffic(s, hw).counting.total(), e.counting.total() / 2);
        }
}

void TestL2Traffic::issueFiguresByHand() {
    const TrafficEstimate e = estimateTraffic(issueShape(), findHardwareProfile("h200"));
    const double heads = 128, n = 4096, d = 64, bytes = 2;
    // Q once, K and V once per each of the 32 query blocks, O once: the issue's 4.43 GB.
    QCOMPARE(e.l2.read, heads * (n * d + 32 * 2 * n * d) * bytes);
    QCOMPARE(e.l2.write, heads * n * d * bytes);
    QCOMPARE(std::round(e.l2.total() / 1e7) / 100, 4.43);
    // DRAM: each input once (67 MB each), O once.
    QCOMPARE(e.dram.read, 3 * heads * n * d * bytes);
    QCOMPARE(e.dram.write, heads * n * d * bytes);
    QCOMPARE(e.keyValuePasses, 1.0);
    QCOMPARE(e.usableL2Bytes, 30 * kMiB);
    QVERIFY(!e.assumptions.empty());
}

void TestL2Traffic::issueMeasurementIsWithinTenPercent() {
    MeasuredTraffic m;
    m.shape = issueShape();
    m.method = "tc-fp16-tc_d64_br128_bc64_w4_qreg";
    m.l2Bytes = 4.36e9;
    m.dramReadBytes = 201e6;
    m.dramWriteBytes = 58e6;
    const TrafficCheck c = checkTraffic(m, findHardwareProfile("h200"));
    QVERIFY2(c.dramWithin, qPrintable(QString::number(c.dramError)));
    QVERIFY(c.countingWithin);
    QVERIFY(c.l2Within);
    QVERIFY(std::abs(c.dramReadError) < 0.01);
    QVERIFY(c.dramWriteError > 0.10); // O's last lines were still in L2
    QVERIFY2(c.why.find("still in L2") != std::string::npos, c.why.c_str());
    // 58 MB written against the model's 67.1 MB: 14 % less, said without a double negative.
    QVERIFY2(c.why.find("DRAM wrote 14 % less") != std::string::npos, c.why.c_str());
    // A counter far from the model fails the check and says which way.
    m.dramReadBytes = 2 * 201e6;
    const TrafficCheck off = checkTraffic(m, findHardwareProfile("h200"));
    QVERIFY(!off.dramWithin);
    QVERIFY2(off.why.find("re-reads missed") != std::string::npos, off.why.c_str());
}

void TestL2Traffic::keyValueRereadsWhenAHeadSpansWavesAndOverflowsL2() {
    TrafficShape s;
    s.queries = s.keys = 262144;
    s.headDim = 128;
    s.blockRows = 64;
    s.blockCols = 64;
    s.residentBlocks = 132;
    const TrafficEstimate e = estimateTraffic(s, findHardwareProfile("h200"));
    // 4096 query blocks in waves of 132; K and V are 256 MB, more than the usable 30 MB.
    QCOMPARE(e.keyValuePasses, std::ceil(4096.0 / 132));
    QCOMPARE(e.dram.read, (262144.0 * 128 + e.keyValuePasses * 2 * 262144.0 * 128) * 4);
    // The same head with every block resident at once walks K and V in step: once.
    s.residentBlocks = 4096;
    QCOMPARE(estimateTraffic(s, findHardwareProfile("h200")).keyValuePasses, 1.0);
    // So do K and V that fit in the usable L2, whatever the waves.
    s.queries = s.keys = 16384;
    s.residentBlocks = 16;
    QCOMPARE(estimateTraffic(s, findHardwareProfile("h200")).keyValuePasses, 1.0);
}

void TestL2Traffic::standardByHand() {
    TrafficShape s;
    s.method = TrafficMethod::Standard;
    s.queries = s.keys = 256;
    s.headDim = 64;
    const TrafficEstimate e = estimateTraffic(s, findHardwareProfile("a100-40gb"));
    const Counters c = standardCounts(256, 256, 64);
    QCOMPARE(e.counting.read, double(c.hbmReadBytes));
    QCOMPARE(e.counting.write, double(c.hbmWriteBytes));
    // Flushed between kernels, DRAM moves what the counting model counts.
    QCOMPARE(e.dram.read, e.counting.read);
    QCOMPARE(e.dram.write, e.counting.write);
    // Through L2, 128 x 128 output tiles: Q and K read twice each, S written, S read twice and
    // written (the softmax), P read once, V twice, O written.
    const double scores = 256.0 * 256 * 4, panel = 256.0 * 64 * 4;
    QCOMPARE(e.l2.read, 2 * panel + 2 * panel + 2 * scores + scores + 2 * panel);
    QCOMPARE(e.l2.write, 2 * scores + panel);
}

void TestL2Traffic::standardKeptInL2WhenItFitsAndIsNotFlushed() {
    TrafficShape s;
    s.method = TrafficMethod::Standard;
    s.queries = s.keys = 1024; // S: 4 MB, under the A100's usable 20 MB
    s.headDim = 64;
    s.flushedBetweenKernels = false;
    const TrafficEstimate kept = estimateTraffic(s, findHardwareProfile("a100-40gb"));
    QVERIFY(kept.workingSetFits);
    QCOMPARE(kept.dram.read, 3 * 1024.0 * 64 * 4);
    QCOMPARE(kept.dram.write, 1024.0 * 64 * 4);
    s.heads = 8; // 32 MB of S: no longer
    const TrafficEstimate spilled = estimateTraffic(s, findHardwareProfile("a100-40gb"));
    QVERIFY(!spilled.workingSetFits);
    QCOMPARE(spilled.dram.total(), spilled.counting.total());
}

void TestL2Traffic::badShapesAreRefused() {
    const HardwareProfile& hw = findHardwareProfile("h200");
    TrafficShape s = issueShape();
    s.elementBytes = 3;
    QVERIFY_THROWS_EXCEPTION(EngineError, estimateTraffic(s, hw));
    s = issueShape();
    s.heads = 0;
    QVERIFY_THROWS_EXCEPTION(EngineError, estimateTraffic(s, hw));
    s = issueShape();
    s.method = TrafficMethod::Standard; // fp16 standard attention is not a FlashViz method
    QVERIFY_THROWS_EXCEPTION(EngineError, estimateTraffic(s, hw));
    HardwareProfile noL2 = hw;
    noL2.l2Bytes = {};
    try {
        estimateTraffic(issueShape(), noL2);
        QFAIL("a profile without L2 was accepted");
    } catch (const EngineError& e) {
        QVERIFY(std::string(e.what()).find("no L2 size") != std::string::npos);
    }
}

void TestL2Traffic::everyProfileHasL2FiguresWithSources() {
    for (const HardwareProfile& p : hardwareProfiles()) {
        QVERIFY2(p.l2Bytes.value >= 40 * kMiB && !p.l2Bytes.source.empty(), p.id.c_str());
        QVERIFY2(p.l2BandwidthBytesPerSecond.value > p.hbmBandwidthBytesPerSecond.value &&
                     !p.l2BandwidthBytesPerSecond.source.empty(),
                 p.id.c_str());
    }
    // As cudaDeviceProp::l2CacheSize reports them: an H100's is 52,428,800 bytes.
    QCOMPARE(findHardwareProfile("a100-40gb").l2Bytes.value, 40 * kMiB);
    QCOMPARE(findHardwareProfile("h100-sxm").l2Bytes.value, 52428800.0);
    QCOMPARE(findHardwareProfile("h200").l2Bytes.value, 60 * kMiB);
}

void TestL2Traffic::measuredFileIsRead() {
    const std::string kernel =
        R"(, "kernels": [{"name": "tcFlashKernel", "grid": 4096, "waves": 15.5}])";
    const MeasuredTrafficFile f = parseMeasuredTraffic(
        fileJson(pointJson("tc-fp16-tc_d64", 64, 4096, kernel) + "," +
                 pointJson("flash-d64_br64_bc128", 64, 4096) + "," +
                 pointJson("cublas-3step", 64, 4096)));
    QCOMPARE(f.gpu, std::string("NVIDIA H200"));
    QCOMPARE(f.hardwareId, std::string("h200"));
    QCOMPARE(f.l2ReadBytesPerSecond, 1e13);
    QCOMPARE(f.points.size(), std::size_t(3));
    const MeasuredTraffic& tc = f.points[0];
    QCOMPARE(tc.shape.elementBytes, 2.0);
    QCOMPARE(tc.shape.method, TrafficMethod::Flash);
    QCOMPARE(tc.shape.residentBlocks, 264); // 4096 blocks in 15.5 waves
    QCOMPARE(tc.shape.batch * tc.shape.heads, 128);
    QCOMPARE(tc.l2Bytes, 4.36e9);
    QCOMPARE(f.points[1].shape.elementBytes, 4.0);
    QVERIFY(f.points[1].shape.writesRowStatistics);
    QCOMPARE(f.points[2].shape.method, TrafficMethod::Standard);
}

// The H100's n = 512 point of the fp16 kernel (2026-12-06): the counter holds 25 % of lines
// crossing L2's halves, so the count misses it by -14 %, but is +15 % off the SMs' requests
// alone; and a file without the breakdown falls back to the general sentence.
void TestL2Traffic::missesAreExplainedByTheCountersParts() {
    const std::string parts =
        R"(, "l2FromSmBytes": 5.86e8, "l2FabricBytes": 1.93e8, "localLoadBytes": 0,
            "localStoreBytes": 0)";
    std::string point = pointJson("tc-fp16-tc_d64_br128_bc64_w4_qreg", 64, 512, parts);
    point.replace(point.find("4.36e9"), 6, "7.81e8");
    point.replace(point.find(R"("batch": 4, "heads": 32)"), 23, R"("batch": 32, "heads": 32)");
    const MeasuredTrafficFile f = parseMeasuredTraffic(fileJson(point));
    const MeasuredTraffic& m = f.points.front();
    QCOMPARE(m.l2FromSmBytes, 5.86e8);
    QCOMPARE(m.l2FabricBytes, 1.93e8);
    QCOMPARE(m.localBytes, 0.0);
    const TrafficCheck c = checkTraffic(m, findHardwareProfile("h100-sxm"));
    QVERIFY(!c.countingWithin);
    QVERIFY2(c.why.find("25 % of it is lines crossing between L2's two halves") != std::string::npos,
             c.why.c_str());
    QVERIFY2(c.why.find("against the SMs' own requests it is +") != std::string::npos, c.why.c_str());
    QVERIFY(c.why.find("fewer bytes than counted") != std::string::npos);
    // Without the parts: the general reason, and no figure it cannot know.
    const MeasuredTrafficFile plain = parseMeasuredTraffic(
        fileJson(pointJson("tc-fp16-tc_d64_br128_bc64_w4_qreg", 64, 512)));
    QCOMPARE(plain.points.front().l2FromSmBytes, -1.0);
    QCOMPARE(plain.points.front().localBytes, -1.0);
    const TrafficCheck general = checkTraffic(plain.points.front(), findHardwareProfile("h100-sxm"));
    QVERIFY(general.why.find("crossing") == std::string::npos);
}

void TestL2Traffic::brokenMeasuredFilesAreRefused_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("not JSON") << "{oops" << "not a JSON object";
    QTest::newRow("another format") << R"({"format": "x", "points": []})"
                                    << "not FlashViz's measured traffic";
    QTest::newRow("no points") << QString::fromStdString(fileJson("")) << "no 'points'";
    QTest::newRow("unknown method")
        << QString::fromStdString(fileJson(pointJson("magic", 64, 512))) << "unknown method 'magic'";
    QTest::newRow("negative bytes")
        << QString::fromStdString(fileJson(R"({"method": "cublas-3step", "d": 64, "n": 512,
               "batch": 1, "heads": 1, "dramReadBytes": -1, "dramWriteBytes": 0, "l2Bytes": 0,
               "durationNs": 0})"))
        << "entry 1 needs a number 'dramReadBytes'";
    QTest::newRow("negative breakdown")
        << QString::fromStdString(fileJson(pointJson("cublas-3step", 64, 512, R"(, "l2FabricBytes": -3)")))
        << "entry 1 needs a number 'l2FabricBytes'";
    QTest::newRow("fractional n")
        << QString::fromStdString(fileJson(pointJson("cublas-3step", 64, 512).replace(
               pointJson("cublas-3step", 64, 512).find("512"), 3, "512.5")))
        << "whole number 'n'";
}

void TestL2Traffic::brokenMeasuredFilesAreRefused() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    try {
        parseMeasuredTraffic(json.toStdString());
        QFAIL("a broken file was read");
    } catch (const EngineError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
    }
}

void TestL2Traffic::gpuNamesMapToProfiles() {
    QCOMPARE(hardwareIdForGpu("NVIDIA H200"), std::string("h200"));
    QCOMPARE(hardwareIdForGpu("NVIDIA H100 80GB HBM3"), std::string("h100-sxm"));
    QCOMPARE(hardwareIdForGpu("NVIDIA A100-SXM4-80GB"), std::string("a100-80gb"));
    QCOMPARE(hardwareIdForGpu("NVIDIA A100-SXM4-40GB"), std::string("a100-40gb"));
    QCOMPARE(hardwareIdForGpu("NVIDIA GeForce RTX 4090"), std::string());
}

void TestL2Traffic::bytesAreWrittenOneWay() {
    QCOMPARE(formatByteAmount(128), std::string("128 B"));
    QCOMPARE(formatByteAmount(1536), std::string("1.50 KB"));
    QCOMPARE(formatByteAmount(8.5 * 1024 * 1024), std::string("8.50 MB"));
    QCOMPARE(formatByteAmount(20.0 * 1024 * 1024), std::string("20.0 MB"));
    QCOMPARE(formatByteAmount(300.0 * 1024 * 1024 * 1024), std::string("300 GB"));
}

QTEST_APPLESS_MAIN(TestL2Traffic)
#include "tst_l2_traffic.moc"
