// What FlashAttention-2 changed (core/flash_versions.h): both versions' arithmetic against
// ordinary attention, the non-matmul operations each pass counts against their closed forms and
// a count by hand, the warp split's shares and shared-memory exchange, the occupancy and the grid,
// and FlashViz's kernels as the pictures read them (kernels/kernel_shapes.h).
#include "core/attention.h"
#include "core/check.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/flash_versions.h"
#include "core/hardware.h"
#include "kernels/kernel_configs.h"
#include "kernels/kernel_shapes.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <cmath>
#include <set>

using namespace flashviz;
using namespace flashviz::test;

Q_DECLARE_METATYPE(flashviz::LoopOrder)
Q_DECLARE_METATYPE(flashviz::Precision)

namespace {

// Each row's log-sum-exp of its visible scaled scores, straight from the definition.
Vector directLogSumExp(const Problem& p) {
    Matrix s = (p.q * p.k.transpose()) * p.scale();
    maskScores(s, 0, 0, p.spec.queries, p.spec.keys, p.spec.causal);
    Vector lse(s.rows());
    for (int r = 0; r < s.rows(); ++r) {
        const double m = s.row(r).maxCoeff();
        lse(r) = std::isinf(m) ? m : m + std::log((s.row(r).array() - m).exp().sum());
    }
    return lse;
}

const HardwareProfile& a100() { return findHardwareProfile("a100-40gb"); }
const HardwareProfile& h200() { return findHardwareProfile("h200"); }

} // namespace

class TestFlashVersions : public QObject {
    Q_OBJECT

