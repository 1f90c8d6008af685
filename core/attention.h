#pragma once
// Ordinary attention and the softmax variants the explainer contrasts.
#include "core/problem.h"
#include "core/tiling.h" // the causal rule: causallyVisible, lastVisibleKey

#include <vector>

namespace flashviz {

// Sets to -inf the scores a causal mask hides in the block of S starting at (rowBegin, colBegin).
template <typename Scalar>
void maskScores(MatrixT<Scalar>& scores, int rowBegin, int colBegin, int queries, int keys,
                bool causal);

// Row-wise softmax in place, each row's maximum subtracted; a row that is all -inf becomes 0.
template <typename Scalar>
void softmaxRows(MatrixT<Scalar>& scores);

// softmax(scale * Q K^T) V with each row's maximum subtracted (the reference FlashViz checks
// against). Rows with no visible key give 0.
template <typename Scalar>
MatrixT<Scalar> referenceAttention(const MatrixT<Scalar>& q, const MatrixT<Scalar>& k,
                                   const MatrixT<Scalar>& v, double scale, bool causal);

// The reference for a problem, always in double precision.
Matrix referenceAttention(const Problem& problem);

// Attention restricted to keys within `halfWidth` positions of the query: a cheaper, different
// function, the stand-in for the approximations FlashAttention replaced.
Matrix localWindowAttention(const Problem& problem, int halfWidth);

Vector safeSoftmax(const Vector& scores);  // max subtracted: finite for any finite input
Vector naiveSoftmax(const Vector& scores); // no max: overflows to inf, then NaN

struct OnlineSoftmaxBlock {
    Range range;
    double mOld, mNew, lOld, lNew, correction;
};
struct OnlineSoftmaxResult {
    Vector weights;
    std::vector<OnlineSoftmaxBlock> blocks;
};
// Streams one row in blocks keeping a running maximum m and sum l; `rescale` false drops
// l *= exp(m_old - m_new), the bug the explainer warns about.
OnlineSoftmaxResult onlineSoftmax(const Vector& scores, int block, bool rescale);

} // namespace flashviz
