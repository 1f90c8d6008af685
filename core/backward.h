#pragma once
// FlashAttention-2's backward pass (Dao 2023, Algorithm 2) and the gradients it is checked
// against. The forward leaves O and one log-sum-exp L = m + log ℓ per row; a pre-pass computes
// D_i = rowsum(dO_i ∘ O_i); then key blocks are outer (K_j, V_j and the dK_j, dV_j accumulators
// stay on chip) and query blocks inner: S and P are recomputed from L instead of read back, and
// dQ_i is read, added to and written back in HBM at every tile.
#include "core/check.h"
#include "core/counters.h"
#include "core/options.h"
#include "core/problem.h"
#include "core/tile_update.h" // TilePlace

#include <cstdint>
#include <string>
#include <vector>

namespace flashviz {

// The upstream gradient dO (n_q x d): all ones, or N(0, 1) drawn from the problem's seed on a
// stream of its own (the same seed gives the same dO on every machine and every face).
Matrix upstreamGradient(const ProblemSpec& spec, const BackwardOptions& options);
// The problem's dO: the file's when one gives it (Problem::upstream), else the one above. A dO
// file with onesUpstream asks for two and is refused (EngineError).
Matrix upstreamGradient(const Problem& problem, const BackwardOptions& options);

// The three gradients, in one precision.
template <typename Scalar>
struct GradientsT {
    MatrixT<Scalar> dq; // n_q x d
    MatrixT<Scalar> dk; // n_k x d
    MatrixT<Scalar> dv; // n_k x d
};
using Gradients = GradientsT<double>;

// What the forward saves for the backward: O, and per row the log-sum-exp L = m + log ℓ
// (-inf for a row that sees no key) and the final running maximum m, which the bug
// "P from the running maximum alone" subtracts instead of L.
template <typename Scalar>
struct ForwardSavedT {
    MatrixT<Scalar> o;
    VectorT<Scalar> lse;
    VectorT<Scalar> m;
    // The row offset P is recomputed against: L, or m with the bug.
    const VectorT<Scalar>& offset(const BackwardOptions& options) const {
        return options.useLogSumExp ? lse : m;
    }
};
template <typename Scalar>
ForwardSavedT<Scalar> forwardSaved(const MatrixT<Scalar>& o, const VectorT<Scalar>& m,
                                   const VectorT<Scalar>& l);

// D = rowsum(dO ∘ O), the pre-pass.
template <typename Scalar>
VectorT<Scalar> rowDots(const MatrixT<Scalar>& dO, const MatrixT<Scalar>& o);

// One (key block, query block) tile of the backward: everything computed on chip. This is the
// only place the backward's arithmetic is written; the full pass, the step engine and the CUDA
// mirror kernel's CPU counterpart all call it.
template <typename Scalar>
struct BackwardTile {
    MatrixT<Scalar> scores;   // S_ij = scale · Q_i K_jᵀ, -inf where the causal mask hides a key
    MatrixT<Scalar> weights;  // P_ij = exp(S_ij - L_i), the softmax itself, recomputed
    MatrixT<Scalar> dWeights; // dP_ij = dO_i V_jᵀ
    MatrixT<Scalar> dScores;  // dS_ij = P_ij ∘ (dP_ij - D_i)
};

// Recomputes S and P (with storeWeights: P as the forward stored it, exactly softmax, whatever
// the recompute bugs say), then dP and dS, as the switches in `options` say.
template <typename Scalar>
void computeBackwardTile(const Eigen::Ref<const MatrixT<Scalar>>& qTile,
                         const Eigen::Ref<const MatrixT<Scalar>>& kTile,
                         const Eigen::Ref<const MatrixT<Scalar>>& vTile,
                         const Eigen::Ref<const MatrixT<Scalar>>& dOTile,
                         const Eigen::Ref<const VectorT<Scalar>>& lseTile,
                         const Eigen::Ref<const VectorT<Scalar>>& offsetTile,
                         const Eigen::Ref<const VectorT<Scalar>>& deltaTile, Scalar scale,
                         const TilePlace& place, const BackwardOptions& options,
                         BackwardTile<Scalar>& tile);

// dV_j += P_ijᵀ dO_i
template <typename Scalar>
void addValueGradient(Eigen::Ref<MatrixT<Scalar>> dv, const BackwardTile<Scalar>& tile,
                      const Eigen::Ref<const MatrixT<Scalar>>& dOTile);
// dK_j += scale · dS_ijᵀ Q_i
template <typename Scalar>
void addKeyGradient(Eigen::Ref<MatrixT<Scalar>> dk, const BackwardTile<Scalar>& tile,
                    const Eigen::Ref<const MatrixT<Scalar>>& qTile, Scalar scale);
// dQ_i += scale · dS_ij K_j (overwritten instead with the bug accumulateDq = false)
template <typename Scalar>
void applyQueryGradient(Eigen::Ref<MatrixT<Scalar>> dq, const BackwardTile<Scalar>& tile,
                        const Eigen::Ref<const MatrixT<Scalar>>& kTile, Scalar scale,
                        const BackwardOptions& options);

// The backward's values after one (key block, query block) tile: dQ_i as written back to HBM,
// and the dK_j, dV_j accumulators on chip.
struct BackwardTileTrace {
    int keyBlock = 0;
    int queryBlock = 0;
    Range rows, cols;
    Matrix dQ; // rows x d
    Matrix dK; // cols x d
    Matrix dV; // cols x d
};

struct BackwardTrace {
    std::vector<BackwardTileTrace> tiles; // in the order the backend processed them
    const BackwardTileTrace* find(int keyBlock, int queryBlock) const;
};

template <typename Scalar>
struct BackwardOutputT {
    GradientsT<Scalar> grads;
    VectorT<Scalar> delta; // D, from the pre-pass
    Counters counters;     // the backward alone (the forward's are its own)
};
using BackwardResult = BackwardOutputT<double>;

// The tiled backward given the forward's saved O, L and m.
template <typename Scalar>
BackwardOutputT<Scalar> flashBackward(const MatrixT<Scalar>& q, const MatrixT<Scalar>& k,
                                      const MatrixT<Scalar>& v, const MatrixT<Scalar>& dO,
                                      const ForwardSavedT<Scalar>& saved, double scale,
                                      bool causal, const FlashOptions& options,
                                      BackwardTrace* trace = nullptr);

// The forward (with the options' forward switches) and then the backward, in the problem's
// precision; results widened to double.
// `trace`, when given, receives every tile's values (what a backend's backwardTrace returns).
BackwardResult flashBackward(const Problem& problem, const Matrix& dO, const FlashOptions& options,
                             BackwardTrace* trace = nullptr);

// Ordinary attention's gradients in closed form, in double: P dense, dV = Pᵀ dO, dP = dO Vᵀ,
// dS = P ∘ (dP - rowsum(dP ∘ P)), dQ = scale · dS K, dK = scale · dSᵀ Q. Refuses
// (EngineError::OutOfMemory) an n_q x n_k this machine cannot hold.
Gradients referenceGradients(const Problem& problem, const Matrix& dO);

// The three gradients against the reference: dQ's rows are query rows, dK's and dV's key rows.
struct GradientCheck {
    CheckReport dq, dk, dv;
    bool passed() const { return dq.passed() && dk.passed() && dv.passed(); }
    std::string summary() const; // "PASS  dQ 1.2e-16, dK 3.4e-16, dV 2.2e-16 ..." / "FAIL  dQ ..."
};
GradientCheck compareGradients(const Gradients& grads, const Gradients& reference, double tolerance);

// The counting model for the backward, in closed form (tests hold it equal to what the pass
// and the step engine count). The forward's traffic is not included.
Counters flashBackwardCounts(int queries, int keys, int headDim, bool causal,
                             const FlashOptions& options);

// FlashAttention's trade, both sides counted alike for one problem: the backward recomputing S
// and P, and the same backward reading back a P the forward stored, which also costs the
// forward's write of that n_q x n_k P (the backward's own counters hold only its read).
struct BackwardTrade {
    Counters recompute, stored;
    std::uint64_t recomputeKept = 0, storedKept = 0; // elements the forward leaves in HBM
};
BackwardTrade backwardTrade(int queries, int keys, int headDim, bool causal,
                            const FlashOptions& options);

// What sits on chip while a tile is processed: K_j, V_j, dK_j, dV_j; Q_i, dO_i, dQ_i; L_i (not
// with storeWeights: P is read, not recomputed), D_i; the S/P tile and the dP/dS tile.
std::uint64_t backwardWorkingSetElements(int rows, int cols, int headDim,
                                         const BackwardOptions& options);

// What the forward leaves in HBM for the backward to read, in elements: Q, K, V, O and L (one
// float per row, FlashAttention-2), plus the whole P with storeWeights.
std::uint64_t backwardStoredElements(int queries, int keys, int headDim,
                                     const BackwardOptions& options);

} // namespace flashviz
