#pragma once
// The GPU benchmark as a library call: standard attention against FlashAttention on the GPU at
// a fixed number of tokens (batch x n) and a fixed model width (heads x d), the way
// kernels/bench/gpu_bench.cpp and FlashAttention's own benchmarks measure. Plain C++: no CUDA
// types, no Qt. Run it through runGpuBenchmark() in kernels/backend_registry.h, which knows
// whether a GPU is there; this header also builds without CUDA.
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace flashviz {

// The variants a request may name.
inline constexpr const char* kGpuBenchStandardFp32 = "standard-fp32"; // cuBLAS, softmax, cuBLAS
inline constexpr const char* kGpuBenchFlashFp32 = "flash-fp32";       // the fast fp32 kernel
inline constexpr const char* kGpuBenchFlashFp16 = "flash-fp16";       // tensor cores, fp16
inline constexpr const char* kGpuBenchFlashBf16 = "flash-bf16";       // tensor cores, bf16
std::vector<std::string> gpuBenchVariantNames();

// What a request may ask for: validateGpuBenchRequest() and the saved-results reader use these.
inline constexpr int kGpuBenchMaxRepeats = 1000;
inline constexpr long kGpuBenchMaxTokens = 1L << 24;    // batch x n
inline constexpr int kGpuBenchMaxHeadsTimesDim = 16384; // the model width

// Which pass a request times: the forward; the backward alone (dQ, dK and dV from the forward's
// O and log-sum-exp, which are computed once beforehand and not timed); or both in turn, as a
// training step runs them. Only the tensor-core variants (flash-fp16, flash-bf16) have a
// backward kernel: the others' backward points come back unmeasured, with a note.
enum class GpuBenchPass { Forward, Backward, ForwardBackward };
// Every pass, in the order the page offers them.
inline constexpr std::array<GpuBenchPass, 3> kGpuBenchPasses{
    GpuBenchPass::Forward, GpuBenchPass::Backward, GpuBenchPass::ForwardBackward};
// "forward", "backward", "forward+backward": the saved-results files' and the CLI's names.
std::string gpuBenchPassName(GpuBenchPass pass);
std::optional<GpuBenchPass> parseGpuBenchPass(const std::string& name);
// Whether a variant has a kernel for the pass.
bool gpuBenchVariantRuns(const std::string& variant, GpuBenchPass pass);

struct GpuBenchRequest {
    std::vector<int> sizes{1024, 2048, 4096, 8192, 16384}; // n; each must divide `tokens`
    int headDim = 64;                                      // 64 or 128
    bool causal = false;
    std::vector<std::string> variants{kGpuBenchStandardFp32, kGpuBenchFlashFp32, kGpuBenchFlashFp16,
                                      kGpuBenchFlashBf16};
    int repeats = 10;         // timed runs per point after one warm-up; the median is kept
    long tokens = 16384;      // batch x n
    int headsTimesDim = 2048; // heads x d
    GpuBenchPass pass = GpuBenchPass::Forward;
};

struct GpuBenchPoint {
    std::string variant;
    int n = 0;
    int batch = 0;
    int heads = 0;
    double medianMs = 0;     // 0 when not measured (see note)
    double tflops = 0;       // 4 n^2 d batch heads / time, halved when causal
    double scratchBytes = 0; // device memory the method needs beyond Q, K, V and O
    std::string note;        // why a point was not measured ("its 34 GB scratch does not fit")
    // The kernel that ran, as the fast and tensor-core kernels name their variants
    // ("tf32x3_d64_br128_bc64_m1"); empty for standard attention and in older files.
    std::string kernel;
    bool measured() const { return medianMs > 0; }
};

// Called after each point with the points done so far and the total; returning false stops
// the run, which then returns the points measured until then.
using GpuBenchProgress = std::function<bool(int done, int total)>;

// Throws EngineError(InvalidArgument) for an empty or impossible request and
// EngineError(Unsupported) for a head dimension the kernels were not built for. Touches no GPU.
void validateGpuBenchRequest(const GpuBenchRequest& request);
// Points a request measures: sizes x variants.
int gpuBenchPointCount(const GpuBenchRequest& request);
// Floating-point operations of the request's pass at n: the forward's two matrix products,
// 4 n^2 d batch heads; the backward's five (S recomputed, dP, dV, dQ, dK), 2.5 times that
// (FlashAttention's convention); both 3.5 times; causal halved.
double gpuBenchFlops(const GpuBenchRequest& request, int n);

} // namespace flashviz
