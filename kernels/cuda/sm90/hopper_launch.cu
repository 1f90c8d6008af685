// Launchers of the Hopper FlashAttention kernel (hopper_flash.cuh): its tile configurations,
// the copy engine's tensor maps for Q, K and V, shared-memory opt-in and the grid. Compiled for
// sm_90a only (kernels/cuda_sources.cmake).
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/sm90/hopper_flash.cuh"
#include "kernels/cuda/sm90/hopper_launch.h"
#include "kernels/kernel_configs.h"

#include "core/errors.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace flashviz::cuda {

namespace {

// A launch of one variant: traced when `trace` is given.
using HopperLaunch = void (*)(const TcParams&, const kernels::HopperTraceBuffers* trace);

// The driver's tensor-map encoder, found through the runtime (no link to libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensorMapEncoder() {
    static PFN_cuTensorMapEncodeTiled_v12000 encoder = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        void* function = nullptr;
        cudaDriverEntryPointQueryResult found{};
        check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                               cudaEnableDefault, &found),
              "Finding the driver's tensor-map encoder");
        if (found == cudaDriverEntryPointSuccess) encoder = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    });
    if (!encoder)
        throw EngineError(ErrorKind::BackendFailure,
                          "The CUDA driver has no tensor-map encoder (cuTensorMapEncodeTiled).");
    return encoder;
}

// A [batch][heads][rows][d] view of Q, K or V with any strides, read in boxes of boxRows x 64
// elements (128 bytes: the swizzle's row), 128-byte swizzled; rows past `rows` read as zeros.
CUtensorMap tensorMap(const void* base, TcElement element, int headDim, int rows, int heads,
                      int batch, std::int64_t rowStride, std::int64_t headStride,
                      std::int64_t batchStride, int boxRows) {
    CUtensorMap map{};
    const cuuint64_t dims[4] = {cuuint64_t(headDim), cuuint64_t(rows), cuuint64_t(heads), cuuint64_t(batch)};
    const cuuint64_t strides[3] = {cuuint64_t(rowStride) * 2, cuuint64_t(headStride) * 2,
                                   cuuint64_t(batchStride) * 2};
    const cuuint32_t box[4] = {64, cuuint32_t(boxRows), 1, 1};
    const cuuint32_t elementStrides[4] = {1, 1, 1, 1};
    const CUresult result = tensorMapEncoder()(
        &map, element == TcElement::Fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        4, const_cast<void*>(base), dims, strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS) // checkTcParams has checked the alignment: sizes or strides
        throw EngineError(ErrorKind::Unsupported,
                          "The copy engine cannot describe a " + std::to_string(batch) + " x " +
                              std::to_string(heads) + " x " + std::to_string(rows) + " x " +
                              std::to_string(headDim) + " tensor with element strides " +
                              std::to_string(rowStride) + ", " + std::to_string(headStride) + ", " +
                              std::to_string(batchStride) + " (cuTensorMapEncodeTiled error " +
                              std::to_string(int(result)) + ").");
    return map;
}

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
    const dim3 grid(unsigned((p.queries + Tile::BM - 1) / Tile::BM), unsigned(p.heads), unsigned(p.batch));
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
    if (p.element == TcElement::Fp16)
        p.causal ? launchTyped<Tile, TcElement::Fp16, true>(p, trace)
                 : launchTyped<Tile, TcElement::Fp16, false>(p, trace);
    else
        p.causal ? launchTyped<Tile, TcElement::Bf16, true>(p, trace)
                 : launchTyped<Tile, TcElement::Bf16, false>(p, trace);
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
