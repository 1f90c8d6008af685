#pragma once
// Launch layer of the tensor-core backward pass (tc_backward.cuh): its compiled variants, the
// scratch it needs and the launch of its three kernels. No CUDA types; failures are EngineErrors.
// Launches go to the default stream and return without waiting.
#include "kernels/cuda/params/tc_params.h"

#include <cstddef>
#include <string>
#include <vector>

namespace flashviz::cuda {

struct TcBackwardKernelInfo {
    int id = 0;
    std::string name; // "tc_bwd_d128_bc64_br64_w4_m2" (kernels::tensorCoreBackwardConfigName) or
                      // "wgmma_bwd_d128_bc128_br64_wg2_s2" (kernels::hopperBackwardConfigName)
    int headDim = 0;
    int blockCols = 0;
    int blockRows = 0;
    int threads = 0;
    std::size_t sharedBytes = 0;
    int blocksPerSm = 1;
    bool wgmma = false; // the Hopper kernel (sm90/, "wgmma_bwd_..."): compute capability 9.0 only
};

// A variant's key-block kernel and its description: what the two families' launchers
// (tc_backward_launch.cu, sm90/hopper_backward_launch.cu) list. `launch` runs on a problem
// launchTcBackward accepted, after the pre-pass, on the default stream.
struct TcBackwardVariant {
    TcBackwardKernelInfo info;
    void (*launch)(const TcBackwardParams&);
    // dQ's scratch in fragment order (tc::fragmentOrderPair), not in rows: the post-pass's reading.
    bool dqInFragmentOrder = false;
};

// Every compiled variant: the mma.sync ones (ids 0 .. kTensorCoreBackwardConfigCount - 1, rows of
// kernels::kTensorCoreBackwardConfigs), then, where the toolkit builds sm_90a, the Hopper ones
// (rows of kernels::kHopperBackwardConfigs).
const std::vector<TcBackwardKernelInfo>& tcBackwardKernels();
// Whether device 0 runs the variant (its shared memory; Hopper for the wgmma ones).
bool tcBackwardKernelRunsHere(const TcBackwardKernelInfo& info);
// The variant for d, with or without the mask, on device 0: on Hopper the wgmma one where its
// table prefers one (kernels::chooseHopperBackwardConfig), else the mma.sync one
// (kernels::chooseTensorCoreBackwardConfig); null when none fits.
const TcBackwardKernelInfo* defaultTcBackwardKernel(int headDim, bool causal);

// Query rows per (batch, head) in the scratch: the queries rounded up to whole blocks.
int tcBackwardRowsPadded(int queries);
// fp32 values of scratch the backward needs: dQ's accumulator and two numbers per query row.
std::size_t tcBackwardWorkspaceFloats(const QkvParams& params);
// checkTcParams, and dO, dQ, dK, dV, the LSE and the scratch present and 16-byte aligned.
void checkTcBackwardParams(const TcBackwardParams& params);
// Zeroes dQ's accumulator, then runs the pre-pass, variant `kernelId` (-1: the default for d)
// and the post-pass. `params.lse` is the forward's; the launcher sets the scratch's pointers.
void launchTcBackward(TcBackwardParams params, int kernelId = -1);

} // namespace flashviz::cuda
