// The Hopper kernel's check and timing in one program that needs nvcc alone (no Qt, no core):
// every configuration against an fp64 reference computed on the GPU, judged as the
// flash-attention suite does (largest error at most twice that of the plain low-precision
// computation), on ragged, mismatched, causal, batched and sequence-major shapes, with the output
// poisoned first; then TFLOP/s (median of events) beside the sm_80 (mma.sync) kernel's default
// tile, on the benchmark's shapes (batch x n = 16k tokens, heads x d = 2048).
//
//   hopper_check [--check-only] [--time-only] [--repeats N] [--n LIST] [--d LIST]
//                [--full-only | --causal-only] [--sanitize]
//
// Built by kernels/bench/hopper/build.sh. Exit status 1 when any check fails.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/sm80/tc_flash.cuh"
#include "kernels/cuda/sm90/hopper_launch.h"
#include "kernels/kernel_configs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace flashviz::cuda;

namespace {

bool g_failed = false;

#define CHECK_CUDA(x)                                                                      \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            std::exit(2);                                                                  \
        }                                                                                  \
    } while (0)

template <class T>
__device__ float toFloat(T x);
template <>
__device__ float toFloat(__half x) { return __half2float(x); }
template <>
__device__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__device__ T fromFloat(float x);
template <>
__device__ __half fromFloat(float x) { return __float2half_rn(x); }
template <>
__device__ __nv_bfloat16 fromFloat(float x) { return __float2bfloat16_rn(x); }

// One thread per (batch, head, query row): the fp64 reference and the plain low-precision
// attention (scores and P rounded to the type, fp32 sums), written as floats.
template <class T>
__global__ void referenceKernel(TcParams p, float* ref, float* plain) {
    const int row = int(blockIdx.x * blockDim.x + threadIdx.x);
    const int head = int(blockIdx.y), batch = int(blockIdx.z);
    if (row >= p.queries) return;
    const T* q = static_cast<const T*>(p.q) + batch * p.qBatchStride + head * p.qHeadStride + row * p.qRowStride;
    const T* k = static_cast<const T*>(p.k) + batch * p.kBatchStride + head * p.kHeadStride;
    const T* v = static_cast<const T*>(p.v) + batch * p.vBatchStride + head * p.vHeadStride;
    const int d = p.headDim;
    const int visible = p.causal ? min(p.keys, max(0, row + p.keys - p.queries + 1)) : p.keys;
    double m = -INFINITY;
    float mLow = -INFINITY;
    for (int j = 0; j < visible; ++j) {
        double s = 0;
        float sLow = 0;
        for (int c = 0; c < d; ++c) {
            const float a = toFloat(q[c]), b = toFloat(k[j * p.kRowStride + c]);
            s += double(a) * double(b);
            sLow = fmaf(a, b, sLow);
        }
        m = fmax(m, s);
        mLow = fmaxf(mLow, toFloat(fromFloat<T>(sLow)));
    }
    double sum = 0;
    float sumLow = 0;
    double o[128];
    float oLow[128];
    for (int c = 0; c < d; ++c) o[c] = 0, oLow[c] = 0;
    for (int pass = 0; pass < 2; ++pass)
        for (int j = 0; j < visible; ++j) {
            double s = 0;
            float sLow = 0;
            for (int c = 0; c < d; ++c) {
                const float a = toFloat(q[c]), b = toFloat(k[j * p.kRowStride + c]);
                s += double(a) * double(b);
                sLow = fmaf(a, b, sLow);
            }
            const double pr = exp((s - m) * p.scale);
            const float pLow = expf((toFloat(fromFloat<T>(sLow)) - mLow) * p.scale);
            if (pass == 0) {
                sum += pr;
                sumLow += pLow;
            } else {
                const float pRounded = toFloat(fromFloat<T>(pLow / sumLow));
                for (int c = 0; c < d; ++c) {
                    const float x = toFloat(v[j * p.vRowStride + c]);
                    o[c] += pr / sum * x;
                    oLow[c] += pRounded * x;
                }
            }
        }
    const std::int64_t out = ((std::int64_t(batch) * p.heads + head) * p.queries + row) * d;
    for (int c = 0; c < d; ++c) {
        ref[out + c] = float(o[c]);
        plain[out + c] = toFloat(fromFloat<T>(oLow[c]));
    }
}

