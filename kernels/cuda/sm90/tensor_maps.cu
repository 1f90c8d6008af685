// The copy engine's tensor maps (tensor_maps.h). Compiled for sm_90a only, with the Hopper kernels.
#include "kernels/cuda/sm90/tensor_maps.h"

#include "kernels/cuda/runtime/check.h"

#include "core/errors.h"

#include <cudaTypedefs.h>

#include <mutex>
#include <string>

namespace flashviz::cuda {

namespace {

// The driver's tensor-map encoder, found through the runtime (no link to libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensorMapEncoder() {
    static PFN_cuTensorMapEncodeTiled_v12000 encoder = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        void* function = nullptr;
        cudaDriverEntryPointQueryResult found{};
        check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                               cudaEnableDefault, &found),
              "Finding the driver's tensor-map encoder");
        if (found == cudaDriverEntryPointSuccess) encoder = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    });
    if (!encoder)
        throw EngineError(ErrorKind::BackendFailure,
                          "The CUDA driver has no tensor-map encoder (cuTensorMapEncodeTiled).");
    return encoder;
}

} // namespace

CUtensorMap tensorMap(const void* base, TcElement element, int headDim, int rows, int heads,
                      int batch, std::int64_t rowStride, std::int64_t headStride,
                      std::int64_t batchStride, int boxRows) {
    CUtensorMap map{};
    const cuuint64_t dims[4] = {cuuint64_t(headDim), cuuint64_t(rows), cuuint64_t(heads), cuuint64_t(batch)};
    const cuuint64_t strides[3] = {cuuint64_t(rowStride) * 2, cuuint64_t(headStride) * 2,
                                   cuuint64_t(batchStride) * 2};
    const cuuint32_t box[4] = {64, cuuint32_t(boxRows), 1, 1};
    const cuuint32_t elementStrides[4] = {1, 1, 1, 1};
    const CUresult result = tensorMapEncoder()(
        &map, element == TcElement::Fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        4, const_cast<void*>(base), dims, strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS) // checkTcParams has checked the alignment: sizes or strides
        throw EngineError(ErrorKind::Unsupported,
                          "The copy engine cannot describe a " + std::to_string(batch) + " x " +
                              std::to_string(heads) + " x " + std::to_string(rows) + " x " +
                              std::to_string(headDim) + " tensor with element strides " +
                              std::to_string(rowStride) + ", " + std::to_string(headStride) + ", " +
                              std::to_string(batchStride) + " (cuTensorMapEncodeTiled error " +
                              std::to_string(int(result)) + ").");
    return map;
}

} // namespace flashviz::cuda
