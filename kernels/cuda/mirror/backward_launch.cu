// Launcher for the backward mirror kernel: configuration checks, shared-memory opt-in, the
// pre-pass and the tile loop on one stream, and a check after every launch. Kernel bodies live
// in backward_mirror.cuh.
#include "kernels/cuda/mirror/backward_mirror.cuh"
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/launch.h"

#include "core/errors.h"
#include "core/tiling.h"

#include <string>

namespace flashviz::cuda {

std::size_t backwardSharedBytes(int blockRows, int blockCols, int headDim) {
    return detail::backwardSharedFloats(blockRows, blockCols, headDim) * sizeof(float);
}

std::size_t backwardTraceSlotFloats(int blockRows, int blockCols, int headDim) {
    return detail::backwardTraceSlotFloats(blockRows, blockCols, headDim);
}

void requireBackwardFits(int blockRows, int blockCols, int headDim) {
    if (blockRows <= 0 || blockCols <= 0)
        throw EngineError(ErrorKind::InvalidArgument, "Block sizes Br and Bc must be at least 1.");
    const std::size_t need = backwardSharedBytes(blockRows, blockCols, headDim);
    const std::size_t limit = maxSharedBytesPerBlock();
    if (need > limit)
        throw EngineError(
            ErrorKind::Unsupported,
            "The GPU backward kernel keeps Bc x d tiles of K, V, dK and dV, Br x d tiles of Q "
            "and dO and the Br x Bc tiles P and dS in shared memory: Br = " +
                std::to_string(blockRows) + ", Bc = " + std::to_string(blockCols) +
                ", d = " + std::to_string(headDim) + " need " + formatBytes(double(need)) +
                ", more than this GPU's " + formatBytes(double(limit)) +
                " per block. Choose smaller blocks.");
}

void launchFlashBackwardMirror(const BackwardParams& bp) {
    const AttentionParams& p = bp.attention;
    requireBackwardFits(bp.blockRows, bp.blockCols, p.headDim);
    const std::size_t need = backwardSharedBytes(bp.blockRows, bp.blockCols, p.headDim);
    if (p.queries <= 0 || p.keys <= 0 || p.batch <= 0 || p.heads <= 0) return;
    const dim3 prepassGrid(unsigned(blockCount(p.queries, detail::kBackwardPrepassThreads)),
                           unsigned(p.heads), unsigned(p.batch));
    detail::backwardPrepassKernel<<<prepassGrid, detail::kBackwardPrepassThreads>>>(bp);
    checkLaunch("backward pre-pass (mirror)");
    check(cudaFuncSetAttribute(detail::flashBackwardMirrorKernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, int(need)),
          "Reserving shared memory for the backward mirror kernel");
    const dim3 grid(unsigned(p.heads), unsigned(p.batch));
    detail::flashBackwardMirrorKernel<<<grid, detail::kBackwardThreads, need>>>(bp);
    checkLaunch("flash backward (mirror)");
}

} // namespace flashviz::cuda
