#pragma once
// One run, checked: a problem goes through a backend (FlashAttention or standard attention),
// ordinary attention is its reference and the output is compared with it. The CLI's `run` and
// the window's scene builder both call this, so the chain is written once. The caller chooses
// the backend (the registry in kernels/ knows which exist) and passes it in.
#include "core/backend.h"
#include "core/backward.h"
#include "core/check.h"
#include "core/counters.h"
#include "core/low_precision.h"
#include "core/options.h"
#include "core/problem.h"

#include <functional>
#include <optional>
#include <string>

namespace flashviz {

// The stages of a run, reported before each begins (a caller may show progress, or throw to stop).
enum class RunStage {
    Reference, // ordinary attention, for the check
    Run,       // flash: on the backend; standard: S and P in full, on the CPU
    Alongside, // a backend other than the CPU, beside the CPU (flash: the CPU's run;
               // standard: the backend's), when RunRequest::cpuAlongside
    LowPrecision, // the backward: the backend's fp16 / bf16 kernels (RunRequest::lowPrecision)
};

struct RunRequest {
    Algorithm algorithm = Algorithm::Flash;
    FlashOptions options;
    // For a backend other than the CPU: true checks the CPU engine's output too (cpuCheck) and
    // lets the CPU stand in when the backend refuses (cpuStoodIn says why); false throws the
    // backend's refusal and runs nothing on the CPU.
    bool cpuAlongside = false;
    // The backward on a backend other than the CPU: its fp16 / bf16 tensor-core kernels too, on
    // the inputs rounded to this format, judged as core/low_precision.h says (nullopt: not).
    LowPrecisionCheck lowPrecision = kDefaultLowPrecision;
    std::function<void(RunStage)> onStage; // may be empty
};

struct RunResult {
    std::string backendName;   // the backend that produced `output`
    std::string cpuStoodIn;    // the backend's refusal when the CPU stood in; empty otherwise
    Matrix reference;          // ordinary attention, double precision
    Matrix output;             // what the backend computed
    CheckReport check;         // output against reference, at the tolerance of its arithmetic
    std::optional<CheckReport> cpuCheck; // the CPU engine's output, when another backend ran
    Counters counters;         // what the run counted (flash: the backend's; standard: 3 passes)
    Counters standardCounters; // standard attention on the same sizes, for comparison
    Matrix fullScores;  // S where it was stored: standard attention's, or flash's debug copy
    Matrix fullWeights; // P, standard attention only
};

// Throws EngineError as the engine and the backend do (the reference refuses an n_q x n_k it
// cannot hold before anything else runs).
RunResult runAndCheck(const Problem& problem, Backend& backend, const RunRequest& request);

// The backward, checked: the upstream gradient from the options, ordinary attention's gradients
// as the reference, the backend's backward (request.algorithm is ignored: this is the backward).
struct BackwardRunResult {
    std::string backendName; // the backend that produced `grads`
    std::string cpuStoodIn;  // the backend's refusal when the CPU stood in; empty otherwise
    Matrix dO;               // the upstream gradient
    Gradients reference;     // closed form, double precision
    Gradients grads;         // what the backend computed
    GradientCheck check;     // at the tolerance of the backend's arithmetic
    std::optional<GradientCheck> cpuCheck; // the CPU engine's, when another backend ran
    Counters counters;       // what the backward counted (the forward's not included)
    std::uint64_t storedElements = 0; // what the forward left for it (core/backward.h)
    // The backend's fast fp16 / bf16 backward (RunRequest::lowPrecision), judged; when it did not
    // run on a backend other than the CPU, why not (its refusal, or a switch it does not have).
    std::optional<LowPrecisionGradientCheck> lowPrecisionCheck;
    std::string lowPrecisionNote;
};
BackwardRunResult runBackwardAndCheck(const Problem& problem, Backend& backend,
                                      const RunRequest& request);

} // namespace flashviz
