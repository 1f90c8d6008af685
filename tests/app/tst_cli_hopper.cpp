// flashviz-cli hopper-trace without a Hopper GPU: the shipped traces (resources/traces/) shown
// with the engine's summary, a saved file read back, and every refusal with its reason. (The
// recording itself runs in tst_cuda_tensor_core's hopperTraceMode on an H100.)
#include "app/measured/shipped_measurements.h"
#include "core/units.h"
#include "kernels/backend_registry.h"
#include "kernels/hopper_trace.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <string>

#include "cli_support.h"

using flashviz::test::runCli;
namespace k = flashviz::kernels;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

class TestCliHopper : public QObject {
    Q_OBJECT

private slots:
    // Every variant is shipped, each with the mask it is built for; the text carries the
    // engine's summary of the longest block, formatted as every face formats it.
    void shippedTracesCoverEveryVariant() {
        const auto& shipped = flashviz::measured::shippedHopperTraces();
        QVERIFY2(!shipped.empty(), "resources/traces/hopper-h100.json is not built in");
        for (int row = 0; row < k::kHopperConfigCount; ++row)
            for (bool causal : {false, true}) {
                const bool built = k::kHopperConfigs[row].masks !=
                                   (causal ? k::MaskPreference::Full : k::MaskPreference::Causal);
                QCOMPARE(flashviz::measured::shippedHopperTrace(row, causal) != nullptr, built);
            }
        const k::HopperTrace& t = *flashviz::measured::shippedHopperTrace(4, false);
        const auto r = runCli({"hopper-trace", "--shipped", "--variant", t.kernel});
        QCOMPARE(r.code, 0);
        QVERIFY2(has(r.out, t.kernel + " (fp16)\n"), r.out.c_str());
        QVERIFY(has(r.out, t.kernel + " (fp16, causal)\n")); // both masks of the row
        QVERIFY(has(r.out, "recorded on " + t.device + ", " + t.recorded));
        const int longest = k::longestBlock(t);
        const k::HopperBlockSummary s = k::summarize(t.blocks[std::size_t(longest)], t.config().consumers + 1);
        QVERIFY2(has(r.out, "block time " + flashviz::formatNanoseconds(s.durationNs) +
                                ": a product outstanding (issued, not yet waited for) " +
                                flashviz::formatPercent(s.outstandingFraction())),
                 r.out.c_str());
        QVERIFY2(has(r.out, "tensor cores at work between " + flashviz::formatPercent(s.tensorWorkFraction())),
                 r.out.c_str());
        QVERIFY(has(r.out, "block " + std::to_string(longest + 1) + " of " + std::to_string(t.blocks.size())));
        // One timeline row per unit and warpgroup: the producer's three, three per consumer.
        QVERIFY(has(r.out, "consumer 2 tensor cores|"));
        QVERIFY(!has(r.out, "consumer 3 tensor cores|"));
        // Filters: d and the mask.
        const auto d64 = runCli({"hopper-trace", "--shipped", "--d", "64", "--causal"});
        QCOMPARE(d64.code, 0);
        QVERIFY(!has(d64.out, "wgmma_d128") && has(d64.out, "wgmma_d64_br128_bc128_wg2_s4_overlap_pingpong (fp16, causal)"));
        QVERIFY(!has(d64.out, "(fp16)\n"));
    }

    void aSavedFileReadsBack() {
        QTemporaryDir dir;
        const QString path = dir.filePath("t.json");
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            const std::string text = k::hopperTracesJson({*flashviz::measured::shippedHopperTrace(0, false)});
            f.write(text.data(), qint64(text.size()));
        }
        auto r = runCli({"hopper-trace", "--in", path.toStdString(), "--block", "1"});
        QCOMPARE(r.code, 0);
        QVERIFY2(has(r.out, "block 1 of "), r.out.c_str());
        QVERIFY(has(r.out, "consumer 3 tensor cores|")); // three consumers at d = 64
        r = runCli({"hopper-trace", "--in", path.toStdString(), "--block", "99"});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "--block"), r.err.c_str());
        QFile bad(dir.filePath("bad.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"format": "flashviz-hopper-trace", "version": 9, "traces": []})");
        bad.close();
        r = runCli({"hopper-trace", "--in", bad.fileName().toStdString()});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "has a version other than 1"), r.err.c_str());
    }

    void refusals() {
        auto r = runCli({"hopper-trace", "--variant", "wgmma_d256"});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "is not a Hopper kernel variant (0 wgmma_d64"), r.err.c_str());
        r = runCli({"hopper-trace", "--variant", "4", "--d", "64"});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "is not built for d = 64"), r.err.c_str());
        r = runCli({"hopper-trace", "--n", "20000"});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "n_q"), r.err.c_str());
        r = runCli({"hopper-trace", "--shipped", "--out", "x.json"});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "--out is for recording; --in and --shipped show recorded traces"), r.err.c_str());
        r = runCli({"hopper-trace", "--in", "x.json", "--n", "64"});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "--n is for recording"), r.err.c_str());
        r = runCli({"hopper-trace", "--all-variants", "--variant", "0"});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "leave out --variant"), r.err.c_str());
        r = runCli({"hopper-trace", "--shipped", "--in", "x.json"});
        QCOMPARE(r.code, 2);
        r = runCli({"hopper-trace", "--sizes", "1"});
        QCOMPARE(r.code, 2);
        QVERIFY2(has(r.err, "hopper-trace does not take --sizes"), r.err.c_str());
        // Recording needs a Hopper GPU; here the reason, and where to look instead.
        if (!flashviz::hopperTraceAvailability().available) {
            r = runCli({"hopper-trace"});
            QCOMPARE(r.code, 2);
            QVERIFY2(has(r.err, "The Hopper trace cannot run here: ") && has(r.err, "--shipped"), r.err.c_str());
            QVERIFY(r.out.empty());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliHopper)
#include "tst_cli_hopper.moc"
