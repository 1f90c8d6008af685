// The tensor-core (fp16 / bf16) flash kernels, mma.sync and (on Hopper) wgmma, against an fp64
// reference, the way the flash-attention test suite judges it: its largest error must be at
// most twice the largest error of the same attention computed plainly in the low precision
// (scores and P rounded to fp16 / bf16, fp32 accumulation). Ragged and mismatched shapes, causal
// (bottom-right aligned) and not, d = 64 and 128, both layouts, batch and heads, and every
// compiled variant. The refusals, the conversions and the selection policies need no GPU; the
// rest skips without one.
#include "gpu_test_support.h"
#include "half_test_support.h"

#include "core/errors.h"
#include "kernels/backend_registry.h"
#include "kernels/cuda_backend.h"
#include "kernels/cuda/sm80/tc_launch.h"
#include "kernels/cuda/sm90/hopper_launch.h"
#include "kernels/kernel_configs.h"

#include <Eigen/Dense>

#include <QtTest/QtTest>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

using namespace flashviz;

namespace {

using namespace flashviz::halftest;

struct HalfInputs {
    std::vector<std::uint16_t> q, k, v;
};

HalfInputs makeInputs(const HalfAttentionProblem& problem, std::uint32_t seed) {
    std::mt19937 rng(seed);
    HalfInputs in;
    in.q = randomHalf(halfQueryElements(problem), problem.type, rng);
    in.k = randomHalf(halfKeyElements(problem), problem.type, rng);
    in.v = randomHalf(halfKeyElements(problem), problem.type, rng);
    return in;
}

struct Errors {
    double kernel = 0; // max |kernel - fp64 reference|
    double plain = 0;  // max |plain low precision - fp64 reference|
    bool finite = true;
};

Errors measure(const HalfAttentionProblem& p, const HalfInputs& in,
               const std::vector<std::uint16_t>& out) {
    Errors e;
    const double scale = p.scale > 0 ? p.scale : 1.0 / std::sqrt(double(p.headDim));
    for (int b = 0; b < p.batch; ++b)
        for (int h = 0; h < p.heads; ++h) {
            const Eigen::MatrixXd q = slice(p, in.q, p.queries, b, h);
            const Eigen::MatrixXd k = slice(p, in.k, p.keys, b, h);
            const Eigen::MatrixXd v = slice(p, in.v, p.keys, b, h);
            const Eigen::MatrixXd s = q * k.transpose();
            const Eigen::MatrixXf sLow = (q.cast<float>() * k.cast<float>().transpose());
            Eigen::MatrixXd pRef = Eigen::MatrixXd::Zero(p.queries, p.keys);
            Eigen::MatrixXf pLow = Eigen::MatrixXf::Zero(p.queries, p.keys);
            for (int i = 0; i < p.queries; ++i) {
                const int visible = visibleKeys(p, i);
                if (visible == 0) continue; // no visible key: the row is 0
                double mx = -std::numeric_limits<double>::infinity();
                float mxLow = -std::numeric_limits<float>::infinity();
                for (int j = 0; j < visible; ++j) {
                    mx = std::max(mx, s(i, j));
                    mxLow = std::max(mxLow, roundTo(sLow(i, j), p.type));
                }
                double sum = 0;
                float sumLow = 0;
                for (int j = 0; j < visible; ++j) {
                    pRef(i, j) = std::exp((s(i, j) - mx) * scale);
                    sum += pRef(i, j);
                    pLow(i, j) = std::exp((roundTo(sLow(i, j), p.type) - mxLow) * float(scale));
                    sumLow += pLow(i, j);
                }
                for (int j = 0; j < visible; ++j) {
                    pRef(i, j) /= sum;
                    pLow(i, j) = roundTo(pLow(i, j) / sumLow, p.type);
                }
            }
            const Eigen::MatrixXd ref = pRef * v;
            const Eigen::MatrixXf low = pLow * v.cast<float>();
            for (int i = 0; i < p.queries; ++i) {
                const std::size_t base = offset(p, p.queries, b, h, i);
                for (int c = 0; c < p.headDim; ++c) {
                    const double got = fromHalfBits(out[base + std::size_t(c)], p.type);
                    if (!std::isfinite(got)) e.finite = false;
                    e.kernel = std::max(e.kernel, std::fabs(got - ref(i, c)));
                    e.plain = std::max(e.plain, std::fabs(double(roundTo(low(i, c), p.type)) - ref(i, c)));
                }
            }
        }
    return e;
}

void runAndJudge(const HalfAttentionProblem& p, int kernel, std::uint32_t seed) {
    FLASHVIZ_SKIP_IF_LARGE(double(p.batch) * p.heads * p.queries * p.keys);
    const HalfInputs in = makeInputs(p, seed);
    const std::vector<std::uint16_t> out = cudaFlashForwardHalf(p, in.q, in.k, in.v, kernel);
    const Errors e = measure(p, in, out);
    const double ratio = e.plain > 0 ? e.kernel / e.plain : (e.kernel > 0 ? INFINITY : 0);
    qInfo("%s d=%d %dx%d B=%d H=%d %s%s kernel %d: max error %.3e, plain %s %.3e, ratio %.3f",
          typeName(p.type), p.headDim, p.queries, p.keys, p.batch, p.heads,
          p.causal ? "causal" : "non-causal",
          p.layout == HalfLayout::BatchSeqHeadDim ? " [b,n,h,d]" : "", kernel, e.kernel,
          typeName(p.type), e.plain, ratio);
    QVERIFY2(e.finite, "the kernel wrote a non-finite value");
    QVERIFY2(e.kernel <= 2 * e.plain,
             qPrintable(QStringLiteral("error %1 is more than twice the plain low-precision error %2")
                            .arg(e.kernel)
                            .arg(e.plain)));
}

} // namespace

