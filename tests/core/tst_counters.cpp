// The counting model. The script's rules are written out again here, independently of the
// engine, and the engine's closed forms and the counts its algorithms accumulate while running
// are both held to them.
#include "core/counters.h"
#include "core/flash.h"
#include "core/options.h"
#include "core/problem.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>

using namespace flashviz;
using namespace flashviz::test;

Q_DECLARE_METATYPE(flashviz::LoopOrder)

namespace {

using u64 = std::uint64_t;

// Standard attention in the script: read Q, K, V; write S; read S; write P; read P; write O.
Counters standardModel(u64 nq, u64 nk, u64 d) {
    Counters c;
    c.hbmReadBytes = 4 * ((nq + 2 * nk) * d + nq * nk + nq * nk);
    c.hbmWriteBytes = 4 * (nq * nk + nq * nk + nq * d);
    c.flops = 2 * nq * d * nk + 2 * nq * nk * d;
    c.peakScratchElements = nq * nk;
    return c;
}

// The script's flash_attention loop (query blocks outer), with the causal rule skipping tiles
// that are masked entirely. The scratch line clamps the key block to n_k.
Counters flashModel(int nq, int nk, int d, int br, int bc, bool causal, bool keep) {
    Counters c;
    const u64 D = u64(d);
    const u64 bcEff = u64(std::min(bc, nk));
    for (int i0 = 0; i0 < nq; i0 += br) {
        const u64 rows = u64(std::min(br, nq - i0));
        c.hbmReadBytes += 4 * rows * D; // Q_i
        c.peakScratchElements =
            std::max(c.peakScratchElements, rows * D + 2 * bcEff * D + rows * bcEff + 2 * rows);
        const long lastRow = i0 + long(rows) - 1;
        const long lastVisible = causal ? lastRow + (nk - nq) : nk - 1;
        for (int j0 = 0; j0 < nk; j0 += bc) {
            if (j0 > lastVisible) break; // every entry of the tile is masked: skipped
            const u64 cols = u64(std::min(bc, nk - j0));
            c.hbmReadBytes += 4 * 2 * cols * D; // K_j, V_j
            c.flops += 2 * rows * D * cols;     // S_ij = Q_i K_j^T
            if (keep) {
                c.hbmWriteBytes += 4 * rows * cols; // the debug copy of the tile
                c.peakScratchElements = std::max(c.peakScratchElements, u64(nq) * u64(nk));
            }
            c.flops += 2 * rows * cols * D; // P_ij V_j
        }
        c.hbmWriteBytes += 4 * rows * D; // O_i
    }
    return c;
}

#define COMPARE_COUNTERS(got, want)                                                                \
    QVERIFY2((got) == (want),                                                                      \
             qPrintable(QStringLiteral("got  %1\nwant %2").arg(show(got), show(want))))

} // namespace

class TstCounters : public QObject {
    Q_OBJECT

  private slots:
    void counterArithmetic();
    void standardClosedForm_data();
    void standardClosedForm();
    void flashClosedForm_data();
    void flashClosedForm();
    void scriptFigures();
    void workingSet_data();
    void workingSet();
    void runningCountsEqualClosedForms_data();
    void runningCountsEqualClosedForms();
    void paperOrderTraffic_data();
    void paperOrderTraffic();
    void paperIoModel_data();
    void paperIoModel();
    void backwardTrade_data();
    void backwardTrade();
};

void TstCounters::counterArithmetic() {
    Counters c;
    c.read(10);
    c.write(3);
    c.matmul(2, 3, 4);
    c.scratch(7);
    c.scratch(5);
    QCOMPARE(c.hbmReadBytes, u64(40));
    QCOMPARE(c.hbmWriteBytes, u64(12));
    QCOMPARE(c.hbmBytes(), u64(52));
    QCOMPARE(c.flops, u64(48));
    QCOMPARE(c.peakScratchElements, u64(7));
    QCOMPARE(c.peakScratchBytes(), u64(28));

    Counters other;
    other.read(1);
    other.write(2);
    other.matmul(1, 1, 1);
    other.scratch(100);
    Counters sum = c;
    sum += other;
    QCOMPARE(sum.hbmReadBytes, u64(44));
    QCOMPARE(sum.hbmWriteBytes, u64(20));
    QCOMPARE(sum.flops, u64(50));
    QCOMPARE(sum.peakScratchElements, u64(100)); // the larger peak, not the sum
    Counters small;
    small.scratch(3);
    sum += small;
    QCOMPARE(sum.peakScratchElements, u64(100));
}

