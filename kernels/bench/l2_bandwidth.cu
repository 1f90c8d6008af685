// flashviz-l2-bandwidth: how fast the GPU's L2 cache and its DRAM deliver reads, measured the way
// the memory stage draws them (hardware profiles' l2BandwidthBytesPerSecond and
// hbmBandwidthBytesPerSecond). Every thread reads 16-byte vectors with ld.global.cg (cached in
// L2 only, not in the SM's L1), over and over, from a buffer that fits in L2 (the L2 rate) or one
// many times its size (the DRAM rate). Medians of CUDA-event timings; bytes read over time.
//
//   flashviz-l2-bandwidth [--repeats 20]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void check(cudaError_t status, const char* what) {
    if (status == cudaSuccess) return;
    std::fprintf(stderr, "flashviz-l2-bandwidth: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
}

// `passes` sweeps over `count` vectors; the sum keeps the loads from being optimised away, and
// is written only where no real input makes it true.
__global__ void readKernel(const float4* data, long long count, int passes, float* sink) {
    float sum = 0.f;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (int pass = 0; pass < passes; ++pass)
        for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
             i < count; i += stride) {
            const float4 v = __ldcg(data + i);
            sum += v.x + v.y + v.z + v.w;
        }
    if (sum == -1.2345e30f) *sink = sum;
}

__global__ void fillKernel(float* data, long long count) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        data[i] = 1.0f + float(i % 7) * 0.25f;
}

struct Result {
    double bytes;
    int passes;
    double medianMs;
};

Result measure(const float4* data, long long vectors, int passes, int blocks, int repeats,
               float* sink) {
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "creating an event");
    check(cudaEventCreate(&stop), "creating an event");
    readKernel<<<blocks, 512>>>(data, vectors, passes, sink); // warm-up: fills L2
    check(cudaGetLastError(), "launching the read kernel");
    check(cudaDeviceSynchronize(), "the warm-up read");
    std::vector<float> ms;
    for (int r = 0; r < repeats; ++r) {
        check(cudaEventRecord(start), "recording an event");
        readKernel<<<blocks, 512>>>(data, vectors, passes, sink);
        check(cudaEventRecord(stop), "recording an event");
        check(cudaEventSynchronize(stop), "waiting for the read");
        float elapsed = 0;
        check(cudaEventElapsedTime(&elapsed, start, stop), "reading an event");
        ms.push_back(elapsed);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return {double(vectors) * 16.0 * passes, passes, ms[ms.size() / 2]};
}

} // namespace

int main(int argc, char** argv) {
    int repeats = 20;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
        else {
            std::printf("usage: flashviz-l2-bandwidth [--repeats 20]\n");
            return 2;
        }
    }
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "reading the GPU's properties");
    const double l2 = prop.l2CacheSize;
    std::printf("device: %s, sm_%d%d, %d SMs, L2 %.1f MB\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, l2 / 1e6);

    const long long bigBytes = 4LL << 30; // DRAM: many times any L2
    float* buffer = nullptr;
    float* sink = nullptr;
    check(cudaMalloc(&buffer, bigBytes), "allocating the buffer");
    check(cudaMalloc(&sink, sizeof(float)), "allocating the sink");
    fillKernel<<<prop.multiProcessorCount * 8, 512>>>(buffer, bigBytes / 4);
    check(cudaDeviceSynchronize(), "filling the buffer");

    const int blocks = prop.multiProcessorCount * 4;
    std::printf("%-28s %12s %8s %10s %10s\n", "buffer", "bytes read", "passes", "median ms",
                "GB/s");
    double bestL2 = 0;
    // Fractions of L2: a quarter to three quarters (its two halves on Hopper keep copies of data
    // that both sides read, so the whole capacity does not hold a distinct working set).
    for (const double fraction : {0.125, 0.25, 0.5, 0.75}) {
        const long long bytes = static_cast<long long>(l2 * fraction) / 4096 * 4096;
        const long long vectors = bytes / 16;
        const int passes = std::max(1, int(40e9 / double(bytes) / 10));
        const Result r = measure(reinterpret_cast<const float4*>(buffer), vectors, passes, blocks,
                                 repeats, sink);
        const double rate = r.bytes / (r.medianMs * 1e-3) / 1e9;
        bestL2 = std::max(bestL2, rate);
        std::printf("L2 %5.3f x (%6.1f MB)        %12.3e %8d %10.3f %10.0f\n", fraction,
                    double(bytes) / 1e6, r.bytes, r.passes, r.medianMs, rate);
    }
    const Result dram = measure(reinterpret_cast<const float4*>(buffer), bigBytes / 16, 1, blocks,
                                repeats, sink);
    const double dramRate = dram.bytes / (dram.medianMs * 1e-3) / 1e9;
    std::printf("DRAM (%6.0f MB)               %12.3e %8d %10.3f %10.0f\n", double(bigBytes) / 1e6,
                dram.bytes, 1, dram.medianMs, dramRate);
    std::printf("summary: L2 read %.0f GB/s (best of the fractions), DRAM read %.0f GB/s\n", bestL2,
                dramRate);
    cudaFree(buffer);
    cudaFree(sink);
    return 0;
}
