// Launchers of the fast fp32 FlashAttention kernels (fp32 FMA and 3xTF32): each variant
// instantiated from its row of kernels/kernel_configs.h (kFastConfigs, the selection policy
// chooseFastConfig), configuration checks, shared-memory opt-in, grid shape, and a check after
// every launch. Kernel bodies live in the .cuh files beside this one.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_attributes.h"
#include "kernels/cuda/fp32/flash_fast.cuh"
#include "kernels/cuda/fp32/flash_tf32x3.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/kernel_configs.h"

#include "core/errors.h"
#include "core/tiling.h"

#include <algorithm>
#include <string>
#include <utility>

namespace flashviz::cuda {

namespace {

using LaunchFunction = void (*)(const AttentionParams&);

struct FastVariant {
    FastKernelInfo info;
    LaunchFunction launch;
};

// One block per BR query rows of each (batch, head), the tile's shared memory opted in.
template <class T>
void launchTiled(void (*kernel)(AttentionParams), const AttentionParams& p, const char* name) {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(T::kSharedBytes)),
          "Reserving shared memory for the flash kernel");
    const dim3 grid(unsigned(blockCount(p.queries, T::BR)), unsigned(p.heads), unsigned(p.batch));
    kernel<<<grid, T::kThreads, T::kSharedBytes>>>(p);
    checkLaunch(name);
}

template <class T>
void launchFast(const AttentionParams& p) {
    launchTiled<T>(detail::flashFastKernel<T>, p, "flash (fast, fp32 FMA)");
}

template <class T>
void launchTf32x3(const AttentionParams& p) {
    launchTiled<T>(tf32x3::flashTf32x3Kernel<T>, p, "flash (fast, 3xTF32)");
}

// Variant I, instantiated from row I of the configuration table (kernels/kernel_configs.h):
// FastTile's or tf32x3::Tile's template arguments are the row's.
template <int I>
FastVariant variant() {
    constexpr kernels::FastConfig c = kernels::kFastConfigs[I];
    FastKernelInfo info;
    LaunchFunction launch = nullptr;
    if constexpr (c.arithmetic == FastArithmetic::Tf32x3) {
        using T = tf32x3::Tile<c.headDim, c.warps, c.blockCols, c.minBlocksPerSm>;
        static_assert(T::BR == c.blockRows() && T::kThreads == c.threads() &&
                          T::kSharedBytes == c.sharedBytes(),
                      "the table's derived sizes are the kernel's");
        launch = &launchTf32x3<T>;
    } else {
        using T = detail::FastTile<c.headDim, c.blockRows(), c.blockCols, c.minBlocksPerSm,
                                   c.swizzle, c.unrollS, c.unrollPV>;
        static_assert(T::BR == c.blockRows() && T::kThreads == c.threads() &&
                          T::kSharedBytes == c.sharedBytes(),
                      "the table's derived sizes are the kernel's");
        launch = &launchFast<T>;
    }
    info.id = I;
    info.name = kernels::fastConfigName(c);
    info.headDim = c.headDim;
    info.blockRows = c.blockRows();
    info.blockCols = c.blockCols;
    info.threads = c.threads();
    info.minBlocksPerSm = c.minBlocksPerSm;
    info.sharedBytes = c.sharedBytes();
    info.arithmetic = c.arithmetic;
    return {info, launch};
}

template <int... I>
std::vector<FastVariant> allVariants(std::integer_sequence<int, I...>) {
    return {variant<I>()...};
}

const std::vector<FastVariant>& variants() {
    static const std::vector<FastVariant> all =
        allVariants(std::make_integer_sequence<int, kernels::kFastConfigCount>());
    return all;
}

// Three TF32 products beat one fp32 FMA where the tensor cores' TF32 rate is several times the
// FMA rate: the A100 (sm_80, 8x) and Hopper (sm_90, 7.4x; mma.sync measured 4.7x on the H200).
// On sm_86 / sm_89 cards TF32 runs at about the FMA rate, so there the FMA kernel stays first.
bool tf32x3OutrunsFma() {
    const char* what = "Reading the GPU's compute capability";
    const std::size_t major = deviceAttribute(cudaDevAttrComputeCapabilityMajor, what);
    const std::size_t minor = deviceAttribute(cudaDevAttrComputeCapabilityMinor, what);
    return (major == 8 && minor == 0) || major == 9;
}

} // namespace

const std::vector<FastKernelInfo>& fastKernels() {
    static const std::vector<FastKernelInfo> infos = [] {
        std::vector<FastKernelInfo> out;
        for (const auto& v : variants()) out.push_back(v.info);
        return out;
    }();
    return infos;
}

const FastKernelInfo* chooseFastKernel(int headDim, std::size_t perBlock, std::size_t perSm,
                                       std::size_t reservedPerBlock, bool tf32x3Runs) {
    const int i = kernels::chooseFastConfig(headDim, perBlock, perSm, reservedPerBlock, tf32x3Runs);
    return i < 0 ? nullptr : &fastKernels()[std::size_t(i)];
}

const FastKernelInfo* defaultFastKernel(int headDim) {
    return chooseFastKernel(headDim, maxSharedBytesPerBlock(), sharedBytesPerSm(),
                            reservedSharedBytesPerBlock(), tf32x3OutrunsFma());
}

namespace {

// Variant `kernelId` if it is built for d, else null.
const FastVariant* variantFor(int headDim, int kernelId) {
    if (kernelId < 0 || std::size_t(kernelId) >= variants().size()) return nullptr;
    const FastVariant& v = variants()[std::size_t(kernelId)];
    return v.info.headDim == headDim ? &v : nullptr;
}

} // namespace

std::string fastKernelName(int headDim, int kernelId) {
    if (kernelId < 0) {
        const FastKernelInfo* info = defaultFastKernel(headDim);
        return info ? info->name : std::string();
    }
    const FastVariant* v = variantFor(headDim, kernelId);
    return v ? v->info.name : std::string();
}

bool fastKernelAccepts(const AttentionParams& p) {
    bool compiled = false;
    for (const auto& v : variants()) compiled = compiled || v.info.headDim == p.headDim;
    if (!compiled) return false;
    return rowsAligned16(p, int(sizeof(float))) && p.scale > 0.0f;
}

void launchFlashFast(const AttentionParams& p, int kernelId) {
    if (!fastKernelAccepts(p))
        throw EngineError(ErrorKind::Unsupported,
                          "The fast flash kernel is built for d = 64 and 128 with 16-byte aligned "
                          "rows; d = " + std::to_string(p.headDim) +
                              " runs on the mirror kernel instead.");
    const FastVariant* chosen = nullptr;
    if (kernelId < 0) {
        if (const FastKernelInfo* info = defaultFastKernel(p.headDim))
            chosen = &variants()[std::size_t(info->id)];
    } else {
        chosen = variantFor(p.headDim, kernelId);
    }
    const std::size_t limit = maxSharedBytesPerBlock();
    if (!chosen)
        throw EngineError(ErrorKind::Unsupported,
                          "No fast flash kernel variant " + std::to_string(kernelId) +
                              " for d = " + std::to_string(p.headDim) + " fits this GPU.");
    if (chosen->info.sharedBytes > limit)
        throw EngineError(ErrorKind::Unsupported,
                          "The flash kernel " + chosen->info.name + " needs " +
                              formatBytes(double(chosen->info.sharedBytes)) +
                              " of shared memory per block; this GPU allows " +
                              formatBytes(double(limit)) + ".");
    if (p.queries <= 0 || p.keys <= 0 || p.batch <= 0 || p.heads <= 0) return;
    chosen->launch(p);
}

} // namespace flashviz::cuda
