#pragma once
// The CUDA backend's public face: plain C++, no CUDA types. The registry
// (backend_registry.cpp) is the only caller outside kernels/ and tests/kernels; the kernels,
// their launchers and the device code live in kernels/cuda/.
#include "core/backend.h"
#include "core/hardware.h"
#include "core/low_precision.h" // HalfType and the host conversions
#include "kernels/hopper_trace.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flashviz {

// The kernels use asynchronous copies and need an A100 (compute capability 8.0) or newer.
inline constexpr int kCudaMinComputeMajor = 8;
// The largest head dimension the GPU kernels take (the mirror kernel; the fast one takes 64, 128).
inline constexpr int kCudaMaxHeadDim = 256;

struct CudaDeviceStatus {
    bool usable = false;
    std::string reason; // why not, in a sentence; empty when usable
};

// What the runtime reports about device 0.
struct CudaDeviceInfo {
    int index = 0;
    std::string name;
    int computeMajor = 0;
    int computeMinor = 0;
    int smCount = 0;
    std::size_t sharedMemoryPerSmBytes = 0;
    std::size_t sharedMemoryPerBlockBytes = 0; // the opt-in maximum a kernel may ask for
    std::size_t reservedSharedPerBlockBytes = 0; // what the driver keeps of it for each block
    int maxThreadsPerSm = 0;
    int maxBlocksPerSm = 0;
    std::size_t globalMemoryBytes = 0;
    std::size_t l2CacheBytes = 0;
    double smClockHz = 0;      // peak
    double memoryClockHz = 0;  // peak
    int memoryBusWidthBits = 0;
    int runtimeVersion = 0;
    int driverVersion = 0;
};

// Device 0, or nullopt with the reason (no driver, no device) in *whyNot.
std::optional<CudaDeviceInfo> cudaDeviceInfo(std::string* whyNot = nullptr);
// Whether a device with these properties can run the kernels (too old: no).
CudaDeviceStatus assessCudaDevice(const CudaDeviceInfo& info);
// Whether this machine's device 0 can run the kernels, and why not.
CudaDeviceStatus cudaDeviceStatus();

// "This GPU" as a hardware profile: figures read from the device or derived from them, each
// with its source.
HardwareProfile hardwareProfileFor(const CudaDeviceInfo& info);
std::optional<HardwareProfile> cudaDeviceProfile();

// Which kernel runs a flash pass. Auto takes the fast kernel whenever it computes the same
// function as the mirror (rescale and running max on, no full-score copy, a d it was built for;
// the same exact attention to fp32's accuracy, with its own tiles and, on sm_80 and sm_90, its
// products on tensor cores as three TF32 products) and the mirror kernel, with the options' Br
// and Bc and the CPU's arithmetic step for step, otherwise.
enum class CudaKernelPath { Auto, Mirror, Fast };
const char* toString(CudaKernelPath path);

// The fast kernel's compiled tile configurations (the benchmark and the tests run each).
struct CudaFastKernel {
    int id = 0;
    std::string name; // "tf32x3_d64_br128_bc64_m1": d, query rows and keys per tile, blocks per SM
    int headDim = 0;
    // Tensor cores, each fp32 product as three TF32 products ("tf32x3_" names), rather than
    // fp32 FMAs on the CUDA cores.
    bool tf32x3 = false;
    bool fitsDevice = false; // its shared memory fits device 0
};
std::vector<CudaFastKernel> cudaFastKernels();

struct CudaFlashOutput {
    FlashOutputT<float> result;
    CudaKernelPath path = CudaKernelPath::Mirror; // the one that ran
    std::string kernel;                           // its name, with its tile sizes
};

// The GPU forward pass on float inputs (n_q x d, n_k x d). `fastKernel` picks a fast
// variant by id (-1: the default for d). Throws EngineError.
CudaFlashOutput cudaFlashForward(const MatrixF& q, const MatrixF& k, const MatrixF& v,
                                 double scale, bool causal, const FlashOptions& options,
                                 CudaKernelPath path = CudaKernelPath::Auto, int fastKernel = -1);
// Ordinary attention on the GPU: cuBLAS, softmax kernel, cuBLAS, with the n_q x n_k scratch.
MatrixF cudaStandardAttention(const MatrixF& q, const MatrixF& k, const MatrixF& v, double scale,
                              bool causal);
// The per-tile trace from the mirror kernel, in float, laid out like the CPU backend's.
FlashTrace cudaFlashTrace(const MatrixF& q, const MatrixF& k, const MatrixF& v, double scale,
                          bool causal, const FlashOptions& options);

