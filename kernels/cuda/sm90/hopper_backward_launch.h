#pragma once
// Launch layer of the Hopper backward kernel (sm90/hopper_backward.cuh); its variants are the rows
// of kernels::kHopperBackwardConfigs (kernels/kernel_configs.h). Built where the Hopper forward is
// (FLASHVIZ_HAS_SM90A); sm80/tc_backward_launch.cu lists these variants after the mma.sync ones
// and runs the pre-pass and the post-pass around them. No CUDA types; failures are EngineErrors.
#include "kernels/cuda/params/tc_params.h"

namespace flashviz::cuda {

// The key-block kernel of row `row` of kHopperBackwardConfigs, on a problem checkTcBackwardParams
// accepted, after the pre-pass (the scratch's LSE and D rows set), on the default stream.
void launchHopperBackward(const TcBackwardParams& params, int row);

} // namespace flashviz::cuda
