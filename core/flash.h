#pragma once
// The tiled forward pass and standard attention, each counting its own traffic as it runs.
#include "core/counters.h"
#include "core/options.h"
#include "core/problem.h"

namespace flashviz {

template <typename Scalar>
struct FlashOutputT {
    MatrixT<Scalar> o;
    VectorT<Scalar> m; // final running maximum per query row
    VectorT<Scalar> l; // final running sum per query row
    Counters counters;
    MatrixT<Scalar> fullScores; // n_q x n_k, filled only with keepFullScores
};

template <typename Scalar>
FlashOutputT<Scalar> flashForward(const MatrixT<Scalar>& q, const MatrixT<Scalar>& k,
                                  const MatrixT<Scalar>& v, double scale, bool causal,
                                  const FlashOptions& options);

using FlashResult = FlashOutputT<double>;

// Runs in the problem's precision; results are widened to double for display and comparison.
FlashResult flashForward(const Problem& problem, const FlashOptions& options);

struct StandardResult {
    Matrix scores;  // S, n_q x n_k (masked entries -inf)
    Matrix weights; // P = softmax(S)
    Matrix o;
    Counters counters;
};
// Standard attention as three passes through HBM. Throws EngineError::OutOfMemory when S and P
// would not fit in this machine's memory.
StandardResult standardForward(const Problem& problem);

} // namespace flashviz
