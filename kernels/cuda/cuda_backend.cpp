// The CUDA backend: moves a problem to the GPU in fp32, runs the fast or the mirror kernel (or
// the three-step standard attention), and brings the results back in the core's types.
#include "kernels/cuda_backend.h"

#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_memory.h"
#include "kernels/cuda/launch.h"

#include "core/backward.h"
#include "core/counters.h"
#include "core/flash.h"
#include "core/errors.h"
#include "core/tiling.h"

#include <algorithm>
#include <limits>
#include <vector>
#include <string>

namespace flashviz {

using cuda::AttentionParams;
using cuda::DeviceBuffer;

namespace {

void requireDevice() {
    const CudaDeviceStatus status = cudaDeviceStatus();
    if (!status.usable)
        throw EngineError(ErrorKind::Unsupported, "The CUDA backend is not available: " +
                                                      status.reason + ".");
    cuda::check(cudaSetDevice(0), "Selecting the GPU");
}

void requireShapes(const MatrixF& q, const MatrixF& k, const MatrixF& v) {
    if (q.rows() == 0 || k.rows() == 0 || q.cols() == 0 || q.cols() != k.cols() ||
        k.cols() != v.cols() || k.rows() != v.rows())
        throw EngineError(ErrorKind::InvalidArgument,
                          "Q must be n_q x d and K, V n_k x d with every size at least 1");
    if (q.cols() > kCudaMaxHeadDim)
        throw EngineError(ErrorKind::Unsupported,
                          "The GPU kernels take head dimensions up to " +
                              std::to_string(kCudaMaxHeadDim) + "; d = " +
                              std::to_string(q.cols()) + " runs on the CPU backend only.");
}

// Inputs on the device, and the output buffers of a flash pass.
struct DeviceProblem {
    DeviceBuffer<float> q, k, v, o, m, l;
    AttentionParams params;

    DeviceProblem(const MatrixF& hq, const MatrixF& hk, const MatrixF& hv, double scale,
                  bool causal)
        : q(std::size_t(hq.size()), "Q"), k(std::size_t(hk.size()), "K"),
          v(std::size_t(hv.size()), "V"), o(std::size_t(hq.size()), "O"),
          m(std::size_t(hq.rows()), "the running maxima m"),
          l(std::size_t(hq.rows()), "the running sums l") {
        q.upload(hq.data(), q.size());
        k.upload(hk.data(), k.size());
        v.upload(hv.data(), v.size());
        o.fillBytes(0xFF); // NaN: a row the kernel failed to write cannot pass a check
        params.q = q.get();
        params.k = k.get();
        params.v = v.get();
        params.o = o.get();
        params.m = m.get();
        params.l = l.get();
        params.queries = int(hq.rows());
        params.keys = int(hk.rows());
        params.headDim = int(hq.cols());
        params.scale = float(scale);
        params.causal = causal;
        cuda::setDenseStrides(params);
    }
};

cuda::MirrorParams mirrorParams(const AttentionParams& attention, const FlashOptions& options) {
    cuda::MirrorParams mp;
    mp.attention = attention;
    mp.blockRows = options.blockRows;
    mp.blockCols = options.blockCols;
    mp.rescale = options.rescale;
    mp.runningMax = options.runningMax;
    return mp;
}

bool fastPathComputesTheSame(const FlashOptions& options) {
    return options.rescale && options.runningMax && !options.keepFullScores;
}

std::string mirrorName(const FlashOptions& options) {
    return "mirror Br=" + std::to_string(options.blockRows) +
           " Bc=" + std::to_string(options.blockCols);
}

MatrixF download(const DeviceBuffer<float>& buffer, int rows, int cols) {
    MatrixF out(rows, cols);
    buffer.download(out.data(), std::size_t(out.size()));
    return out;
}

VectorF downloadVector(const DeviceBuffer<float>& buffer, int size) {
    VectorF out(size);
    buffer.download(out.data(), std::size_t(size));
    return out;
}

void requireUpstreamGradient(const MatrixF& q, const MatrixF& dO) {
    if (dO.rows() != q.rows() || dO.cols() != q.cols())
        throw EngineError(ErrorKind::InvalidArgument,
                          "The upstream gradient dO must be n_q x d like Q (" +
                              std::to_string(q.rows()) + "x" + std::to_string(q.cols()) +
                              "); it is " + std::to_string(dO.rows()) + "x" +
                              std::to_string(dO.cols()));
}

// The checks that need no device, in the order the forward's entry points make them.
void requireBackwardInputs(const MatrixF& q, const MatrixF& k, const MatrixF& v,
                           const MatrixF& dO, const FlashOptions& options) {
    validate(options);
    requireShapes(q, k, v);
    requireUpstreamGradient(q, dO);
}

// The forward's outputs and the backward's buffers on the device. run() launches the mirror
// forward (O, m, l with the options' forward switches), then the backward pre-pass and tiles.
struct DeviceBackward {
    DeviceProblem forward;
    DeviceBuffer<float> dO, lse, delta, dq, dk, dv;
    cuda::BackwardParams params;

