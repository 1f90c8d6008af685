// The tensor-core (fp16 / bf16) backward pass against an fp64 reference, judged as the
// flash-attention test suite judges gradients: each of dQ, dK and dV at most twice as far from
// the reference as the same gradient computed plainly in the low precision (standard attention,
// every product's result and P rounded to fp16 / bf16). Also the forward's log-sum-exp (the
// mma.sync and the Hopper kernels write it), dK and dV reproducible bit for bit, ragged and
// mismatched shapes, causal (bottom-right) and not, both layouts, batch and heads, every
// variant, and the refusals (no GPU needed for those).
#include "gpu_test_support.h"
#include "half_test_support.h"

#include "core/errors.h"
#include "core/low_precision.h"
#include "kernels/cuda_backend.h"
#include "kernels/kernel_configs.h"

#include <Eigen/Dense>

#include <QtTest/QtTest>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace flashviz;
using namespace flashviz::halftest;

namespace {

struct Inputs {
    std::vector<std::uint16_t> q, k, v, dout;
};

Inputs makeInputs(const HalfAttentionProblem& p, std::uint32_t seed) {
    std::mt19937 rng(seed);
    Inputs in;
    in.q = randomHalf(halfQueryElements(p), p.type, rng);
    in.k = randomHalf(halfKeyElements(p), p.type, rng);
    in.v = randomHalf(halfKeyElements(p), p.type, rng);
    in.dout = randomHalf(halfQueryElements(p), p.type, rng);
    return in;
}

struct Judgement {
    LowPrecisionError o, dq, dk, dv;
    double lseError = 0; // max |kernel LSE - fp64 LSE| over rows that see a key
    bool lseEmptyRowsAreMinusInfinity = true;
};

// Each (batch, head) against standard attention in fp64 and plainly in the low precision
// (core/low_precision.h: the same judgement the CLI and the window make).
Judgement judge(const HalfAttentionProblem& p, const Inputs& in, const HalfGradients& g) {
    Judgement j;
    const double scale = p.scale > 0 ? p.scale : 1.0 / std::sqrt(double(p.headDim));
    for (int b = 0; b < p.batch; ++b)
        for (int h = 0; h < p.heads; ++h) {
            const Eigen::MatrixXd q = slice(p, in.q, p.queries, b, h), k = slice(p, in.k, p.keys, b, h),
                                  v = slice(p, in.v, p.keys, b, h),
                                  dout = slice(p, in.dout, p.queries, b, h);
            const StandardGradients exact =
                standardAttentionGradients(q, k, v, dout, scale, p.causal, std::nullopt);
            const StandardGradients plain =
                standardAttentionGradients(q, k, v, dout, scale, p.causal, p.type);
            j.o.merge(compareLowPrecision(slice(p, g.o, p.queries, b, h), plain.o, exact.o));
            j.dq.merge(compareLowPrecision(slice(p, g.dq, p.queries, b, h), plain.grads.dq, exact.grads.dq));
            j.dk.merge(compareLowPrecision(slice(p, g.dk, p.keys, b, h), plain.grads.dk, exact.grads.dk));
            j.dv.merge(compareLowPrecision(slice(p, g.dv, p.keys, b, h), plain.grads.dv, exact.grads.dv));
            for (int i = 0; i < p.queries; ++i) {
                const double lse = g.lse[(std::size_t(b) * p.heads + h) * p.queries + i];
                const double want = exact.logSumExp(i);
                if (std::isinf(want)) j.lseEmptyRowsAreMinusInfinity &= lse == want;
                else j.lseError = std::max(j.lseError, std::isfinite(lse) ? std::fabs(lse - want) : INFINITY);
            }
        }
    return j;
}

// Within kLowPrecisionErrorFactor (2) times the plain error, or kLowPrecisionExactFloor where the
// plain computation is exact (a 1x1 problem: the kernel's error there is 4e-7).
void verifyWithinTwice(const char* what, const LowPrecisionError& e) {
    qInfo("  %s: max error %.3e, plain %.3e, ratio %.3f", what, e.kernel, e.plain, e.ratio());
    QVERIFY2(e.nonFinite == 0, qPrintable(QStringLiteral("%1 has %2 non-finite values").arg(what).arg(e.nonFinite)));
    QVERIFY2(e.passed(),
             qPrintable(QStringLiteral("%1's error %2 is more than twice the plain low-precision error %3")
                            .arg(what)
                            .arg(e.kernel)
                            .arg(e.plain)));
}

void runAndJudge(const HalfAttentionProblem& p, int forwardKernel, int backwardKernel, std::uint32_t seed) {
    FLASHVIZ_SKIP_IF_LARGE(double(p.batch) * p.heads * p.queries * p.keys);
    const Inputs in = makeInputs(p, seed);
    const HalfGradients g = cudaFlashBackwardHalf(p, in.q, in.k, in.v, in.dout, forwardKernel, backwardKernel);
    const Judgement j = judge(p, in, g);
    qInfo("%s d=%d %dx%d B=%d H=%d %s%s, forward %d, backward %d:", typeName(p.type), p.headDim,
          p.queries, p.keys, p.batch, p.heads, p.causal ? "causal" : "full",
          p.layout == HalfLayout::BatchSeqHeadDim ? " [b,n,h,d]" : "", forwardKernel, backwardKernel);
    verifyWithinTwice("O", j.o);
    verifyWithinTwice("dQ", j.dq);
    verifyWithinTwice("dK", j.dk);
    verifyWithinTwice("dV", j.dv);
    // The scores' own rounding (fp32 sums of fp16 products) is far below 1e-3.
    qInfo("  LSE: max error %.3e", j.lseError);
    QVERIFY2(j.lseError <= 1e-3, "the forward's log-sum-exp is off");
    QVERIFY2(j.lseEmptyRowsAreMinusInfinity, "a row that sees no key must have LSE -inf");
}

// The first mma.sync forward variant for d, whose LSE the default (on Hopper the wgmma kernel)
// would otherwise leave untested there.
int mmaSyncForward(int d) {
    for (const auto& k : cudaTensorCoreKernels())
        if (!k.wgmma && k.headDim == d) return k.id;
    return -1;
}

} // namespace

