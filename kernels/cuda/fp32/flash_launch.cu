// Launchers of the fast fp32 FlashAttention kernels (fp32 FMA and 3xTF32): their variant table,
// configuration checks, shared-memory opt-in, grid shape, and a check after every launch. Kernel
// bodies live in the .cuh files beside this one.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_attributes.h"
#include "kernels/cuda/fp32/flash_fast.cuh"
#include "kernels/cuda/fp32/flash_tf32x3.cuh"
#include "kernels/cuda/launch.h"

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

template <class T>
FastVariant describe(int id, std::string name, FastArithmetic arithmetic, LaunchFunction launch) {
    FastKernelInfo info;
    info.id = id;
    info.name = std::move(name);
    info.headDim = T::D;
    info.blockRows = T::BR;
    info.blockCols = T::BC;
    info.threads = T::kThreads;
    info.minBlocksPerSm = T::kMinBlocks;
    info.sharedBytes = T::kSharedBytes;
    info.arithmetic = arithmetic;
    return {info, launch};
}

template <int D, int BR, int BC, int MinBlocks, bool Swizzle, int UnrollS, int UnrollPV>
FastVariant variant(int id) {
    using T = detail::FastTile<D, BR, BC, MinBlocks, Swizzle, UnrollS, UnrollPV>;
    return describe<T>(id,
                       "d" + std::to_string(D) + "_br" + std::to_string(BR) + "_bc" +
                           std::to_string(BC) + "_m" + std::to_string(MinBlocks) +
                           (Swizzle ? "_sw" : "_pad") + "_u" + std::to_string(UnrollS) + "x" +
                           std::to_string(UnrollPV),
                       FastArithmetic::Fp32, &launchFast<T>);
}

template <int D, int Warps, int BC, int MinBlocks>
FastVariant tf32x3Variant(int id) {
    using T = tf32x3::Tile<D, Warps, BC, MinBlocks>;
    return describe<T>(id,
                       "tf32x3_d" + std::to_string(D) + "_br" + std::to_string(T::BR) + "_bc" +
                           std::to_string(BC) + "_m" + std::to_string(MinBlocks),
                       FastArithmetic::Tf32x3, &launchTf32x3<T>);
}

// In order of preference per d, as measured on an H200 (kernels/bench/NOTES.md); the first
// that fits the device's shared memory (and, for 3xTF32, its tensor cores: see
// tf32x3OutrunsFma) is the default. Ids are fixed (the benchmark's --only). 3xTF32 first:
// tensor cores with fp32's accuracy, 1.38-1.45x the FMA kernels on the H200 (NOTES.md, v7).
// The A100 allows 163 KiB per block, so there d = 128 takes the 141 KiB 3xTF32 variant; GPUs
// with about 100 KiB (sm_86, sm_89) have d = 64 variants and run d = 128 on the mirror kernel.
const std::vector<FastVariant>& variants() {
    static const std::vector<FastVariant> all = {
        tf32x3Variant<64, 8, 64, 1>(4),                 // 114 KiB, 57.4-59.9 TFLOP/s
        tf32x3Variant<64, 4, 64, 2>(5),                 //  94 KiB, 57.0-59.9
        variant<64, 64, 128, 2, true, 8, 4>(0),         // 112 KiB, 40.0-41.3 (fp32 FMA)
        tf32x3Variant<64, 4, 32, 3>(6),                 //  57 KiB, 56.3-59.8
        variant<64, 64, 64, 3, true, 4, 2>(1),          //  64 KiB, 37.8-38.6 (fp32 FMA)
        tf32x3Variant<128, 8, 64, 1>(7),                // 210 KiB, 58.0-61.2
        tf32x3Variant<128, 8, 32, 1>(8),                // 141 KiB, 54.0-58.0
        // Q K^T unrolled over all of d = 128: nvcc then starts each step's loads during the
        // previous step's FFMAs, with no loop boundary in between (NOTES.md, v6).
        variant<128, 128, 64, 1, false, 32, 4>(2),      // 171 KiB, 42.6-43.6 (fp32 FMA)
        variant<128, 64, 64, 2, true, 8, 4>(3),         // 112 KiB, 41.1-41.9 (fp32 FMA)
    };
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

const FastKernelInfo* defaultFastKernel(int headDim) {
    const std::size_t limit = maxSharedBytesPerBlock();
    const bool tf32x3 = tf32x3OutrunsFma();
    for (const auto& v : variants())
        if (v.info.headDim == headDim && v.info.sharedBytes <= limit &&
            (tf32x3 || v.info.arithmetic != FastArithmetic::Tf32x3))
            return &v.info;
    return nullptr;
}

std::string fastKernelName(int headDim, int kernelId) {
    if (kernelId < 0) {
        const FastKernelInfo* info = defaultFastKernel(headDim);
        return info ? info->name : std::string();
    }
    for (const auto& v : variants())
        if (v.info.id == kernelId && v.info.headDim == headDim) return v.info.name;
    return {};
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
    const FastKernelInfo* byDefault = kernelId < 0 ? defaultFastKernel(p.headDim) : nullptr;
    const FastVariant* chosen = nullptr;
    for (const auto& v : variants())
        if (v.info.headDim == p.headDim && (kernelId < 0 ? &v.info == byDefault : v.info.id == kernelId))
            chosen = &v;
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
