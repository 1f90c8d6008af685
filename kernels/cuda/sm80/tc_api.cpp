// The public face of the tensor-core kernel (kernels/cuda_backend.h, HalfAttention section):
// problem checks, host-data passes through device buffers, and fp16 / bf16 conversions.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_memory.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/sm80/tc_api.h"
#include "kernels/cuda/sm80/tc_backward_buffers.h"
#include "kernels/cuda/sm80/tc_launch.h"
#include "kernels/cuda_backend.h"

#include "core/errors.h"

#include <cmath>
#include <string>

namespace flashviz {

cuda::TcParams cuda::tcParamsFor(const HalfAttentionProblem& problem) {
    cuda::TcParams p;
    p.batch = problem.batch;
    p.heads = problem.heads;
    p.queries = problem.queries;
    p.keys = problem.keys;
    p.headDim = problem.headDim;
    p.scale = float(problem.scale > 0 ? problem.scale : 1.0 / std::sqrt(double(problem.headDim)));
    p.causal = problem.causal;
    p.element = problem.type == HalfType::Fp16 ? cuda::TcElement::Fp16 : cuda::TcElement::Bf16;
    cuda::setDenseStrides(p, problem.layout == HalfLayout::BatchSeqHeadDim
                                 ? cuda::DenseLayout::SequenceMajor
                                 : cuda::DenseLayout::HeadMajor);
    return p;
}

namespace {

// Whether device 0 runs a variant (`runsHere` asks the launch layer); with no device, none does.
template <class Info, class RunsHere>
bool fitsDevice(const Info& info, RunsHere runsHere) {
    try {
        return runsHere(info);
    } catch (const EngineError&) {
        return false;
    }
}

} // namespace

std::vector<CudaTensorCoreKernel> cudaTensorCoreKernels() {
    std::vector<CudaTensorCoreKernel> out;
    for (const auto& info : cuda::tcKernels())
        out.push_back({info.id, info.name, info.headDim, info.sharedBytes,
                       fitsDevice(info, cuda::tcKernelRunsHere), info.wgmma});
    return out;
}

std::size_t halfQueryElements(const HalfAttentionProblem& problem) {
    return std::size_t(std::max(problem.batch, 0)) * std::size_t(std::max(problem.heads, 0)) *
           std::size_t(std::max(problem.queries, 0)) * std::size_t(std::max(problem.headDim, 0));
}

std::size_t halfKeyElements(const HalfAttentionProblem& problem) {
    return std::size_t(std::max(problem.batch, 0)) * std::size_t(std::max(problem.heads, 0)) *
           std::size_t(std::max(problem.keys, 0)) * std::size_t(std::max(problem.headDim, 0));
}

void checkHalfAttentionProblem(const HalfAttentionProblem& problem) {
    if (problem.scale < 0 || !std::isfinite(problem.scale))
        throw EngineError(ErrorKind::InvalidArgument, "The softmax scale must be positive (or 0 for 1/sqrt(d)).");
    cuda::TcParams p = cuda::tcParamsFor(problem);
    // Alignment is the caller's on device pointers; host data is copied into aligned buffers.
    static const std::uint16_t aligned[8] alignas(16) = {};
    p.q = p.k = p.v = aligned;
    p.o = const_cast<std::uint16_t*>(aligned);
    cuda::checkTcParams(p);
}

void cudaFlashForwardHalfDevice(const HalfAttentionProblem& problem, const void* q, const void* k,
                                const void* v, void* o, int kernel, float* lse) {
    checkHalfAttentionProblem(problem);
    cuda::TcParams p = cuda::tcParamsFor(problem);
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    p.lse = lse;
    cuda::launchTcFlash(p, kernel);
}

std::size_t halfLogSumExpElements(const HalfAttentionProblem& problem) {
    return std::size_t(std::max(problem.batch, 0)) * std::size_t(std::max(problem.heads, 0)) *
           std::size_t(std::max(problem.queries, 0));
}

std::vector<CudaTensorCoreBackwardKernel> cudaTensorCoreBackwardKernels() {
    std::vector<CudaTensorCoreBackwardKernel> out;
    for (const auto& info : cuda::tcBackwardKernels())
        out.push_back({info.id, info.name, info.headDim, info.sharedBytes,
                       fitsDevice(info, cuda::tcBackwardKernelRunsHere), info.wgmma});
    return out;
}

std::size_t halfBackwardWorkspaceBytes(const HalfAttentionProblem& problem) {
    checkHalfAttentionProblem(problem);
    return cuda::tcBackwardWorkspaceFloats(cuda::tcParamsFor(problem)) * sizeof(float);
}

void cudaFlashBackwardHalfDevice(const HalfAttentionProblem& problem, const void* q, const void* k,
                                 const void* v, const void* o, const void* dout, const float* lse,
                                 void* dq, void* dk, void* dv, void* workspace, int kernel) {
    checkHalfAttentionProblem(problem);
    cuda::TcBackwardParams p;
    static_cast<cuda::TcParams&>(p) = cuda::tcParamsFor(problem);
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = const_cast<void*>(o); // read only: TcParams' o is the forward's output
    p.lse = const_cast<float*>(lse);
    p.dout = dout;
    p.dq = dq;
    p.dk = dk;
    p.dv = dv;
    p.workspace = static_cast<float*>(workspace);
    cuda::launchTcBackward(p, kernel);
}

HalfGradients cudaFlashBackwardHalf(const HalfAttentionProblem& problem,
                                    const std::vector<std::uint16_t>& q,
                                    const std::vector<std::uint16_t>& k,
                                    const std::vector<std::uint16_t>& v,
                                    const std::vector<std::uint16_t>& dout, int forwardKernel,
                                    int backwardKernel) {
    checkHalfAttentionProblem(problem);
    const std::size_t nq = halfQueryElements(problem), nk = halfKeyElements(problem),
                      rows = halfLogSumExpElements(problem);
    if (q.size() != nq || k.size() != nk || v.size() != nk || dout.size() != nq)
        throw EngineError(ErrorKind::InvalidArgument,
                          "The fp16/bf16 inputs do not match the problem's sizes (Q and dO need " +
                              std::to_string(nq) + " elements, K and V " + std::to_string(nk) + ").");
    const CudaDeviceStatus status = cudaDeviceStatus();
    if (!status.usable) throw EngineError(ErrorKind::Unsupported, status.reason);
    cuda::DeviceBuffer<std::uint16_t> qDevice(nq, "Q"), kDevice(nk, "K"), vDevice(nk, "V"),
        doDevice(nq, "dO"), oDevice(nq, "O");
    qDevice.upload(q.data(), nq);
    kDevice.upload(k.data(), nk);
    vDevice.upload(v.data(), nk);
    doDevice.upload(dout.data(), nq);
    cuda::TcParams forward = cuda::tcParamsFor(problem);
    forward.q = qDevice.get();
    forward.k = kDevice.get();
    forward.v = vDevice.get();
    forward.o = oDevice.get();
    cuda::TcBackwardBuffers buffers(forward);
    // NaN in both formats: what a kernel failed to write shows.
    for (auto* buffer : {&oDevice, &buffers.dq, &buffers.dk, &buffers.dv}) buffer->fillBytes(0xFF);
    buffers.lse.fillBytes(0xFF);
    const cuda::TcBackwardParams params = buffers.params(doDevice.get());
    cuda::launchTcFlash(params, forwardKernel);
    cuda::launchTcBackward(params, backwardKernel);
    cuda::synchronize("The tensor-core flash backward");
    HalfGradients out;
    out.o.resize(nq);
    out.dq.resize(nq);
    out.dk.resize(nk);
    out.dv.resize(nk);
    out.lse.resize(rows);
    oDevice.download(out.o.data(), nq);
    buffers.dq.download(out.dq.data(), nq);
    buffers.dk.download(out.dk.data(), nk);
    buffers.dv.download(out.dv.data(), nk);
    buffers.lse.download(out.lse.data(), rows);
    // The launches above refused an id out of range, and a d with no default.
    const cuda::TcKernelInfo& forwardInfo =
        forwardKernel < 0 ? *cuda::defaultTcKernel(problem.headDim, problem.causal)
                          : cuda::tcKernels()[std::size_t(forwardKernel)];
    const cuda::TcBackwardKernelInfo& backwardInfo =
        backwardKernel < 0 ? *cuda::defaultTcBackwardKernel(problem.headDim, problem.causal)
                           : cuda::tcBackwardKernels()[std::size_t(backwardKernel)];
    out.kernels = forwardInfo.name + " + " + backwardInfo.name;
    return out;
}

std::vector<std::uint16_t> cudaFlashForwardHalf(const HalfAttentionProblem& problem,
                                                const std::vector<std::uint16_t>& q,
                                                const std::vector<std::uint16_t>& k,
                                                const std::vector<std::uint16_t>& v, int kernel) {
    checkHalfAttentionProblem(problem);
    const std::size_t nq = halfQueryElements(problem), nk = halfKeyElements(problem);
    if (q.size() != nq || k.size() != nk || v.size() != nk)
        throw EngineError(ErrorKind::InvalidArgument,
                          "The fp16/bf16 inputs do not match the problem's sizes (Q needs " +
                              std::to_string(nq) + " elements, K and V " + std::to_string(nk) + ").");
    const CudaDeviceStatus status = cudaDeviceStatus();
    if (!status.usable) throw EngineError(ErrorKind::Unsupported, status.reason);
    cuda::DeviceBuffer<std::uint16_t> dq(nq, "Q"), dk(nk, "K"), dv(nk, "V"), dout(nq, "O");
    dq.upload(q.data(), nq);
    dk.upload(k.data(), nk);
    dv.upload(v.data(), nk);
    dout.fillBytes(0xFF); // NaN in both formats: rows the kernel failed to write show
    cudaFlashForwardHalfDevice(problem, dq.get(), dk.get(), dv.get(), dout.get(), kernel);
    cuda::synchronize("The tensor-core flash kernel");
    std::vector<std::uint16_t> out(nq);
    dout.download(out.data(), nq);
    return out;
}

} // namespace flashviz
