// cudaHopperTrace (kernels/cuda_backend.h): one small launch of the Hopper kernel in its trace
// mode, its marks read back and turned into spans (kernels/hopper_trace.h).
#include "kernels/cuda/bench/bench_util.h"
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_memory.h"
#include "kernels/cuda/sm80/tc_api.h"
#include "kernels/cuda/sm80/tc_launch.h"
#include "kernels/cuda/sm90/hopper_launch.h"
#include "kernels/cuda_backend.h"

#include "core/errors.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#ifndef FLASHVIZ_HAS_SM90A
#define FLASHVIZ_HAS_SM90A 0
#endif

namespace flashviz {

namespace {

std::string today() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[16];
    std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
    return text;
}

HalfAttentionProblem problemOf(const kernels::HopperTraceRequest& r) {
    HalfAttentionProblem problem;
    problem.type = r.element == "bf16" ? HalfType::Bf16 : HalfType::Fp16;
    problem.batch = r.batch;
    problem.heads = r.heads;
    problem.queries = r.queries;
    problem.keys = r.keys;
    problem.headDim = r.headDim;
    problem.causal = r.causal;
    return problem;
}

// Fixed random 16-bit inputs of `count` elements (the benchmark's sequence, seed `seed`).
cuda::DeviceBuffer<std::uint16_t> randomHalf(std::size_t count, std::uint64_t seed, cuda::TcElement element,
                                             const char* what) {
    std::vector<float> host(count);
    cuda::fillRandom(host, seed);
    cuda::DeviceBuffer<float> floats(count, what);
    floats.upload(host.data(), count);
    cuda::DeviceBuffer<std::uint16_t> half(count, what);
    cuda::convertFloatToTc(floats.get(), half.get(), count, element);
    cuda::synchronize("Converting the trace's inputs");
    return half;
}

#if FLASHVIZ_HAS_SM90A
// The device's marks, per block and warpgroup, as the host reader takes them.
template <typename T>
std::vector<T> downloaded(const cuda::DeviceBuffer<T>& buffer) {
    std::vector<T> host(buffer.size());
    buffer.download(host.data(), host.size());
    return host;
}

std::vector<kernels::HopperRawBlock> readMarks(const kernels::HopperTraceBuffers& buffers,
                                               const std::vector<kernels::HopperDeviceMark>& marks,
                                               const std::vector<int>& counts, const std::vector<int>& sms,
                                               int warpgroups, int queryBlocks, int heads) {
    const int blocks = int(sms.size());
    std::vector<kernels::HopperRawBlock> out(sms.size());
    for (int b = 0; b < blocks; ++b) {
        kernels::HopperRawBlock& block = out[std::size_t(b)];
        block.queryBlock = queryBlocks - 1 - b % queryBlocks; // the kernel's reversed order
        block.head = (b / queryBlocks) % heads;
        block.batch = b / (queryBlocks * heads);
        block.sm = sms[std::size_t(b)];
        for (int wg = 0; wg < warpgroups; ++wg) {
            const std::size_t slot = std::size_t(b) * std::size_t(warpgroups) + std::size_t(wg);
            const int count = counts[slot];
            if (count > buffers.capacity)
                throw EngineError(ErrorKind::BackendFailure,
                                  "The Hopper kernel's trace ran out of room: warpgroup " + std::to_string(wg) +
                                      " of a block made " + std::to_string(count) + " marks for " +
                                      std::to_string(buffers.capacity) + " places.");
            block.warpgroups.emplace_back();
            for (int i = 0; i < count; ++i)
                block.warpgroups.back().push_back(
                    kernels::unpackMark(marks[slot * std::size_t(buffers.capacity) + std::size_t(i)]));
        }
    }
    return out;
}
#endif

} // namespace

