#pragma once
// Launch layer of the Hopper backward kernel (sm90/hopper_backward.cuh): its variants, the rows of
// kernels::kHopperBackwardConfigs (kernels/kernel_configs.h). Built where the Hopper forward is
// (FLASHVIZ_HAS_SM90A); sm80/tc_backward_launch.cu lists them after the mma.sync ones, checks
// the problem and runs the pre-pass and the post-pass around them. No CUDA types.
#include "kernels/cuda/sm80/tc_backward_launch.h"

#include <vector>

namespace flashviz::cuda {

// Row I of kHopperBackwardConfigs as variant kTensorCoreBackwardConfigCount + I.
std::vector<TcBackwardVariant> hopperBackwardVariants();

} // namespace flashviz::cuda
