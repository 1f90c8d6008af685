#pragma once
// The launch layer: host functions that check a configuration, launch a kernel on device
// pointers and check the launch. No CUDA types, so ordinary C++ (the backend, the benchmark)
// calls it. Every failure is an EngineError with a readable message. Launches go to the
// default stream and return without waiting; call synchronize() (check.h) to wait.
#include "kernels/cuda/params/params.h"
#include "kernels/kernel_configs.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace flashviz::cuda {

// ---- the fast FlashAttention kernel: compiled tile configurations ----
// How a variant multiplies: fp32 FMAs on the CUDA cores, or tensor cores with every fp32
// operand split into two TF32 parts and three products (flash_tf32x3.cuh).
using FastArithmetic = kernels::FastArithmetic;

struct FastKernelInfo {
    int id = 0; // its row of kernels::kFastConfigs (kernels/kernel_configs.h)
    std::string name; // "tf32x3_d128_br128_bc64_m1", "d128_br128_bc64_m1_pad_u32x4"
    int headDim = 0;
    int blockRows = 0;
    int blockCols = 0;
    int threads = 0;
    int minBlocksPerSm = 0;
    std::size_t sharedBytes = 0;
    FastArithmetic arithmetic = FastArithmetic::Fp32;
};

// Every compiled variant, in order of preference for each head dimension (a variant's id is
// its index).
const std::vector<FastKernelInfo>& fastKernels();
// The variant for d on a GPU with these shared-memory limits, 3xTF32 only where `tf32x3Runs`
// (kernels::chooseFastConfig, kernels/kernel_configs.h: the tensor-core family's policy); null
// when none fits.
const FastKernelInfo* chooseFastKernel(int headDim, std::size_t perBlock, std::size_t perSm,
                                       std::size_t reservedPerBlock, bool tf32x3Runs);
// chooseFastKernel with this device's limits, 3xTF32 where its tensor cores outrun its FMAs
// (sm_80, sm_90).
const FastKernelInfo* defaultFastKernel(int headDim);
// The name of variant `kernelId` (-1: the default for d), "" when there is none.
std::string fastKernelName(int headDim, int kernelId);
// Whether the fast kernel can take these tensors: a compiled d, 16-byte aligned rows.
bool fastKernelAccepts(const AttentionParams& params);
// Launches variant `kernelId` (-1: the default for d). Throws EngineError(Unsupported) when the
// variant does not exist for d or does not fit this device.
void launchFlashFast(const AttentionParams& params, int kernelId = -1);

// ---- the mirror kernel: the CPU's arithmetic with the user's block sizes ----
std::size_t mirrorSharedBytes(int blockRows, int blockCols, int headDim);
// Throws EngineError(Unsupported) when the tiles do not fit the device's shared memory.
void launchFlashMirror(const MirrorParams& params);

// ---- the backward mirror kernel: core's backward arithmetic with the user's block sizes ----
std::size_t backwardSharedBytes(int blockRows, int blockCols, int headDim);
// Floats in one (key block, query block) slot of BackwardParams::trace.
std::size_t backwardTraceSlotFloats(int blockRows, int blockCols, int headDim);
// Throws EngineError(Unsupported) when the backward's tiles do not fit the device's shared
// memory (checked before the forward runs, so the refusal names the backward's tiles).
void requireBackwardFits(int blockRows, int blockCols, int headDim);
// The pre-pass (L, D, dQ = 0) and then the tiles, given the forward's O, m and l, after
// requireBackwardFits.
void launchFlashBackwardMirror(const BackwardParams& params);

// ---- ordinary attention: cuBLAS S = scale Q K^T, softmax in place, O = P V ----
class BlasHandle {
public:
    BlasHandle();
    ~BlasHandle();
    BlasHandle(const BlasHandle&) = delete;
    BlasHandle& operator=(const BlasHandle&) = delete;
    void* raw() const; // the cublasHandle_t

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// `scores` holds batch * heads * queries * keys floats (the n x n scratch). Tensors must be
// densely packed [batch][heads][rows][d]; m and l are not written.
void launchStandardAttention(BlasHandle& blas, const AttentionParams& params, float* scores);

// Sets `count` floats to `value` on the device.
void fillDevice(float* data, std::size_t count, float value);

// The device's shared memory per block (opt-in maximum).
std::size_t maxSharedBytesPerBlock();
// The device's shared memory per SM, and what the driver keeps of it for each resident block.
std::size_t sharedBytesPerSm();
std::size_t reservedSharedBytesPerBlock();

} // namespace flashviz::cuda
