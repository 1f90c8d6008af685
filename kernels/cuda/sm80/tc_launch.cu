// Launchers of the tensor-core FlashAttention kernel (tc_flash.cuh): the variant table,
// parameter checks, shared-memory opt-in and the grid. Variants and their measured figures:
// kernels/bench/TC_NOTES.md.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_attributes.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/sm80/tc_flash.cuh"
#include "kernels/cuda/sm80/tc_launch.h"
#include "kernels/cuda/sm90/hopper_launch.h"
#include "kernels/kernel_configs.h"

#include "core/errors.h"
#include "core/tiling.h"

// Set by kernels/cuda_sources.cmake: 1 where the toolkit builds the sm_90a kernel (sm90/).
#ifndef FLASHVIZ_HAS_SM90A
#define FLASHVIZ_HAS_SM90A 0
#endif

#include <string>
#include <utility>

namespace flashviz::cuda {

namespace {

using TcLaunch = void (*)(const TcParams&);

struct TcVariant {
    TcKernelInfo info;
    TcLaunch launch;
};

template <class Tile, TcElement E, bool Causal>
void launchTyped(const TcParams& p) {
    const auto kernel = tc::tcFlashKernel<Tile, E, Causal>;
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(Tile::kSharedBytes)),
          "Reserving shared memory for the tensor-core flash kernel");
    const dim3 grid(unsigned(blockCount(p.queries, Tile::BR)), unsigned(p.heads), unsigned(p.batch));
    kernel<<<grid, Tile::kThreads, Tile::kSharedBytes>>>(p);
    checkLaunch("flash (tensor cores)");
}

template <class Tile>
void launchTile(const TcParams& p) {
    withElementAndMask(p.element, p.causal, [&](auto e, auto causal) {
        launchTyped<Tile, decltype(e)::value, decltype(causal)::value>(p);
    });
}

// Variant I, instantiated from row I of the configuration table (kernels/kernel_configs.h).
template <int I>
TcVariant variant() {
    constexpr kernels::TensorCoreConfig c = kernels::kTensorCoreConfigs[I];
    using Tile = tc::TcTile<c.headDim, c.warps, c.rowTilesPerWarp, c.blockCols, c.qInRegisters,
                            c.minBlocksPerSm, c.skipRescale>;
    static_assert(Tile::BR == c.blockRows() && Tile::kThreads == c.threads() &&
                      std::size_t(Tile::kSharedBytes) == c.sharedBytes(),
                  "the table's derived sizes are the kernel's");
    TcKernelInfo info;
    info.id = I;
    info.name = kernels::tensorCoreConfigName(c);
    info.headDim = c.headDim;
    info.blockRows = Tile::BR;
    info.blockCols = c.blockCols;
    info.threads = Tile::kThreads;
    info.rowsPerWarp = c.rowsPerWarp();
    info.qInRegisters = c.qInRegisters;
    info.sharedBytes = Tile::kSharedBytes;
    info.blocksPerSm = c.minBlocksPerSm;
    return {info, &launchTile<Tile>};
}

template <int... I>
std::vector<TcVariant> allVariants(std::integer_sequence<int, I...>) {
    return {variant<I>()...};
}

const std::vector<TcVariant>& variants() {
    static const std::vector<TcVariant> all =
        allVariants(std::make_integer_sequence<int, kernels::kTensorCoreConfigCount>());
    return all;
}

template <TcElement E>
struct Convert;
template <>
struct Convert<TcElement::Fp16> {
    using T = __half;
    __device__ static T from(float x) { return __float2half_rn(x); }
    __device__ static float to(T x) { return __half2float(x); }
};
template <>
struct Convert<TcElement::Bf16> {
    using T = __nv_bfloat16;
    __device__ static T from(float x) { return __float2bfloat16_rn(x); }
    __device__ static float to(T x) { return __bfloat162float(x); }
};

template <TcElement E>
__global__ void toTcKernel(const float* source, void* target, std::size_t count) {
    auto* out = static_cast<typename Convert<E>::T*>(target);
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        out[i] = Convert<E>::from(source[i]);
}