class TestCudaTensorCore : public QObject {
    Q_OBJECT

private slots:
    void conversionsRoundToNearestEven() {
        QCOMPARE(toHalfBits(1.0f, HalfType::Fp16), std::uint16_t(0x3C00));
        QCOMPARE(toHalfBits(-2.0f, HalfType::Fp16), std::uint16_t(0xC000));
        QCOMPARE(toHalfBits(65504.0f, HalfType::Fp16), std::uint16_t(0x7BFF));
        QCOMPARE(toHalfBits(65520.0f, HalfType::Fp16), std::uint16_t(0x7C00)); // rounds to inf
        QCOMPARE(toHalfBits(std::ldexp(1.0f, -24), HalfType::Fp16), std::uint16_t(0x0001));
        QCOMPARE(toHalfBits(1.0f + std::ldexp(1.0f, -11), HalfType::Fp16), std::uint16_t(0x3C00)); // tie, even
        QCOMPARE(toHalfBits(1.0f + 3 * std::ldexp(1.0f, -11), HalfType::Fp16), std::uint16_t(0x3C02));
        QCOMPARE(toHalfBits(1.0f, HalfType::Bf16), std::uint16_t(0x3F80));
        QCOMPARE(toHalfBits(1.0f + std::ldexp(1.0f, -8), HalfType::Bf16), std::uint16_t(0x3F80)); // tie, even
        QCOMPARE(fromHalfBits(0x3C00, HalfType::Fp16), 1.0f);
        QCOMPARE(fromHalfBits(0x0001, HalfType::Fp16), std::ldexp(1.0f, -24));
        QCOMPARE(fromHalfBits(0xC000, HalfType::Bf16), -2.0f);
        QVERIFY(std::isinf(fromHalfBits(0x7C00, HalfType::Fp16)));
        QVERIFY(std::isnan(fromHalfBits(toHalfBits(NAN, HalfType::Bf16), HalfType::Bf16)));
        for (float x : {0.1f, -3.7f, 1234.5f, 1e-3f})
            for (HalfType t : {HalfType::Fp16, HalfType::Bf16})
                QVERIFY(std::fabs(roundTo(x, t) - x) <= std::fabs(x) * (t == HalfType::Fp16 ? 0x1p-11 : 0x1p-8));
    }