void TstCounters::standardClosedForm_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("headDim");
    for (int n : {1, 8, 128, 512, 1000, 2048, 8192, 65536})
        for (int d : {1, 7, 64, 128})
            QTest::addRow("n %d d %d", n, d) << n << n << d;
    QTest::newRow("nq<nk 100x300 d7") << 100 << 300 << 7;
    QTest::newRow("nq>nk 300x100 d7") << 300 << 100 << 7;
    QTest::newRow("1x4096 d64") << 1 << 4096 << 64;
    QTest::newRow("max n, d 1") << kMaxSequenceLength << kMaxSequenceLength << 1;
}

void TstCounters::standardClosedForm() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, headDim);
    COMPARE_COUNTERS(standardCounts(queries, keys, headDim),
                     standardModel(u64(queries), u64(keys), u64(headDim)));
}

void TstCounters::flashClosedForm_data() {
    addTileCaseColumns();
    QTest::addColumn<bool>("keep");
    struct Row {
        int nq, nk, d, br, bc;
    };
    const Row rows[] = {
        {8, 8, 4, 4, 4},
        {128, 128, 64, 64, 64},
        {1024, 1024, 64, 64, 64},
        {1024, 1024, 64, 16, 16},
        {1024, 1024, 64, 1024, 1024},
        {1000, 1000, 64, 64, 64},
        {100, 100, 3, 16, 24},
        {24, 70, 7, 16, 8},
        {70, 24, 5, 8, 16},
        {20, 13, 3, 64, 64},
        {1, 1, 1, 1, 1},
        {8192, 8192, 64, 64, 64},
        {8192, 8192, 128, 128, 32},
        {5000, 3000, 64, 48, 80},
        {3000, 5000, 64, 80, 48},
        {65536, 65536, 64, 128, 128},
    };
    for (const Row& r : rows)
        for (bool causal : {false, true})
            for (bool keep : {false, true})
                QTest::addRow("%dx%d d%d Br%d Bc%d%s%s", r.nq, r.nk, r.d, r.br, r.bc,
                              causal ? " causal" : "", keep ? " keep-S" : "")
                    << r.nq << r.nk << r.d << r.br << r.bc << causal << keep;
}

void TstCounters::flashClosedForm() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    QFETCH(bool, keep);
    const Counters got = flashCounts(queries, keys, headDim, causal,
                                     keepingFullScores(makeOptions(blockRows, blockCols), keep));
    COMPARE_COUNTERS(got, flashModel(queries, keys, headDim, blockRows, blockCols, causal, keep));
    if (!causal) {
        // FlashAttention does every multiply standard attention does: the same FLOPs.
        QCOMPARE(got.flops, standardCounts(queries, keys, headDim).flops);
    } else if (queries == keys && queries > blockRows) {
        QVERIFY(got.flops < standardCounts(queries, keys, headDim).flops); // masked tiles skipped
    }
}

void TstCounters::scriptFigures() {
    // Square problems with 64 x 64 tiles: Q once, K and V once per query block, O once.
    for (int n : {128, 256, 512, 1024, 2048, 4096}) {
        const u64 N = u64(n), d = 64, tr = N / 64;
        const Counters f = flashCounts(n, n, 64, false, makeOptions(64, 64));
        QCOMPARE(f.hbmBytes(), 4 * (N * d + tr * 2 * N * d + N * d));
        QCOMPARE(f.peakScratchBytes(), u64(66048)); // 64.5 KB at every n
        const Counters s = standardCounts(n, n, 64);
        QCOMPARE(s.hbmBytes(), 4 * (3 * N * d + 4 * N * N + N * d));
        QCOMPARE(s.peakScratchBytes(), 4 * N * N);
        QCOMPARE(f.flops, s.flops);
        QCOMPARE(s.flops, 4 * N * N * d);
    }
    QCOMPARE(standardCounts(1024, 1024, 64).hbmBytes(), u64(17) * 1024 * 1024); // 17.00 MB
    QCOMPARE(flashCounts(1024, 1024, 64, false, makeOptions(64, 64)).hbmBytes(),
             u64(8912896));                                                       // 8.50 MB
    QCOMPARE(standardCounts(8192, 8192, 64).hbmBytes(), u64(1032) * 1024 * 1024); // 1032.00 MB
    // Demo 8: the debug copy adds an n x n write and an n x n peak.
    const Counters kept =
        flashCounts(1024, 1024, 64, false, keepingFullScores(makeOptions(64, 64)));
    QCOMPARE(kept.hbmBytes(), u64(1024) * 1024 * 25 / 2); // 12.50 MB
    QCOMPARE(kept.peakScratchBytes(), u64(4096) * 1024);  // 4096.0 KB
}

