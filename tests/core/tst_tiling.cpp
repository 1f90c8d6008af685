// The tiling rule (core/tiling.h): block ranges, the causal rule's last visible key and the
// visible key blocks, each held to a brute-force count over every (row, key) pair; and the CPU
// trace, which walks exactly the tiles the rule names.
#include "core/backend.h"
#include "core/tiling.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <vector>

using namespace flashviz;
using namespace flashviz::test;

// Usable where a constant is needed: the CUDA launchers size their grids with it.
static_assert(blockCount(10, 4) == 3);
static_assert(blockRange(2, 4, 10) == Range{8, 10});
static_assert(blockRange(2, 4, 10).size() == 2);
static_assert(lastVisibleKey(0, 8, 8, true) == 0);
static_assert(lastVisibleKey(0, 10, 4, true) == -1);
static_assert(visibleKeyBlocks(Range{0, 4}, 8, 8, 4, true) == 1);
static_assert(visibleKeyBlocks(Range{0, 4}, 8, 8, 4, false) == 2);

namespace {

bool seen(int row, int key, int queries, int keys, bool causal) {
    return !causal || causallyVisible(row, key, queries, keys);
}

// Key blocks holding at least one (row, key) pair the mask lets through, found pair by pair.
std::vector<bool> bruteForceVisible(Range rows, Range allKeys, int queries, int keys, int bc,
                                    bool causal) {
    std::vector<bool> visible(std::size_t((allKeys.end + bc - 1) / bc), false);
    for (int r = rows.begin; r < rows.end; ++r)
        for (int key = allKeys.begin; key < allKeys.end; ++key)
            if (seen(r, key, queries, keys, causal)) visible[std::size_t(key / bc)] = true;
    return visible;
}

} // namespace

class TstTiling : public QObject {
    Q_OBJECT

  private slots:
    void blockRangesCoverOnce_data();
    void blockRangesCoverOnce();
    void lastVisibleKeyIsTheLastSeenKey_data() { tileRows(); }
    void lastVisibleKeyIsTheLastSeenKey();
    void visibleKeyBlocksMatchBruteForce_data() { tileRows(); }
    void visibleKeyBlocksMatchBruteForce();
    void firstQueryBlockSeeingMatchesBruteForce_data() { tileRows(); }
    void firstQueryBlockSeeingMatchesBruteForce();
    void tileFullyVisibleMeansNoMaskedEntry_data() { tileRows(); }
    void tileFullyVisibleMeansNoMaskedEntry();
    void cpuTraceWalksTheVisibleTiles_data() { tileRows(); }
    void cpuTraceWalksTheVisibleTiles();

  private:
    static void tileRows();
};

void TstTiling::tileRows() {
    addTileCaseColumns();
    auto row = [](const char* name, int nq, int nk, int br, int bc, bool causal) {
        QTest::newRow(name) << nq << nk << 4 << br << bc << causal;
    };
    row("toy 8x8 4x4", 8, 8, 4, 4, false);
    row("toy causal 8x8 4x4", 8, 8, 4, 4, true);
    row("ragged causal 37x37 Br8 Bc5", 37, 37, 8, 5, true);
    row("ragged 37x37 Br8 Bc5", 37, 37, 8, 5, false);
    row("nq>nk causal 100x70 Br16 Bc24", 100, 70, 16, 24, true);
    row("nq>>nk causal 200x13 Br7 Bc3", 200, 13, 7, 3, true);
    row("nq<nk causal 70x100 Br16 Bc8", 70, 100, 16, 8, true);
    row("nq<<nk causal 5x300 Br2 Bc64", 5, 300, 2, 64, true);
    row("Br>nq causal 6x9 Br16 Bc4", 6, 9, 16, 4, true);
    row("Bc>nk causal 9x6 Br4 Bc16", 9, 6, 4, 16, true);
    row("one row causal 1x1 Br1 Bc1", 1, 1, 1, 1, true);
    row("Br=1 Bc=1 causal 11x7", 11, 7, 1, 1, true);
    row("nq<nk non-causal 70x100 Br32 Bc48", 70, 100, 32, 48, false);
}

void TstTiling::blockRangesCoverOnce_data() {
    QTest::addColumn<int>("total");
    QTest::addColumn<int>("size");
    for (int total : {1, 2, 7, 8, 9, 64, 100})
        for (int size : {1, 3, 4, 8, 64, 200})
            QTest::addRow("%d in %d", total, size) << total << size;
}

void TstTiling::blockRangesCoverOnce() {
    QFETCH(int, total);
    QFETCH(int, size);
    const int count = blockCount(total, size);
    QVERIFY(count >= 1);
    int next = 0;
    for (int b = 0; b < count; ++b) {
        const Range r = blockRange(b, size, total);
        QCOMPARE(r.begin, next); // contiguous, no overlap
        QVERIFY(r.size() >= 1);
        QVERIFY(r.size() <= size);
        if (b + 1 < count) QCOMPARE(r.size(), size); // only the last block is ragged
        next = r.end;
    }
    QCOMPARE(next, total);
}

