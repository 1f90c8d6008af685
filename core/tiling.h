#pragma once
// How a problem is cut into tiles, and which of them a causal mask leaves: the forward pass, the
// step engine, the counting model, the CPU trace, the CUDA backend's host code and the fp32
// kernels all follow this one rule, so that their tiles, step counts and byte counts cannot
// drift apart (the tensor-core kernel writes it out: kernels/cuda/sm80/tc_flash.cuh says why). Kept
// free of Eigen and to C++17 so that nvcc compiles it; under nvcc every rule is also a device
// function (no CUDA header is needed for that).

#ifdef __CUDACC__
#define FLASHVIZ_TILING_RULE constexpr __host__ __device__
#else
#define FLASHVIZ_TILING_RULE constexpr
#endif

namespace flashviz {

// A half-open range [begin, end) of rows or columns.
struct Range {
    int begin = 0;
    int end = 0;
    FLASHVIZ_TILING_RULE int size() const { return end - begin; }
    FLASHVIZ_TILING_RULE bool operator==(const Range& other) const {
        return begin == other.begin && end == other.end;
    }
};

// How many blocks of `size` cover `total` items; the last one may be ragged.
FLASHVIZ_TILING_RULE int blockCount(int total, int size) { return (total + size - 1) / size; }

// Block `block` of `size` items within [0, total): the last block is cut short.
FLASHVIZ_TILING_RULE Range blockRange(int block, int size, int total) {
    const int end = (block + 1) * size;
    return {block * size, end < total ? end : total};
}

// The causal rule, bottom-right aligned as in FlashAttention 2: with n_q == n_k it is the usual
// lower triangle; with n_q > n_k the first n_q - n_k rows see no key at all and their output is 0.
FLASHVIZ_TILING_RULE bool causallyVisible(int row, int col, int queries, int keys) {
    return col <= row + (keys - queries);
}

// The last key index (inclusive) a row may see; -1 when none.
FLASHVIZ_TILING_RULE int lastVisibleKey(int row, int queries, int keys, bool causal) {
    if (!causal) return keys - 1;
    const int last = row + (keys - queries);
    return last < -1 ? -1 : (last < keys - 1 ? last : keys - 1); // -1: the row sees no key
}

// How many key blocks the query rows `rows` meet: all of them, or a prefix when causal (the
// mask hides a suffix). The count never falls from one query block to the next.
FLASHVIZ_TILING_RULE int visibleKeyBlocks(Range rows, int queries, int keys, int blockCols, bool causal) {
    const int lastKey = lastVisibleKey(rows.end - 1, queries, keys, causal);
    return lastKey < 0 ? 0 : lastKey / blockCols + 1;
}

// The keys those visible blocks hold (the last block may be ragged).
FLASHVIZ_TILING_RULE int keysInVisibleBlocks(Range rows, int queries, int keys, int blockCols, bool causal) {
    const int covered = visibleKeyBlocks(rows, queries, keys, blockCols, causal) * blockCols;
    return covered < keys ? covered : keys;
}

// The first query block whose rows see key block `keyBlock` (the backward's inner loop runs from
// it to the last): 0 without a mask; with one, the block holding the first row that sees the
// block's first key; `queries`' block count when no row sees it.
FLASHVIZ_TILING_RULE int firstQueryBlockSeeing(int keyBlock, int queries, int keys, int blockRows,
                                            int blockCols, bool causal) {
    if (!causal) return 0;
    const int firstRow = keyBlock * blockCols - (keys - queries);
    if (firstRow >= queries) return blockCount(queries, blockRows);
    return firstRow <= 0 ? 0 : firstRow / blockRows;
}

// Whether every key of the tile [key0, key0 + blockCols) exists and every row from `firstRow` on
// sees it: such a tile needs no mask. The kernels mask only the ragged last tile and the tiles
// the causal diagonal crosses, since the first row sees the fewest keys.
FLASHVIZ_TILING_RULE bool tileFullyVisible(int firstRow, int key0, int blockCols, int queries, int keys,
                                        bool causal) {
    const int lastKey = key0 + blockCols - 1;
    return lastKey < keys && (!causal || causallyVisible(firstRow, lastKey, queries, keys));
}

} // namespace flashviz
