#pragma once
// The tiled forward pass and standard attention, each counting its own traffic as it runs.
#include "core/counters.h"
#include "core/flash_versions.h"
#include "core/options.h"
#include "core/problem.h"

namespace flashviz {

template <typename Scalar>
struct FlashOutputT {
    MatrixT<Scalar> o;
    VectorT<Scalar> m; // final running maximum per query row
    VectorT<Scalar> l; // final running sum per query row
    // FlashAttention-2's one log-sum-exp per row, L = m + log l (-inf where l = 0); empty for -1,
    // which keeps m and l apart.
    VectorT<Scalar> lse;
    Counters counters;
    NonMatmulFlops nonMatmul; // counted tile by tile as the pass runs
    MatrixT<Scalar> fullScores; // n_q x n_k, filled only with keepFullScores
};

// FlashVersion::One refuses the bug switches (they belong to -2's update, tile_update.h).
template <typename Scalar>
FlashOutputT<Scalar> flashForward(const MatrixT<Scalar>& q, const MatrixT<Scalar>& k,
                                  const MatrixT<Scalar>& v, double scale, bool causal,
                                  const FlashOptions& options,
                                  FlashVersion version = FlashVersion::Two);

using FlashResult = FlashOutputT<double>;

// Runs in the problem's precision; results are widened to double for display and comparison.
FlashResult flashForward(const Problem& problem, const FlashOptions& options,
                         FlashVersion version = FlashVersion::Two);

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
