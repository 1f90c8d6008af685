#include "core/backend.h"

#include "core/attention.h"
#include "core/check.h"
#include "core/errors.h"
#include "core/tile_update.h"
#include "core/tiling.h"

namespace flashviz {

const TileTrace* FlashTrace::find(int queryBlock, int keyBlock) const {
    for (const auto& t : tiles)
        if (t.queryBlock == queryBlock && t.keyBlock == keyBlock) return &t;
    return nullptr;
}

FlashResult CpuBackend::flash(const Problem& problem, const FlashOptions& options) {
    return flashForward(problem, options);
}

Matrix CpuBackend::standard(const Problem& problem) { return referenceAttention(problem); }

double checkTolerance(const Backend& backend, const ProblemSpec& spec) {
    return defaultTolerance(backend.arithmetic(spec));
}

namespace {

template <typename Scalar>
FlashTrace traceIn(const Problem& problem, const FlashOptions& options) {
    const auto& spec = problem.spec;
    FlashTrace trace;
    RowState<Scalar> state;
    TileWorkspace<Scalar> ws;
    for (int i = 0; i < blockCount(spec.queries, options.blockRows); ++i) {
        const Range rows = blockRange(i, options.blockRows, spec.queries);
        const MatrixT<Scalar> q = problem.q.middleRows(rows.begin, rows.size()).template cast<Scalar>();
        state.reset(rows.size(), spec.headDim, options.runningMax);
        const int visible =
            visibleKeyBlocks(rows, spec.queries, spec.keys, options.blockCols, spec.causal);
        for (int j = 0; j < visible; ++j) {
            const Range cols = blockRange(j, options.blockCols, spec.keys);
            const TilePlace place{rows, cols, spec.queries, spec.keys, spec.causal};
            const MatrixT<Scalar> k = problem.k.middleRows(cols.begin, cols.size()).template cast<Scalar>();
            const MatrixT<Scalar> v = problem.v.middleRows(cols.begin, cols.size()).template cast<Scalar>();
            updateTile<Scalar>(state, q, k, v, Scalar(problem.scale()), place, options, ws);
            trace.tiles.push_back({i, j, rows, state.m.template cast<double>(),
                                   state.l.template cast<double>(),
                                   ws.correction.template cast<double>(),
                                   state.acc.template cast<double>()});
        }
    }
    return trace;
}

} // namespace

FlashTrace CpuBackend::trace(const Problem& problem, const FlashOptions& options) {
    validate(options);
    if (problem.spec.precision == Precision::Double) return traceIn<double>(problem, options);
    return traceIn<float>(problem, options);
}

} // namespace flashviz

namespace flashviz {

BackwardResult Backend::backward(const Problem&, const Matrix&, const FlashOptions&) {
    throw EngineError(ErrorKind::Unsupported, name() + " has no backward pass");
}

BackwardTrace Backend::backwardTrace(const Problem&, const Matrix&, const FlashOptions&) {
    throw EngineError(ErrorKind::Unsupported, name() + " has no backward pass");
}

LowPrecisionBackward Backend::lowPrecisionBackward(const Problem&, const Matrix&, HalfType) {
    throw EngineError(ErrorKind::Unsupported, name() + " has no fp16/bf16 tensor-core kernels");
}

BackwardResult CpuBackend::backward(const Problem& problem, const Matrix& dO,
                                    const FlashOptions& options) {
    return flashBackward(problem, dO, options);
}

BackwardTrace CpuBackend::backwardTrace(const Problem& problem, const Matrix& dO,
                                        const FlashOptions& options) {
    BackwardTrace trace;
    flashBackward(problem, dO, options, &trace);
    return trace;
}

} // namespace flashviz