// The kernel's output as floats in [batch][heads][queries][d] order.
template <class T>
__global__ void gatherKernel(TcParams p, float* out) {
    const int row = int(blockIdx.x * blockDim.x + threadIdx.x);
    const int head = int(blockIdx.y), batch = int(blockIdx.z);
    if (row >= p.queries) return;
    const T* o = static_cast<const T*>(p.o) + batch * p.oBatchStride + head * p.oHeadStride + row * p.oRowStride;
    const std::int64_t base = ((std::int64_t(batch) * p.heads + head) * p.queries + row) * p.headDim;
    for (int c = 0; c < p.headDim; ++c) out[base + c] = toFloat(o[c]);
}

struct Shape {
    int batch, heads, nq, nk, d;
    bool causal, sequenceMajor;
};

struct Buffers {
    void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
    std::size_t qCount = 0, kCount = 0;
    ~Buffers() {
        cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o);
    }
};

std::uint16_t toBits(float x, TcElement e) {
    if (e == TcElement::Fp16) {
        const __half h = __float2half_rn(x);
        std::uint16_t b;
        std::memcpy(&b, &h, 2);
        return b;
    }
    const __nv_bfloat16 h = __float2bfloat16_rn(x);
    std::uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
}

void fillRandom(void* device, std::size_t count, TcElement e, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<std::uint16_t> host(count);
    for (auto& x : host) x = toBits(normal(rng), e);
    CHECK_CUDA(cudaMemcpy(device, host.data(), count * 2, cudaMemcpyHostToDevice));
}

TcParams makeParams(const Shape& s, TcElement e, Buffers& b, std::mt19937& rng) {
    TcParams p;
    p.batch = s.batch;
    p.heads = s.heads;
    p.queries = s.nq;
    p.keys = s.nk;
    p.headDim = s.d;
    p.scale = float(1.0 / std::sqrt(double(s.d)));
    p.causal = s.causal;
    p.element = e;
    setDenseStrides(p, s.sequenceMajor ? DenseLayout::SequenceMajor : DenseLayout::HeadMajor);
    b.qCount = std::size_t(s.batch) * s.heads * s.nq * s.d;
    b.kCount = std::size_t(s.batch) * s.heads * s.nk * s.d;
    CHECK_CUDA(cudaMalloc(&b.q, b.qCount * 2));
    CHECK_CUDA(cudaMalloc(&b.k, b.kCount * 2));
    CHECK_CUDA(cudaMalloc(&b.v, b.kCount * 2));
    CHECK_CUDA(cudaMalloc(&b.o, b.qCount * 2));
    fillRandom(b.q, b.qCount, e, rng);
    fillRandom(b.k, b.kCount, e, rng);
    fillRandom(b.v, b.kCount, e, rng);
    p.q = b.q, p.k = b.k, p.v = b.v, p.o = b.o;
    return p;
}

// The sm_80 kernel's default tile per d on Hopper's shared memory (the mma.sync policy's choice).
template <int D>
struct Sm80Default {
    static constexpr flashviz::kernels::TensorCoreConfig c = flashviz::kernels::kTensorCoreConfigs
        [flashviz::kernels::chooseTensorCoreConfig(D, 227 * 1024, 228 * 1024, 1024)];
    using Tile = tc::TcTile<c.headDim, c.warps, c.rowTilesPerWarp, c.blockCols, c.qInRegisters,
                            c.minBlocksPerSm, c.skipRescale>;
};

template <class Tile, TcElement E, bool Causal>
void launchSm80Typed(const TcParams& p) {
    const auto kernel = tc::tcFlashKernel<Tile, E, Causal>;
    CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Tile::kSharedBytes)));
    const dim3 grid(unsigned((p.queries + Tile::BR - 1) / Tile::BR), unsigned(p.heads), unsigned(p.batch));
    kernel<<<grid, Tile::kThreads, Tile::kSharedBytes>>>(p);
    CHECK_CUDA(cudaGetLastError());
}

template <int D>
void launchSm80D(const TcParams& p) {
    using T = typename Sm80Default<D>::Tile;
    if (p.element == TcElement::Fp16)
        p.causal ? launchSm80Typed<T, TcElement::Fp16, true>(p) : launchSm80Typed<T, TcElement::Fp16, false>(p);
    else
        p.causal ? launchSm80Typed<T, TcElement::Bf16, true>(p) : launchSm80Typed<T, TcElement::Bf16, false>(p);
}