  private:
    struct Run {
        int queries, keys, headDim, br, bc;
        bool causal;
        LoopOrder order;
        Precision precision;
    };
    static Run fetchRun() {
        QFETCH(int, queries);
        QFETCH(int, keys);
        QFETCH(int, headDim);
        QFETCH(int, br);
        QFETCH(int, bc);
        QFETCH(bool, causal);
        QFETCH(LoopOrder, order);
        QFETCH(Precision, precision);
        return {queries, keys, headDim, br, bc, causal, order, precision};
    }
    static void addRunColumns() {
        QTest::addColumn<int>("queries");
        QTest::addColumn<int>("keys");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("br");
        QTest::addColumn<int>("bc");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<LoopOrder>("order");
        QTest::addColumn<Precision>("precision");
        for (const FlashShape& s : kFlashShapes)
            for (bool causal : {false, true})
                for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter})
                    for (Precision precision : {Precision::Double, Precision::Float})
                        QTest::addRow("%s %s %s %s", s.name, causal ? "causal" : "full",
                                      toString(order), toString(precision))
                            << s.queries << s.keys << s.headDim << s.blockRows << s.blockCols
                            << causal << order << precision;
    }

  private slots:
    void bothVersionsAreExact_data() { addRunColumns(); }
    void bothVersionsAreExact() {
        const auto [queries, keys, headDim, br, bc, causal, order, precision] = fetchRun();
        const Problem p = makeProblem(makeSpec(queries, keys, headDim, causal, precision));
        const Matrix reference = referenceAttention(p);
        const FlashOptions options = makeOptions(br, bc, order);
        const double tolerance = defaultTolerance(precision);

        const FlashResult one = flashForward(p, options, FlashVersion::One);
        const FlashResult two = flashForward(p, options, FlashVersion::Two);
        QVERIFY2(maxAbs(one.o, reference) <= tolerance, qPrintable(QString::number(maxAbs(one.o, reference))));
        QVERIFY2(maxAbs(two.o, reference) <= tolerance, qPrintable(QString::number(maxAbs(two.o, reference))));
        QVERIFY(maxAbs(one.o, two.o) <= tolerance);
        // Same m and l at the end; -2 alone keeps the log-sum-exp, and it is the definition's.
        QVERIFY((one.m - two.m).cwiseAbs().maxCoeff() <= tolerance || one.m == two.m);
        QVERIFY(one.lse.size() == 0);
        const Vector lse = directLogSumExp(p);
        QCOMPARE(two.lse.size(), lse.size());
        for (int r = 0; r < lse.size(); ++r) {
            if (std::isinf(lse(r))) QCOMPARE(two.lse(r), lse(r));
            else QVERIFY2(std::abs(two.lse(r) - lse(r)) <= 100 * tolerance, qPrintable(QString::number(r)));
        }
        // The same tiles, so the same matmul FLOPs.
        QCOMPARE(one.counters.flops, two.counters.flops);
    }

    void countedEqualsClosedForm_data() { addRunColumns(); }
    void countedEqualsClosedForm() {
        const auto [queries, keys, headDim, br, bc, causal, order, precision] = fetchRun();
        const Problem p = makeProblem(makeSpec(queries, keys, headDim, causal, precision));
        const FlashOptions options = makeOptions(br, bc, order);
        for (FlashVersion v : {FlashVersion::One, FlashVersion::Two}) {
            const NonMatmulFlops counted = flashForward(p, options, v).nonMatmul;
            const NonMatmulFlops formula = nonMatmulCounts(v, queries, keys, headDim, causal, options);
            QVERIFY2(counted == formula, toString(v));
            QVERIFY(counted.total() > 0);
        }
        // -1 always does more outside the matmuls: three row operations of d per tile against one.
        QVERIFY(nonMatmulCounts(FlashVersion::One, queries, keys, headDim, causal, options).total() >
                nonMatmulCounts(FlashVersion::Two, queries, keys, headDim, causal, options).total());
    }

    // The explainer's 4 x 4 tile with d = 4, counted by hand from the two updates.
    void toyTileByHand() {
        // -2: scale 16, l's rescale 4, acc's rescale 16 | rowmax 16 | s - m 16, m_old - m_new 4,
        // row sum 16 | exp 16 + 4 corrections.
        const NonMatmulFlops two = tileNonMatmul(FlashVersion::Two, 4, 4, 4);
        QCOMPARE(two.multiply, 36u);
        QCOMPARE(two.max, 16u);
        QCOMPARE(two.add, 36u);
        QCOMPARE(two.exp, 20u);
        QCOMPARE(two.divide, 0u);
        QCOMPARE(two.total(), 108u);
        // -1: scale 16, l_new's two products 8, l_old a 4, O's two row scalings 32 | rowmax 16,
        // max(m_old, m~) 4 | s - m~ 16, row sum 16, two exponents' differences 8, l_new's add 4,
        // O's add 16 | exp 16 + 8 | O / l_new 16.
        const NonMatmulFlops one = tileNonMatmul(FlashVersion::One, 4, 4, 4);
        QCOMPARE(one.multiply, 60u);
        QCOMPARE(one.max, 20u);
        QCOMPARE(one.add, 60u);
        QCOMPARE(one.exp, 24u);
        QCOMPARE(one.divide, 16u);
        QCOMPARE(one.total(), 180u);
        // -2's end of a query block: O / l (16), log l (4), m + log l (4); -1 has none.
        const TilePlace block{{0, 4}, {0, 8}, 8, 8, false};
        QCOMPARE(finishNonMatmul(FlashVersion::Two, block, 4).total(), 24u);
        QCOMPARE(finishNonMatmul(FlashVersion::One, block, 4).total(), 0u);
        // The toy's whole pass: 4 tiles and 2 query blocks.
        const FlashOptions toy = makeOptions(4, 4);
        QCOMPARE(nonMatmulCounts(FlashVersion::Two, 8, 8, 4, false, toy).total(), 4 * 108u + 2 * 24u);
        QCOMPARE(nonMatmulCounts(FlashVersion::One, 8, 8, 4, false, toy).total(), 4 * 180u);
        QCOMPARE(tileMatmulFlops(4, 4, 4), 256u);
    }

    // The updates count what they do: a causal tile with n_q = 6 > n_k = 4 where rows 0 and 1 see
    // no key at all (their exponentials skipped, l and O left at 0), counted by hand, then by the
    // two update functions themselves, then by the closed form.
    void updatesCountWhatTheyDo() {
        const TilePlace place{{0, 4}, {0, 2}, 6, 4, true};
        const Problem p = makeProblem(makeSpec(6, 4, 3, true));
        const Matrix q = p.q.topRows(4), k = p.k.topRows(2), v = p.v.topRows(2);
        TileWorkspace<double> ws;
        RowState<double> state;
        NonMatmulFlops two, one;
        state.reset(4, 3);
        updateTile<double>(state, q, k, v, p.scale(), place, makeOptions(4, 2), ws, nullptr, &two);
        // -2: scale 8, l's rescale 4, acc's 12 | rowmax 8 | s - m and m_old - m_new for the 2 rows
        // that see a key (4 + 2), row sums 8 | exp 4 + 2.
        QCOMPARE(two, (NonMatmulFlops{6, 8, 14, 24, 0}));
        state.reset(4, 3);
        updateTileNormalised<double>(state, q, k, v, p.scale(), place, ws, &one);
        // -1: scale 8, l_new and l_old a 12, O's two scalings for 2 rows 12 | rowmax 8, m_new 4 |
        // s - m~ 4, row sums 8, two exponents' differences 2 + 2, l_new's add 4, O's add 6 |
        // exp 4 + 2 + 2 | O / l_new 6.
        QCOMPARE(one, (NonMatmulFlops{8, 12, 26, 32, 6}));
        QCOMPARE(tileNonMatmul(FlashVersion::Two, place, 3), two);
        QCOMPARE(tileNonMatmul(FlashVersion::One, place, 3), one);
        // Rows that see no key keep O = 0 in -1 too.
        QCOMPARE(state.acc.row(0).cwiseAbs().maxCoeff(), 0.0);
        QVERIFY(state.acc.row(2).cwiseAbs().maxCoeff() > 0);
    }

    // -1 keeps O normalised after every key block; -2 keeps it unnormalised until the end.
    void versionOneNormalisesEveryBlock() {
        const Problem p = makeProblem(makeSpec(4, 12, 3));
        TileWorkspace<double> ws;
        RowState<double> one, two;
        one.reset(4, 3);
        two.reset(4, 3);
        for (int j = 0; j < 3; ++j) {
            const Range cols{4 * j, 4 * j + 4};
            const TilePlace place{{0, 4}, cols, 4, 12, false};
            const auto kTile = p.k.middleRows(cols.begin, 4), vTile = p.v.middleRows(cols.begin, 4);
            updateTileNormalised<double>(one, p.q, kTile, vTile, p.scale(), place, ws);
            updateTile<double>(two, p.q, kTile, vTile, p.scale(), place, makeOptions(4, 4), ws);
            // Ordinary attention over the keys seen so far.
            Matrix s = (p.q * p.k.topRows(cols.end).transpose()) * p.scale();
            softmaxRows(s);
            const Matrix prefix = s * p.v.topRows(cols.end);
            QVERIFY2(maxAbs(one.acc, prefix) < 1e-12, qPrintable(QString::number(j)));
            Matrix normalised = two.acc;
            for (int r = 0; r < 4; ++r) normalised.row(r) /= two.l(r);
            QVERIFY(maxAbs(normalised, prefix) < 1e-12);
            QVERIFY(maxAbs(two.acc, prefix) > 1e-3); // -2's accumulator is not O until the end
        }
    }

    void arithmeticTimeUsesTheRates() {
        // A100: 312 TFLOP/s on the tensor cores against 19.5 on the CUDA cores.
        NonMatmulFlops f;
        f.exp = 195;
        const ArithmeticTime t = arithmeticTime(3120, f, a100());
        QCOMPARE(t.rateRatio, 16.0);
        QCOMPARE(t.matmulSeconds, 3120 / 312e12);
        QCOMPARE(t.nonMatmulSeconds, 195 / 19.5e12);
        QVERIFY(std::abs(t.nonMatmulPerMatmul() - 1.0) < 1e-12);
    }

    void versionOneRefusesTheBugSwitches() {
        const Problem p = makeProblem(makeSpec(8, 8, 4));
        FlashOptions o = makeOptions(4, 4);
        o.rescale = false;
        QVERIFY_THROWS_EXCEPTION(EngineError, flashForward(p, o, FlashVersion::One));
        // The comparison runs the correct algorithms whatever the switches say.
        const VersionComparison c = compareVersions(p, o, referenceAttention(p));
        QVERIFY(c.one.check.passed());
        QVERIFY(c.two.check.passed());
        QVERIFY(c.maxDifference < 1e-12);
        QCOMPARE(c.one.nonMatmul, nonMatmulCounts(FlashVersion::One, 8, 8, 4, false, o));
        QCOMPARE(c.two.matmulFlops, c.one.matmulFlops);
    }

    void warpSharesCoverTheTile_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("keys");
        QTest::addColumn<int>("warps");
        QTest::newRow("toy 4x4, 4 warps") << 4 << 4 << 4;
        QTest::newRow("128x64, 4 warps") << 128 << 64 << 4;
        QTest::newRow("ragged 37x19, 4 warps") << 37 << 19 << 4;
        QTest::newRow("more warps than rows 3x8, 8 warps") << 3 << 8 << 8;
        QTest::newRow("more warps than keys 16x2, 8 warps") << 16 << 2 << 8;
        QTest::newRow("one warp 16x16") << 16 << 16 << 1;
    }
    void warpSharesCoverTheTile() {
        QFETCH(int, rows);
        QFETCH(int, keys);
        QFETCH(int, warps);
        for (FlashVersion v : {FlashVersion::One, FlashVersion::Two}) {
            const WarpSplit s = warpSplit(v, rows, keys, 8, warps, 2);
            QCOMPARE(int(s.shares.size()), warps);
            // Every score of the tile belongs to exactly one warp.
            int covered = 0, next = 0;
            for (const WarpShare& w : s.shares) {
                covered += w.rows.size() * w.keys.size();
                const Range split = v == FlashVersion::One ? w.keys : w.rows;
                const Range whole = v == FlashVersion::One ? w.rows : w.keys;
                QCOMPARE(whole, (Range{0, v == FlashVersion::One ? rows : keys}));
                if (split.size() > 0) {
                    QCOMPARE(split.begin, next);
                    next = split.end;
                }
            }
            QCOMPARE(covered, rows * keys);
        }
    }

    void splitKExchangesSplitQDoesNot() {
        // FlashViz's d = 64 tile, 128 x 64, 4 warps, fp16 operands.
        const WarpSplit q = warpSplit(FlashVersion::Two, 128, 64, 64, 4, 2);
        QCOMPARE(q.exchangeBytes(), 0u);
        QCOMPARE(q.exchangeBarriers, 0);
        QCOMPARE(q.operandReadBytes, (128u * 64 + 4u * 2 * 64 * 64) * 2);
        const WarpSplit k = warpSplit(FlashVersion::One, 128, 64, 64, 4, 2);
        // Maxima and sums: 4 warps x 128 rows written twice, read 4 x 4 x 128 twice; partial O:
        // 4 x 128 x 64 written and read once; fp32.
        QCOMPARE(k.exchangeWriteBytes, (2u * 4 * 128 + 4u * 128 * 64) * 4);
        QCOMPARE(k.exchangeReadBytes, (2u * 16 * 128 + 4u * 128 * 64) * 4);
        QCOMPARE(k.exchangeBarriers, 4);
        QCOMPARE(k.operandReadBytes, (4u * 128 * 64 + 2u * 64 * 64) * 2);
        // One warp has nothing to exchange with; nor has one warp at work among idle ones.
        QCOMPARE(warpSplit(FlashVersion::One, 128, 64, 64, 1, 2).exchangeBytes(), 0u);
        QCOMPARE(warpSplit(FlashVersion::One, 128, 1, 64, 4, 2).exchangeBytes(), 0u);
        // Idle warps (8 warps, 2 keys) read and exchange nothing: split-K has 2 at work.
        const WarpSplit idle = warpSplit(FlashVersion::One, 4, 2, 16, 8, 2);
        QCOMPARE(idle.activeWarps, 2);
        QCOMPARE(idle.exchangeWriteBytes, (2u * 2 * 4 + 2u * 4 * 16) * 4);
        QCOMPARE(idle.operandReadBytes, (2u * 4 * 16 + 2u * 2 * 16) * 2);
        const WarpSplit rowsIdle = warpSplit(FlashVersion::Two, 3, 8, 16, 8, 2);
        QCOMPARE(rowsIdle.activeWarps, 3);
        QCOMPARE(rowsIdle.operandReadBytes, (3u * 16 + 3u * 2 * 8 * 16) * 2);
        QVERIFY_THROWS_EXCEPTION(EngineError, warpSplit(FlashVersion::Two, 4, 4, 4, kMaxWarps + 1, 2));
        QVERIFY_THROWS_EXCEPTION(EngineError, warpSplit(FlashVersion::One, 4, 4, 4, 0, 2));
        QVERIFY_THROWS_EXCEPTION(EngineError, warpSplit(FlashVersion::Two, 0, 4, 4, 4, 2));
    }

    void kernelShapesAreTheTable() {
        const auto shapes = kernels::tensorCoreKernelShapes();
        QCOMPARE(int(shapes.size()), kernels::kTensorCoreConfigCount);
        std::set<std::string> names;
        for (const KernelShape& s : shapes) {
            names.insert(s.name);
            QCOMPARE(s.threads, s.warps() * 32);
            QCOMPARE(s.blockRows, s.warps() * s.rowsPerWarp); // every row owned by one warp
        }
        QCOMPARE(int(names.size()), int(shapes.size()));
        QCOMPARE(QString::fromStdString(shapes[0].name), QStringLiteral("tc_d64_br128_bc64_w4_qreg"));
        QCOMPARE(shapes[0].sharedBytes, 128u * 64 * 2 + 4u * 64 * 64 * 2 + 256);
        // The selection policy with each GPU's limits: on an A100 two 96 KiB blocks of the d = 128
        // default do not fit an SM, so the 8-warp variant built for one block per SM is chosen.
        QCOMPARE(QString::fromStdString(kernels::defaultTensorCoreShape(64, a100())->name),
                 QStringLiteral("tc_d64_br128_bc64_w4_qreg"));
        QCOMPARE(QString::fromStdString(kernels::defaultTensorCoreShape(128, a100())->name),
                 QStringLiteral("tc_d128_br256_bc64_w8_qsmem"));
        QCOMPARE(QString::fromStdString(kernels::defaultTensorCoreShape(128, h200())->name),
                 QStringLiteral("tc_d128_br128_bc64_w4_qsmem_skip"));
        QVERIFY(!kernels::defaultTensorCoreShape(4, a100()));
        const KernelShape mirror = kernels::kernelShapeFor(4, 4, 4, a100());
        QCOMPARE(mirror.threads, kernels::kMirrorThreads);
        QCOMPARE(mirror.sharedBytes, (2u * 16 + 2u * 16 + 16 + 3u * 4) * 4);
        QCOMPARE(mirror.rowsPerWarp, 0);
        QCOMPARE(mirror.elementBytes, 4);
        QCOMPARE(shapes[0].elementBytes, 2);
        // The warps a picture uses by default: the kernel's own where its warps own rows.
        QCOMPARE(resolveWarps(kKernelWarps, *kernels::defaultTensorCoreShape(128, a100())), 8);
        QCOMPARE(resolveWarps(kKernelWarps, mirror), kFallbackWarps);
        QCOMPARE(resolveWarps(3, mirror), 3);
    }

    // Both families' defaults from the one selection policy (kernels/kernel_configs.h), for three
    // GPUs' shared memory with the driver's 1 KiB per block: pinned to what the launchers picked
    // before the fp32 variants became rows of that file (fp32 then took the first row that fit a
    // block, 3xTF32 only on sm_80 / sm_90; ids then 4, 7, 8 and 1 where these are 0, 5, 6 and 4).
    void defaultVariantsPerGpu_data() {
        QTest::addColumn<int>("perBlockKiB");
        QTest::addColumn<int>("perSmKiB");
        QTest::addColumn<bool>("tf32x3");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("fastId"); // -1: none, the mirror kernel runs
        QTest::addColumn<QString>("fastName");
        QTest::addColumn<int>("tcId");
        QTest::addColumn<QString>("tcName");
        const QString none;
        QTest::newRow("H100/H200 d=64") << 227 << 228 << true << 64 << 0 << "tf32x3_d64_br128_bc64_m1"
                                        << 0 << "tc_d64_br128_bc64_w4_qreg";
        QTest::newRow("H100/H200 d=128") << 227 << 228 << true << 128 << 5 << "tf32x3_d128_br128_bc64_m1"
                                         << 2 << "tc_d128_br128_bc64_w4_qsmem_skip";
        QTest::newRow("A100 d=64") << 163 << 164 << true << 64 << 0 << "tf32x3_d64_br128_bc64_m1" << 0
                                   << "tc_d64_br128_bc64_w4_qreg";
        QTest::newRow("A100 d=128") << 163 << 164 << true << 128 << 6 << "tf32x3_d128_br128_bc32_m1"
                                    << 3 << "tc_d128_br256_bc64_w8_qsmem";
        QTest::newRow("sm_86 d=64") << 99 << 100 << false << 64 << 4 << "d64_br64_bc64_m3_sw_u4x2" << 0
                                    << "tc_d64_br128_bc64_w4_qreg";
        QTest::newRow("sm_86 d=128") << 99 << 100 << false << 128 << -1 << none << 2
                                     << "tc_d128_br128_bc64_w4_qsmem_skip";
    }
    void defaultVariantsPerGpu() {
        QFETCH(int, perBlockKiB);
        QFETCH(int, perSmKiB);
        QFETCH(bool, tf32x3);
        QFETCH(int, headDim);
        QFETCH(int, fastId);
        QFETCH(QString, fastName);
        QFETCH(int, tcId);
        QFETCH(QString, tcName);
        constexpr std::size_t KiB = 1024;
        const std::size_t perBlock = std::size_t(perBlockKiB) * KiB, perSm = std::size_t(perSmKiB) * KiB;
        const int fast = kernels::chooseFastConfig(headDim, perBlock, perSm, KiB, tf32x3);
        QCOMPARE(fast, fastId);
        if (fast >= 0)
            QCOMPARE(QString::fromStdString(kernels::fastConfigName(kernels::kFastConfigs[fast])), fastName);
        const int tc = kernels::chooseTensorCoreConfig(headDim, perBlock, perSm, KiB);
        QCOMPARE(tc, tcId);
        QCOMPARE(QString::fromStdString(kernels::tensorCoreConfigName(kernels::kTensorCoreConfigs[tc])), tcName);
        // Without the 3xTF32 flag no 3xTF32 row is ever chosen.
        const int fma = kernels::chooseFastConfig(headDim, perBlock, perSm, KiB, false);
        if (fma >= 0)
            QVERIFY(kernels::kFastConfigs[fma].arithmetic == kernels::FastArithmetic::Fp32);
    }

    // The fp32 rows: today's kernels' names and shared memory (flash_launch.cu checks the sizes
    // against the kernels' own at compile time), in order of preference.
    void fastConfigsAreTheKernels() {
        static_assert(kernels::chooseFastConfig(128, 227 * 1024, 228 * 1024, 1024, true) == 5,
                      "the policy is constexpr");
        const char* names[] = {"tf32x3_d64_br128_bc64_m1",    "tf32x3_d64_br64_bc64_m2",
                               "d64_br64_bc128_m2_sw_u8x4",   "tf32x3_d64_br64_bc32_m3",
                               "d64_br64_bc64_m3_sw_u4x2",    "tf32x3_d128_br128_bc64_m1",
                               "tf32x3_d128_br128_bc32_m1",   "d128_br128_bc64_m1_pad_u32x4",
                               "d128_br64_bc64_m2_sw_u8x4"};
        const std::size_t bytes[] = {116736, 96256, 114688, 58368, 65536, 215040, 144384, 175104, 114688};
        const int threads[] = {256, 128, 128, 128, 128, 256, 256, 256, 128};
        QCOMPARE(kernels::kFastConfigCount, 9);
        for (int i = 0; i < kernels::kFastConfigCount; ++i) {
            const kernels::FastConfig& c = kernels::kFastConfigs[i];
            QCOMPARE(QString::fromStdString(kernels::fastConfigName(c)), QString(names[i]));
            QCOMPARE(c.sharedBytes(), bytes[i]);
            QCOMPARE(c.threads(), threads[i]);
        }
    }

    void occupancyAndGrid() {
        const KernelShape k = *kernels::defaultTensorCoreShape(64, a100());
        const Occupancy o = occupancy(k, a100());
        QCOMPARE(o.byThreads, 16);
        QCOMPARE(o.bySharedMemory, int(164 * 1024 / (49408 + 1024))); // 3
        QCOMPARE(o.byRegisters, 2);
        QCOMPARE(o.blocksPerSm, 2);
        QCOMPARE(QString::fromStdString(o.limitedBy), QStringLiteral("registers"));

        // 16 heads of n = 8192: -1 launches 16 blocks that each walk 64 query blocks; -2 launches
        // 1024 blocks over 108 x 2 slots, 5 waves, the last holding 160.
        const GridPicture one = gridPicture(FlashVersion::One, 1, 16, 8192, k, a100());
        QCOMPARE(one.blocks, 16u);
        QCOMPARE(one.queryBlocksPerThreadBlock, 64);
        QCOMPARE(one.residentBlocks, 216u);
        QCOMPARE(one.waves, 1u);
        QCOMPARE(one.busySms, 16);
        QCOMPARE(one.timeUnits(), 64u);
        const GridPicture two = gridPicture(FlashVersion::Two, 1, 16, 8192, k, a100());
        QCOMPARE(two.blocks, 1024u);
        QCOMPARE(two.waves, 5u);
        QCOMPARE(two.tailBlocks, 160u);
        QCOMPARE(two.busySms, 108);
        QCOMPARE(two.timeUnits(), 5u);
        QCOMPARE(two.slotUse(), 1024.0 / (5 * 216));

        KernelShape huge = k;
        huge.sharedBytes = 300 * 1024;
        QVERIFY_THROWS_EXCEPTION(EngineError, occupancy(huge, a100()));
        QVERIFY_THROWS_EXCEPTION(EngineError, gridPicture(FlashVersion::Two, 0, 16, 8192, k, a100()));
        // A profile without per-SM limits is refused by name, not drawn as zeros.
        HardwareProfile blank = a100();
        blank.maxThreadsPerSm.value = 0;
        try {
            occupancy(k, blank);
            QFAIL("a profile without its threads per SM was accepted");
        } catch (const EngineError& e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("threads per SM")));
        }
    }

    // The report the page, the lecture, the chart and the CLI read: one tile, its split, the grid,
    // and a grid that does not fit reported apart from the rest.
    void reportKeepsWhatFitsWhenTheGridDoesNot() {
        VersionsRequest r;
        r.queries = r.keys = 512;
        r.headDim = 256;
        r.blockRows = r.blockCols = 128;
        r.kernel = kernels::kernelShapeFor(256, 128, 128, a100()); // the mirror kernel: 592 KiB
        const VersionsReport v = versionsReport(r, a100());
        QVERIFY(!v.gridError.empty());
        QCOMPARE(v.gridTwo.blocks, 0u);
        QVERIFY(v.one.total() > v.two.total());
        QCOMPARE(v.tile.rows, (Range{0, 128}));
        QCOMPARE(v.warps, kFallbackWarps);
        QCOMPARE(v.splitOne.exchangeBarriers, 4);
        // A tile of the request's choosing, and one outside the problem refused.
        r.tileRows = {128, 256};
        r.tileKeys = {384, 512};
        QCOMPARE(versionsReport(r, a100()).tile.cols, (Range{384, 512}));
        r.tileKeys = {384, 640};
        QVERIFY_THROWS_EXCEPTION(EngineError, versionsReport(r, a100()));
    }
};

QTEST_APPLESS_MAIN(TestFlashVersions)
#include "tst_flash_versions.moc"
