#include "core/backward.h"

#include "core/attention.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/tiling.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace flashviz {

Matrix upstreamGradient(const ProblemSpec& spec, const BackwardOptions& options) {
    if (options.onesUpstream) return Matrix::Ones(spec.queries, spec.headDim);
    // A stream apart from the inputs': the same seed must not give dO equal to Q.
    constexpr std::uint64_t kUpstreamStream = 0x9E3779B97F4A7C15ull;
    NormalGenerator generator(spec.seed ^ kUpstreamStream);
    return generator.matrix(spec.queries, spec.headDim, 1.0);
}

Matrix upstreamGradient(const Problem& problem, const BackwardOptions& options) {
    if (!problem.upstream) return upstreamGradient(problem.spec, options);
    requireOneUpstream(problem.spec, options);
    return *problem.upstream;
}

template <typename Scalar>
ForwardSavedT<Scalar> forwardSaved(const MatrixT<Scalar>& o, const VectorT<Scalar>& m,
                                   const VectorT<Scalar>& l) {
    constexpr Scalar minusInf = -std::numeric_limits<Scalar>::infinity();
    ForwardSavedT<Scalar> saved{o, VectorT<Scalar>(m.size()), m};
    for (int r = 0; r < m.size(); ++r) // ℓ = 0: the row saw no key, and its P is 0
        saved.lse(r) = l(r) == Scalar(0) ? minusInf : m(r) + std::log(l(r));
    return saved;
}

template <typename Scalar>
VectorT<Scalar> rowDots(const MatrixT<Scalar>& dO, const MatrixT<Scalar>& o) {
    return dO.cwiseProduct(o).rowwise().sum();
}

namespace {

// exp(S - offset), 0 where S is -inf (a masked key, or a row that sees none: -inf - -inf is NaN).
template <typename Scalar>
void exponentiate(const MatrixT<Scalar>& scores, const Eigen::Ref<const VectorT<Scalar>>& offset,
                  MatrixT<Scalar>& weights) {
    constexpr Scalar minusInf = -std::numeric_limits<Scalar>::infinity();
    weights.resize(scores.rows(), scores.cols());
    for (int r = 0; r < scores.rows(); ++r)
        for (int c = 0; c < scores.cols(); ++c)
            weights(r, c) = scores(r, c) == minusInf ? Scalar(0) : std::exp(scores(r, c) - offset(r));
}

template <typename Scalar>
void recomputeScores(const Eigen::Ref<const MatrixT<Scalar>>& qTile,
                     const Eigen::Ref<const MatrixT<Scalar>>& kTile, Scalar scale,
                     const TilePlace& place, bool mask, MatrixT<Scalar>& scores) {
    // As the forward computes it (core/tile_update.cpp): Q Kᵀ, masked, then scaled.
    scores.resize(place.rows.size(), place.cols.size());
    scores.noalias() = qTile * kTile.transpose();
    if (mask && !place.fullyVisible())
        maskScores(scores, place.rows.begin, place.cols.begin, place.queries, place.keys, true);
    scores *= scale;
}

} // namespace

template <typename Scalar>
void computeBackwardTile(const Eigen::Ref<const MatrixT<Scalar>>& qTile,
                         const Eigen::Ref<const MatrixT<Scalar>>& kTile,
                         const Eigen::Ref<const MatrixT<Scalar>>& vTile,
                         const Eigen::Ref<const MatrixT<Scalar>>& dOTile,
                         const Eigen::Ref<const VectorT<Scalar>>& lseTile,
                         const Eigen::Ref<const VectorT<Scalar>>& offsetTile,
                         const Eigen::Ref<const VectorT<Scalar>>& deltaTile, Scalar scale,
                         const TilePlace& place, const BackwardOptions& options,
                         BackwardTile<Scalar>& tile) {
    if (options.storeWeights) {
        // The P the forward stored is the softmax itself; the recompute's bugs cannot touch it.
        recomputeScores<Scalar>(qTile, kTile, scale, place, true, tile.scores);
        exponentiate<Scalar>(tile.scores, lseTile, tile.weights);
    } else {
        recomputeScores<Scalar>(qTile, kTile, scale, place, options.maskRecompute, tile.scores);
        exponentiate<Scalar>(tile.scores, offsetTile, tile.weights);
    }
    tile.dWeights.noalias() = dOTile * vTile.transpose();
    if (options.subtractRowDot)
        tile.dScores = tile.weights.cwiseProduct(
            (tile.dWeights.colwise() - deltaTile.matrix()).matrix());
    else
        tile.dScores = tile.weights.cwiseProduct(tile.dWeights);
}

