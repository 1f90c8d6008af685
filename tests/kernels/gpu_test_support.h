#pragma once
// Shared by the GPU test suites: skip without a device, a quick mode for sanitizer runs, and
// float problems with their CPU counterparts.
#include "kernels/cuda_backend.h"

#include "core/check.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/problem.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

namespace flashviz::gputest {

// Each test function that needs the GPU starts with this; without one it skips with the reason.
#define FLASHVIZ_REQUIRE_GPU()                                                                     \
    do {                                                                                           \
        const ::flashviz::CudaDeviceStatus gpuStatus_ = ::flashviz::cudaDeviceStatus();            \
        if (!gpuStatus_.usable)                                                                    \
            QSKIP(qPrintable(QStringLiteral("No usable CUDA device (%1): GPU tests run on a "      \
                                            "machine with an NVIDIA GPU, see scripts/gpu-check.sh") \
                                 .arg(QString::fromStdString(gpuStatus_.reason))));                \
    } while (false)

// Under compute-sanitizer (scripts/gpu-check.sh sets FLASHVIZ_GPU_TEST_SANITIZER=1) large
// shapes are skipped, since the checkers slow kernels down by orders of magnitude, and so are
// the deliberate out-of-memory cases, whose refused cudaMalloc the checker counts as an error.
inline bool underSanitizer() {
    const char* value = std::getenv("FLASHVIZ_GPU_TEST_SANITIZER");
    return value && *value && std::string(value) != "0";
}
#define FLASHVIZ_SKIP_IF_LARGE(elements)                                                           \
    do {                                                                                           \
        if (::flashviz::gputest::underSanitizer() && double(elements) > 1.2e5)                    \
            QSKIP("large shape skipped under compute-sanitizer (FLASHVIZ_GPU_TEST_SANITIZER)");   \
    } while (false)
#define FLASHVIZ_SKIP_UNDER_SANITIZER(why)                                                         \
    do {                                                                                           \
        if (::flashviz::gputest::underSanitizer())                                                 \
            QSKIP("skipped under compute-sanitizer: " why);                                        \
    } while (false)

inline ProblemSpec spec(int nq, int nk, int d, bool causal, InputPattern pattern = InputPattern::Gaussian,
                        std::uint64_t seed = 7) {
    ProblemSpec s;
    s.queries = nq;
    s.keys = nk;
    s.headDim = d;
    s.causal = causal;
    s.pattern = pattern;
    s.seed = seed;
    s.precision = Precision::Float;
    return s;
}

inline FlashOptions blocks(int br, int bc, bool rescale = true, bool runningMax = true) {
    FlashOptions o;
    o.blockRows = br;
    o.blockCols = bc;
    o.rescale = rescale;
    o.runningMax = runningMax;
    return o;
}

// Largest |a - b| / max(1, |b|) over entries finite in both; NaN when the finite patterns differ.
template <typename A, typename B>
double mixedError(const A& a, const B& b) {
    double worst = 0;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j) {
            const double x = double(a(i, j)), y = double(b(i, j));
            if (std::isfinite(x) != std::isfinite(y)) return std::nan("");
            if (!std::isfinite(x)) continue;
            worst = std::max(worst, std::fabs(x - y) / std::max(1.0, std::fabs(y)));
        }
    return worst;
}

// The EngineError `run` throws; a stand-in saying "no error was thrown" when it throws none, so
// checks of the kind or the text fail with that message.
template <typename F>
EngineError expectError(F&& run) {
    try {
        run();
    } catch (const EngineError& e) {
        return e;
    }
    return EngineError(ErrorKind::InvalidArgument, "no error was thrown");
}

// The text of the EngineError `run` throws ("no error was thrown" when none).
template <typename F>
QString errorText(F&& run) {
    return QString::fromUtf8(expectError(std::forward<F>(run)).what());
}

} // namespace flashviz::gputest