kernels::HopperTrace cudaHopperTrace(const kernels::HopperTraceRequest& request) {
    kernels::validateHopperTraceRequest(request);
#if !FLASHVIZ_HAS_SM90A
    throw EngineError(ErrorKind::Unsupported,
                      "This FlashViz was built without the Hopper kernel (it needs CUDA 12.5 or later).");
#else
    // recordHopperTrace (kernels/backend_registry.h) says why not to its callers; this is a guard.
    const std::optional<CudaDeviceInfo> device = cudaDeviceInfo();
    if (!device || !cuda::hopperKernelsRunHere())
        throw EngineError(ErrorKind::Unsupported, "The Hopper kernel does not run on this GPU.");
    // -1: the variant the launcher picks on this GPU for d and the mask.
    const cuda::TcKernelInfo* chosen = cuda::defaultTcKernel(request.headDim, request.causal);
    const int row = request.configRow >= 0 ? request.configRow
                    : chosen && chosen->wgmma ? chosen->id - kernels::kTensorCoreConfigCount
                                              : kernels::hopperTraceRow(request);
    const kernels::HopperConfig& config = kernels::kHopperConfigs[row];
    const HalfAttentionProblem problem = problemOf(request);
    checkHalfAttentionProblem(problem);
    cuda::TcParams p = cuda::tcParamsFor(problem);

    const std::size_t nq = halfQueryElements(problem), nk = halfKeyElements(problem);
    auto q = randomHalf(nq, 1, p.element, "Q"), k = randomHalf(nk, 2, p.element, "K"),
         v = randomHalf(nk, 3, p.element, "V");
    cuda::DeviceBuffer<std::uint16_t> plainO(nq, "O"), tracedO(nq, "O (traced)");
    p.q = q.get();
    p.k = k.get();
    p.v = v.get();

    const int queryBlocks = (request.queries + config.blockRows() - 1) / config.blockRows();
    const int blocks = queryBlocks * request.heads * request.batch, warpgroups = config.consumers + 1;
    const int capacity = kernels::hopperMarkCapacity((request.keys + config.blockCols - 1) / config.blockCols);
    const std::size_t slots = std::size_t(blocks) * std::size_t(warpgroups);
    cuda::DeviceBuffer<kernels::HopperDeviceMark> marks(slots * std::size_t(capacity), "the trace's marks");
    cuda::DeviceBuffer<int> counts(slots, "the trace's counts"), sms(std::size_t(blocks), "the trace's SMs");
    counts.fillBytes(0);
    const kernels::HopperTraceBuffers buffers{marks.get(), counts.get(), sms.get(), capacity};

    kernels::HopperTrace trace;
    trace.configRow = row;
    trace.kernel = kernels::hopperConfigName(config);
    trace.element = request.element;
    trace.causal = request.causal;
    trace.batch = request.batch;
    trace.heads = request.heads;
    trace.queries = request.queries;
    trace.keys = request.keys;
    trace.headDim = request.headDim;
    trace.device = device->name;
    trace.recorded = today();
    // Launches back to back, so the launcher's host work (tensor maps) hides behind the kernels;
    // the marks are the last traced launch's.
    p.o = plainO.get();
    trace.plainKernelNs = cuda::backToBackMs([&] { cuda::launchHopperFlash(p, row); }, request.repeats) * 1e6;
    p.o = tracedO.get();
    trace.tracedKernelNs = cuda::backToBackMs([&] { cuda::launchHopperFlash(p, row, &buffers); }, request.repeats) * 1e6;

    std::vector<std::uint16_t> plain(nq), traced(nq);
    plainO.download(plain.data(), nq);
    tracedO.download(traced.data(), nq);
    if (plain != traced)
        throw EngineError(ErrorKind::BackendFailure,
                          "The Hopper kernel's trace mode changed its output (" + trace.kernel + "): a bug.");
    const double nsPerCycle = device->smClockHz > 0 ? 1e9 / device->smClockHz : 0.5;
    kernels::setSpansFromMarks(trace,
                               readMarks(buffers, downloaded(marks), downloaded(counts), downloaded(sms),
                                         warpgroups, queryBlocks, request.heads),
                               nsPerCycle);
    return trace;
#endif
}

} // namespace flashviz
