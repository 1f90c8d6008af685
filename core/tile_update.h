#pragma once
// One step of FlashAttention's inner loop: a query block meets a key block. This is the only
// place the online-softmax arithmetic is written; the forward pass, the step engine and the
// CUDA kernels' CPU counterpart all call it.
#include "core/options.h"
#include "core/types.h"

#include <cstdint>

namespace flashviz {

// The arithmetic an update performs outside its two matmuls, one count per element operation as
// it runs: a reduction over k values counts k (each value folded into the running result). What
// FlashAttention-2 changed is counted with it (core/flash_versions.h has the closed forms).
struct NonMatmulFlops {
    std::uint64_t exp = 0;      // exponentials, and -2's logarithm for the log-sum-exp
    std::uint64_t max = 0;      // comparisons for the row maxima
    std::uint64_t add = 0;      // subtracting the maximum, row sums, adds outside a matmul
    std::uint64_t multiply = 0; // the score scale, rescales by a correction factor
    std::uint64_t divide = 0;   // divisions by l
    std::uint64_t total() const { return exp + max + add + multiply + divide; }
    NonMatmulFlops& operator+=(const NonMatmulFlops& other);
    bool operator==(const NonMatmulFlops&) const = default;
};

// Running statistics of one query block: m, l per row and the unnormalised output.
template <typename Scalar>
struct RowState {
    VectorT<Scalar> m;
    VectorT<Scalar> l;
    MatrixT<Scalar> acc;
    // m = -inf (0 without a running max: nothing is ever subtracted), l = 0, acc = 0
    void reset(int rows, int headDim, bool runningMax = true);
};

// What one update computed, kept for display; the forward pass does not ask for it.
template <typename Scalar>
struct TileDetail {
    MatrixT<Scalar> scores;  // scale * Q_i K_j^T, -inf where the causal mask hides a key
    MatrixT<Scalar> weights; // exp(scores - m_new), the unnormalised P
    VectorT<Scalar> mOld, mNew, lOld, lNew, correction;
    MatrixT<Scalar> accOld, accNew;
};

// Where the tile sits in the whole problem (needed for the causal mask).
struct TilePlace {
    Range rows;
    Range cols;
    int queries = 0;
    int keys = 0;
    bool causal = false;
    bool fullyVisible() const; // no entry of the tile is masked
    bool fullyMasked() const;  // every entry is masked: the tile is skipped
};

template <typename Scalar>
struct TileWorkspace {
    MatrixT<Scalar> scores;
    MatrixT<Scalar> weights;
    VectorT<Scalar> mNew;
    VectorT<Scalar> correction;
    MatrixT<Scalar> product; // FlashAttention-1's P~ V, before it is mixed into O
};

// Applies key block (kTile, vTile) to the query block's state. `detail` may be null; `tally`, when
// given, gains the non-matmul operations this update performed.
template <typename Scalar>
void updateTile(RowState<Scalar>& state, const Eigen::Ref<const MatrixT<Scalar>>& qTile,
                const Eigen::Ref<const MatrixT<Scalar>>& kTile,
                const Eigen::Ref<const MatrixT<Scalar>>& vTile, Scalar scale,
                const TilePlace& place, const FlashOptions& options,
                TileWorkspace<Scalar>& workspace, TileDetail<Scalar>* detail = nullptr,
                NonMatmulFlops* tally = nullptr);

// FlashAttention-1's update as its paper writes it (Algorithm 1, lines 9-12): the tile's own
// maximum m~ and sum l~ first, then O = diag(l_new)^-1 (diag(l_old) e^(m_old - m_new) O +
// e^(m~ - m_new) P~ V), so that `state.acc` holds the normalised O after every key block. The
// correct algorithm only: the bug switches act on FlashAttention-2's update above.
template <typename Scalar>
void updateTileNormalised(RowState<Scalar>& state, const Eigen::Ref<const MatrixT<Scalar>>& qTile,
                          const Eigen::Ref<const MatrixT<Scalar>>& kTile,
                          const Eigen::Ref<const MatrixT<Scalar>>& vTile, Scalar scale,
                          const TilePlace& place, TileWorkspace<Scalar>& workspace,
                          NonMatmulFlops* tally = nullptr);

// O = acc / l; a row with l = 0 (no visible key) gives 0.
template <typename Scalar>
void normaliseRows(const RowState<Scalar>& state, Eigen::Ref<MatrixT<Scalar>> out,
                   NonMatmulFlops* tally = nullptr);

} // namespace flashviz