class TestCudaTensorCoreBackward : public QObject {
    Q_OBJECT

private slots:
    void refusesWhatItCannotRun() {
        // No GPU needed: the problem's checks come first.
        verifyHeadDimensionsRefused([](const HalfAttentionProblem& p) {
            const std::vector<std::uint16_t> data(halfQueryElements(p));
            (void)cudaFlashBackwardHalf(p, data, data, data, data);
        });
        const HalfAttentionProblem p = problem(HalfType::Bf16, 64, 16, 16, true);
        const std::vector<std::uint16_t> full(halfQueryElements(p)), small(10);
        try {
            (void)cudaFlashBackwardHalf(p, full, full, full, small);
            QFAIL("a short dO accepted");
        } catch (const EngineError& e) {
            QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
            QVERIFY2(QString::fromUtf8(e.what()).contains("dO"), e.what());
        }
        // The scratch: dQ's fp32 accumulator over whole query blocks, two floats per row.
        const HalfAttentionProblem big = problem(HalfType::Fp16, 128, 1000, 300, false, 2, 3);
        QCOMPARE(halfBackwardWorkspaceBytes(big), std::size_t(2 * 3 * 1024 * (128 + 2) * 4));
        QCOMPARE(halfLogSumExpElements(big), std::size_t(2 * 3 * 1000));
    }