void TstCounters::workingSet_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("blockRows");
    QTest::addColumn<int>("blockCols");
    for (int b : {16, 32, 64, 128, 256, 512, 1024})
        QTest::addRow("1024 d64 block %d", b) << 1024 << 1024 << 64 << b << b;
    QTest::newRow("Br past n_q") << 10 << 100 << 8 << 64 << 16;
    QTest::newRow("Bc past n_k") << 100 << 10 << 8 << 16 << 64;
    QTest::newRow("both past") << 5 << 6 << 3 << 64 << 64;
    QTest::newRow("Br != Bc") << 512 << 512 << 32 << 48 << 80;
}

void TstCounters::workingSet() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, headDim);
    QFETCH(int, blockRows);
    QFETCH(int, blockCols);
    const u64 rows = u64(std::min(blockRows, queries));
    const u64 cols = u64(std::min(blockCols, keys));
    const u64 d = u64(headDim);
    const u64 expected = rows * d + 2 * cols * d + rows * cols + 2 * rows;
    const FlashOptions o = makeOptions(blockRows, blockCols);
    QCOMPARE(flashWorkingSetElements(queries, keys, headDim, o), expected);
    QCOMPARE(flashCounts(queries, keys, headDim, false, o).peakScratchElements, expected);
}

void TstCounters::runningCountsEqualClosedForms_data() {
    addTileCaseColumns();
    QTest::addColumn<bool>("keep");
    QTest::addColumn<LoopOrder>("order");
    struct Row {
        int nq, nk, d, br, bc;
    };
    const Row rows[] = {{8, 8, 4, 4, 4},       {37, 37, 5, 8, 8},   {24, 70, 7, 16, 8},
                        {70, 24, 5, 8, 16},    {20, 13, 3, 64, 64}, {1, 1, 1, 1, 1},
                        {256, 256, 64, 64, 64}};
    for (const Row& r : rows)
        for (bool causal : {false, true})
            for (bool keep : {false, true})
                for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter})
                    QTest::addRow("%dx%d d%d Br%d Bc%d%s%s %s", r.nq, r.nk, r.d, r.br, r.bc,
                                  causal ? " causal" : "", keep ? " keep-S" : "",
                                  order == LoopOrder::QueryOuter ? "q-outer" : "kv-outer")
                        << r.nq << r.nk << r.d << r.br << r.bc << causal << keep << order;
}

void TstCounters::runningCountsEqualClosedForms() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    QFETCH(bool, keep);
    QFETCH(LoopOrder, order);
    const Problem p = makeProblem(makeSpec(queries, keys, headDim, causal));
    const FlashOptions o = keepingFullScores(makeOptions(blockRows, blockCols, order), keep);
    const Counters running = flashForward(p, o).counters;
    COMPARE_COUNTERS(running, flashCounts(queries, keys, headDim, causal, o));
    if (order == LoopOrder::QueryOuter)
        COMPARE_COUNTERS(running,
                         flashModel(queries, keys, headDim, blockRows, blockCols, causal, keep));
    COMPARE_COUNTERS(standardForward(p).counters, standardCounts(queries, keys, headDim));
}