void launchSm80(const TcParams& p) { p.headDim == 64 ? launchSm80D<64>(p) : launchSm80D<128>(p); }

const char* typeName(TcElement e) { return e == TcElement::Fp16 ? "fp16" : "bf16"; }

void checkOne(const Shape& s, TcElement e, int kernelId, const char* name, std::uint32_t seed) {
    std::mt19937 rng(seed);
    Buffers b;
    TcParams p = makeParams(s, e, b, rng);
    const std::size_t count = b.qCount;
    float *ref, *plain, *got;
    CHECK_CUDA(cudaMalloc(&ref, count * 4));
    CHECK_CUDA(cudaMalloc(&plain, count * 4));
    CHECK_CUDA(cudaMalloc(&got, count * 4));
    const dim3 grid(unsigned((s.nq + 127) / 128), unsigned(s.heads), unsigned(s.batch));
    if (e == TcElement::Fp16) referenceKernel<__half><<<grid, 128>>>(p, ref, plain);
    else referenceKernel<__nv_bfloat16><<<grid, 128>>>(p, ref, plain);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemset(b.o, 0xFF, count * 2)); // NaN in both types: unwritten shows
    std::string error;
    try {
        if (kernelId >= 0) launchHopperFlash(p, kernelId);
        else launchSm80(p);
        synchronize("kernel");
    } catch (const std::exception& ex) {
        error = ex.what();
    }
    if (e == TcElement::Fp16) gatherKernel<__half><<<grid, 128>>>(p, got);
    else gatherKernel<__nv_bfloat16><<<grid, 128>>>(p, got);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> hr(count), hp(count), hg(count);
    CHECK_CUDA(cudaMemcpy(hr.data(), ref, count * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hp.data(), plain, count * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hg.data(), got, count * 4, cudaMemcpyDeviceToHost));
    cudaFree(ref), cudaFree(plain), cudaFree(got);
    double worst = 0, worstPlain = 0;
    std::size_t bad = 0, firstBad = count;
    for (std::size_t i = 0; i < count; ++i) {
        const double err = std::fabs(double(hg[i]) - hr[i]);
        if (!std::isfinite(hg[i])) {
            ++bad;
            firstBad = std::min(firstBad, i);
            continue;
        }
        worst = std::max(worst, err);
        worstPlain = std::max(worstPlain, std::fabs(double(hp[i]) - hr[i]));
    }
    const bool ok = error.empty() && bad == 0 && worst <= 2 * worstPlain;
    if (!ok) g_failed = true;
    std::printf("%s %-34s %s d%-3d B%d H%d %5dx%-5d %s%s  err %.3e plain %.3e ratio %.2f%s%s\n",
                ok ? "PASS" : "FAIL", name, typeName(e), s.d, s.batch, s.heads, s.nq, s.nk,
                s.causal ? "causal" : "full  ", s.sequenceMajor ? " [b,n,h,d]" : "",
                worst, worstPlain, worstPlain > 0 ? worst / worstPlain : 0.0,
                bad ? (" non-finite " + std::to_string(bad) + " first at " + std::to_string(firstBad)).c_str() : "",
                error.empty() ? "" : (" error: " + error).c_str());
}

