#include "core/tile_update.h"

#include "core/attention.h"
#include "core/tiling.h"

#include <cmath>
#include <limits>

namespace flashviz {

bool TilePlace::fullyVisible() const {
    return !causal || lastVisibleKey(rows.begin, queries, keys, true) >= cols.end - 1;
}

bool TilePlace::fullyMasked() const {
    return causal && lastVisibleKey(rows.end - 1, queries, keys, true) < cols.begin;
}

NonMatmulFlops& NonMatmulFlops::operator+=(const NonMatmulFlops& other) {
    exp += other.exp;
    max += other.max;
    add += other.add;
    multiply += other.multiply;
    divide += other.divide;
    return *this;
}

namespace {

// Where no tally is asked for, the counting goes to a scratch one.
NonMatmulFlops& tallyOr(NonMatmulFlops* tally, NonMatmulFlops& scratch) {
    return tally ? *tally : scratch;
}

// S = Q_i K_j^T, -inf where the causal mask hides a key (unscaled: the updates scale it row by
// row while the row is in cache).
template <typename Scalar>
void maskedScores(MatrixT<Scalar>& s, const Eigen::Ref<const MatrixT<Scalar>>& qTile,
                  const Eigen::Ref<const MatrixT<Scalar>>& kTile, const TilePlace& place) {
    s.resize(place.rows.size(), place.cols.size());
    s.noalias() = qTile * kTile.transpose();
    if (!place.fullyVisible())
        maskScores(s, place.rows.begin, place.cols.begin, place.queries, place.keys, true);
}

} // namespace

template <typename Scalar>
void RowState<Scalar>::reset(int rows, int headDim, bool runningMax) {
    m.setConstant(rows, runningMax ? -std::numeric_limits<Scalar>::infinity() : Scalar(0));
    l.setZero(rows);
    acc.setZero(rows, headDim);
}

template <typename Scalar>
void updateTile(RowState<Scalar>& state, const Eigen::Ref<const MatrixT<Scalar>>& qTile,
                const Eigen::Ref<const MatrixT<Scalar>>& kTile,
                const Eigen::Ref<const MatrixT<Scalar>>& vTile, Scalar scale,
                const TilePlace& place, const FlashOptions& options,
                TileWorkspace<Scalar>& workspace, TileDetail<Scalar>* detail,
                NonMatmulFlops* tally) {
    constexpr Scalar minusInf = -std::numeric_limits<Scalar>::infinity();
    NonMatmulFlops scratch;
    NonMatmulFlops& ops = tallyOr(tally, scratch);
    auto& s = workspace.scores;
    auto& p = workspace.weights;
    auto& mNew = workspace.mNew;
    auto& correction = workspace.correction;
    maskedScores<Scalar>(s, qTile, kTile, place);

    if (detail) {
        detail->mOld = state.m;
        detail->lOld = state.l;
        detail->accOld = state.acc;
    }

    // One pass per row while it is in cache: scale, new maximum, weights, their sum, and the
    // correction for what was accumulated against the old maximum.
    const bool rescale = options.rescale && options.runningMax;
    p.resize(s.rows(), s.cols());
    mNew.resize(s.rows());
    correction.resize(s.rows());
    const std::uint64_t cols = std::uint64_t(s.cols());
    for (int r = 0; r < s.rows(); ++r) {
        auto scores = s.row(r);
        scores *= scale;
        ops.multiply += cols;
        const Scalar mOld = state.m(r);
        // Without a running maximum nothing is subtracted: m stays 0 and exp() sees raw scores.
        const Scalar m = options.runningMax ? std::max(mOld, scores.maxCoeff()) : mOld;
        if (options.runningMax) ops.max += cols;
        mNew(r) = m;
        if (m == minusInf) { // every key so far hidden: exp(-inf - -inf) would be NaN
            p.row(r).setZero();
            correction(r) = rescale ? Scalar(0) : Scalar(1);
            continue;
        }
        p.row(r) = (scores.array() - m).exp();
        ops.add += cols;
        ops.exp += cols;
        // exp(-inf) = 0 when this tile brings the row's first visible key. Without the rescale
        // (the bug) the factor is 1: sums taken against different maxima are simply added;
        // without a running maximum m never moves, so 1 is exact there.
        correction(r) = rescale ? std::exp(mOld - m) : Scalar(1);
        if (rescale) {
            ops.add += 1;
            ops.exp += 1;
        }
    }
    const std::uint64_t rows = std::uint64_t(s.rows()), d = std::uint64_t(state.acc.cols());
    state.l = correction.cwiseProduct(state.l) + p.rowwise().sum();
    ops.multiply += rows;
    ops.add += rows * cols;
    if (rescale) {
        state.acc.array().colwise() *= correction.array();
        ops.multiply += rows * d;
    }
    state.acc.noalias() += p * vTile;
    state.m = mNew;

    if (detail) {
        detail->scores = s;
        detail->weights = p;
        detail->mNew = state.m;
        detail->lNew = state.l;
        detail->correction = correction;
        detail->accNew = state.acc;
    }
}

template <typename Scalar>
void updateTileNormalised(RowState<Scalar>& state, const Eigen::Ref<const MatrixT<Scalar>>& qTile,
                          const Eigen::Ref<const MatrixT<Scalar>>& kTile,
                          const Eigen::Ref<const MatrixT<Scalar>>& vTile, Scalar scale,
                          const TilePlace& place, TileWorkspace<Scalar>& workspace,
                          NonMatmulFlops* tally) {
    constexpr Scalar minusInf = -std::numeric_limits<Scalar>::infinity();
    NonMatmulFlops scratch;
    NonMatmulFlops& ops = tallyOr(tally, scratch);
    auto& s = workspace.scores;
    auto& p = workspace.weights;
    maskedScores<Scalar>(s, qTile, kTile, place);

    const int rows = int(s.rows());
    p.resize(rows, s.cols());
    VectorT<Scalar> oldFactor(rows), newFactor(rows), lNew(rows), mNew(rows);
    const std::uint64_t cols = std::uint64_t(s.cols()), d = std::uint64_t(state.acc.cols());
    for (int r = 0; r < rows; ++r) {
        auto scores = s.row(r);
        scores *= scale;
        const Scalar tileMax = scores.maxCoeff();
        const Scalar mOld = state.m(r);
        mNew(r) = std::max(mOld, tileMax);
        ops.multiply += cols;
        ops.max += cols + 1;
        // exp(-inf - -inf) would be NaN: a row with every key of this tile hidden adds nothing.
        if (tileMax == minusInf) {
            p.row(r).setZero();
        } else {
            p.row(r) = (scores.array() - tileMax).exp();
            ops.add += cols;
            ops.exp += cols;
        }
        const Scalar tileSum = p.row(r).sum();
        ops.add += cols;
        Scalar a = 1, b = 0;
        if (mNew(r) != minusInf) { // a row that has seen no key keeps l = 0 and O = 0
            a = std::exp(mOld - mNew(r));
            ops.add += 1;
            ops.exp += 1;
        }
        if (tileMax != minusInf) {
            b = std::exp(tileMax - mNew(r));
            ops.add += 1;
            ops.exp += 1;
        }
        lNew(r) = a * state.l(r) + b * tileSum;
        oldFactor(r) = state.l(r) * a;
        newFactor(r) = b;
        ops.multiply += 3;
        ops.add += 1;
    }
    workspace.product.noalias() = p * vTile;
    for (int r = 0; r < rows; ++r) {
        if (lNew(r) == Scalar(0)) continue; // no visible key yet: O's row stays 0
        state.acc.row(r) =
            (oldFactor(r) * state.acc.row(r) + newFactor(r) * workspace.product.row(r)) / lNew(r);
        ops.multiply += 2 * d;
        ops.add += d;
        ops.divide += d;
    }
    state.m = mNew;
    state.l = lNew;
}

template <typename Scalar>
void normaliseRows(const RowState<Scalar>& state, Eigen::Ref<MatrixT<Scalar>> out,
                   NonMatmulFlops* tally) {
    for (int r = 0; r < state.l.size(); ++r) {
        // l == 0 only when the row saw no key; inf and NaN pass through to be reported.
        if (state.l(r) == Scalar(0)) {
            out.row(r).setZero();
        } else {
            out.row(r) = state.acc.row(r) / state.l(r);
            if (tally) tally->divide += std::uint64_t(out.cols());
        }
    }
}

#define FLASHVIZ_INSTANTIATE(Scalar)                                                               \
    template struct RowState<Scalar>;                                                              \
    template void updateTile<Scalar>(RowState<Scalar>&, const Eigen::Ref<const MatrixT<Scalar>>&,  \
                                     const Eigen::Ref<const MatrixT<Scalar>>&,                     \
                                     const Eigen::Ref<const MatrixT<Scalar>>&, Scalar,             \
                                     const TilePlace&, const FlashOptions&,                        \
                                     TileWorkspace<Scalar>&, TileDetail<Scalar>*,                  \
                                     NonMatmulFlops*);                                             \
    template void updateTileNormalised<Scalar>(                                                    \
        RowState<Scalar>&, const Eigen::Ref<const MatrixT<Scalar>>&,                               \
        const Eigen::Ref<const MatrixT<Scalar>>&, const Eigen::Ref<const MatrixT<Scalar>>&, Scalar, \
        const TilePlace&, TileWorkspace<Scalar>&, NonMatmulFlops*);                                \
    template void normaliseRows<Scalar>(const RowState<Scalar>&, Eigen::Ref<MatrixT<Scalar>>,      \
                                        NonMatmulFlops*);

FLASHVIZ_INSTANTIATE(float)
FLASHVIZ_INSTANTIATE(double)

} // namespace flashviz