template <typename Scalar>
void addValueGradient(Eigen::Ref<MatrixT<Scalar>> dv, const BackwardTile<Scalar>& tile,
                      const Eigen::Ref<const MatrixT<Scalar>>& dOTile) {
    dv.noalias() += tile.weights.transpose() * dOTile;
}

template <typename Scalar>
void addKeyGradient(Eigen::Ref<MatrixT<Scalar>> dk, const BackwardTile<Scalar>& tile,
                    const Eigen::Ref<const MatrixT<Scalar>>& qTile, Scalar scale) {
    dk.noalias() += scale * (tile.dScores.transpose() * qTile);
}

template <typename Scalar>
void applyQueryGradient(Eigen::Ref<MatrixT<Scalar>> dq, const BackwardTile<Scalar>& tile,
                        const Eigen::Ref<const MatrixT<Scalar>>& kTile, Scalar scale,
                        const BackwardOptions& options) {
    if (options.accumulateDq)
        dq.noalias() += scale * (tile.dScores * kTile);
    else
        dq.noalias() = scale * (tile.dScores * kTile);
}

std::uint64_t backwardWorkingSetElements(int rows, int cols, int headDim,
                                         const BackwardOptions& options) {
    const std::uint64_t r = rows, c = cols, d = headDim;
    return 4 * c * d + 3 * r * d + (options.storeWeights ? r : 2 * r) + 2 * r * c;
}

BackwardTrade backwardTrade(int queries, int keys, int headDim, bool causal,
                            const FlashOptions& options) {
    FlashOptions recompute = options, stored = options;
    recompute.backward.storeWeights = false;
    stored.backward.storeWeights = true;
    BackwardTrade t;
    t.recompute = flashBackwardCounts(queries, keys, headDim, causal, recompute);
    t.stored = flashBackwardCounts(queries, keys, headDim, causal, stored);
    t.stored.write(std::uint64_t(queries) * keys); // the forward's write of P
    t.recomputeKept = backwardStoredElements(queries, keys, headDim, recompute.backward);
    t.storedKept = backwardStoredElements(queries, keys, headDim, stored.backward);
    return t;
}

std::uint64_t backwardStoredElements(int queries, int keys, int headDim,
                                     const BackwardOptions& options) {
    const std::uint64_t nq = queries, nk = keys, d = headDim;
    const std::uint64_t stored = 2 * nq * d + 2 * nk * d + nq; // Q, K, V, O and L
    return options.storeWeights ? stored + nq * nk : stored;
}

namespace {

// What one tile counts, in the order the steps count it.
void countTile(Counters& c, std::uint64_t r, std::uint64_t cols, std::uint64_t d,
               const BackwardOptions& options) {
    c.read(2 * r * d + r + (options.storeWeights ? 0 : r)); // Q_i, dO_i, D_i (and L_i)
    if (options.storeWeights)
        c.read(r * cols); // P_ij, as the forward stored it
    else
        c.matmul(r, d, cols); // S recomputed
    c.matmul(cols, r, d);    // dV += Pᵀ dO
    c.matmul(r, d, cols);    // dP = dO Vᵀ
    if (options.accumulateDq) c.read(r * d);
    c.matmul(r, cols, d); // dQ += dS K
    c.write(r * d);
    c.matmul(cols, r, d); // dK += dSᵀ Q
}

} // namespace

Counters flashBackwardCounts(int queries, int keys, int headDim, bool causal,
                             const FlashOptions& options) {
    const std::uint64_t nq = queries, d = headDim;
    Counters c;
    c.read(2 * nq * d); // the pre-pass: O and dO
    c.write(nq);        // D
    c.write(nq * d);    // dQ = 0
    for (int j = 0; j < blockCount(keys, options.blockCols); ++j) {
        const Range cols = blockRange(j, options.blockCols, keys);
        const int first =
            firstQueryBlockSeeing(j, queries, keys, options.blockRows, options.blockCols, causal);
        const std::uint64_t rows =
            std::uint64_t(queries - std::min(queries, first * options.blockRows));
        c.read(2 * std::uint64_t(cols.size()) * d);
        // Every tile's count is linear in its rows: the suffix counts as one block of them all.
        if (rows > 0) countTile(c, rows, cols.size(), d, options.backward);
        c.write(2 * std::uint64_t(cols.size()) * d);
    }
    c.scratch(backwardWorkingSetElements(std::min(options.blockRows, queries),
                                         std::min(options.blockCols, keys), headDim,
                                         options.backward));
    return c;
}

