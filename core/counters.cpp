#include "core/counters.h"

#include "core/options.h"
#include "core/tiling.h"

#include <algorithm>
#include <cmath>

namespace flashviz {

Counters& Counters::operator+=(const Counters& other) {
    hbmReadBytes += other.hbmReadBytes;
    hbmWriteBytes += other.hbmWriteBytes;
    flops += other.flops;
    scratch(other.peakScratchElements);
    return *this;
}

Counters standardCounts(int queries, int keys, int headDim) {
    const std::uint64_t nq = queries, nk = keys, d = headDim;
    Counters c;
    c.read(nq * d + 2 * nk * d);
    c.matmul(nq, d, nk);
    c.write(nq * nk);
    c.scratch(nq * nk);
    c.read(nq * nk);
    c.write(nq * nk);
    c.read(nq * nk);
    c.matmul(nq, nk, d);
    c.write(nq * d);
    return c;
}

std::uint64_t flashWorkingSetElements(int queries, int keys, int headDim,
                                      const FlashOptions& options) {
    const std::uint64_t rows = std::min(options.blockRows, queries);
    const std::uint64_t cols = std::min(options.blockCols, keys);
    const std::uint64_t d = headDim;
    return rows * d + 2 * cols * d + rows * cols + 2 * rows;
}

Counters flashCounts(int queries, int keys, int headDim, bool causal, const FlashOptions& options) {
    const std::uint64_t d = headDim;
    const int br = options.blockRows;
    const int bc = options.blockCols;
    const bool keyValueOuter = options.loopOrder == LoopOrder::KeyValueOuter;
    Counters c;
    c.scratch(flashWorkingSetElements(queries, keys, headDim, options));
    if (keyValueOuter) {
        c.write(std::uint64_t(queries) * d + 2 * std::uint64_t(queries)); // O, m, l initialised
        c.read(2 * std::uint64_t(keys) * d); // every K_j, V_j once
    }
    bool anyTile = false;
    for (int i = 0; i < blockCount(queries, br); ++i) {
        const Range block = blockRange(i, br, queries);
        const std::uint64_t rows = block.size();
        const std::uint64_t visibleBlocks = visibleKeyBlocks(block, queries, keys, bc, causal);
        const std::uint64_t tileKeys = keysInVisibleBlocks(block, queries, keys, bc, causal);
        c.flops += 2 * 2 * rows * d * tileKeys; // S = Q K^T and P V, tile by tile
        if (options.keepFullScores) c.write(rows * tileKeys);
        anyTile = anyTile || visibleBlocks > 0;
        if (keyValueOuter) {
            const std::uint64_t state = rows * d + 2 * rows; // O_i, m_i, l_i
            c.read(visibleBlocks * (rows * d + state));      // Q_i and the state, every step
            c.write(visibleBlocks * state);
        } else {
            c.read(rows * d + 2 * tileKeys * d);
            c.write(rows * d);
        }
    }
    if (options.keepFullScores && anyTile) c.scratch(std::uint64_t(queries) * keys);
    return c;
}

PaperIoModel paperIoModel(int n, int headDim, double sramElements) {
    PaperIoModel model;
    const double d = headDim;
    const double N = n;
    model.blockCols = int(std::ceil(sramElements / (4 * d)));
    model.blockRows = std::min(model.blockCols, headDim);
    model.standardAccesses = N * d + N * N;
    model.flashAccesses = N * N * d * d / sramElements;
    return model;
}

BackwardComparison backwardCosts(int n, int headDim) {
    const std::uint64_t N = n, d = headDim;
    BackwardComparison b;
    b.standard.storedElements = N * N + 3 * N * d; // P plus Q, K, V
    b.standard.flops = 5 * 2 * N * N * d;          // the usual backward matmuls
    b.flash.storedElements = 3 * N * d + 2 * N;    // Q, K, V plus m and l per row
    b.flash.flops = 6 * 2 * N * N * d;             // one more: the scores recomputed
    return b;
}

} // namespace flashviz
