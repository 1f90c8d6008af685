// Launchers of the Hopper backward kernel (hopper_backward.cuh): tensor maps for Q, K, V and dO,
// shared-memory opt-in and the grid (the mma.sync backward's), per row of
// kernels::kHopperBackwardConfigs. Compiled for sm_90a only (kernels/cuda_sources.cmake).
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/sm90/hopper_backward.cuh"
#include "kernels/cuda/sm90/hopper_backward_launch.h"
#include "kernels/cuda/sm90/tensor_maps.h"
#include "kernels/kernel_configs.h"

#include <utility>
#include <vector>

namespace flashviz::cuda {

namespace {

template <class Tile, TcElement E, bool Causal>
void launchTyped(const TcBackwardParams& p) {
    const auto kernel = sm90::hopperBackwardKernel<Tile, E, Causal>;
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tile::kSharedBytes),
          "Reserving shared memory for the Hopper backward kernel");
    const CUtensorMap q = tensorMap(p.q, E, p.headDim, p.queries, p.heads, p.batch, p.qRowStride,
                                    p.qHeadStride, p.qBatchStride, Tile::BR);
    const CUtensorMap dout = tensorMap(p.dout, E, p.headDim, p.queries, p.heads, p.batch, p.oRowStride,
                                       p.oHeadStride, p.oBatchStride, Tile::BR);
    const CUtensorMap k = tensorMap(p.k, E, p.headDim, p.keys, p.heads, p.batch, p.kRowStride,
                                    p.kHeadStride, p.kBatchStride, Tile::BC);
    const CUtensorMap v = tensorMap(p.v, E, p.headDim, p.keys, p.heads, p.batch, p.vRowStride,
                                    p.vHeadStride, p.vBatchStride, Tile::BC);
    kernel<<<tc::keyBlockGrid(p, Tile::BC), Tile::kThreads, Tile::kSharedBytes>>>(q, k, v, dout, p);
    checkLaunch("flash backward (Hopper: wgmma, TMA)");
}

template <class Tile>
void launchTile(const TcBackwardParams& p) {
    withElementAndMask(p.element, p.causal, [&](auto e, auto causal) {
        launchTyped<Tile, decltype(e)::value, decltype(causal)::value>(p);
    });
}

// Row I of kernels::kHopperBackwardConfigs.
template <int I>
TcBackwardVariant variant() {
    constexpr kernels::HopperBackwardConfig c = kernels::kHopperBackwardConfigs[I];
    using Tile = sm90::HopperBackwardTile<c.headDim, c.stages, c.dqSplit, c.dqTiles>;
    static_assert(Tile::BC == c.blockCols() && Tile::BR == c.blockRows() && Tile::kThreads == c.threads() &&
                      std::size_t(Tile::kSharedBytes) == c.sharedBytes(),
                  "the table's derived sizes are the kernel's");
    TcBackwardKernelInfo info;
    info.id = kernels::kTensorCoreBackwardConfigCount + I;
    info.name = kernels::hopperBackwardConfigName(c);
    info.headDim = c.headDim;
    info.blockCols = c.blockCols();
    info.blockRows = c.blockRows();
    info.threads = c.threads();
    info.sharedBytes = c.sharedBytes();
    info.blocksPerSm = c.minBlocksPerSm;
    info.wgmma = true;
    return {info, &launchTile<Tile>, c.dqTiles};
}

template <int... I>
std::vector<TcBackwardVariant> allVariants(std::integer_sequence<int, I...>) {
    return {variant<I>()...};
}

} // namespace

std::vector<TcBackwardVariant> hopperBackwardVariants() {
    return allVariants(std::make_integer_sequence<int, kernels::kHopperBackwardConfigCount>());
}

} // namespace flashviz::cuda
