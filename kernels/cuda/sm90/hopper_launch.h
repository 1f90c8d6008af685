#pragma once
// Launch layer of the Hopper (sm_90a: wgmma, TMA, warp specialisation) FlashAttention forward
// kernel, sm90/hopper_flash.cuh; its variants are the rows of kernels::kHopperConfigs
// (kernels/kernel_configs.h). Built only with CUDA 12.5 or later (sm_90a, and the runtime's
// versioned driver entry points: FLASHVIZ_HAS_SM90A); sm80/tc_launch.cu lists and picks these variants beside the mma.sync ones.
// No CUDA types; failures are EngineErrors. Launches go to the default stream without waiting.
#include "kernels/cuda/params/tc_params.h"
#include "kernels/hopper_marks.h"

namespace flashviz::cuda {

// Whether device 0 runs these kernels: this build has them and the device is compute capability
// 9.0 exactly (sm_90a code runs on no other). Defined in sm80/tc_launch.cu, built always.
bool hopperKernelsRunHere();
// Launches row `row` of kHopperConfigs on a problem checkTcParams accepted; with `trace`, the
// trace mode's kernel, writing its marks there (sized by hopperMarkCapacity for the most key
// tiles a block visits).
void launchHopperFlash(const TcParams& params, int row, const kernels::HopperTraceBuffers* trace = nullptr);

} // namespace flashviz::cuda