template <typename Scalar>
BackwardOutputT<Scalar> flashBackward(const MatrixT<Scalar>& q, const MatrixT<Scalar>& k,
                                      const MatrixT<Scalar>& v, const MatrixT<Scalar>& dO,
                                      const ForwardSavedT<Scalar>& saved, double scale,
                                      bool causal, const FlashOptions& options,
                                      BackwardTrace* trace) {
    validate(options);
    const int queries = int(q.rows()), keys = int(k.rows()), d = int(q.cols());
    const BackwardOptions& bw = options.backward;
    const Scalar s = Scalar(scale);
    BackwardOutputT<Scalar> out;
    Counters& c = out.counters;
    out.delta = rowDots<Scalar>(dO, saved.o);
    c.read(2 * std::uint64_t(queries) * d);
    c.write(std::uint64_t(queries));
    out.grads.dq.setZero(queries, d);
    out.grads.dk.setZero(keys, d);
    out.grads.dv.setZero(keys, d);
    c.write(std::uint64_t(queries) * d);
    c.scratch(backwardWorkingSetElements(std::min(options.blockRows, queries),
                                         std::min(options.blockCols, keys), d,
                                         options.backward));
    const VectorT<Scalar>& offset = saved.offset(bw);
    BackwardTile<Scalar> tile;
    for (int j = 0; j < blockCount(keys, options.blockCols); ++j) {
        const Range cols = blockRange(j, options.blockCols, keys);
        const auto kTile = k.middleRows(cols.begin, cols.size());
        const auto vTile = v.middleRows(cols.begin, cols.size());
        auto dk = out.grads.dk.middleRows(cols.begin, cols.size());
        auto dv = out.grads.dv.middleRows(cols.begin, cols.size());
        c.read(2 * std::uint64_t(cols.size()) * d);
        const int first =
            firstQueryBlockSeeing(j, queries, keys, options.blockRows, options.blockCols, causal);
        for (int i = first; i < blockCount(queries, options.blockRows); ++i) {
            const Range rows = blockRange(i, options.blockRows, queries);
            const auto qTile = q.middleRows(rows.begin, rows.size());
            const auto dOTile = dO.middleRows(rows.begin, rows.size());
            const TilePlace place{rows, cols, queries, keys, causal};
            computeBackwardTile<Scalar>(qTile, kTile, vTile, dOTile,
                                        saved.lse.segment(rows.begin, rows.size()),
                                        offset.segment(rows.begin, rows.size()),
                                        out.delta.segment(rows.begin, rows.size()), s, place, bw,
                                        tile);
            addValueGradient<Scalar>(dv, tile, dOTile);
            applyQueryGradient<Scalar>(out.grads.dq.middleRows(rows.begin, rows.size()), tile,
                                       kTile, s, bw);
            addKeyGradient<Scalar>(dk, tile, qTile, s);
            countTile(c, rows.size(), cols.size(), d, bw);
            if (trace)
                trace->tiles.push_back(
                    {j, i, rows, cols,
                     out.grads.dq.middleRows(rows.begin, rows.size()).template cast<double>(),
                     dk.template cast<double>(), dv.template cast<double>()});
        }
        c.write(2 * std::uint64_t(cols.size()) * d);
    }
    return out;
}

namespace {

template <typename Scalar>
BackwardResult backwardIn(const Problem& problem, const Matrix& dO, const FlashOptions& options,
                          BackwardTrace* trace) {
    FlashOptions forward = options;
    forward.keepFullScores = false;
    const MatrixT<Scalar> q = problem.q.cast<Scalar>(), k = problem.k.cast<Scalar>(),
                          v = problem.v.cast<Scalar>();
    const auto f = flashForward<Scalar>(q, k, v, problem.scale(), problem.spec.causal, forward);
    const auto saved = forwardSaved<Scalar>(f.o, f.m, f.l);
    const auto b = flashBackward<Scalar>(q, k, v, dO.cast<Scalar>(), saved, problem.scale(),
                                         problem.spec.causal, options, trace);
    return {{b.grads.dq.template cast<double>(), b.grads.dk.template cast<double>(),
             b.grads.dv.template cast<double>()},
            b.delta.template cast<double>(),
            b.counters};
}

} // namespace

BackwardResult flashBackward(const Problem& problem, const Matrix& dO, const FlashOptions& options,
                             BackwardTrace* trace) {
    validate(problem.spec, options);
    if (dO.rows() != problem.spec.queries || dO.cols() != problem.spec.headDim)
        throw EngineError(ErrorKind::InvalidArgument,
                          "The upstream gradient dO is " + std::to_string(dO.rows()) + "x" +
                              std::to_string(dO.cols()) + "; the output O is " +
                              std::to_string(problem.spec.queries) + "x" +
                              std::to_string(problem.spec.headDim));
    if (problem.spec.precision == Precision::Double)
        return backwardIn<double>(problem, dO, options, trace);
    return backwardIn<float>(problem, dO, options, trace);
}