template <TcElement E>
__global__ void fromTcKernel(const void* source, float* target, std::size_t count) {
    const auto* in = static_cast<const typename Convert<E>::T*>(source);
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        target[i] = Convert<E>::to(in[i]);
}

#if FLASHVIZ_HAS_SM90A
// Row I of kernels::kHopperConfigs as a tensor-core variant, id kTensorCoreConfigCount + I.
TcKernelInfo hopperInfo(int row) {
    const kernels::HopperConfig& c = kernels::kHopperConfigs[row];
    TcKernelInfo info;
    info.id = kernels::kTensorCoreConfigCount + row;
    info.name = kernels::hopperConfigName(c);
    info.headDim = c.headDim;
    info.blockRows = c.blockRows();
    info.blockCols = c.blockCols;
    info.threads = c.threads();
    info.rowsPerWarp = 16; // each consumer warp's; the producer's warps own none
    info.qInRegisters = false;
    info.sharedBytes = c.sharedBytes();
    info.blocksPerSm = c.minBlocksPerSm;
    info.wgmma = true;
    return info;
}

bool isHopperId(int id) { return id >= kernels::kTensorCoreConfigCount; }
#endif

} // namespace

bool hopperKernelsRunHere() {
    if (!FLASHVIZ_HAS_SM90A) return false;
    const char* what = "Reading the GPU's compute capability";
    return kernels::runsSm90a(int(deviceAttribute(cudaDevAttrComputeCapabilityMajor, what)),
                              int(deviceAttribute(cudaDevAttrComputeCapabilityMinor, what)));
}

const std::vector<TcKernelInfo>& tcKernels() {
    static const std::vector<TcKernelInfo> infos = [] {
        std::vector<TcKernelInfo> out;
        for (const auto& v : variants()) out.push_back(v.info);
#if FLASHVIZ_HAS_SM90A
        for (int row = 0; row < kernels::kHopperConfigCount; ++row) out.push_back(hopperInfo(row));
#endif
        return out;
    }();
    return infos;
}

bool tcKernelRunsHere(const TcKernelInfo& info) {
    return info.sharedBytes <= maxSharedBytesPerBlock() && (!info.wgmma || hopperKernelsRunHere());
}

const TcKernelInfo* chooseTcKernel(int headDim, std::size_t perBlock, std::size_t perSm,
                                   std::size_t reservedPerBlock) {
    const int i = kernels::chooseTensorCoreConfig(headDim, perBlock, perSm, reservedPerBlock);
    return i < 0 ? nullptr : &tcKernels()[std::size_t(i)];
}

const TcKernelInfo* chooseHopperTcKernel(int headDim, bool causal, std::size_t perBlock,
                                         std::size_t perSm, std::size_t reservedPerBlock) {
#if FLASHVIZ_HAS_SM90A
    const int row = kernels::chooseHopperConfig(headDim, causal, perBlock, perSm, reservedPerBlock);
    if (row >= 0) return &tcKernels()[std::size_t(kernels::kTensorCoreConfigCount + row)];
#else
    (void)headDim, (void)causal, (void)perBlock, (void)perSm, (void)reservedPerBlock;
#endif
    return nullptr;
}

const TcKernelInfo* defaultTcKernel(int headDim, bool causal) {
    const std::size_t perBlock = maxSharedBytesPerBlock(), perSm = sharedBytesPerSm(),
                      reserved = reservedSharedBytesPerBlock();
    if (hopperKernelsRunHere())
        if (const TcKernelInfo* hopper = chooseHopperTcKernel(headDim, causal, perBlock, perSm, reserved))
            return hopper;
    return chooseTcKernel(headDim, perBlock, perSm, reserved);
}