// The trace is for problems small enough to animate: its buffer is capped at this size.
inline constexpr std::size_t kCudaTraceMaxBytes = std::size_t(512) << 20;

// The GPU backward pass on float inputs (n_q x d, n_k x d, dO n_q x d): the mirror forward with
// the options' forward switches (O, m, l), then the backward mirror kernel with the options'
// Br, Bc and backward switches, step for step as core's flashBackward<float>. Throws EngineError.
BackwardOutputT<float> cudaFlashBackward(const MatrixF& q, const MatrixF& k, const MatrixF& v,
                                         const MatrixF& dO, double scale, bool causal,
                                         const FlashOptions& options);
// Every (key block, query block) tile's dQ_i, dK_j and dV_j from the backward mirror kernel, in
// the CPU's order (core/backward.h's BackwardTrace); capped at kCudaTraceMaxBytes like the
// forward's trace.
BackwardTrace cudaFlashBackwardTrace(const MatrixF& q, const MatrixF& k, const MatrixF& v,
                                     const MatrixF& dO, double scale, bool causal,
                                     const FlashOptions& options);

// Runs in fp32 whatever the problem's precision; results are widened to double. Use from one
// thread at a time (the app's worker thread).
class CudaBackend final : public Backend {
public:
    CudaBackend(); // throws EngineError(Unsupported) with the reason when no device is usable
    ~CudaBackend() override;
    std::string name() const override;
    FlashResult flash(const Problem& problem, const FlashOptions& options) override;
    Matrix standard(const Problem& problem) override;
    FlashTrace trace(const Problem& problem, const FlashOptions& options) override;
    BackwardResult backward(const Problem& problem, const Matrix& dO,
                            const FlashOptions& options) override;
    BackwardTrace backwardTrace(const Problem& problem, const Matrix& dO,
                                const FlashOptions& options) override;
    // cudaFlashBackwardHalf on one head, [n][d] (d 64 or 128; others refused as Unsupported).
    LowPrecisionBackward lowPrecisionBackward(const Problem& rounded, const Matrix& dO,
                                              HalfType type) override;
    // The kernels compute in fp32 whatever precision the problem asks for.
    Precision arithmetic(const ProblemSpec&) const override { return Precision::Float; }

    const CudaDeviceInfo& device() const { return m_device; }
    // The kernel the last flash() ran ("fast d64_br128_bc64_m1", "mirror Br=64 Bc=64").
    const std::string& lastKernel() const { return m_lastKernel; }

private:
    CudaDeviceInfo m_device;
    std::string m_lastKernel;
};

std::unique_ptr<Backend> makeCudaBackend();

// ---- Tensor-core FlashAttention forward in fp16 / bf16 (kernels/cuda/tc_*.{h,cuh,cu}) ----
// fp16 or bf16 Q, K, V and O, fp32 accumulation, mma.sync tensor-core instructions (sm_80 and
// newer), head dimensions 64 and 128. This path is for speed: it has no CPU mirror step for
// step (its result is checked against an fp64 reference instead, tests/kernels). HalfType is
// core's (core/low_precision.h).
// [batch][heads][n][d] (each head's rows contiguous, PyTorch's SDPA layout) or
// [batch][n][heads][d] (flash-attn's layout); densely packed either way.
enum class HalfLayout { BatchHeadSeqDim, BatchSeqHeadDim };

struct HalfAttentionProblem {
    HalfType type = HalfType::Fp16;
    HalfLayout layout = HalfLayout::BatchHeadSeqDim;
    int batch = 1;
    int heads = 1;
    int queries = 0;
    int keys = 0;
    int headDim = 64;
    double scale = 0;    // softmax scale; 0 means 1 / sqrt(headDim)
    bool causal = false; // bottom-right aligned, as causallyVisible in core/attention.h
};

// The tensor-core kernels' compiled tile configurations: the mma.sync kernel's (every GPU from
// sm_80), then the Hopper kernel's (wgmma and TMA, compute capability 9.0 only), each in order of
// preference per d. On a Hopper GPU the default is the Hopper kernel's first that fits.
struct CudaTensorCoreKernel {
    int id = 0;
    std::string name; // "tc_d64_br128_bc64_w4_qreg", "wgmma_d128_br128_bc128_wg2_s2_overlap_pingpong"
    int headDim = 0;
    std::size_t sharedBytes = 0;
    bool fitsDevice = false; // device 0 runs it (its shared memory; a Hopper GPU for wgmma ones)
    bool wgmma = false;      // the Hopper kernel (kHopperConfigs), compute capability 9.0 only
};
std::vector<CudaTensorCoreKernel> cudaTensorCoreKernels();