Gradients referenceGradients(const Problem& problem, const Matrix& dO) {
    const auto& spec = problem.spec;
    requireScoreMatrixMemory(spec.queries, spec.keys, int(sizeof(double)), 2);
    Matrix p = problem.q * problem.k.transpose() * problem.scale();
    if (spec.causal) maskScores(p, 0, 0, spec.queries, spec.keys, true);
    softmaxRows(p);
    Gradients g;
    g.dv.noalias() = p.transpose() * dO;
    Matrix ds = dO * problem.v.transpose(); // dP, turned into dS in place
    const Vector delta = ds.cwiseProduct(p).rowwise().sum();
    ds = p.cwiseProduct((ds.colwise() - delta).matrix());
    g.dq.noalias() = problem.scale() * (ds * problem.k);
    g.dk.noalias() = problem.scale() * (ds.transpose() * problem.q);
    return g;
}

GradientCheck compareGradients(const Gradients& grads, const Gradients& reference, double tolerance) {
    return {compareOutputs(grads.dq, reference.dq, tolerance),
            compareOutputs(grads.dk, reference.dk, tolerance),
            compareOutputs(grads.dv, reference.dv, tolerance)};
}

const BackwardTileTrace* BackwardTrace::find(int keyBlock, int queryBlock) const {
    for (const auto& t : tiles)
        if (t.keyBlock == keyBlock && t.queryBlock == queryBlock) return &t;
    return nullptr;
}

std::string GradientCheck::summary() const {
    const auto one = [](const char* name, const CheckReport& r) {
        char text[120];
        if (r.nonFiniteCount > 0)
            std::snprintf(text, sizeof text, "%s %d non-finite", name, r.nonFiniteCount);
        else if (!r.passed())
            std::snprintf(text, sizeof text, "%s %.2e in %zu rows", name, r.maxAbsDiff,
                          r.wrongRows.size());
        else
            std::snprintf(text, sizeof text, "%s %.2e", name, r.maxAbsDiff);
        return std::string(text);
    };
    char tolerance[40];
    std::snprintf(tolerance, sizeof tolerance, " (tolerance %.0e)", dq.tolerance);
    return std::string(passed() ? "PASS  " : "FAIL  ") + one("dQ", dq) + ", " + one("dK", dk) +
           ", " + one("dV", dv) + tolerance;
}

#define FLASHVIZ_INSTANTIATE(Scalar)                                                               \
    template ForwardSavedT<Scalar> forwardSaved<Scalar>(                                           \
        const MatrixT<Scalar>&, const VectorT<Scalar>&, const VectorT<Scalar>&);                   \
    template VectorT<Scalar> rowDots<Scalar>(const MatrixT<Scalar>&, const MatrixT<Scalar>&);      \
    template void computeBackwardTile<Scalar>(                                                     \
        const Eigen::Ref<const MatrixT<Scalar>>&, const Eigen::Ref<const MatrixT<Scalar>>&,        \
        const Eigen::Ref<const MatrixT<Scalar>>&, const Eigen::Ref<const MatrixT<Scalar>>&,        \
        const Eigen::Ref<const VectorT<Scalar>>&, const Eigen::Ref<const VectorT<Scalar>>&,        \
        const Eigen::Ref<const VectorT<Scalar>>&, Scalar, const TilePlace&,                        \
        const BackwardOptions&, BackwardTile<Scalar>&);                                            \
    template void addValueGradient<Scalar>(Eigen::Ref<MatrixT<Scalar>>,                            \
                                           const BackwardTile<Scalar>&,                            \
                                           const Eigen::Ref<const MatrixT<Scalar>>&);              \
    template void addKeyGradient<Scalar>(Eigen::Ref<MatrixT<Scalar>>, const BackwardTile<Scalar>&, \
                                         const Eigen::Ref<const MatrixT<Scalar>>&, Scalar);        \
    template void applyQueryGradient<Scalar>(Eigen::Ref<MatrixT<Scalar>>,                          \
                                             const BackwardTile<Scalar>&,                          \
                                             const Eigen::Ref<const MatrixT<Scalar>>&, Scalar,     \
                                             const BackwardOptions&);                              \
    template BackwardOutputT<Scalar> flashBackward<Scalar>(                                        \
        const MatrixT<Scalar>&, const MatrixT<Scalar>&, const MatrixT<Scalar>&,                    \
        const MatrixT<Scalar>&, const ForwardSavedT<Scalar>&, double, bool, const FlashOptions&,    \
        BackwardTrace*);

FLASHVIZ_INSTANTIATE(float)
FLASHVIZ_INSTANTIATE(double)

} // namespace flashviz
