#pragma once
// The launch configurations of FlashViz's CUDA kernels as plain data, free of CUDA and Eigen: the
// one table the tensor-core launchers instantiate (kernels/cuda/sm80/tc_launch.cu builds variant i from
// row i) and the window's warp and grid pictures read (kernel_shapes.h), in builds without CUDA
// too, so that what the window draws is what the GPU runs.
#include <cstddef>
#include <string>

namespace flashviz::kernels {

// One variant of the fp16 / bf16 tensor-core kernel (kernels/cuda/sm80/tc_flash.cuh, TcTile): each
// warp owns rowsPerWarp() query rows of the tile (FlashAttention-2's split) and walks every key.
struct TensorCoreConfig {
    int headDim;
    int warps;
    int rowTilesPerWarp; // 16-row mma tiles per warp
    int blockCols;       // Bc: keys per tile
    bool qInRegisters;   // Q's fragments kept in registers, or re-read from shared memory
    int minBlocksPerSm;  // __launch_bounds__' promise
    bool skipRescale;    // skip O's rescale when no row maximum of the warp changed
    constexpr int threads() const { return warps * 32; }
    constexpr int rowsPerWarp() const { return 16 * rowTilesPerWarp; }
    constexpr int blockRows() const { return warps * rowsPerWarp(); }
    // Q, two K and two V buffers (double buffering) of 2-byte elements, and 256 bytes of slack to
    // align the start.
    constexpr std::size_t sharedBytes() const {
        return std::size_t(blockRows()) * headDim * 2 + 4 * std::size_t(blockCols) * headDim * 2 + 256;
    }
};

// In order of preference per d (the first that fits is the default: kernel_shapes.h's
// chooseTensorCoreConfig); the id of a variant is its index. H200 figures: kernels/bench/TC_NOTES.md.
inline constexpr TensorCoreConfig kTensorCoreConfigs[] = {
    {64, 4, 2, 64, true, 2, false},   // BR 128, 48 KiB
    {64, 4, 1, 128, true, 2, false},  // BR 64, 72 KiB
    {128, 4, 2, 64, false, 2, true},  // BR 128, 96 KiB
    {128, 8, 2, 64, false, 1, false}, // BR 256, 128 KiB
    {128, 4, 2, 32, false, 2, false}, // BR 128, 64 KiB
};
inline constexpr int kTensorCoreConfigCount = int(sizeof(kTensorCoreConfigs) / sizeof(kTensorCoreConfigs[0]));

// "tc_d128_br128_bc64_w4_qsmem_skip": d, query rows and keys per tile, warps, where Q lives, and
// whether unchanged rescales are skipped.
inline std::string tensorCoreConfigName(const TensorCoreConfig& c) {
    return "tc_d" + std::to_string(c.headDim) + "_br" + std::to_string(c.blockRows()) + "_bc" +
           std::to_string(c.blockCols) + "_w" + std::to_string(c.warps) +
           (c.qInRegisters ? "_qreg" : "_qsmem") + (c.skipRescale ? "_skip" : "");
}

// The selection policy: the index of the variant for d on a GPU with these shared-memory limits,
// the first in order of preference that fits a block and as many blocks per SM as it is built for
// (on an A100 the H200's d = 128 default would run one block per SM where it was built for two),
// else the first that fits a block at all; -1 when none does.
constexpr int chooseTensorCoreConfig(int headDim, std::size_t perBlock, std::size_t perSm,
                                     std::size_t reservedPerBlock) {
    int fitsABlock = -1;
    for (int i = 0; i < kTensorCoreConfigCount; ++i) {
        const TensorCoreConfig& c = kTensorCoreConfigs[i];
        if (c.headDim != headDim || c.sharedBytes() > perBlock) continue;
        if ((c.sharedBytes() + reservedPerBlock) * std::size_t(c.minBlocksPerSm) <= perSm) return i;
        if (fitsABlock < 0) fitsABlock = i;
    }
    return fitsABlock;
}

// The mirror kernel (kernels/cuda/mirror/flash_mirror.cuh): any Br, Bc and d, one thread block per query
// block, its threads striding over the tile's elements (no warp owns rows), every tile in
// shared memory: Q and O's accumulator (Br x d each), K and V (Bc x d each), the Br x Bc scores
// and m, l and the correction per row, all fp32.
inline constexpr int kMirrorThreads = 256;
constexpr std::size_t mirrorSharedFloats(int blockRows, int blockCols, int headDim) {
    const std::size_t br = std::size_t(blockRows), bc = std::size_t(blockCols),
                      d = std::size_t(headDim);
    return 2 * br * d + 2 * bc * d + br * bc + 3 * br;
}

} // namespace flashviz::kernels
