#include "core/flash.h"

#include "core/attention.h"
#include "core/errors.h"
#include "core/tile_update.h"
#include "core/tiling.h"

#include <algorithm>
#include <limits>

namespace flashviz {

namespace {

template <typename Scalar>
struct Inputs {
    const MatrixT<Scalar>& q;
    const MatrixT<Scalar>& k;
    const MatrixT<Scalar>& v;
    Scalar scale;
    bool causal;
    FlashVersion version;
    int queries() const { return int(q.rows()); }
    int keys() const { return int(k.rows()); }
    int headDim() const { return int(q.cols()); }
    TilePlace place(Range rows, Range cols) const { return {rows, cols, queries(), keys(), causal}; }
};

template <typename Scalar>
void keepScores(FlashOutputT<Scalar>& out, const TileWorkspace<Scalar>& ws, Range rows, Range cols) {
    out.fullScores.block(rows.begin, cols.begin, rows.size(), cols.size()) = ws.scores;
    out.counters.write(std::uint64_t(rows.size()) * cols.size()); // ...and you pay again
    out.counters.scratch(std::uint64_t(out.fullScores.size()));
}

// One tile with the version's arithmetic, its non-matmul operations counted by the update itself.
template <typename Scalar>
void updateTileOf(const Inputs<Scalar>& in, const FlashOptions& opt, RowState<Scalar>& state,
                  Range rows, Range cols, TileWorkspace<Scalar>& ws, FlashOutputT<Scalar>& out) {
    const auto qTile = in.q.middleRows(rows.begin, rows.size());
    const auto kTile = in.k.middleRows(cols.begin, cols.size());
    const auto vTile = in.v.middleRows(cols.begin, cols.size());
    if (in.version == FlashVersion::One)
        updateTileNormalised<Scalar>(state, qTile, kTile, vTile, in.scale, in.place(rows, cols), ws,
                                     &out.nonMatmul);
    else
        updateTile<Scalar>(state, qTile, kTile, vTile, in.scale, in.place(rows, cols), opt, ws,
                           nullptr, &out.nonMatmul);
}

// A query block's last key block is in: -2 divides by l and keeps L = m + log l; -1's O is
// already normalised.
template <typename Scalar>
void finishRows(const Inputs<Scalar>& in, const RowState<Scalar>& state, Range rows,
                FlashOutputT<Scalar>& out) {
    auto oRows = out.o.middleRows(rows.begin, rows.size());
    if (in.version == FlashVersion::One) {
        oRows = state.acc;
        return;
    }
    normaliseRows<Scalar>(state, oRows, &out.nonMatmul);
    out.lse.segment(rows.begin, rows.size()) = state.m.array() + state.l.array().log();
    out.nonMatmul.exp += std::uint64_t(rows.size()); // log l
    out.nonMatmul.add += std::uint64_t(rows.size()); // m + log l
}

// The explainer's order: Q_i stays on chip while every K_j, V_j streams past it.
template <typename Scalar>
void runQueryOuter(const Inputs<Scalar>& in, const FlashOptions& opt, FlashOutputT<Scalar>& out) {
    const int d = in.headDim();
    RowState<Scalar> state;
    TileWorkspace<Scalar> ws;
    Counters& c = out.counters;
    for (int i = 0; i < blockCount(in.queries(), opt.blockRows); ++i) {
        const Range rows = blockRange(i, opt.blockRows, in.queries());
        c.read(std::uint64_t(rows.size()) * d);
        c.scratch(flashWorkingSetElements(rows.size(), in.keys(), d, opt));
        state.reset(rows.size(), d, opt.runningMax);
        const int visible = visibleKeyBlocks(rows, in.queries(), in.keys(), opt.blockCols, in.causal);
        for (int j = 0; j < visible; ++j) {
            const Range cols = blockRange(j, opt.blockCols, in.keys());
            c.read(2 * std::uint64_t(cols.size()) * d);
            updateTileOf(in, opt, state, rows, cols, ws, out);
            c.matmul(rows.size(), d, cols.size());
            if (opt.keepFullScores) keepScores(out, ws, rows, cols);
            c.matmul(rows.size(), cols.size(), d);
        }
        if (visible > 0) finishRows(in, state, rows, out);
        out.m.segment(rows.begin, rows.size()) = state.m;
        out.l.segment(rows.begin, rows.size()) = state.l;
        c.write(std::uint64_t(rows.size()) * d);
    }
}

// The paper's Algorithm 1: K_j, V_j outer; each Q_i with its O_i, m_i, l_i comes from HBM and
// goes back on every inner step. O holds the unnormalised accumulator until a row block's last
// key block divides it by l.
template <typename Scalar>
void runKeyValueOuter(const Inputs<Scalar>& in, const FlashOptions& opt, FlashOutputT<Scalar>& out) {
    const int d = in.headDim();
    const int queryBlocks = blockCount(in.queries(), opt.blockRows);
    Counters& c = out.counters;
    RowState<Scalar> init;
    init.reset(in.queries(), d, opt.runningMax);
    out.o = init.acc;
    out.m = init.m;
    out.l = init.l;
    c.write(std::uint64_t(in.queries()) * d + 2 * std::uint64_t(in.queries()));
    c.scratch(flashWorkingSetElements(std::min(opt.blockRows, in.queries()), in.keys(), d, opt));

    RowState<Scalar> state;
    TileWorkspace<Scalar> ws;
    for (int j = 0; j < blockCount(in.keys(), opt.blockCols); ++j) {
        const Range cols = blockRange(j, opt.blockCols, in.keys());
        c.read(2 * std::uint64_t(cols.size()) * d);
        for (int i = 0; i < queryBlocks; ++i) {
            const Range rows = blockRange(i, opt.blockRows, in.queries());
            const int visible = visibleKeyBlocks(rows, in.queries(), in.keys(), opt.blockCols, in.causal);
            if (j >= visible) continue;
            const std::uint64_t stateElements = std::uint64_t(rows.size()) * d + 2 * rows.size();
            c.read(std::uint64_t(rows.size()) * d + stateElements);
            state.m = out.m.segment(rows.begin, rows.size());
            state.l = out.l.segment(rows.begin, rows.size());
            state.acc = out.o.middleRows(rows.begin, rows.size());
            updateTileOf(in, opt, state, rows, cols, ws, out);
            c.matmul(rows.size(), d, cols.size());
            if (opt.keepFullScores) keepScores(out, ws, rows, cols);
            c.matmul(rows.size(), cols.size(), d);
            if (j == visible - 1)
                finishRows(in, state, rows, out);
            else
                out.o.middleRows(rows.begin, rows.size()) = state.acc;
            out.m.segment(rows.begin, rows.size()) = state.m;
            out.l.segment(rows.begin, rows.size()) = state.l;
            c.write(stateElements);
        }
    }
}

} // namespace

template <typename Scalar>
FlashOutputT<Scalar> flashForward(const MatrixT<Scalar>& q, const MatrixT<Scalar>& k,
                                  const MatrixT<Scalar>& v, double scale, bool causal,
                                  const FlashOptions& options, FlashVersion version) {
    validate(options);
    if (version == FlashVersion::One && (!options.rescale || !options.runningMax))
        throw EngineError(ErrorKind::InvalidArgument,
                          "FlashAttention-1's update runs without the bug switches: the rescale "
                          "and running-max switches act on FlashAttention-2's update.");
    if (q.cols() != k.cols() || k.cols() != v.cols() || k.rows() != v.rows() || q.rows() == 0 ||
        k.rows() == 0 || q.cols() == 0)
        throw EngineError(ErrorKind::InvalidArgument,
                          "Q must be n_q x d and K, V n_k x d with every size at least 1");
    const Inputs<Scalar> in{q, k, v, Scalar(scale), causal, version};
    FlashOutputT<Scalar> out;
    out.o.setZero(in.queries(), in.headDim());
    out.m.resize(in.queries());
    out.l.resize(in.queries());
    // A row no key block reaches (causal, n_q > n_k) keeps m = -inf, l = 0: L = -inf.
    if (version == FlashVersion::Two)
        out.lse.setConstant(in.queries(), -std::numeric_limits<Scalar>::infinity());
    if (options.keepFullScores) {
        requireScoreMatrixMemory(in.queries(), in.keys(), int(sizeof(Scalar)), 1);
        out.fullScores.setConstant(in.queries(), in.keys(), -std::numeric_limits<Scalar>::infinity());
    }
    if (options.loopOrder == LoopOrder::QueryOuter)
        runQueryOuter(in, options, out);
    else
        runKeyValueOuter(in, options, out);
    return out;
}

template FlashOutputT<float> flashForward<float>(const MatrixF&, const MatrixF&, const MatrixF&,
                                                 double, bool, const FlashOptions&, FlashVersion);
template FlashOutputT<double> flashForward<double>(const Matrix&, const Matrix&, const Matrix&,
                                                   double, bool, const FlashOptions&, FlashVersion);

FlashResult flashForward(const Problem& problem, const FlashOptions& options, FlashVersion version) {
    const bool causal = problem.spec.causal;
    if (problem.spec.precision == Precision::Double)
        return flashForward<double>(problem.q, problem.k, problem.v, problem.scale(), causal,
                                    options, version);
    const auto f = flashForward<float>(problem.q.cast<float>(), problem.k.cast<float>(),
                                       problem.v.cast<float>(), problem.scale(), causal, options,
                                       version);
    return {f.o.cast<double>(), f.m.cast<double>(), f.l.cast<double>(), f.lse.cast<double>(),
            f.counters, f.nonMatmul, f.fullScores.cast<double>()};
}

StandardResult standardForward(const Problem& problem) {
    const auto& spec = problem.spec;
    const std::uint64_t nq = spec.queries, nk = spec.keys, d = spec.headDim;
    requireScoreMatrixMemory(spec.queries, spec.keys, int(sizeof(double)), 2);
    StandardResult r;
    Counters& c = r.counters;
    c.read(nq * d + 2 * nk * d);    // Q, K, V in
    r.scores = (problem.q * problem.k.transpose()) * problem.scale();
    maskScores(r.scores, 0, 0, spec.queries, spec.keys, spec.causal);
    c.matmul(nq, d, nk);
    c.write(nq * nk);               // S out to HBM...
    c.scratch(nq * nk);             // ...and held there
    c.read(nq * nk);                // S back for the softmax
    r.weights = r.scores;
    softmaxRows(r.weights);
    c.write(nq * nk);               // P out
    c.read(nq * nk);                // P back for P V
    r.o = r.weights * problem.v;
    c.matmul(nq, nk, d);
    c.write(nq * d);                // O out
    return r;
}

} // namespace flashviz
