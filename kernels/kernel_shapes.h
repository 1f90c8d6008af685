#pragma once
// FlashViz's CUDA kernels as the engine's KernelShape (core/flash_versions.h), read from their
// configuration table (kernel_configs.h): what the window's warp and grid pictures and
// `flashviz-cli versions` draw. Plain C++, built with or without CUDA.
// These are the FlashAttention-2 (mma.sync) kernels, which run on every GPU from sm_80 and whose
// split the pictures explain. On a Hopper GPU the backend's fp16 / bf16 default is the Hopper
// kernel (kHopperConfigs: a producer warpgroup and wgmma consumers), which the pictures do not
// draw yet.
#include "core/flash_versions.h"
#include "core/hardware.h"

#include <optional>
#include <vector>

namespace flashviz::kernels {

// Every tensor-core variant, in the table's order (a variant's id is its index).
std::vector<KernelShape> tensorCoreKernelShapes();
// The mma.sync variant the launcher picks for d on this GPU (chooseTensorCoreConfig with the
// profile's shared-memory limits; on Hopper the wgmma kernel runs instead); none for a d it is
// not built for.
std::optional<KernelShape> defaultTensorCoreShape(int headDim, const HardwareProfile& hardware);
// The mirror kernel with the user's Br and Bc: it runs any d.
KernelShape mirrorKernelShape(int blockRows, int blockCols, int headDim);
// FlashViz's FlashAttention-2 kernel for this forward pass in fp16 / bf16: the mma.sync default
// for d, else the mirror kernel on the user's tiles (on a Hopper GPU the backend runs the wgmma
// kernel instead; the pictures do not draw it yet).
KernelShape kernelShapeFor(int headDim, int blockRows, int blockCols, const HardwareProfile& hardware);

} // namespace flashviz::kernels
