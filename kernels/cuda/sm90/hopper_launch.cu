// Launchers of the Hopper FlashAttention kernel (hopper_flash.cuh): its tile configurations,
// the copy engine's tensor maps for Q, K and V (sm90/tensor_maps.h), shared-memory opt-in and
// the grid. Compiled for sm_90a only (kernels/cuda_sources.cmake).
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/sm90/hopper_flash.cuh"
#include "kernels/cuda/sm90/hopper_launch.h"
#include "kernels/cuda/sm90/tensor_maps.h"
#include "kernels/kernel_configs.h"

#include "core/errors.h"
#include "core/tiling.h"

#include <string>
#include <utility>
#include <vector>

namespace flashviz::cuda {

namespace {

// A launch of one variant: traced when `trace` is given.
using HopperLaunch = void (*)(const TcParams&, const kernels::HopperTraceBuffers* trace);

template <class Tile, TcElement E, bool Causal>
void launchTyped(const TcParams& p, const kernels::HopperTraceBuffers* trace) {
    const auto kernel = sm90::hopperFlashKernel<Tile, E, Causal>;
    const auto traced = sm90::hopperFlashTraceKernel<Tile, E, Causal>;
    check(cudaFuncSetAttribute(trace ? reinterpret_cast<const void*>(traced) : reinterpret_cast<const void*>(kernel),
                               cudaFuncAttributeMaxDynamicSharedMemorySize, Tile::kSharedBytes),
          "Reserving shared memory for the Hopper flash kernel");
    const CUtensorMap q = tensorMap(p.q, E, p.headDim, p.queries, p.heads, p.batch, p.qRowStride,
                                    p.qHeadStride, p.qBatchStride, Tile::BM);
    const CUtensorMap k = tensorMap(p.k, E, p.headDim, p.keys, p.heads, p.batch, p.kRowStride,
                                    p.kHeadStride, p.kBatchStride, Tile::BN);
    const CUtensorMap v = tensorMap(p.v, E, p.headDim, p.keys, p.heads, p.batch, p.vRowStride,
                                    p.vHeadStride, p.vBatchStride, Tile::BN);
    const dim3 grid(unsigned(blockCount(p.queries, Tile::BM)), unsigned(p.heads), unsigned(p.batch));
    if (trace) {
        traced<<<grid, Tile::kThreads, Tile::kSharedBytes>>>(q, k, v, p, *trace);
        checkLaunch("flash (Hopper: wgmma, TMA), traced");
    } else {
        kernel<<<grid, Tile::kThreads, Tile::kSharedBytes>>>(q, k, v, p);
        checkLaunch("flash (Hopper: wgmma, TMA)");
    }
}

template <class Tile>
void launchTile(const TcParams& p, const kernels::HopperTraceBuffers* trace) {
    withElementAndMask(p.element, p.causal, [&](auto e, auto causal) {
        launchTyped<Tile, decltype(e)::value, decltype(causal)::value>(p, trace);
    });
}

// Variant I, instantiated from row I of kernels::kHopperConfigs.
template <int I>
HopperLaunch variant() {
    constexpr kernels::HopperConfig c = kernels::kHopperConfigs[I];
    using Tile = sm90::HopperTile<c.headDim, c.blockCols, c.consumers, c.stages, c.overlap, c.pingPong>;
    static_assert(Tile::BM == c.blockRows() && Tile::kThreads == c.threads() &&
                      std::size_t(Tile::kSharedBytes) == c.sharedBytes() &&
                      c.minBlocksPerSm == Tile::kMinBlocks &&
                      c.producerRegisters() == Tile::kProducerRegisters &&
                      c.consumerRegisters() == Tile::kConsumerRegisters,
                  "the table's derived sizes are the kernel's");
    return &launchTile<Tile>;
}

template <int... I>
std::vector<HopperLaunch> allVariants(std::integer_sequence<int, I...>) {
    return {variant<I>()...};
}

const std::vector<HopperLaunch>& variants() {
    static const std::vector<HopperLaunch> all =
        allVariants(std::make_integer_sequence<int, kernels::kHopperConfigCount>());
    return all;
}

} // namespace

void launchHopperFlash(const TcParams& p, int row, const kernels::HopperTraceBuffers* trace) {
    if (row < 0 || row >= int(variants().size()) || kernels::kHopperConfigs[row].headDim != p.headDim)
        throw EngineError(ErrorKind::Unsupported, "The Hopper flash kernel has no variant " +
                                                      std::to_string(row) + " for d = " +
                                                      std::to_string(p.headDim) + ".");
    variants()[std::size_t(row)](p, trace);
}

} // namespace flashviz::cuda
