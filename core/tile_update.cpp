#include "core/tile_update.h"

#include "core/attention.h"

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
    s *= scale;
    if (!place.fullyVisible())
        maskScores(s, place.rows.begin, place.cols.begin, place.queries, place.keys, true);

    if (detail) {
        detail->mOld = state.m;
        detail->lOld = state.l;
        detail->accOld = state.acc;
    }

    // Without a running maximum nothing is subtracted: m stays 0 and exp() sees raw scores.
    mNew = options.runningMax ? VectorT<Scalar>(state.m.cwiseMax(s.rowwise().maxCoeff())) : state.m;
    p = (s.colwise() - mNew).array().exp();
    bool anyRowUnseen = false;
    for (int r = 0; r < mNew.size(); ++r) {
        if (mNew(r) == minusInf) { // every key so far hidden: exp(-inf - -inf) would be NaN
            p.row(r).setZero();
            anyRowUnseen = true;
        }
    }

    if (options.rescale && options.runningMax) {
        correction = (state.m - mNew).array().exp();
        if (anyRowUnseen || state.m.minCoeff() == minusInf)
            for (int r = 0; r < correction.size(); ++r)
                if (std::isnan(correction(r))) correction(r) = 0; // -inf minus -inf
        state.l = correction.cwiseProduct(state.l) + p.rowwise().sum();
        state.acc = correction.asDiagonal() * state.acc;
    } else {
        // The bug adds sums taken against different maxima; without a running maximum m never
        // moves, so a factor of 1 is exact there.
        correction.setOnes(mNew.size());
        state.l += p.rowwise().sum();
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
    template void normaliseRows<Scalar>(const RowState<Scalar>&, Eigen::Ref<MatrixT<Scalar>>);

FLASHVIZ_INSTANTIATE(float)
FLASHVIZ_INSTANTIATE(double)

} // namespace flashviz
