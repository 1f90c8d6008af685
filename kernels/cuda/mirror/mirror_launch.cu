// The mirror kernel's launcher: its shared memory for the user's Br, Bc and d, checked against
// the device before the launch, the grid, and a check after it.
#include "kernels/cuda/launch.h"
#include "kernels/cuda/mirror/flash_mirror.cuh"
#include "kernels/cuda/runtime/check.h"

#include "core/errors.h"
#include "core/tiling.h"

#include <string>

namespace flashviz::cuda {

std::size_t mirrorSharedBytes(int blockRows, int blockCols, int headDim) {
    return detail::mirrorSharedFloats(blockRows, blockCols, headDim) * sizeof(float);
}

void launchFlashMirror(const MirrorParams& mp) {
    const AttentionParams& p = mp.attention;
    if (mp.blockRows <= 0 || mp.blockCols <= 0)
        throw EngineError(ErrorKind::InvalidArgument, "Block sizes Br and Bc must be at least 1.");
    const std::size_t need = mirrorSharedBytes(mp.blockRows, mp.blockCols, p.headDim);
    const std::size_t limit = maxSharedBytesPerBlock();
    if (need > limit)
        throw EngineError(
            ErrorKind::Unsupported,
            "The GPU kernel keeps a Br x d query tile, Bc x d key and value tiles, the Br x Bc "
            "scores and the Br x d accumulator in shared memory: Br = " +
                std::to_string(mp.blockRows) + ", Bc = " + std::to_string(mp.blockCols) +
                ", d = " + std::to_string(p.headDim) + " need " + formatBytes(double(need)) +
                ", more than this GPU's " + formatBytes(double(limit)) +
                " per block. Choose smaller blocks.");
    if (p.queries <= 0 || p.keys <= 0 || p.batch <= 0 || p.heads <= 0) return;
    check(cudaFuncSetAttribute(detail::flashMirrorKernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, int(need)),
          "Reserving shared memory for the mirror kernel");
    const dim3 grid(unsigned(blockCount(p.queries, mp.blockRows)), unsigned(p.heads),
                    unsigned(p.batch));
    detail::flashMirrorKernel<<<grid, detail::kMirrorThreads, need>>>(mp);
    checkLaunch("flash (mirror)");
}

} // namespace flashviz::cuda