float timeMs(const std::function<void()>& run, int repeats) {
    run();
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> times;
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int i = 0; i < repeats; ++i) {
        cudaEventRecord(start);
        run();
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        times.push_back(ms);
    }
    CHECK_CUDA(cudaGetLastError());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    bool checks = true, timing = true, sanitize = false;
    int repeats = 10;
    std::vector<int> ns = {1024, 2048, 4096, 8192, 16384}, ds = {64, 128};
    std::vector<bool> masks = {false, true};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--check-only") timing = false;
        else if (a == "--time-only") checks = false;
        else if (a == "--sanitize") sanitize = true, timing = false;
        else if (a == "--repeats" && i + 1 < argc) repeats = std::atoi(argv[++i]);
        else if (a == "--d" && i + 1 < argc) {
            ds.clear();
            for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ",")) ds.push_back(std::atoi(t));
        } else if (a == "--full-only") masks = {false};
        else if (a == "--causal-only") masks = {true};
        else if (a == "--n" && i + 1 < argc) {
            ns.clear();
            for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ",")) ns.push_back(std::atoi(t));
        }
    }
    cudaDeviceProp prop{};
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, sm_%d%d, %d SMs; Hopper kernels run here: %s\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, flashviz::kernels::runsSm90a(prop.major, prop.minor) ? "yes" : "no");
    struct Kernel {
        int id, headDim;
        std::string name;
    };
    std::vector<Kernel> kernels;
    for (int row = 0; row < flashviz::kernels::kHopperConfigCount; ++row) {
        const auto& c = flashviz::kernels::kHopperConfigs[row];
        kernels.push_back({row, c.headDim, flashviz::kernels::hopperConfigName(c)});
    }

    if (sanitize) {
        for (const auto& k : kernels)
            for (bool causal : {false, true})
                checkOne({1, 2, 200, 333, k.headDim, causal, false}, TcElement::Bf16, k.id, k.name.c_str(), 7);
        return g_failed ? 1 : 0;
    }
    if (checks) {
        const Shape shapes[] = {
            {1, 1, 113, 203, 0, false, false}, {1, 1, 113, 203, 0, true, false},
            {1, 1, 1023, 1024, 0, false, false}, {1, 1, 1023, 1024, 0, true, false},
            {1, 2, 2048, 2048, 0, false, false}, {1, 2, 2048, 2048, 0, true, false},
            {1, 1, 203, 113, 0, true, false}, {1, 1, 1, 1, 0, false, false},
            {1, 1, 7, 300, 0, true, false}, {2, 3, 129, 77, 0, false, false},
            {2, 3, 113, 203, 0, true, true}, {1, 1, 300, 129, 0, true, false},
            {1, 1, 4096, 4096, 0, true, false}, {1, 1, 555, 4097, 0, false, true},
            {1, 1, 500, 100, 0, true, false}, // whole 192-row blocks without a key tile
        };
        for (const auto& k : kernels)
            for (TcElement e : {TcElement::Fp16, TcElement::Bf16})
                for (Shape s : shapes) {
                    s.d = k.headDim;
                    checkOne(s, e, k.id, k.name.c_str(), std::uint32_t(s.nq * 131 + s.nk * 7 + s.d + k.id));
                }
        for (int d : {64, 128})
            for (bool causal : {false, true})
                checkOne({1, 2, 1023, 1024, d, causal, false}, TcElement::Bf16, -1, "sm80 mma.sync default", 5);
    }
    if (timing) {
        std::printf("\nTFLOP/s (median of %d), batch x n = 16384, heads x d = 2048; causal halved\n", repeats);
        std::printf("%-5s %-6s %-4s %6s %-34s %9s %8s %9s\n", "type", "causal", "d", "n", "kernel", "ms",
                    "TFLOP/s", "x sm80");
        for (TcElement e : {TcElement::Fp16, TcElement::Bf16})
            for (bool causal : masks)
                for (int d : ds)
                    for (int n : ns) {
                        std::mt19937 rng(1);
                        Buffers b;
                        const Shape s{16384 / n, 2048 / d, n, n, d, causal, false};
                        const TcParams p = makeParams(s, e, b, rng);
                        const double flops = 4.0 * n * double(n) * d * s.batch * s.heads / (causal ? 2 : 1);
                        const float base = timeMs([&] { launchSm80(p); }, repeats);
                        std::printf("%-5s %-6s %-4d %6d %-34s %9.3f %8.1f %9s\n", typeName(e), causal ? "yes" : "no",
                                    d, n, "sm80 mma.sync default", base, flops / base / 1e9, "1.00");
                        for (const auto& k : kernels) {
                            if (k.headDim != d) continue;
                            const float ms = timeMs([&] { launchHopperFlash(p, k.id); }, repeats);
                            std::printf("%-5s %-6s %-4d %6d %-34s %9.3f %8.1f %9.2f\n", typeName(e),
                                        causal ? "yes" : "no", d, n, k.name.c_str(), ms, flops / ms / 1e9, base / ms);
                        }
                    }
    }
    std::printf("%s\n", g_failed ? "SOME CHECKS FAILED" : "all checks passed");
    return g_failed ? 1 : 0;
}
