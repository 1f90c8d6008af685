// Launchers of the Hopper backward kernel (hopper_backward.cuh): tensor maps for Q, K, V and dO,
// shared-memory opt-in and the grid, per row of kernels::kHopperBackwardConfigs. Compiled for
// sm_90a only (kernels/cuda_sources.cmake).
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/sm90/hopper_backward.cuh"
#include "kernels/cuda/sm90/hopper_backward_launch.h"
#include "kernels/cuda/sm90/tensor_maps.h"
#include "kernels/kernel_configs.h"

#include "core/errors.h"

#include <string>
#include <utility>
#include <vector>

namespace flashviz::cuda {

namespace {

using HopperBackwardLaunch = void (*)(const TcBackwardParams&);

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
    // As the mma.sync backward's grid (tc_backward_launch.cu): under the mask (heads, key blocks,
    // batch), so that every head's longest key blocks start first.
    const unsigned keyBlocks = unsigned((p.keys + Tile::BC - 1) / Tile::BC), heads = unsigned(p.heads);
    const dim3 grid = Causal ? dim3(heads, keyBlocks, unsigned(p.batch)) : dim3(keyBlocks, heads, unsigned(p.batch));
    kernel<<<grid, Tile::kThreads, Tile::kSharedBytes>>>(q, k, v, dout, p);
    checkLaunch("flash backward (Hopper: wgmma, TMA)");
}

template <class Tile>
void launchTile(const TcBackwardParams& p) {
    if (p.element == TcElement::Fp16)
        p.causal ? launchTyped<Tile, TcElement::Fp16, true>(p) : launchTyped<Tile, TcElement::Fp16, false>(p);
    else
        p.causal ? launchTyped<Tile, TcElement::Bf16, true>(p) : launchTyped<Tile, TcElement::Bf16, false>(p);
}

// Variant I, instantiated from row I of kernels::kHopperBackwardConfigs.
template <int I>
HopperBackwardLaunch variant() {
    constexpr kernels::HopperBackwardConfig c = kernels::kHopperBackwardConfigs[I];
    using Tile = sm90::HopperBackwardTile<c.headDim, c.stages, c.dqByColumns>;
    static_assert(Tile::BC == c.blockCols() && Tile::BR == c.blockRows() && Tile::kThreads == c.threads() &&
                      std::size_t(Tile::kSharedBytes) == c.sharedBytes(),
                  "the table's derived sizes are the kernel's");
    return &launchTile<Tile>;
}

template <int... I>
std::vector<HopperBackwardLaunch> allVariants(std::integer_sequence<int, I...>) {
    return {variant<I>()...};
}

const std::vector<HopperBackwardLaunch>& variants() {
    static const std::vector<HopperBackwardLaunch> all =
        allVariants(std::make_integer_sequence<int, kernels::kHopperBackwardConfigCount>());
    return all;
}

} // namespace

void launchHopperBackward(const TcBackwardParams& p, int row) {
    if (row < 0 || row >= int(variants().size()) || kernels::kHopperBackwardConfigs[row].headDim != p.headDim)
        throw EngineError(ErrorKind::Unsupported, "The Hopper backward kernel has no variant " +
                                                      std::to_string(row) + " for d = " +
                                                      std::to_string(p.headDim) + ".");
    variants()[std::size_t(row)](p);
}

} // namespace flashviz::cuda
