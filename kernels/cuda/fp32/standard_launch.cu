// Ordinary attention on the GPU in three steps, the baseline FlashAttention is measured against:
// cuBLAS writes S = scale Q K^T (n_q x n_k per head) to device memory, a kernel turns each row
// into softmax weights in place, cuBLAS computes O = P V. The scratch grows as n^2.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/fp32/softmax_rows.cuh"

#include "core/errors.h"

#include <cublas_v2.h>

#include <string>

namespace flashviz::cuda {

namespace {

void checkBlas(cublasStatus_t status, const char* what) {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    const std::string message = std::string(what) + " failed in cuBLAS: " +
                                cublasGetStatusString(status) + " (" +
                                cublasGetStatusName(status) + ").";
    // An earlier kernel's fault can surface first as a failed GEMM: report the runtime's error,
    // which throwCudaError also remembers when it has cost the context.
    if (const cudaError_t pending = cudaGetLastError(); pending != cudaSuccess)
        throwCudaError(pending, message);
    if (status == CUBLAS_STATUS_ALLOC_FAILED) throw EngineError(ErrorKind::OutOfMemory, message);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_ARCH_MISMATCH)
        throw EngineError(ErrorKind::Unsupported, message);
    throw EngineError(ErrorKind::BackendFailure, message);
}

} // namespace

struct BlasHandle::Impl {
    cublasHandle_t handle = nullptr;
};

BlasHandle::BlasHandle() : m_impl(std::make_unique<Impl>()) {
    checkBlas(cublasCreate(&m_impl->handle), "Starting cuBLAS");
    // Plain fp32 arithmetic: no TF32 tensor-core shortcut, the same numbers the CPU computes.
    checkBlas(cublasSetMathMode(m_impl->handle, CUBLAS_DEFAULT_MATH), "Setting cuBLAS math mode");
}

BlasHandle::~BlasHandle() {
    if (m_impl && m_impl->handle) (void)cublasDestroy(m_impl->handle);
}

void* BlasHandle::raw() const { return m_impl->handle; }

void launchStandardAttention(BlasHandle& blas, const AttentionParams& p, float* scores) {
    if (!hasDenseStrides(p))
        throw EngineError(ErrorKind::Unsupported,
                          "Standard attention on the GPU takes densely packed Q, K, V and O.");
    if (p.queries <= 0 || p.keys <= 0 || p.batch <= 0 || p.heads <= 0) return;
    const auto handle = static_cast<cublasHandle_t>(blas.raw());
    const int heads = p.batch * p.heads;
    const int nq = p.queries, nk = p.keys, d = p.headDim;
    const float zero = 0.0f, one = 1.0f, scale = p.scale;
    // cuBLAS is column-major: a row-major n x d matrix is its d x n transpose. S^T = K Q^T.
    checkBlas(cublasSgemmStridedBatched(handle, CUBLAS_OP_T, CUBLAS_OP_N, nk, nq, d, &scale, p.k,
                                        d, std::int64_t(nk) * d, p.q, d, std::int64_t(nq) * d,
                                        &zero, scores, nk, std::int64_t(nq) * nk, heads),
              "S = scale Q K^T");
    checkLaunch("S = scale Q K^T (cuBLAS)");

    const std::int64_t rows = std::int64_t(heads) * nq;
    if (rows > 0x7fffffff)
        throw EngineError(ErrorKind::LimitExceeded, "Too many rows for the softmax kernel.");
    if (nk % 4 == 0)
        detail::softmaxRowsKernel<true>
            <<<unsigned(rows), detail::kSoftmaxThreads>>>(scores, nq, nk, p.causal);
    else
        detail::softmaxRowsKernel<false>
            <<<unsigned(rows), detail::kSoftmaxThreads>>>(scores, nq, nk, p.causal);
    checkLaunch("softmax rows");

    // O^T = V^T P^T.
    checkBlas(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, nq, nk, &one, p.v, d,
                                        std::int64_t(nk) * d, scores, nk, std::int64_t(nq) * nk,
                                        &zero, p.o, d, std::int64_t(nq) * d, heads),
              "O = P V");
    checkLaunch("O = P V (cuBLAS)");
}

} // namespace flashviz::cuda