    // The variants are the table's rows; the default for each d fits an H100 / H200 and an A100
    // as many blocks per SM as it is built for, chosen by the policy every family shares (no
    // GPU needed).
    void variantsFitTheGpus() {
        constexpr std::size_t KiB = 1024;
        const auto all = cudaTensorCoreBackwardKernels();
        constexpr int kMmaSync = kernels::kTensorCoreBackwardConfigCount;
        // The Hopper rows follow where the toolkit builds sm_90a code, all of them.
        QVERIFY(int(all.size()) == kMmaSync || int(all.size()) == kMmaSync + kernels::kHopperBackwardConfigCount);
        for (std::size_t i = 0; i < all.size(); ++i) {
            QCOMPARE(all[i].id, int(i));
            QCOMPARE(all[i].wgmma, int(i) >= kMmaSync);
            if (int(i) < kMmaSync) {
                QCOMPARE(all[i].name, kernels::tensorCoreBackwardConfigName(kernels::kTensorCoreBackwardConfigs[i]));
                QCOMPARE(all[i].sharedBytes, kernels::kTensorCoreBackwardConfigs[i].sharedBytes());
            } else {
                const auto& row = kernels::kHopperBackwardConfigs[i - kMmaSync];
                QCOMPARE(all[i].name, kernels::hopperBackwardConfigName(row));
                QVERIFY(all[i].name.rfind("wgmma_bwd_", 0) == 0);
                QCOMPARE(all[i].sharedBytes, row.sharedBytes());
                // A Hopper block's limit, and one block with the driver's reserve in an SM's 228 KiB.
                QVERIFY(row.sharedBytes() <= 227 * KiB && row.sharedBytes() + KiB <= 228 * KiB);
            }
        }
        for (int d : {64, 128})
            for (const bool causal : {false, true}) {
                // The mma.sync row an H100 / H200 runs where the Hopper rows are not built.
                const int hopper = kernels::chooseTensorCoreBackwardConfig(d, causal, 227 * KiB, 228 * KiB, KiB);
                const int a100 = kernels::chooseTensorCoreBackwardConfig(d, causal, 163 * KiB, 164 * KiB, KiB);
                QVERIFY(hopper >= 0 && a100 >= 0);
                for (const int row : {hopper, a100}) {
                    const auto& c = kernels::kTensorCoreBackwardConfigs[row];
                    QCOMPARE(c.headDim, d);
                    QVERIFY((c.sharedBytes() + KiB) * std::size_t(c.minBlocksPerSm) <= 164 * KiB);
                    QVERIFY(kernels::prefers(c.masks, causal));
                }
                // As measured on an H100 (kernels/bench/BACKWARD_NOTES.md, v4, v5): the streamed
                // schedule, except at d = 128 under the mask, where v3's whole-step one stays.
                QCOMPARE(kernels::kTensorCoreBackwardConfigs[hopper].streamed, d == 64 || !causal);
            }
        QCOMPARE(kernels::chooseTensorCoreBackwardConfig(128, false, 48 * KiB, 48 * KiB, KiB), -1);
        // The Hopper rows on an H100's / H200's shared memory, as measured (BACKWARD_NOTES.md, v8
        // to v10): dQ added by tiles, at d = 64 split by rows (128 query rows a step), at d = 128
        // in turns, with and without the mask.
        for (int d : {64, 128})
            for (const bool causal : {false, true}) {
                const int row = kernels::chooseHopperBackwardConfig(d, causal, 227 * KiB, 228 * KiB, KiB);
                QVERIFY(row >= 0);
                QCOMPARE(kernels::kHopperBackwardConfigs[row].headDim, d);
                QCOMPARE(kernels::kHopperBackwardConfigs[row].dqSplit,
                         d == 64 ? kernels::DqSplit::Rows : kernels::DqSplit::Turns);
                QVERIFY(kernels::kHopperBackwardConfigs[row].dqTiles);
            }
        QCOMPARE(kernels::chooseHopperBackwardConfig(128, false, 64 * KiB, 64 * KiB, KiB), -1);
    }

    // Every variant has its own name (the benchmark and the CLI report them; BACKWARD_NOTES.md
    // quotes them), and a Hopper row's name says how it shares dQ, except for the split first
    // built for its d (v7's names).
    void variantNamesSayHowDqIsShared() {
        std::set<std::string> names;
        for (const auto& c : kernels::kTensorCoreBackwardConfigs) names.insert(kernels::tensorCoreBackwardConfigName(c));
        for (const auto& c : kernels::kHopperBackwardConfigs) {
            const std::string name = kernels::hopperBackwardConfigName(c);
            names.insert(name);
            const bool keys = name.find("_dqkeys") != std::string::npos,
                       turns = name.find("_dqturns") != std::string::npos,
                       rows = name.find("_dqrows") != std::string::npos;
            QCOMPARE(turns, c.dqSplit == kernels::DqSplit::Turns);
            QCOMPARE(rows, c.dqSplit == kernels::DqSplit::Rows);
            QCOMPARE(name.find("_br128") != std::string::npos, rows); // 128 query rows a step
            QCOMPARE(name.find("_tiles") != std::string::npos, c.dqTiles);
            // A consumer's tile, reused two steps later in turns, one by rows (by tiles only).
            QVERIFY(!c.dqTiles || c.dqSplit == kernels::DqSplit::Turns || rows);
            QVERIFY(!rows || c.dqTiles);
            QCOMPARE(keys, c.dqSplit == kernels::DqSplit::Keys && c.headDim == 128);
            QVERIFY(c.dqSplit != kernels::DqSplit::Columns || c.headDim == 128); // N = 64 halves
        }
        QCOMPARE(names.size(), std::size(kernels::kTensorCoreBackwardConfigs) + std::size(kernels::kHopperBackwardConfigs));
        QCOMPARE(kernels::hopperBackwardConfigName({kernels::MaskPreference::Any, 64, 2, kernels::DqSplit::Turns}),
                 std::string("wgmma_bwd_d64_bc128_br64_wg2_s2_dqturns"));
        QCOMPARE(kernels::hopperBackwardConfigName({kernels::MaskPreference::Any, 128, 3, kernels::DqSplit::Columns}),
                 std::string("wgmma_bwd_d128_bc128_br64_wg2_s3"));
        QCOMPARE(kernels::hopperBackwardConfigName({kernels::MaskPreference::Any, 64, 2, kernels::DqSplit::Columns}),
                 std::string("wgmma_bwd_d64_bc128_br64_wg2_s2_dqcolumns"));
        QCOMPARE(kernels::hopperBackwardConfigName({kernels::MaskPreference::Any, 128, 2, kernels::DqSplit::Turns, true}),
                 std::string("wgmma_bwd_d128_bc128_br64_wg2_s2_dqturns_tiles"));
        QCOMPARE(kernels::hopperBackwardConfigName({kernels::MaskPreference::Any, 64, 2, kernels::DqSplit::Rows, true}),
                 std::string("wgmma_bwd_d64_bc128_br128_wg2_s2_dqrows_tiles"));
    }