    // Which compiled variant runs by default, for the shared memory of three GPUs (no GPU
    // needed): each gets one that fits as many blocks per SM as it was built for.
    void defaultVariantFitsTheGpu() {
        constexpr std::size_t KiB = 1024;
        struct Gpu {
            const char* name;
            std::size_t perBlock, perSm;
        };
        const Gpu gpus[] = {{"H100/H200", 227 * KiB, 228 * KiB},
                            {"A100", 163 * KiB, 164 * KiB},
                            {"RTX 30/40 (sm_86/89)", 99 * KiB, 100 * KiB}};
        for (const Gpu& gpu : gpus)
            for (int d : {64, 128}) {
                const cuda::TcKernelInfo* chosen = cuda::chooseTcKernel(d, gpu.perBlock, gpu.perSm, KiB);
                QVERIFY2(chosen, gpu.name);
                QCOMPARE(chosen->headDim, d);
                QVERIFY(chosen->sharedBytes <= gpu.perBlock);
                // Nothing earlier in the list would fit its own blocks per SM.
                const bool ownOccupancy =
                    (chosen->sharedBytes + KiB) * std::size_t(chosen->blocksPerSm) <= gpu.perSm;
                for (const auto& other : cuda::tcKernels()) {
                    if (&other == chosen) break;
                    if (other.headDim != d || other.sharedBytes > gpu.perBlock) continue;
                    QVERIFY2((other.sharedBytes + KiB) * std::size_t(other.blocksPerSm) > gpu.perSm ||
                                 !ownOccupancy,
                             qPrintable(QStringLiteral("%1 d=%2: %3 passed over").arg(gpu.name).arg(d)
                                            .arg(QString::fromStdString(other.name))));
                }
            }
        // The H200's d = 128 default (two 96 KiB blocks per SM) would get one block on an A100,
        // so the A100 runs another variant.
        const auto* h200 = cuda::chooseTcKernel(128, 227 * KiB, 228 * KiB, KiB);
        const auto* a100 = cuda::chooseTcKernel(128, 163 * KiB, 164 * KiB, KiB);
        QVERIFY(h200 && a100);
        QCOMPARE(h200->blocksPerSm, 2);
        QVERIFY(h200 != a100);
        QVERIFY(!cuda::chooseTcKernel(128, 16 * KiB, 16 * KiB, KiB)); // nothing fits
    }

    // The Hopper kernel's variants follow the mma.sync ones, one per row of kHopperConfigs, and
    // its own selection policy picks one for both d on an H100's / H200's shared memory (no GPU
    // needed). Without sm_90a in the build there are none.
    void hopperVariantsFollowTheMmaSyncOnes() {
        constexpr std::size_t KiB = 1024;
        const auto& all = cuda::tcKernels();
        int wgmma = 0;
        for (const auto& k : all) {
            if (!k.wgmma) {
                QVERIFY2(k.id < kernels::kTensorCoreConfigCount, k.name.c_str());
                continue;
            }
            const int row = k.id - kernels::kTensorCoreConfigCount;
            QCOMPARE(row, wgmma++);
            QCOMPARE(k.name, kernels::hopperConfigName(kernels::kHopperConfigs[row]));
            QVERIFY(k.name.rfind("wgmma_", 0) == 0);
            QCOMPARE(k.sharedBytes, kernels::kHopperConfigs[row].sharedBytes());
            QCOMPARE(k.blocksPerSm, 1);
        }
        if (wgmma == 0) QSKIP("this build has no sm_90a code (CUDA toolkit older than 12.5)");
        QCOMPARE(wgmma, kernels::kHopperConfigCount);
        for (int d : {64, 128})
            for (bool causal : {false, true}) {
                const cuda::TcKernelInfo* hopper =
                    cuda::chooseHopperTcKernel(d, causal, 227 * KiB, 228 * KiB, KiB);
                QVERIFY(hopper && hopper->wgmma);
                QCOMPARE(hopper->headDim, d);
                QVERIFY(hopper->sharedBytes + KiB <= 228 * KiB);
                // A row preferred for the other mask is never chosen.
                const auto& row = kernels::kHopperConfigs[hopper->id - kernels::kTensorCoreConfigCount];
                QVERIFY(row.masks != (causal ? kernels::MaskPreference::Full : kernels::MaskPreference::Causal));
            }
        // At d = 64 the measured schedules differ with the mask: three consumers without it, two
        // in ping-pong with it.
        QCOMPARE(cuda::chooseHopperTcKernel(64, false, 227 * KiB, 228 * KiB, KiB)->name,
                 std::string("wgmma_d64_br192_bc128_wg3_s2_overlap"));
        QCOMPARE(cuda::chooseHopperTcKernel(64, true, 227 * KiB, 228 * KiB, KiB)->name,
                 std::string("wgmma_d64_br128_bc128_wg2_s4_overlap_pingpong"));
        // sm_90a code runs on compute capability 9.0 alone (not on 8.0, 8.9, 10.0 or 12.0).
        QVERIFY(kernels::runsSm90a(9, 0));
        for (const auto& [major, minor] : {std::pair{8, 0}, {8, 9}, {10, 0}, {12, 0}})
            QVERIFY(!kernels::runsSm90a(major, minor));
        // Every row needs more than 64 KiB: none fits there.
        for (int d : {64, 128}) QVERIFY(!cuda::chooseHopperTcKernel(d, false, 64 * KiB, 64 * KiB, KiB));
    }