void TstCounters::paperOrderTraffic_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("block");
    QTest::newRow("128 d64 block 64") << 128 << 64 << 64;
    QTest::newRow("1024 d64 block 64") << 1024 << 64 << 64;
    QTest::newRow("1000 d32 block 48") << 1000 << 32 << 48;
    QTest::newRow("4096 d128 block 128") << 4096 << 128 << 128;
}

void TstCounters::paperOrderTraffic() {
    QFETCH(int, n);
    QFETCH(int, headDim);
    QFETCH(int, block);
    const Counters seeds = flashCounts(n, n, headDim, false, makeOptions(block, block));
    const Counters paper =
        flashCounts(n, n, headDim, false, makeOptions(block, block, LoopOrder::KeyValueOuter));
    const u64 N = u64(n), d = u64(headDim);
    const u64 tc = u64(ceilDiv(n, block));
    // Same arithmetic.
    QCOMPARE(paper.flops, seeds.flops);
    // The paper's order reads K and V once, but Q on every inner step, O, m and l on every inner
    // step after the first, and writes O, m and l on every inner step.
    QVERIFY2(paper.hbmReadBytes >= 4 * (2 * N * d + tc * N * d + (tc - 1) * N * d),
             qPrintable(show(paper)));
    QVERIFY2(paper.hbmWriteBytes >= 4 * tc * N * d, qPrintable(show(paper)));
    QVERIFY(paper.hbmBytes() > seeds.hbmBytes());
    // The seeds' order, for contrast: Q once, K and V once per query block, O once.
    QCOMPARE(seeds.hbmWriteBytes, 4 * N * d);
    QCOMPARE(seeds.hbmReadBytes, 4 * (N * d + u64(ceilDiv(n, block)) * 2 * N * d));
}

void TstCounters::paperIoModel_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<double>("sram");
    QTest::newRow("1024 d64 M 24576") << 1024 << 64 << 24576.0; // 96 KB of floats
    QTest::newRow("4096 d64 M 41984") << 4096 << 64 << 41984.0; // 164 KB of floats
    QTest::newRow("2048 d128 M 24576") << 2048 << 128 << 24576.0;
    QTest::newRow("512 d16 M 1000") << 512 << 16 << 1000.0; // ceil matters: 1000 / 64
}

void TstCounters::paperIoModel() {
    QFETCH(int, n);
    QFETCH(int, headDim);
    QFETCH(double, sram);
    const PaperIoModel m = flashviz::paperIoModel(n, headDim, sram);
    const int bc = int(std::ceil(sram / (4.0 * headDim)));
    QCOMPARE(m.blockCols, bc);
    QCOMPARE(m.blockRows, std::min(bc, headDim));
    const double N = n, d = headDim;
    QCOMPARE(m.standardAccesses, N * d + N * N);
    QCOMPARE(m.flashAccesses, N * N * d * d / sram);
    // The shape of the claim: doubling N quadruples the flash count; doubling M halves it.
    const PaperIoModel twiceN = flashviz::paperIoModel(2 * n, headDim, sram);
    const PaperIoModel twiceM = flashviz::paperIoModel(n, headDim, 2 * sram);
    QCOMPARE(twiceN.flashAccesses, 4 * m.flashAccesses);
    QCOMPARE(twiceM.flashAccesses, m.flashAccesses / 2);
    QCOMPARE(twiceM.standardAccesses, m.standardAccesses);
}

void TstCounters::backwardTrade_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("headDim");
    QTest::newRow("512 d64") << 512 << 64;
    QTest::newRow("2048 d64") << 2048 << 64;
    QTest::newRow("8192 d64") << 8192 << 64;
    QTest::newRow("100 d7") << 100 << 7;
}

void TstCounters::backwardTrade() {
    QFETCH(int, n);
    QFETCH(int, headDim);
    const BackwardComparison b = backwardCosts(n, headDim);
    const u64 N = u64(n), d = u64(headDim);
    QCOMPARE(b.standard.storedElements, N * N + 3 * N * d);
    QCOMPARE(b.standard.flops, 5 * 2 * N * N * d);
    QCOMPARE(b.flash.storedElements, 3 * N * d + 2 * N);
    QCOMPARE(b.flash.flops, 6 * 2 * N * N * d);
}

QTEST_APPLESS_MAIN(TstCounters)
#include "tst_counters.moc"