// Elements of Q (and O) and of K (and V) the problem has.
std::size_t halfQueryElements(const HalfAttentionProblem& problem);
std::size_t halfKeyElements(const HalfAttentionProblem& problem);
// Throws EngineError for what the kernel refuses (a head dimension other than 64 or 128:
// Unsupported; empty sizes: InvalidArgument). Touches no GPU.
void checkHalfAttentionProblem(const HalfAttentionProblem& problem);

// The forward pass on host data: raw fp16 / bf16 bit patterns in the problem's layout. Copies
// in, runs, copies out and waits. `kernel` picks a variant by id (-1: the default for d).
std::vector<std::uint16_t> cudaFlashForwardHalf(const HalfAttentionProblem& problem,
                                                const std::vector<std::uint16_t>& q,
                                                const std::vector<std::uint16_t>& k,
                                                const std::vector<std::uint16_t>& v,
                                                int kernel = -1);
// The same on device pointers (16-byte aligned), launched on the default stream without waiting.
// With `lse` (halfLogSumExpElements floats) it also writes each query row's log-sum-exp of the
// scaled scores (natural log; -inf for a row that sees no key), which the backward needs.
void cudaFlashForwardHalfDevice(const HalfAttentionProblem& problem, const void* q, const void* k,
                                const void* v, void* o, int kernel = -1, float* lse = nullptr);
// One per (batch, head, query row), dense [batch][heads][queries].
std::size_t halfLogSumExpElements(const HalfAttentionProblem& problem);

// ---- the fp16 / bf16 backward pass (FlashAttention-2's, kernels/cuda/sm80/tc_backward.cuh) ----
// dQ, dK and dV from Q, K, V, the forward's O and log-sum-exp, and dO (in O's layout), with
// mma.sync tensor cores (every GPU from sm_80), or on Hopper with wgmma (sm90/hopper_backward.cuh,
// the "wgmma_bwd_" variants). dK and dV are the same bit for bit from run to
// run; dQ is summed over key blocks by fp32 atomic adds in no fixed order, so its last bits may
// differ between runs (FlashAttention-2's non-deterministic mode; there is no other).
struct CudaTensorCoreBackwardKernel {
    int id = 0;
    std::string name; // "tc_bwd_d128_bc64_br64_w4_m2", "wgmma_bwd_d128_bc128_br64_wg2_s2"
    int headDim = 0;
    std::size_t sharedBytes = 0;
    bool fitsDevice = false; // runs on device 0 (its shared memory; Hopper for the wgmma ones)
    bool wgmma = false;
};
std::vector<CudaTensorCoreBackwardKernel> cudaTensorCoreBackwardKernels();
// Bytes of device scratch the backward needs: dQ's fp32 accumulator and two floats per query row.
std::size_t halfBackwardWorkspaceBytes(const HalfAttentionProblem& problem);
// On device pointers (16-byte aligned; dO, dQ, dK, dV in the problem's layout), launched on the
// default stream without waiting. `lse` is what cudaFlashForwardHalfDevice wrote for this O;
// `workspace` holds halfBackwardWorkspaceBytes. `kernel` picks a backward variant (-1: default).
void cudaFlashBackwardHalfDevice(const HalfAttentionProblem& problem, const void* q, const void* k,
                                 const void* v, const void* o, const void* dout, const float* lse,
                                 void* dq, void* dk, void* dv, void* workspace, int kernel = -1);
// The forward (writing O and the log-sum-exp) and then the backward on host data, raw fp16 /
// bf16 bit patterns in the problem's layout; waits.
struct HalfGradients {
    std::vector<std::uint16_t> o, dq, dk, dv;
    std::vector<float> lse;
    std::string kernels; // the variants that ran: "forward's name + backward's name"
};
HalfGradients cudaFlashBackwardHalf(const HalfAttentionProblem& problem,
                                    const std::vector<std::uint16_t>& q,
                                    const std::vector<std::uint16_t>& k,
                                    const std::vector<std::uint16_t>& v,
                                    const std::vector<std::uint16_t>& dout, int forwardKernel = -1,
                                    int backwardKernel = -1);


// ---- the Hopper kernel's trace mode (kernels/hopper_trace.h) ----
// The request's variant of the Hopper kernel on fixed random inputs: timed `repeats` times
// plain, then launched traced, its output checked equal to the plain launch's bit for bit, and
// its marks turned into spans. Throws EngineError(Unsupported) where the Hopper kernel does not
// run (a build without sm_90a code, a GPU other than compute capability 9.0).
kernels::HopperTrace cudaHopperTrace(const kernels::HopperTraceRequest& request);

} // namespace flashviz
