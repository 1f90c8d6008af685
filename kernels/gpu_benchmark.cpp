#include "kernels/gpu_benchmark.h"

#include "core/errors.h"

#include <algorithm>

namespace flashviz {

std::vector<std::string> gpuBenchVariantNames() {
    return {kGpuBenchStandardFp32, kGpuBenchFlashFp32, kGpuBenchFlashFp16, kGpuBenchFlashBf16};
}

std::string gpuBenchPassName(GpuBenchPass pass) {
    switch (pass) {
    case GpuBenchPass::Forward: return "forward";
    case GpuBenchPass::Backward: return "backward";
    case GpuBenchPass::ForwardBackward: return "forward+backward";
    }
    return "forward";
}

std::optional<GpuBenchPass> parseGpuBenchPass(const std::string& name) {
    for (const GpuBenchPass pass : kGpuBenchPasses)
        if (name == gpuBenchPassName(pass)) return pass;
    return std::nullopt;
}

bool gpuBenchVariantRuns(const std::string& variant, GpuBenchPass pass) {
    return pass == GpuBenchPass::Forward || variant == kGpuBenchFlashFp16 || variant == kGpuBenchFlashBf16;
}

void validateGpuBenchRequest(const GpuBenchRequest& request) {
    auto refuse = [](ErrorKind kind, const std::string& text) { throw EngineError(kind, text); };
    if (request.sizes.empty())
        refuse(ErrorKind::InvalidArgument, "Choose at least one sequence length n to measure.");
    if (request.variants.empty())
        refuse(ErrorKind::InvalidArgument, "Choose at least one method to measure.");
    if (request.headDim != 64 && request.headDim != 128)
        refuse(ErrorKind::Unsupported, "The GPU benchmark runs head dimensions 64 and 128, not " +
                                           std::to_string(request.headDim) + ".");
    if (request.repeats < 1 || request.repeats > kGpuBenchMaxRepeats)
        refuse(ErrorKind::InvalidArgument, "The number of timed repeats must be between 1 and " +
                                               std::to_string(kGpuBenchMaxRepeats) + ", not " +
                                               std::to_string(request.repeats) + ".");
    if (request.tokens < 1 || request.tokens > kGpuBenchMaxTokens)
        refuse(ErrorKind::InvalidArgument, "The number of tokens (batch x n) must be between 1 "
                                           "and " +
                                               std::to_string(kGpuBenchMaxTokens) + ", not " +
                                               std::to_string(request.tokens) + ".");
    if (request.headsTimesDim < request.headDim || request.headsTimesDim % request.headDim != 0 ||
        request.headsTimesDim > kGpuBenchMaxHeadsTimesDim)
        refuse(ErrorKind::InvalidArgument,
               "The model width (heads x d) must be a multiple of d = " +
                   std::to_string(request.headDim) + " up to " +
                   std::to_string(kGpuBenchMaxHeadsTimesDim) + ", not " +
                   std::to_string(request.headsTimesDim) + ".");
    for (const int n : request.sizes)
        if (n < 1 || request.tokens % n != 0)
            refuse(ErrorKind::InvalidArgument,
                   "Every n must divide the " + std::to_string(request.tokens) +
                       " tokens (batch x n) exactly; n = " + std::to_string(n) + " does not.");
    const std::vector<std::string> known = gpuBenchVariantNames();
    for (const std::string& variant : request.variants)
        if (std::find(known.begin(), known.end(), variant) == known.end())
            refuse(ErrorKind::InvalidArgument,
                   "Unknown method \"" + variant +
                       "\": choose standard-fp32, flash-fp32, flash-fp16 or flash-bf16.");
}

int gpuBenchPointCount(const GpuBenchRequest& request) {
    return int(request.sizes.size() * request.variants.size());
}

double gpuBenchFlops(const GpuBenchRequest& request, int n) {
    const double batch = double(request.tokens) / n;
    const double heads = double(request.headsTimesDim) / request.headDim;
    const double passes = request.pass == GpuBenchPass::Forward    ? 1.0
                          : request.pass == GpuBenchPass::Backward ? 2.5
                                                                   : 3.5;
    return passes * 4.0 * double(n) * n * request.headDim * batch * heads * (request.causal ? 0.5 : 1.0);
}

} // namespace flashviz
