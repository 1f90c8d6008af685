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
                TileWorkspace<Scalar>& workspace, TileDetail<Scalar>* detail) {
    constexpr Scalar minusInf = -std::numeric_limits<Scalar>::infinity();
    auto& s = workspace.scores;
    auto& p = workspace.weights;
    auto& mNew = workspace.mNew;
    auto& correction = workspace.correction;

    s.resize(place.rows.size(), place.cols.size());
    s.noalias() = qTile * kTile.transpose();
    if (!place.fullyVisible())
        maskScores(s, place.rows.begin, place.cols.begin, place.queries, place.keys, true);

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
    for (int r = 0; r < s.rows(); ++r) {
        auto scores = s.row(r);
        scores *= scale;
        const Scalar mOld = state.m(r);
        // Without a running maximum nothing is subtracted: m stays 0 and exp() sees raw scores.
        const Scalar m = options.runningMax ? std::max(mOld, scores.maxCoeff()) : mOld;
        mNew(r) = m;
        if (m == minusInf) { // every key so far hidden: exp(-inf - -inf) would be NaN
            p.row(r).setZero();
            correction(r) = rescale ? Scalar(0) : Scalar(1);
            continue;
        }
        p.row(r) = (scores.array() - m).exp();
        // exp(-inf) = 0 when this tile brings the row's first visible key. Without the rescale
        // (the bug) the factor is 1: sums taken against different maxima are simply added;
        // without a running maximum m never moves, so 1 is exact there.
        correction(r) = rescale ? std::exp(mOld - m) : Scalar(1);
    }
    state.l = correction.cwiseProduct(state.l) + p.rowwise().sum();
    if (rescale) state.acc.array().colwise() *= correction.array();
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
                          const TilePlace& place, TileWorkspace<Scalar>& workspace) {
    constexpr Scalar minusInf = -std::numeric_limits<Scalar>::infinity();
    auto& s = workspace.scores;
    auto& p = workspace.weights;
    s.resize(place.rows.size(), place.cols.size());
    s.noalias() = qTile * kTile.transpose();
    if (!place.fullyVisible())
        maskScores(s, place.rows.begin, place.cols.begin, place.queries, place.keys, true);

    const int rows = int(s.rows());
    p.resize(rows, s.cols());
    VectorT<Scalar> oldFactor(rows), newFactor(rows), lNew(rows), mNew(rows);
    for (int r = 0; r < rows; ++r) {
        auto scores = s.row(r);
        scores *= scale;
        const Scalar tileMax = scores.maxCoeff();
        const Scalar mOld = state.m(r);
        mNew(r) = std::max(mOld, tileMax);
        // exp(-inf - -inf) would be NaN: a row with no visible key so far adds nothing.
        if (tileMax == minusInf) p.row(r).setZero();
        else p.row(r) = (scores.array() - tileMax).exp();
        const Scalar tileSum = p.row(r).sum();
        const Scalar a = mNew(r) == minusInf ? Scalar(1) : std::exp(mOld - mNew(r));
        const Scalar b = tileMax == minusInf ? Scalar(0) : std::exp(tileMax - mNew(r));
        lNew(r) = a * state.l(r) + b * tileSum;
        oldFactor(r) = state.l(r) * a;
        newFactor(r) = b;
    }
    workspace.product.noalias() = p * vTile;
    for (int r = 0; r < rows; ++r) {
        if (lNew(r) == Scalar(0)) continue; // no visible key yet: O's row stays 0
        state.acc.row(r) =
            (oldFactor(r) * state.acc.row(r) + newFactor(r) * workspace.product.row(r)) / lNew(r);
    }
    state.m = mNew;
    state.l = lNew;
}

template <typename Scalar>
void normaliseRows(const RowState<Scalar>& state, Eigen::Ref<MatrixT<Scalar>> out) {
    for (int r = 0; r < state.l.size(); ++r) {
        // l == 0 only when the row saw no key; inf and NaN pass through to be reported.
        if (state.l(r) == Scalar(0))
            out.row(r).setZero();
        else
            out.row(r) = state.acc.row(r) / state.l(r);
    }
}

#define FLASHVIZ_INSTANTIATE(Scalar)                                                               \
    template struct RowState<Scalar>;                                                              \
    template void updateTile<Scalar>(RowState<Scalar>&, const Eigen::Ref<const MatrixT<Scalar>>&,  \
                                     const Eigen::Ref<const MatrixT<Scalar>>&,                     \
                                     const Eigen::Ref<const MatrixT<Scalar>>&, Scalar,             \
                                     const TilePlace&, const FlashOptions&,                        \
                                     TileWorkspace<Scalar>&, TileDetail<Scalar>*);                 \
    template void updateTileNormalised<Scalar>(                                                    \
        RowState<Scalar>&, const Eigen::Ref<const MatrixT<Scalar>>&,                               \
        const Eigen::Ref<const MatrixT<Scalar>>&, const Eigen::Ref<const MatrixT<Scalar>>&, Scalar, \
        const TilePlace&, TileWorkspace<Scalar>&);                                                 \
    template void normaliseRows<Scalar>(const RowState<Scalar>&, Eigen::Ref<MatrixT<Scalar>>);

FLASHVIZ_INSTANTIATE(float)
FLASHVIZ_INSTANTIATE(double)

} // namespace flashviz