    // On a Hopper GPU the default is the Hopper kernel; elsewhere the mma.sync one.
    void defaultIsTheHopperKernelExactlyOnHopper() {
        FLASHVIZ_REQUIRE_GPU();
        const bool hopper = cuda::hopperKernelsRunHere();
        bool built = false;
        for (const auto& k : cuda::tcKernels()) built = built || k.wgmma;
        for (int d : {64, 128})
            for (bool causal : {false, true}) {
                const cuda::TcKernelInfo* chosen = cuda::defaultTcKernel(d, causal);
                QVERIFY(chosen);
                QCOMPARE(chosen->wgmma, hopper && built);
                qInfo("d = %d%s: %s", d, causal ? " causal" : "", chosen->name.c_str());
            }
    }

    void refusesWhatItCannotRun() {
        // No GPU needed: the checks come first.
        verifyHeadDimensionsRefused(checkHalfAttentionProblem);
        try {
            const HalfAttentionProblem p = problem(HalfType::Bf16, 96, 8, 8, true);
            const std::vector<std::uint16_t> data(halfQueryElements(p));
            (void)cudaFlashForwardHalf(p, data, data, data);
            QFAIL("head dimension accepted");
        } catch (const EngineError& e) {
            QCOMPARE(e.kind(), ErrorKind::Unsupported);
        }
        try {
            checkHalfAttentionProblem(problem(HalfType::Fp16, 64, 0, 16, false));
            QFAIL("empty problem accepted");
        } catch (const EngineError& e) {
            QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
        }
        checkHalfAttentionProblem(problem(HalfType::Bf16, 128, 113, 203, true, 2, 3));
        const auto kernels = cudaTensorCoreKernels();
        QVERIFY(!kernels.empty());
        for (const auto& k : kernels) QVERIFY(k.headDim == 64 || k.headDim == 128);
    }

    void rejectsMismatchedInputs() {
        FLASHVIZ_REQUIRE_GPU();
        const HalfAttentionProblem p = problem(HalfType::Fp16, 64, 16, 16, false);
        const std::vector<std::uint16_t> small(10);
        QVERIFY_THROWS_EXCEPTION(EngineError, cudaFlashForwardHalf(p, small, small, small));
    }