    // On a Hopper GPU (with sm_90a in the build) the default is the wgmma backward, at both d with
    // and without the mask (its table prefers one for each); elsewhere the mma.sync one.
    void defaultIsTheHopperBackwardWhereItLeads() {
        FLASHVIZ_REQUIRE_GPU();
        bool built = false;
        for (const auto& k : cudaTensorCoreBackwardKernels()) built = built || k.wgmma;
        const bool hopper = built && cudaTensorCoreBackwardKernels().back().fitsDevice;
        for (int d : {64, 128})
            for (const bool causal : {false, true}) {
                const HalfAttentionProblem p = problem(HalfType::Bf16, d, 100, 100, causal, 1, 1);
                const Inputs in = makeInputs(p, 3);
                // "forward + backward": the kernels the default run named.
                const std::string kernels = cudaFlashBackwardHalf(p, in.q, in.k, in.v, in.dout).kernels;
                qInfo("d = %d%s: %s", d, causal ? " causal" : "", kernels.c_str());
                QCOMPARE(kernels.find(" + wgmma_bwd_") != std::string::npos, hopper);
                // dQ by tiles, split by rows at d = 64 and in turns at d = 128 (BACKWARD_NOTES.md,
                // v9, v10): a reordered table shows here.
                QCOMPARE(kernels.find(d == 64 ? "_br128_wg2_s2_dqrows_tiles" : "_dqturns_tiles") != std::string::npos,
                         hopper);
            }
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
        QTest::addColumn<bool>("mmaSyncForward");
        for (HalfType t : {HalfType::Fp16, HalfType::Bf16})
            for (int d : {64, 128}) {
                auto row = [&](const char* name, int nq, int nk, bool causal, int batch, int heads,
                               bool sequenceMajor, bool mmaSync = false) {
                    QTest::addRow("%s d%d %s", typeName(t), d, name)
                        << int(t) << d << nq << nk << causal << batch << heads << sequenceMajor << mmaSync;
                };
                row("113x203", 113, 203, false, 1, 1, false);
                row("113x203 causal", 113, 203, true, 1, 1, false);
                // More queries than keys: under the mask the first 90 rows see no key.
                row("203x113 causal", 203, 113, true, 1, 1, false);
                row("1x1", 1, 1, false, 1, 1, false);
                row("7x300 causal", 7, 300, true, 1, 1, false);
                row("B2 H3 129x77", 129, 77, false, 2, 3, false);
                row("B2 H3 113x203 causal [b,n,h,d]", 113, 203, true, 2, 3, true);
                row("H2 555x1100 [b,n,h,d]", 555, 1100, false, 1, 2, true);
                row("1024x1024 causal", 1024, 1024, true, 1, 1, false);
                row("300x129 causal, mma.sync forward", 300, 129, true, 1, 2, false, true);
                row("257x513, mma.sync forward", 257, 513, false, 1, 1, false, true);
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
        QFETCH(bool, mmaSyncForward);
        const HalfAttentionProblem p =
            problem(HalfType(type), d, nq, nk, causal, batch, heads,
                    sequenceMajor ? HalfLayout::BatchSeqHeadDim : HalfLayout::BatchHeadSeqDim);
        runAndJudge(p, mmaSyncForward ? ::mmaSyncForward(d) : -1, -1, std::uint32_t(nq * 131 + nk * 7 + d));
    }

    void everyVariant_data() {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("type");
        for (const auto& k : cudaTensorCoreBackwardKernels())
            for (HalfType t : {HalfType::Fp16, HalfType::Bf16})
                QTest::addRow("%s %s", k.name.c_str(), typeName(t)) << k.id << int(t);
    }

    void everyVariant() {
        FLASHVIZ_REQUIRE_GPU();
        QFETCH(int, kernel);
        QFETCH(int, type);
        const auto info = cudaTensorCoreBackwardKernels()[std::size_t(kernel)];
        if (!info.fitsDevice) QSKIP("this variant does not run on this GPU (its shared memory, or a wgmma variant off Hopper)");
        runAndJudge(problem(HalfType(type), info.headDim, 300, 129, true, 1, 2), -1, kernel, 5);
        runAndJudge(problem(HalfType(type), info.headDim, 190, 333, false, 1, 2), -1, kernel, 6);
        // Many query blocks a key block (each buffer reused several times), n_q < n_k under the
        // mask, a ragged last block of both, the sequence-major layout.
        runAndJudge(problem(HalfType(type), info.headDim, 700, 1000, true, 2, 1, HalfLayout::BatchSeqHeadDim), -1,
                    kernel, 7);
        // Between them the shapes give key blocks of 1, 2, 3, 8, 10 and 11 steps: both parities of
        // the last step where the consumers take dQ in turns, and a block whose second consumer's
        // keys are all past the end.
    }

    // dK and dV are sums each warp keeps in registers in a fixed order: the same bits every run.
    // dQ's atomic adds come in any order: close, not necessarily equal. The long causal walk
    // (up to 40 query blocks a key block, both consumers taking dQ in turns on Hopper, every dS^T
    // buffer reused many times) would show a consumer reading the other's dS^T too early as a
    // dQ that differs between runs.
    void keyGradientsAreReproducible_data() {
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("n");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("heads");
        QTest::addRow("d128 700") << 128 << 700 << false << 2;
        QTest::addRow("d64 2500 causal") << 64 << 2500 << true << 4;
        QTest::addRow("d128 2500 causal") << 128 << 2500 << true << 2;
    }

    void keyGradientsAreReproducible() {
        FLASHVIZ_REQUIRE_GPU();
        QFETCH(int, d);
        QFETCH(int, n);
        QFETCH(bool, causal);
        QFETCH(int, heads);
        const HalfAttentionProblem p = problem(HalfType::Bf16, d, n, n, causal, 1, heads);
        const Inputs in = makeInputs(p, 11);
        const HalfGradients a = cudaFlashBackwardHalf(p, in.q, in.k, in.v, in.dout);
        const HalfGradients b = cudaFlashBackwardHalf(p, in.q, in.k, in.v, in.dout);
        QVERIFY(a.dk == b.dk);
        QVERIFY(a.dv == b.dv);
        float largest = 0;
        for (const std::uint16_t bits : a.dq) largest = std::max(largest, std::fabs(fromHalfBits(bits, p.type)));
        // dQ sums the key blocks' partial products (6 to 20 of 128 keys here) by fp32 atomic adds in any
        // order; where a sum cancels to near zero, their rounding is many bf16 steps of the value
        // (an H100 run saw -1.099e-07 and -1.127e-07), so up to 2^-14 of the largest |dQ| is
        // allowed besides: generous against fp32 reordering, still far below any wrong sum.
        const float floor = std::ldexp(largest, -14);
        int differing = 0;
        for (std::size_t i = 0; i < a.dq.size(); ++i) {
            const float x = fromHalfBits(a.dq[i], p.type), y = fromHalfBits(b.dq[i], p.type);
            differing += x != y;
            // At most one bf16 step (8 significant bits) apart, or within the floor.
            QVERIFY2(std::fabs(x - y) <= std::max(std::ldexp(std::max(std::fabs(x), std::fabs(y)), -7), floor),
                     qPrintable(QStringLiteral("dQ[%1]: %2 and %3 (largest |dQ| %4)").arg(i).arg(x).arg(y).arg(largest)));
        }
        qInfo("dQ: %d of %zu values differ between two runs, each by at most one step or the floor", differing,
              a.dq.size());
    }
};

QTEST_GUILESS_MAIN(TestCudaTensorCoreBackward)
#include "tst_cuda_tensor_core_backward.moc"