    DeviceBackward(const MatrixF& hq, const MatrixF& hk, const MatrixF& hv, const MatrixF& hdO,
                   double scale, bool causal, const FlashOptions& options)
        : forward(hq, hk, hv, scale, causal),
          dO(std::size_t(hdO.size()), "the upstream gradient dO"), lse(std::size_t(hq.rows()), "the log-sum-exp L"),
          delta(std::size_t(hq.rows()), "the row dots D"), dq(std::size_t(hq.size()), "dQ"),
          dk(std::size_t(hk.size()), "dK"), dv(std::size_t(hv.size()), "dV") {
        dO.upload(hdO.data(), dO.size());
        // NaN: a gradient row the kernel failed to write cannot pass a check.
        dk.fillBytes(0xFF);
        dv.fillBytes(0xFF);
        params.attention = forward.params;
        params.dO = dO.get();
        params.lse = lse.get();
        params.delta = delta.get();
        params.dq = dq.get();
        params.dk = dk.get();
        params.dv = dv.get();
        params.blockRows = options.blockRows;
        params.blockCols = options.blockCols;
        const BackwardOptions& bw = options.backward;
        params.subtractRowDot = bw.subtractRowDot;
        params.useLogSumExp = bw.useLogSumExp;
        params.accumulateDq = bw.accumulateDq;
        params.maskRecompute = bw.maskRecompute;
        params.storeWeights = bw.storeWeights;
    }

