#include "kernels/kernel_shapes.h"

#include "kernels/kernel_configs.h"

#include <string>

namespace flashviz::kernels {

namespace {

KernelShape shapeOf(const TensorCoreConfig& c) {
    KernelShape k;
    k.name = tensorCoreConfigName(c);
    k.headDim = c.headDim;
    k.blockRows = c.blockRows();
    k.blockCols = c.blockCols;
    k.threads = c.threads();
    k.rowsPerWarp = c.rowsPerWarp();
    k.builtForBlocksPerSm = c.minBlocksPerSm;
    k.sharedBytes = c.sharedBytes();
    k.elementBytes = 2; // fp16 / bf16
    return k;
}

} // namespace

std::vector<KernelShape> tensorCoreKernelShapes() {
    std::vector<KernelShape> shapes;
    for (const TensorCoreConfig& c : kTensorCoreConfigs) shapes.push_back(shapeOf(c));
    return shapes;
}

std::optional<KernelShape> defaultTensorCoreShape(int headDim, const HardwareProfile& hw) {
    const int i = chooseTensorCoreConfig(headDim, std::size_t(hw.sharedMemoryPerBlockBytes.value),
                                         std::size_t(hw.sharedMemoryPerSmBytes.value),
                                         std::size_t(hw.reservedSharedPerBlockBytes.value));
    if (i < 0) return std::nullopt;
    return shapeOf(kTensorCoreConfigs[i]);
}

KernelShape mirrorKernelShape(int blockRows, int blockCols, int headDim) {
    KernelShape k;
    k.name = "mirror_br" + std::to_string(blockRows) + "_bc" + std::to_string(blockCols) + "_d" +
             std::to_string(headDim);
    k.headDim = headDim;
    k.blockRows = blockRows;
    k.blockCols = blockCols;
    k.threads = kMirrorThreads;
    k.sharedBytes = mirrorSharedFloats(blockRows, blockCols, headDim) * sizeof(float);
    k.elementBytes = 4; // fp32
    return k;
}

KernelShape kernelShapeFor(int headDim, int blockRows, int blockCols, const HardwareProfile& hw) {
    if (auto shape = defaultTensorCoreShape(headDim, hw)) return *shape;
    return mirrorKernelShape(blockRows, blockCols, headDim);
}

} // namespace flashviz::kernels