void checkTcParams(const TcParams& p) {
    if (p.headDim != 64 && p.headDim != 128)
        throw EngineError(ErrorKind::Unsupported,
                          "The tensor-core flash kernel takes head dimensions 64 and 128, not " +
                              std::to_string(p.headDim) + ".");
    if (p.batch <= 0 || p.heads <= 0 || p.queries <= 0 || p.keys <= 0)
        throw EngineError(ErrorKind::InvalidArgument,
                          "The tensor-core flash kernel needs at least one batch, head, query and "
                          "key (got batch " + std::to_string(p.batch) + ", heads " +
                              std::to_string(p.heads) + ", " + std::to_string(p.queries) +
                              " queries, " + std::to_string(p.keys) + " keys).");
    if (p.batch > 65535 || p.heads > 65535)
        throw EngineError(ErrorKind::LimitExceeded,
                          "The tensor-core flash kernel takes at most 65535 batches and heads.");
    if (!(p.scale > 0.f))
        throw EngineError(ErrorKind::InvalidArgument, "The softmax scale must be positive.");
    if (!stridesAreMultiplesOf(p, 8))
        throw EngineError(ErrorKind::Unsupported,
                          "The tensor-core flash kernel needs every row to start on a 16-byte "
                          "boundary (strides in multiples of 8 elements).");
    if (!pointersAligned16(p))
        throw EngineError(ErrorKind::Unsupported,
                          "The tensor-core flash kernel needs 16-byte aligned Q, K, V and O.");
}

void launchTcFlash(const TcParams& p, int kernelId) {
    checkTcParams(p);
    const TcKernelInfo* chosen = nullptr;
    if (kernelId < 0) {
        chosen = defaultTcKernel(p.headDim, p.causal);
        if (!chosen)
            throw EngineError(ErrorKind::Unsupported,
                              "No tensor-core flash variant for d = " + std::to_string(p.headDim) +
                                  " fits this GPU's shared memory.");
    } else {
        if (std::size_t(kernelId) >= tcKernels().size() ||
            tcKernels()[std::size_t(kernelId)].headDim != p.headDim)
            throw EngineError(ErrorKind::Unsupported,
                              "The tensor-core flash kernel has no variant " +
                                  std::to_string(kernelId) + " for d = " +
                                  std::to_string(p.headDim) + ".");
        chosen = &tcKernels()[std::size_t(kernelId)];
        if (chosen->wgmma && !hopperKernelsRunHere())
            throw EngineError(ErrorKind::Unsupported,
                              "The tensor-core flash variant " + chosen->name +
                                  " runs on Hopper GPUs only (compute capability 9.0).");
        if (chosen->sharedBytes > maxSharedBytesPerBlock())
            throw EngineError(ErrorKind::Unsupported,
                              "The tensor-core flash variant " + chosen->name +
                                  " needs more shared memory than this GPU gives a block.");
    }
#if FLASHVIZ_HAS_SM90A
    if (isHopperId(chosen->id)) return launchHopperFlash(p, chosen->id - kernels::kTensorCoreConfigCount);
#endif
    variants()[std::size_t(chosen->id)].launch(p);
}

void convertFloatToTc(const float* source, void* target, std::size_t count, TcElement element) {
    const unsigned blocks = unsigned(std::min<std::size_t>((count + 255) / 256, 4096));
    if (count == 0) return;
    if (element == TcElement::Fp16) toTcKernel<TcElement::Fp16><<<blocks, 256>>>(source, target, count);
    else toTcKernel<TcElement::Bf16><<<blocks, 256>>>(source, target, count);
    checkLaunch("float to fp16/bf16");
}

void convertTcToFloat(const void* source, float* target, std::size_t count, TcElement element) {
    const unsigned blocks = unsigned(std::min<std::size_t>((count + 255) / 256, 4096));
    if (count == 0) return;
    if (element == TcElement::Fp16) fromTcKernel<TcElement::Fp16><<<blocks, 256>>>(source, target, count);
    else fromTcKernel<TcElement::Bf16><<<blocks, 256>>>(source, target, count);
    checkLaunch("fp16/bf16 to float");
}

} // namespace flashviz::cuda