    void run(const FlashOptions& options, float* trace) {
        cuda::launchFlashMirror(mirrorParams(forward.params, options));
        params.trace = trace;
        cuda::launchFlashBackwardMirror(params);
    }
};

} // namespace

std::vector<CudaFastKernel> cudaFastKernels() {
    std::vector<CudaFastKernel> out;
    const bool haveDevice = cudaDeviceStatus().usable;
    const std::size_t limit = haveDevice ? cuda::maxSharedBytesPerBlock() : 0;
    for (const auto& k : cuda::fastKernels())
        out.push_back({k.id, k.name, k.headDim, k.arithmetic == cuda::FastArithmetic::Tf32x3,
                       haveDevice && k.sharedBytes <= limit});
    return out;
}

const char* toString(CudaKernelPath path) {
    switch (path) {
    case CudaKernelPath::Auto: return "auto";
    case CudaKernelPath::Mirror: return "mirror";
    case CudaKernelPath::Fast: return "fast";
    }
    return "?";
}

CudaFlashOutput cudaFlashForward(const MatrixF& q, const MatrixF& k, const MatrixF& v,
                                 double scale, bool causal, const FlashOptions& options,
                                 CudaKernelPath path, int fastKernel) {
    validate(options);
    requireShapes(q, k, v);
    requireDevice();
    DeviceProblem dev(q, k, v, scale, causal);
    const int nq = int(q.rows()), nk = int(k.rows()), d = int(q.cols());

    CudaFlashOutput out;
    if (path == CudaKernelPath::Auto)
        path = fastPathComputesTheSame(options) && cuda::fastKernelAccepts(dev.params) &&
                       cuda::defaultFastKernel(d)
                   ? CudaKernelPath::Fast
                   : CudaKernelPath::Mirror;
    if (path == CudaKernelPath::Fast && !fastPathComputesTheSame(options))
        throw EngineError(ErrorKind::Unsupported,
                          "The fast GPU kernel computes exact attention with its own tiles; with "
                          "the rescale or the running maximum off, or the full-score copy on, "
                          "the mirror kernel runs the options' tiles.");

    DeviceBuffer<float> fullScores;
    if (path == CudaKernelPath::Fast) {
        cuda::launchFlashFast(dev.params, fastKernel);
        out.kernel = "fast " + cuda::fastKernelName(d, fastKernel);
    } else {
        cuda::MirrorParams mp = mirrorParams(dev.params, options);
        if (options.keepFullScores) {
            fullScores = DeviceBuffer<float>(std::size_t(nq) * std::size_t(nk),
                                             "the debug copy of the n_q x n_k scores");
            requireScoreMatrixMemory(nq, nk, int(sizeof(float)), 1); // its copy on the host
            // Tiles a causal mask skips are never written: they read -inf, as on the CPU.
            cuda::fillDevice(fullScores.get(), fullScores.size(),
                             -std::numeric_limits<float>::infinity());
            mp.fullScores = fullScores.get();
        }
        cuda::launchFlashMirror(mp);
        out.kernel = mirrorName(options);
    }
    cuda::synchronize("The flash kernel");
    out.path = path;
    out.result.o = download(dev.o, nq, d);
    out.result.m = downloadVector(dev.m, nq);
    out.result.l = downloadVector(dev.l, nq);
    out.result.counters = flashCounts(nq, nk, d, causal, options);
    if (options.keepFullScores) out.result.fullScores = download(fullScores, nq, nk);
    return out;
}

MatrixF cudaStandardAttention(const MatrixF& q, const MatrixF& k, const MatrixF& v, double scale,
                              bool causal) {
    requireShapes(q, k, v);
    requireDevice();
    const std::size_t scratch = std::size_t(q.rows()) * std::size_t(k.rows());
    const cuda::MemoryInfo mem = cuda::memoryInfo();
    if (double(scratch) * sizeof(float) > double(mem.freeBytes))
        throw EngineError(ErrorKind::OutOfMemory,
                          "Standard attention on the GPU at n_q = " + std::to_string(q.rows()) +
                              ", n_k = " + std::to_string(k.rows()) + " needs an n_q x n_k score "
                              "matrix of " + cuda::formatBytes(double(scratch) * sizeof(float)) +
                              "; the GPU has " + cuda::formatBytes(double(mem.freeBytes)) +
                              " free. FlashAttention never stores it: use the flash algorithm.");
    DeviceProblem dev(q, k, v, scale, causal);
    DeviceBuffer<float> scores(scratch, "the n_q x n_k score matrix of standard attention");
    cuda::BlasHandle blas;
    cuda::launchStandardAttention(blas, dev.params, scores.get());
    cuda::synchronize("Standard attention");
    return download(dev.o, int(q.rows()), int(q.cols()));
}

FlashTrace cudaFlashTrace(const MatrixF& q, const MatrixF& k, const MatrixF& v, double scale,
                          bool causal, const FlashOptions& options) {
    validate(options);
    requireShapes(q, k, v);
    const int nq = int(q.rows()), nk = int(k.rows()), d = int(q.cols());
    const int br = options.blockRows, bc = options.blockCols;
    const int queryBlocks = blockCount(nq, br), keyBlocks = blockCount(nk, bc);
    const std::size_t slot = std::size_t(br) * std::size_t(3 + d);
    const double bytes = double(queryBlocks) * keyBlocks * double(slot) * sizeof(float);
    if (bytes > double(kCudaTraceMaxBytes))
        throw EngineError(ErrorKind::LimitExceeded,
                          "A GPU trace of " + std::to_string(queryBlocks) + " x " +
                              std::to_string(keyBlocks) + " tiles needs " +
                              cuda::formatBytes(bytes) + ", past the " +
                              cuda::formatBytes(double(kCudaTraceMaxBytes)) +
                              " the trace may take: it is meant for problems small enough to "
                              "animate. Use larger blocks or a smaller problem.");
    requireDevice();
    DeviceProblem dev(q, k, v, scale, causal);
    DeviceBuffer<float> trace(std::size_t(queryBlocks) * std::size_t(keyBlocks) * slot,
                              "the per-tile trace");
    trace.fillBytes(0xFF);
    cuda::MirrorParams mp = mirrorParams(dev.params, options);
    mp.trace = trace.get();
    cuda::launchFlashMirror(mp);
    cuda::synchronize("The flash kernel (trace)");
    std::vector<float> host(trace.size());
    trace.download(host.data(), host.size());

    FlashTrace out;
    for (int i = 0; i < queryBlocks; ++i) {
        const Range rows = blockRange(i, br, nq);
        const int n = rows.size();
        const int visible = visibleKeyBlocks(rows, nq, nk, bc, causal);
        for (int j = 0; j < visible; ++j) {
            const float* s = host.data() + (std::size_t(i) * std::size_t(keyBlocks) + std::size_t(j)) * slot;
            TileTrace t;
            t.queryBlock = i;
            t.keyBlock = j;
            t.rows = rows;
            t.mNew.resize(n);
            t.lNew.resize(n);
            t.correction.resize(n);
            t.accNew.resize(n, d);
            for (int r = 0; r < n; ++r) {
                t.mNew(r) = s[r];
                t.lNew(r) = s[br + r];
                t.correction(r) = s[2 * br + r];
                for (int c = 0; c < d; ++c) t.accNew(r, c) = s[3 * br + r * d + c];
            }
            out.tiles.push_back(std::move(t));
        }
    }
    return out;
}

BackwardOutputT<float> cudaFlashBackward(const MatrixF& q, const MatrixF& k, const MatrixF& v,
                                         const MatrixF& dO, double scale, bool causal,
                                         const FlashOptions& options) {
    requireBackwardInputs(q, k, v, dO, options);
    requireDevice();
    const int nq = int(q.rows()), nk = int(k.rows()), d = int(q.cols());
    cuda::requireBackwardFits(options.blockRows, options.blockCols, d);
    DeviceBackward dev(q, k, v, dO, scale, causal, options);
    dev.run(options, nullptr);
    cuda::synchronize("The backward kernel");
    BackwardOutputT<float> out;
    out.grads.dq = download(dev.dq, nq, d);
    out.grads.dk = download(dev.dk, nk, d);
    out.grads.dv = download(dev.dv, nk, d);
    out.delta = downloadVector(dev.delta, nq);
    out.counters = flashBackwardCounts(nq, nk, d, causal, options);
    return out;
}

BackwardTrace cudaFlashBackwardTrace(const MatrixF& q, const MatrixF& k, const MatrixF& v,
                                     const MatrixF& dO, double scale, bool causal,
                                     const FlashOptions& options) {
    requireBackwardInputs(q, k, v, dO, options);
    const int nq = int(q.rows()), nk = int(k.rows()), d = int(q.cols());
    const int br = options.blockRows, bc = options.blockCols;
    const int queryBlocks = blockCount(nq, br), keyBlocks = blockCount(nk, bc);
    const std::size_t slot = cuda::backwardTraceSlotFloats(br, bc, d);
    const double bytes = double(queryBlocks) * keyBlocks * double(slot) * sizeof(float);
    if (bytes > double(kCudaTraceMaxBytes))
        throw EngineError(ErrorKind::LimitExceeded,
                          "A GPU backward trace of " + std::to_string(keyBlocks) + " x " +
                              std::to_string(queryBlocks) + " tiles needs " +
                              cuda::formatBytes(bytes) + ", past the " +
                              cuda::formatBytes(double(kCudaTraceMaxBytes)) +
                              " the trace may take: it is meant for problems small enough to "
                              "animate. Use larger blocks or a smaller problem.");
    requireDevice();
    cuda::requireBackwardFits(br, bc, d);
    DeviceBackward dev(q, k, v, dO, scale, causal, options);
    DeviceBuffer<float> trace(std::size_t(queryBlocks) * std::size_t(keyBlocks) * slot,
                              "the backward's per-tile trace");
    trace.fillBytes(0xFF);
    dev.run(options, trace.get());
    cuda::synchronize("The backward kernel (trace)");
    std::vector<float> host(trace.size());
    trace.download(host.data(), host.size());

    BackwardTrace out;
    for (int j = 0; j < keyBlocks; ++j) {
        const Range cols = blockRange(j, bc, nk);
        for (int i = 0; i < queryBlocks; ++i) {
            const Range rows = blockRange(i, br, nq);
            // The kernel's rule: only the query blocks that see key block j have a tile.
            if (visibleKeyBlocks(rows, nq, nk, bc, causal) <= j) continue;
            const float* s =
                host.data() + (std::size_t(j) * std::size_t(queryBlocks) + std::size_t(i)) * slot;
            const auto tile = [&](std::size_t offset, int count) {
                return Eigen::Map<const MatrixF>(s + offset, count, d).cast<double>().eval();
            };
            out.tiles.push_back({j, i, rows, cols, tile(0, rows.size()),
                                 tile(std::size_t(br) * d, cols.size()),
                                 tile(std::size_t(br + bc) * d, cols.size())});
        }
    }
    return out;
}

// ---- CudaBackend ----

CudaBackend::CudaBackend() {
    const CudaDeviceStatus status = cudaDeviceStatus();
    std::string whyNot = status.reason;
    const auto info = status.usable ? cudaDeviceInfo(&whyNot) : std::nullopt;
    if (!info)
        throw EngineError(ErrorKind::Unsupported, "The CUDA backend is not available: " + whyNot + ".");
    m_device = *info;
}

CudaBackend::~CudaBackend() = default;

std::string CudaBackend::name() const { return "CUDA (" + m_device.name + ")"; }

FlashResult CudaBackend::flash(const Problem& problem, const FlashOptions& options) {
    const CudaFlashOutput out =
        cudaFlashForward(problem.q.cast<float>(), problem.k.cast<float>(), problem.v.cast<float>(),
                         problem.scale(), problem.spec.causal, options);
    m_lastKernel = out.kernel;
    // The kernels keep m and l, not the log-sum-exp, and count no non-matmul operations (the CPU
    // passes do: core/flash_versions.h).
    FlashResult r;
    r.o = out.result.o.cast<double>();
    r.m = out.result.m.cast<double>();
    r.l = out.result.l.cast<double>();
    r.counters = out.result.counters;
    r.fullScores = out.result.fullScores.cast<double>();
    return r;
}

Matrix CudaBackend::standard(const Problem& problem) {
    return cudaStandardAttention(problem.q.cast<float>(), problem.k.cast<float>(),
                                 problem.v.cast<float>(), problem.scale(), problem.spec.causal)
        .cast<double>();
}

FlashTrace CudaBackend::trace(const Problem& problem, const FlashOptions& options) {
    return cudaFlashTrace(problem.q.cast<float>(), problem.k.cast<float>(),
                          problem.v.cast<float>(), problem.scale(), problem.spec.causal, options);
}

BackwardResult CudaBackend::backward(const Problem& problem, const Matrix& dO,
                                     const FlashOptions& options) {
    validate(problem.spec, options);
    const BackwardOutputT<float> out =
        cudaFlashBackward(problem.q.cast<float>(), problem.k.cast<float>(),
                          problem.v.cast<float>(), dO.cast<float>(), problem.scale(),
                          problem.spec.causal, options);
    return {{out.grads.dq.cast<double>(), out.grads.dk.cast<double>(), out.grads.dv.cast<double>()},
            out.delta.cast<double>(),
            out.counters};
}

namespace {

// One head's [n][d] rows as fp16 / bf16 bits, and back.
std::vector<std::uint16_t> halfBits(const Matrix& m, HalfType type) {
    std::vector<std::uint16_t> bits;
    bits.reserve(std::size_t(m.size()));
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index c = 0; c < m.cols(); ++c) bits.push_back(toHalfBits(float(m(i, c)), type));
    return bits;
}

Matrix widened(const std::vector<std::uint16_t>& bits, int rows, int cols, HalfType type) {
    Matrix m(rows, cols);
    for (int i = 0; i < rows; ++i)
        for (int c = 0; c < cols; ++c)
            m(i, c) = fromHalfBits(bits[std::size_t(i) * std::size_t(cols) + std::size_t(c)], type);
    return m;
}

} // namespace

