#include "kernels/cuda/bench/benchmark_run.h"

#include "kernels/cuda/bench/bench_util.h"
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_memory.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/sm80/tc_backward_buffers.h"
#include "kernels/cuda/sm80/tc_launch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace flashviz::cuda {

namespace {

bool wants(const GpuBenchRequest& request, const char* variant) {
    return std::find(request.variants.begin(), request.variants.end(), variant) !=
           request.variants.end();
}

// fp16 or bf16 copies of the fp32 inputs, and an output in that type.
struct HalfBuffers {
    HalfBuffers(const DeviceBuffer<float>& fq, const DeviceBuffer<float>& fk,
                const DeviceBuffer<float>& fv, TcElement type)
        : element(type), q(fq.size(), "Q (16-bit)"), k(fk.size(), "K (16-bit)"),
          v(fv.size(), "V (16-bit)"), o(fq.size(), "O (16-bit)") {
        convertFloatToTc(fq.get(), q.get(), fq.size(), type);
        convertFloatToTc(fk.get(), k.get(), fk.size(), type);
        convertFloatToTc(fv.get(), v.get(), fv.size(), type);
        synchronize("Converting the inputs to 16-bit floats");
    }
    TcElement element;
    DeviceBuffer<std::uint16_t> q, k, v, o;
};

// A tensor-core point of the request's pass: the forward, the backward after one untimed
// forward that writes O and the log-sum-exp, or both in turn. dO is V's values (self-attention:
// the same shape; any data times alike). Returns the timing; `point` gets the kernel's name,
// the scratch, or a note when no variant fits.
Timing timeTensorCores(const GpuBenchRequest& request, const HalfBuffers& b, const TcParams& tp,
                       GpuBenchPoint& point) {
    const TcKernelInfo* forward = defaultTcKernel(tp.headDim, tp.causal);
    if (!forward) {
        point.note = "no tensor-core kernel for d = " + std::to_string(tp.headDim) + " fits this GPU";
        return {};
    }
    if (request.pass == GpuBenchPass::Forward) {
        point.kernel = forward->name;
        return timeIt([&] { launchTcFlash(tp, forward->id); }, request.repeats);
    }
    const TcBackwardKernelInfo* backward = defaultTcBackwardKernel(tp.headDim, tp.causal);
    if (!backward) {
        point.note = "no tensor-core backward kernel for d = " + std::to_string(tp.headDim) + " fits this GPU";
        return {};
    }
    TcBackwardBuffers buffers(tp);
    const TcBackwardParams bp = buffers.params(b.v.get());
    point.scratchBytes = double(buffers.scratchBytes());
    if (request.pass == GpuBenchPass::Backward) {
        point.kernel = backward->name;
        launchTcFlash(bp, forward->id);
        return timeIt([&] { launchTcBackward(bp, backward->id); }, request.repeats);
    }
    point.kernel = forward->name + " + " + backward->name;
    return timeIt(
        [&] {
            launchTcFlash(bp, forward->id);
            launchTcBackward(bp, backward->id);
        },
        request.repeats);
}

} // namespace

std::vector<GpuBenchPoint> runBenchmark(const GpuBenchRequest& request,
                                        const GpuBenchProgress& progress) {
    validateGpuBenchRequest(request);
    const int total = gpuBenchPointCount(request);
    std::vector<GpuBenchPoint> points;
    if (progress && !progress(0, total)) return points;

    // One set of inputs for every n: tokens x width floats read as [batch][heads][n][d].
    const std::size_t elements = std::size_t(request.tokens) * std::size_t(request.headsTimesDim);
    DeviceBuffer<float> q(elements, "Q"), k(elements, "K"), v(elements, "V"), o(elements, "O");
    {
        std::vector<float> host(elements);
        fillRandom(host, 1);
        q.upload(host.data(), elements);
        fillRandom(host, 2);
        k.upload(host.data(), elements);
        fillRandom(host, 3);
        v.upload(host.data(), elements);
    }
    std::unique_ptr<BlasHandle> blas;
    if (wants(request, kGpuBenchStandardFp32)) blas = std::make_unique<BlasHandle>();
    std::unique_ptr<HalfBuffers> fp16, bf16;
    if (wants(request, kGpuBenchFlashFp16))
        fp16 = std::make_unique<HalfBuffers>(q, k, v, TcElement::Fp16);
    if (wants(request, kGpuBenchFlashBf16))
        bf16 = std::make_unique<HalfBuffers>(q, k, v, TcElement::Bf16);

    const int d = request.headDim;
    const int heads = request.headsTimesDim / d;
    for (const int n : request.sizes) {
        const int batch = int(request.tokens / n);
        const AttentionParams p = denseSelfAttentionParams(q.get(), k.get(), v.get(), o.get(),
                                                           batch, heads, n, d, request.causal);
        const double flops = gpuBenchFlops(request, n);

        for (const std::string& variant : request.variants) {
            GpuBenchPoint point;
            point.variant = variant;
            point.n = n;
            point.batch = batch;
            point.heads = heads;
            Timing timing;
            if (!gpuBenchVariantRuns(variant, request.pass)) {
                point.note = "no " + gpuBenchPassName(request.pass) +
                             " kernel: FlashViz's fast backward is fp16 / bf16 only";
            } else if (variant == kGpuBenchStandardFp32) {
                // The n x n scores of every (batch, head) are the scratch; leave 1 GiB spare.
                const double scratch = double(batch) * heads * double(n) * n * sizeof(float);
                point.scratchBytes = scratch;
                if (scratch + double(1ull << 30) > double(memoryInfo().freeBytes)) {
                    point.note = "its " + formatBytes(scratch) + " of scores do not fit the " +
                                 formatBytes(double(memoryInfo().freeBytes)) + " free";
                } else {
                    DeviceBuffer<float> scores(std::size_t(scratch / sizeof(float)), "S");
                    timing = timeIt([&] { launchStandardAttention(*blas, p, scores.get()); },
                                    request.repeats);
                }
            } else if (variant == kGpuBenchFlashFp32) {
                const FastKernelInfo* kernel = defaultFastKernel(d);
                if (!kernel) {
                    point.note =
                        "no fp32 flash kernel for d = " + std::to_string(d) + " fits this GPU";
                } else {
                    const std::size_t rows = std::size_t(batch) * heads * n;
                    DeviceBuffer<float> m(rows, "m"), l(rows, "l");
                    AttentionParams withStats = p;
                    withStats.m = m.get();
                    withStats.l = l.get();
                    point.scratchBytes = double(m.bytes() + l.bytes());
                    point.kernel = kernel->name;
                    timing =
                        timeIt([&] { launchFlashFast(withStats, kernel->id); }, request.repeats);
                }
            } else {
                const HalfBuffers& b = variant == kGpuBenchFlashFp16 ? *fp16 : *bf16;
                const TcParams tp = denseSelfAttentionParams(b.q.get(), b.k.get(), b.v.get(), b.o.get(),
                                                             batch, heads, n, d, p.scale, request.causal,
                                                             b.element);
                timing = timeTensorCores(request, b, tp, point);
            }
            point.medianMs = timing.medianMs;
            if (timing.medianMs > 0) point.tflops = flops / (timing.medianMs * 1e-3) / 1e12;
            points.push_back(std::move(point));
            if (progress && !progress(int(points.size()), total)) return points;
        }
    }
    return points;
}

} // namespace flashviz::cuda
