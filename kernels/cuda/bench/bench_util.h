#pragma once
// What both GPU benchmarks share (the program kernels/bench/gpu_bench.cpp and the library call
// behind kernels/gpu_benchmark.h): inputs that are the same every run, timing with CUDA events,
// and the comparison of two outputs. Internal to kernels/cuda; no CUDA types.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace flashviz::cuda {

// Uniform values with variance 1 from a fixed xorshift sequence: fast and the same every run.
void fillRandom(std::vector<float>& out, std::uint64_t seed);

struct Timing {
    double medianMs = 0;
    double minMs = 0;
    double maxMs = 0;
};

// One warm-up call (module load, cuBLAS heuristics, caches), then `repeats` calls each timed
// with a pair of events on the default stream. `run` launches without waiting.
Timing timeIt(const std::function<void()>& run, int repeats);
// One warm-up call, then `launches` calls queued back to back between one pair of events: the
// GPU time per call, with the host's work for each launch (argument set-up) hidden behind the
// previous call's kernel whenever that kernel runs longer.
double backToBackMs(const std::function<void()>& run, int launches);

struct Diff {
    double maxAbs = 0;
    double relative = 0; // ||a - b|| / ||b||
    std::size_t nonFinite = 0;
};

Diff compare(const std::vector<float>& a, const std::vector<float>& b);

} // namespace flashviz::cuda