LowPrecisionBackward CudaBackend::lowPrecisionBackward(const Problem& rounded, const Matrix& dO,
                                                       HalfType type) {
    const ProblemSpec& spec = rounded.spec;
    HalfAttentionProblem p;
    p.type = type;
    p.queries = spec.queries;
    p.keys = spec.keys;
    p.headDim = spec.headDim;
    p.scale = rounded.scale();
    p.causal = spec.causal;
    const HalfGradients g =
        cudaFlashBackwardHalf(p, halfBits(rounded.q, type), halfBits(rounded.k, type),
                              halfBits(rounded.v, type), halfBits(dO, type));
    return {{widened(g.dq, spec.queries, spec.headDim, type), widened(g.dk, spec.keys, spec.headDim, type),
             widened(g.dv, spec.keys, spec.headDim, type)},
            g.kernels};
}

BackwardTrace CudaBackend::backwardTrace(const Problem& problem, const Matrix& dO,
                                         const FlashOptions& options) {
    validate(problem.spec, options);
    return cudaFlashBackwardTrace(problem.q.cast<float>(), problem.k.cast<float>(),
                                  problem.v.cast<float>(), dO.cast<float>(), problem.scale(),
                                  problem.spec.causal, options);
}

std::unique_ptr<Backend> makeCudaBackend() { return std::make_unique<CudaBackend>(); }

} // namespace flashviz