void TstTiling::lastVisibleKeyIsTheLastSeenKey() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    Q_UNUSED(headDim);
    Q_UNUSED(blockRows);
    Q_UNUSED(blockCols);
    for (int row = 0; row < queries; ++row) {
        int last = -1;
        for (int key = 0; key < keys; ++key)
            if (seen(row, key, queries, keys, causal)) last = key;
        QCOMPARE(lastVisibleKey(row, queries, keys, causal), last);
    }
}

void TstTiling::visibleKeyBlocksMatchBruteForce() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    Q_UNUSED(headDim);
    int previous = 0;
    for (int i = 0; i < blockCount(queries, blockRows); ++i) {
        const Range rows = blockRange(i, blockRows, queries);
        const std::vector<bool> brute =
            bruteForceVisible(rows, {0, keys}, queries, keys, blockCols, causal);
        const int visible = visibleKeyBlocks(rows, queries, keys, blockCols, causal);
        int count = 0, keysSeen = 0;
        for (int j = 0; j < int(brute.size()); ++j) {
            if (!brute[std::size_t(j)]) continue;
            QVERIFY2(j < visible, qPrintable(QStringLiteral("block %1: key block %2 is seen "
                                                            "but past the prefix of %3")
                                                 .arg(i)
                                                 .arg(j)
                                                 .arg(visible)));
            ++count;
            keysSeen += blockRange(j, blockCols, keys).size();
        }
        QCOMPARE(visible, count); // the visible blocks are exactly a prefix
        QCOMPARE(keysInVisibleBlocks(rows, queries, keys, blockCols, causal), keysSeen);
        QVERIFY(visible >= previous); // never falls from one query block to the next
        previous = visible;
    }
}

// The backward's inner loop over query blocks starts where the first row seeing the key block
// is, and every block from there on sees it (a suffix).
void TstTiling::firstQueryBlockSeeingMatchesBruteForce() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    Q_UNUSED(headDim);
    for (int j = 0; j < blockCount(keys, blockCols); ++j) {
        const Range cols = blockRange(j, blockCols, keys);
        int first = blockCount(queries, blockRows);
        for (int i = blockCount(queries, blockRows) - 1; i >= 0; --i) {
            const Range rows = blockRange(i, blockRows, queries);
            const std::vector<bool> brute =
                bruteForceVisible(rows, cols, queries, keys, blockCols, causal);
            if (!brute[std::size_t(j)]) break;
            first = i;
        }
        QCOMPARE(firstQueryBlockSeeing(j, queries, keys, blockRows, blockCols, causal), first);
    }
}

// The kernels skip the mask exactly where tileFullyVisible says so: it must be true only when
// every entry of the (nominal, Bc-wide) tile exists and is visible to every row of the block.
void TstTiling::tileFullyVisibleMeansNoMaskedEntry() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    Q_UNUSED(headDim);
    for (int i = 0; i < blockCount(queries, blockRows); ++i) {
        const Range rows = blockRange(i, blockRows, queries);
        for (int j = 0; j < blockCount(keys, blockCols); ++j) {
            bool allSeen = true;
            for (int r = rows.begin; r < rows.end; ++r)
                for (int c = j * blockCols; c < (j + 1) * blockCols; ++c)
                    allSeen = allSeen && c < keys && (!causal || causallyVisible(r, c, queries, keys));
            QCOMPARE(tileFullyVisible(rows.begin, j * blockCols, blockCols, queries, keys, causal),
                     allSeen);
        }
    }
}

void TstTiling::cpuTraceWalksTheVisibleTiles() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    const Problem p = makeProblem(makeSpec(queries, keys, headDim, causal));
    CpuBackend cpu;
    const FlashTrace trace = cpu.trace(p, makeOptions(blockRows, blockCols));
    std::size_t t = 0;
    for (int i = 0; i < blockCount(queries, blockRows); ++i) {
        const Range rows = blockRange(i, blockRows, queries);
        for (int j = 0; j < visibleKeyBlocks(rows, queries, keys, blockCols, causal); ++j, ++t) {
            QVERIFY(t < trace.tiles.size());
            QCOMPARE(trace.tiles[t].queryBlock, i);
            QCOMPARE(trace.tiles[t].keyBlock, j);
            QVERIFY(trace.tiles[t].rows == rows);
        }
    }
    QCOMPARE(trace.tiles.size(), t);
}

QTEST_APPLESS_MAIN(TstTiling)
#include "tst_tiling.moc"