    void matchesReference_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("heads");
        QTest::addColumn<bool>("sequenceMajor");
        const int shapes[][2] = {{113, 203}, {1023, 1024}, {2048, 2048}};
        for (HalfType t : {HalfType::Fp16, HalfType::Bf16})
            for (int d : {64, 128})
                for (const auto& s : shapes)
                    for (bool causal : {false, true})
                        QTest::addRow("%s d%d %dx%d %s", typeName(t), d, s[0], s[1],
                                      causal ? "causal" : "full")
                            << int(t) << d << s[0] << s[1] << causal << 1 << 1 << false;
        // More queries than keys: under the causal mask the first rows see no key and are 0.
        for (HalfType t : {HalfType::Fp16, HalfType::Bf16})
            for (int d : {64, 128}) {
                QTest::addRow("%s d%d 203x113 causal", typeName(t), d)
                    << int(t) << d << 203 << 113 << true << 1 << 1 << false;
                QTest::addRow("%s d%d 1x1", typeName(t), d) << int(t) << d << 1 << 1 << false << 1 << 1 << false;
                QTest::addRow("%s d%d 7x300 causal", typeName(t), d)
                    << int(t) << d << 7 << 300 << true << 1 << 1 << false;
                QTest::addRow("%s d%d B2 H3 129x77 [b,h,n,d]", typeName(t), d)
                    << int(t) << d << 129 << 77 << false << 2 << 3 << false;
                QTest::addRow("%s d%d B2 H3 113x203 causal [b,n,h,d]", typeName(t), d)
                    << int(t) << d << 113 << 203 << true << 2 << 3 << true;
                // Many key tiles, a ragged last one, rows heads x d apart.
                QTest::addRow("%s d%d H2 555x4097 [b,n,h,d]", typeName(t), d)
                    << int(t) << d << 555 << 4097 << false << 1 << 2 << true;
            }
    }

    void matchesReference() {
        FLASHVIZ_REQUIRE_GPU();
        QFETCH(int, type);
        QFETCH(int, d);
        QFETCH(int, nq);
        QFETCH(int, nk);
        QFETCH(bool, causal);
        QFETCH(int, batch);
        QFETCH(int, heads);
        QFETCH(bool, sequenceMajor);
        const HalfAttentionProblem p =
            problem(HalfType(type), d, nq, nk, causal, batch, heads,
                    sequenceMajor ? HalfLayout::BatchSeqHeadDim : HalfLayout::BatchHeadSeqDim);
        runAndJudge(p, -1, std::uint32_t(nq * 131 + nk * 7 + d));
    }

    void everyVariant_data() {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("heads");
        for (const auto& k : cudaTensorCoreKernels())
            for (HalfType t : {HalfType::Fp16, HalfType::Bf16}) {
                QTest::addRow("%s %s 113x203 causal", k.name.c_str(), typeName(t))
                    << k.id << int(t) << 113 << 203 << true << 1 << 2;
                QTest::addRow("%s %s 1023x1024", k.name.c_str(), typeName(t))
                    << k.id << int(t) << 1023 << 1024 << false << 1 << 2;
                QTest::addRow("%s %s 300x129 causal", k.name.c_str(), typeName(t))
                    << k.id << int(t) << 300 << 129 << true << 1 << 2;
                // The first 400 rows see no key: whole blocks of 192 rows have no key tile.
                QTest::addRow("%s %s 500x100 causal", k.name.c_str(), typeName(t))
                    << k.id << int(t) << 500 << 100 << true << 1 << 2;
                // More query blocks than an H100's or H200's 132 SMs (more than one wave of
                // blocks); under the mask some of them see no key.
                QTest::addRow("%s %s 2x40 heads 500x100", k.name.c_str(), typeName(t))
                    << k.id << int(t) << 500 << 100 << false << 2 << 40;
                QTest::addRow("%s %s 2x40 heads 500x100 causal", k.name.c_str(), typeName(t))
                    << k.id << int(t) << 500 << 100 << true << 2 << 40;
            }
    }

    void everyVariant() {
        FLASHVIZ_REQUIRE_GPU();
        QFETCH(int, kernel);
        QFETCH(int, type);
        QFETCH(int, nq);
        QFETCH(int, nk);
        QFETCH(bool, causal);
        QFETCH(int, batch);
        QFETCH(int, heads);
        const auto kernels = cudaTensorCoreKernels();
        const auto& info = kernels[std::size_t(kernel)];
        if (!info.fitsDevice) QSKIP("this variant does not run on this GPU (its shared memory, or a wgmma variant off Hopper)");
        runAndJudge(problem(HalfType(type), info.headDim, nq, nk, causal, batch, heads), kernel, 99);
    }

    // The trace mode (kernels/hopper_trace.h): every variant, ragged and mismatched, its output
    // the plain kernel's bit for bit (cudaHopperTrace checks), every block and every tile it
    // visits traced once, in order, on one time axis.
    void hopperTraceMode_data() {
        QTest::addColumn<int>("row");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        for (int row = 0; row < kernels::kHopperConfigCount; ++row) {
            const std::string name = kernels::hopperConfigName(kernels::kHopperConfigs[row]);
            // Ragged query blocks, more keys than queries; and fewer, where the causal mask
            // leaves the first query blocks no key tile at all.
            QTest::addRow("%s 333x700", name.c_str()) << row << false << 333 << 700;
            QTest::addRow("%s 333x700 causal", name.c_str()) << row << true << 333 << 700;
            QTest::addRow("%s 700x333 causal", name.c_str()) << row << true << 700 << 333;
        }
    }
    void hopperTraceMode() {
        FLASHVIZ_REQUIRE_GPU();
        const GpuBenchAvailability here = hopperTraceAvailability();
        if (!here.available) QSKIP(qPrintable(QString::fromStdString("no Hopper trace here: " + here.reason)));
        QFETCH(int, row);
        QFETCH(bool, causal);
        QFETCH(int, nq);
        QFETCH(int, nk);
        const kernels::HopperConfig& c = kernels::kHopperConfigs[row];
        kernels::HopperTraceRequest r;
        r.configRow = row;
        r.headDim = c.headDim;
        r.causal = causal;
        r.element = causal ? "bf16" : "fp16";
        r.queries = nq;
        r.keys = nk;
        r.heads = 2;
        r.repeats = 2;
        const kernels::HopperTrace t = recordHopperTrace(r);
        const int queryBlocks = (r.queries + c.blockRows() - 1) / c.blockRows();
        QCOMPARE(int(t.blocks.size()), queryBlocks * r.heads);
        QVERIFY(t.tracedKernelNs > 0 && t.plainKernelNs > 0);
        QVERIFY2(t.nsPerCycle > 0.2 && t.nsPerCycle < 2, qPrintable(QString::number(t.nsPerCycle)));
        qInfo("%s: plain %.1f us, traced %.1f us, timer step %.0f ns, %.3f GHz", t.kernel.c_str(),
              t.plainKernelNs / 1e3, t.tracedKernelNs / 1e3, t.timerStepNs, 1 / t.nsPerCycle);
        for (const kernels::HopperBlockTrace& b : t.blocks) {
            // The key tiles this block visits: all, or up to its last row's diagonal.
            const int row0 = b.queryBlock * c.blockRows();
            int tiles = (r.keys + c.blockCols - 1) / c.blockCols;
            if (causal) {
                const int lastKey = std::min(row0 + c.blockRows(), r.queries) - 1 + r.keys - r.queries;
                tiles = lastKey < 0 ? 0 : std::min(tiles, lastKey / c.blockCols + 1);
            }
            for (int wg = 1; wg <= c.consumers; ++wg) {
                std::vector<int> scores, values, softmax;
                for (const kernels::HopperSpan& s : b.spans) {
                    QVERIFY(s.startNs >= 0 && s.endNs >= s.startNs);
                    if (s.warpgroup != wg) continue;
                    if (s.activity == kernels::HopperActivity::Scores) scores.push_back(s.tile); // in issue order
                    if (s.activity == kernels::HopperActivity::Values) values.push_back(s.tile);
                    if (s.activity == kernels::HopperActivity::Softmax) softmax.push_back(s.tile);
                }
                std::vector<int> expected(static_cast<std::size_t>(tiles));
                std::iota(expected.begin(), expected.end(), 0);
                std::sort(values.begin(), values.end());
                std::sort(softmax.begin(), softmax.end());
                QCOMPARE(scores, expected);
                QCOMPARE(values, expected);
                QCOMPARE(softmax, expected);
            }
            const kernels::HopperBlockSummary sum = kernels::summarize(b, c.consumers + 1);
            // Some product outstanding where the block visits a tile; the estimate never above it.
            QVERIFY((sum.outstandingFraction() > 0) == (tiles > 0) && sum.outstandingFraction() <= 1);
            QVERIFY(sum.tensorWorkFraction() <= sum.outstandingFraction() + 1e-9);
            QVERIFY(sum.softmaxBesideProductsFraction() >= 0 && sum.softmaxBesideProductsFraction() <= 1);
        }
        // And the file reads back as it was written.
        QCOMPARE(kernels::parseHopperTraces(kernels::hopperTracesJson({t}))[0].blocks.size(), t.blocks.size());
    }
};

QTEST_GUILESS_MAIN(TestCudaTensorCore)
#include "tst_cuda_tensor_core.moc"
