#pragma once
// Launch layer of the tensor-core (fp16 / bf16) FlashAttention kernel: its compiled tile
// configurations, parameter checks and launches. No CUDA types; failures are EngineErrors.
// Launches go to the default stream and return without waiting (synchronize() in check.h).
#include "kernels/cuda/params/tc_params.h"

#include <cstddef>
#include <string>
#include <vector>

namespace flashviz::cuda {

struct TcKernelInfo {
    int id = 0;
    std::string name; // "tc_d128_br128_bc64_w4_qsmem_skip": d, query rows and keys per tile,
                      // warps, where Q lives, and whether unchanged rescales are skipped
    int headDim = 0;
    int blockRows = 0;
    int blockCols = 0;
    int threads = 0;
    int rowsPerWarp = 0;
    bool qInRegisters = true;
    std::size_t sharedBytes = 0;
    int blocksPerSm = 1; // resident blocks per SM it is built for (__launch_bounds__)
    bool wgmma = false;  // the Hopper kernel (sm90/, "wgmma_..."): compute capability 9.0 only
};

// Every compiled variant: the mma.sync ones (ids 0 .. kTensorCoreConfigCount - 1, rows of
// kernels::kTensorCoreConfigs), then, where the toolkit builds sm_90a, the Hopper ones (rows of
// kernels::kHopperConfigs), each family in order of preference for each head dimension.
const std::vector<TcKernelInfo>& tcKernels();
// Whether device 0 can run this variant (its shared memory; Hopper for the wgmma ones).
bool tcKernelRunsHere(const TcKernelInfo& info);
// The mma.sync variant for d on a GPU with these shared-memory limits
// (kernels::chooseTensorCoreConfig, kernels/kernel_configs.h); null when none fits.
const TcKernelInfo* chooseTcKernel(int headDim, std::size_t perBlock, std::size_t perSm,
                                   std::size_t reservedPerBlock);
// The Hopper variant likewise, with or without the causal mask (kernels::chooseHopperConfig);
// null when none fits or none is built.
const TcKernelInfo* chooseHopperTcKernel(int headDim, bool causal, std::size_t perBlock,
                                         std::size_t perSm, std::size_t reservedPerBlock);
// What runs by default on device 0: the Hopper variant on a Hopper GPU, else the mma.sync one.
const TcKernelInfo* defaultTcKernel(int headDim, bool causal);
// Throws EngineError (Unsupported for a head dimension other than 64 and 128 or misaligned rows,
// InvalidArgument for empty or negative sizes). Needs no GPU. Dense strides and the dense
// self-attention shape: setDenseStrides and denseSelfAttentionParams (params/).
void checkTcParams(const TcParams& params);
// Launches variant `kernelId` (-1: the default for d) after checkTcParams.
void launchTcFlash(const TcParams& params, int kernelId = -1);

// Elementwise conversions on the device (the benchmark's inputs and its check).
void convertFloatToTc(const float* source, void* target, std::size_t count, TcElement element);
void convertTcToFloat(const void* source, float* target, std::size_t count, TcElement element);

} // namespace flashviz::cuda
