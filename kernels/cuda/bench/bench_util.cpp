#include "kernels/cuda/bench/bench_util.h"

#include "kernels/cuda/runtime/check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

namespace flashviz::cuda {

void fillRandom(std::vector<float>& out, std::uint64_t seed) {
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (float& value : out) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const double u = double(x >> 11) / double(1ull << 53); // [0, 1)
        value = float((u * 2.0 - 1.0) * 1.7320508075688772);
    }
}

namespace {

// Owns the two events, so that a failing launch inside a timed run leaks nothing.
class EventPair {
  public:
    EventPair() {
        check(cudaEventCreate(&start), "Creating an event");
        const cudaError_t error = cudaEventCreate(&stop);
        if (error != cudaSuccess) {
            (void)cudaEventDestroy(start);
            throwCudaError(error, "Creating an event");
        }
    }
    ~EventPair() {
        (void)cudaEventDestroy(start);
        (void)cudaEventDestroy(stop);
    }
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    cudaEvent_t start{};
    cudaEvent_t stop{};
};

} // namespace

Timing timeIt(const std::function<void()>& run, int repeats) {
    EventPair events;
    run();
    synchronize("Warm-up");
    std::vector<double> ms;
    for (int r = 0; r < std::max(1, repeats); ++r) {
        check(cudaEventRecord(events.start), "Recording an event");
        run();
        check(cudaEventRecord(events.stop), "Recording an event");
        check(cudaEventSynchronize(events.stop), "Waiting for an event");
        float elapsed = 0;
        check(cudaEventElapsedTime(&elapsed, events.start, events.stop), "Reading an event");
        ms.push_back(elapsed);
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.front(), ms.back()};
}

double backToBackMs(const std::function<void()>& run, int launches) {
    EventPair events;
    run();
    synchronize("Warm-up");
    check(cudaEventRecord(events.start), "Recording an event");
    for (int r = 0; r < std::max(1, launches); ++r) run();
    check(cudaEventRecord(events.stop), "Recording an event");
    check(cudaEventSynchronize(events.stop), "Waiting for an event");
    float elapsed = 0;
    check(cudaEventElapsedTime(&elapsed, events.start, events.stop), "Reading an event");
    return double(elapsed) / std::max(1, launches);
}

Diff compare(const std::vector<float>& a, const std::vector<float>& b) {
    Diff d;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i])) {
            ++d.nonFinite;
            continue;
        }
        const double e = double(a[i]) - double(b[i]);
        d.maxAbs = std::max(d.maxAbs, std::fabs(e));
        num += e * e;
        den += double(b[i]) * double(b[i]);
    }
    d.relative = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    return d;
}

} // namespace flashviz::cuda
