#include "core/run.h"

#include "core/attention.h"
#include "core/errors.h"
#include "core/flash.h"

#include <utility>

namespace flashviz {

namespace {

// The backend a run is on: the one asked for, or the CPU once it stood in.
struct Runner {
    const Problem& problem;
    const RunRequest& request;
    RunResult& out;
    Backend* backend;
    bool onCpu;
    CpuBackend cpu;

    void report(RunStage stage) const {
        if (request.onStage) request.onStage(stage);
    }

    // Called from a catch handler: `throw;` passes the refusal on when the CPU may not stand in
    // (it is the CPU's own, or the caller asked for the backend alone).
    void standIn(const EngineError& refusal) {
        if (onCpu || !request.cpuAlongside) throw;
        out.cpuStoodIn = refusal.what();
        out.backendName = cpu.name();
        backend = &cpu;
        onCpu = true;
    }

    void flash() {
        const FlashOptions& options = request.options;
        report(RunStage::Run);
        FlashResult result;
        try {
            result = backend->flash(problem, options);
        } catch (const EngineError& e) {
            standIn(e);
            result = backend->flash(problem, options);
        }
        out.output = std::move(result.o);
        out.counters = result.counters;
        out.fullScores = std::move(result.fullScores);
        if (options.keepFullScores && out.fullScores.size() == 0) // a backend that kept no copy
            out.fullScores = flashForward(problem, options).fullScores;
        if (!onCpu && request.cpuAlongside) {
            report(RunStage::Alongside);
            out.cpuCheck = compareOutputs(flashForward(problem, options).o, out.reference,
                                          defaultTolerance(problem.spec.precision));
        }
    }

    // S and P are the CPU's (the counting model's three passes); another backend then computes
    // O itself, and the CPU's O is checked beside it.
    void standard() {
        report(RunStage::Run);
        StandardResult result = standardForward(problem);
        out.counters = result.counters;
        out.output = std::move(result.o);
        out.fullScores = std::move(result.scores);
        out.fullWeights = std::move(result.weights);
        if (onCpu) return;
        if (request.cpuAlongside) report(RunStage::Alongside);
        Matrix cpuOutput = out.output;
        try {
            out.output = backend->standard(problem);
            if (request.cpuAlongside)
                out.cpuCheck = compareOutputs(cpuOutput, out.reference,
                                              defaultTolerance(problem.spec.precision));
        } catch (const EngineError& e) {
            standIn(e); // the CPU's O stays
        }
    }
};

// The backend's fp16 / bf16 backward on the inputs rounded to `type`, judged; or why not. Its
// kernels have no switches: with one on they would not compute what the run shown computes.
void runLowPrecision(BackwardRunResult& out, const Problem& problem, Backend& backend,
                     const FlashOptions& options, HalfType type) {
    if (!options.rescale || !options.runningMax || options.backward.anyBug()) {
        out.lowPrecisionNote = std::string("The ") + toString(type) +
                               " tensor-core kernels were not run: they have no switches, and "
                               "this run has one on.";
        return;
    }
    // Built from the rounded matrices rather than a copy of the problem overwritten. No upstream:
    // the rounded dO goes beside it, and nothing on this path reads Problem::upstream.
    const Problem rounded{.spec = problem.spec,
                          .q = roundedToHalf(problem.q, type),
                          .k = roundedToHalf(problem.k, type),
                          .v = roundedToHalf(problem.v, type)};
    const Matrix dO = roundedToHalf(out.dO, type);
    try {
        LowPrecisionBackward run = backend.lowPrecisionBackward(rounded, dO, type);
        out.lowPrecisionCheck =
            checkLowPrecisionGradients(rounded, dO, run.grads, type, std::move(run.kernel));
    } catch (const EngineError& e) { // a refusal, or the GPU out of memory: the run shown stays
        out.lowPrecisionNote = e.what();
    }
}

} // namespace

RunResult runAndCheck(const Problem& problem, Backend& backend, const RunRequest& request) {
    RunResult out;
    out.backendName = backend.name();
    Runner runner{problem, request, out, &backend, dynamic_cast<CpuBackend*>(&backend) != nullptr,
                  {}};
    runner.report(RunStage::Reference);
    out.reference = referenceAttention(problem); // first: it refuses an n x n too large
    if (request.algorithm == Algorithm::Flash)
        runner.flash();
    else
        runner.standard();
    // At the tolerance of the arithmetic that produced the output (a GPU computes in fp32).
    out.check = compareOutputs(out.output, out.reference, checkTolerance(*runner.backend, problem.spec));
    const auto& spec = problem.spec;
    out.standardCounters = standardCounts(spec.queries, spec.keys, spec.headDim);
    return out;
}

BackwardRunResult runBackwardAndCheck(const Problem& problem, Backend& backend,
                                      const RunRequest& request) {
    const auto& spec = problem.spec;
    const FlashOptions& options = request.options;
    validate(spec, options);
    BackwardRunResult out;
    out.backendName = backend.name();
    out.dO = upstreamGradient(problem, options.backward);
    const auto report = [&](RunStage stage) {
        if (request.onStage) request.onStage(stage);
    };
    report(RunStage::Reference);
    out.reference = referenceGradients(problem, out.dO); // first: it refuses an n x n too large
    report(RunStage::Run);
    Backend* ran = &backend;
    CpuBackend cpu;
    const bool onCpu = dynamic_cast<CpuBackend*>(&backend) != nullptr;
    BackwardResult result;
    try {
        result = backend.backward(problem, out.dO, options);
    } catch (const EngineError& e) {
        if (onCpu || !request.cpuAlongside) throw;
        out.cpuStoodIn = e.what();
        out.backendName = cpu.name();
        ran = &cpu;
        result = cpu.backward(problem, out.dO, options);
    }
    out.grads = std::move(result.grads);
    out.counters = result.counters;
    out.check = compareGradients(out.grads, out.reference, checkTolerance(*ran, spec));
    if (ran != &cpu && !onCpu && request.cpuAlongside) {
        report(RunStage::Alongside);
        out.cpuCheck = compareGradients(cpu.backward(problem, out.dO, options).grads,
                                        out.reference, defaultTolerance(spec.precision));
    }
    if (request.lowPrecision && ran == &backend && !onCpu) {
        report(RunStage::LowPrecision);
        runLowPrecision(out, problem, backend, options, *request.lowPrecision);
    }
    out.storedElements =
        backwardStoredElements(spec.queries, spec.keys, spec.headDim, options.backward);
    return out;
}

} // namespace flashviz
