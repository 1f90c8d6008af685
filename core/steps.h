#pragma once
// The algorithms as a sequence of steps fine enough to animate. The state at step k is computed
// from (problem, algorithm, options, k) alone: no history is kept, stepping back costs the same
// as stepping forward, and memory stays O(tile).
#include "core/counters.h"
#include "core/flash.h"
#include "core/options.h"
#include "core/problem.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flashviz {

// Steps are numbered with int everywhere they are shown (the CLI, the window's slider, the
// lecture beats): a run has at most this many steps, 0 .. kMaxStepCount - 1. Problems with more
// are refused up front (countSteps/validateSteps), never built.
inline constexpr std::int64_t kMaxStepCount = std::numeric_limits<int>::max();
// Laying out the backward's steps runs the forward and the backward once; past this many FLOPs
// (n = 16384, d = 64 takes about 2.4e11) it is refused rather than left running for minutes.
inline constexpr double kMaxBackwardLayoutFlops = 1e12;

enum class StepKind {
    // FlashAttention
    InitialiseOutput, // paper order only: O = 0, m = -inf, l = 0 written to HBM
    LoadQuery,        // Q_i: HBM -> SRAM
    LoadKeyValue,     // K_j, V_j: HBM -> SRAM
    LoadRunningState, // paper order only: O_i, m_i, l_i: HBM -> SRAM
    ComputeScores,    // S_ij = scale * Q_i K_j^T, on chip
    UpdateMax,        // m_new = max(m_old, rowmax S_ij)
    ComputeWeights,   // P_ij = exp(S_ij - m_new)
    UpdateSum,        // l_new = exp(m_old - m_new) l_old + rowsum P_ij
    UpdateOutput,     // acc = exp(m_old - m_new) acc + P_ij V_j
    StoreRunningState, // paper order only: O_i, m_i, l_i: SRAM -> HBM
    Normalise,        // O_i = acc / l
    StoreOutput,      // O_i: SRAM -> HBM
    // Standard attention
    ReadInputs,       // Q, K, V from HBM
    WriteScores,      // S (n x n) to HBM
    ReadScores,       // S back for the softmax
    ComputeSoftmax,   // P = softmax(S)
    WriteWeights,     // P (n x n) to HBM
    ReadWeights,      // P back for P V
    ComputeOutput,    // O = P V
    WriteOutput,      // O to HBM
    // FlashAttention-2's backward (LoadKeyValue also zeroes dK_j, dV_j on chip)
    ComputeRowDots,          // the pre-pass: D = rowsum(dO ∘ O), O and dO read, D written
    InitialiseQueryGradient, // dQ = 0 written to HBM
    LoadQueryGradient,       // Q_i, dO_i, L_i, D_i: HBM -> SRAM
    RecomputeScores,         // S_ij = scale * Q_i K_j^T, again
    RecomputeWeights,        // P_ij = exp(S_ij - L_i)
    ReadStoredWeights,       // with storeWeights: P_ij read from HBM instead of the two above
    UpdateValueGradient,     // dV_j += P_ij^T dO_i
    ComputeWeightGradient,   // dP_ij = dO_i V_j^T
    ComputeScoreGradient,    // dS_ij = P_ij ∘ (dP_ij - D_i)
    UpdateQueryGradient,     // dQ_i += scale * dS_ij K_j: read, added to, written back in HBM
    UpdateKeyGradient,       // dK_j += scale * dS_ij^T Q_i
    StoreKeyValueGradient,   // dK_j, dV_j: SRAM -> HBM
};
// Where a backward step stands in its tile, to tell which values exist yet: 0 LoadQueryGradient,
// then S, P (recomputed or read), dV, dP, dS, dQ, dK at 1..7; -1 outside a tile.
int backwardPhaseOf(StepKind kind);
// The last kind, for loops over every kind (a new kind goes before it or becomes it).
inline constexpr StepKind kLastStepKind = StepKind::StoreKeyValueGradient;
const char* toString(StepKind kind);
// Which way a step moves data across the HBM bus, by its kind alone (the debug copy of S that
// ComputeScores also writes with keepFullScores is the option's, not the kind's).
enum class HbmTraffic { None, Read, Write, ReadWrite };
HbmTraffic hbmTrafficOf(StepKind kind);
// Standard attention runs as three kernels, each writing its whole result to HBM: S = scale·QKᵀ,
// P = softmax(S), O = PV. The kernel a step of standard attention belongs to; std::nullopt for
// the kinds only FlashAttention takes.
enum class StandardKernel { Scores, Softmax, Output };
std::optional<StandardKernel> standardKernelOf(StepKind kind);
// A sentence for the status bar and the narration, as the step computes with these options:
// with the rescale or the running maximum switched off it says what is skipped. The kinds both
// algorithms take (ComputeScores) say where their result goes: FlashAttention keeps its tile on
// chip, standard attention's whole S is bound for HBM.
std::string describe(StepKind kind, const FlashOptions& options = {},
                     Algorithm algorithm = Algorithm::Flash);

struct StepInfo;
// Which blocks a step concerns, in words, for the faces that print a step: "query block 1 (rows
// 4–7), key block 0 (keys 0–3)", "key block 0 (keys 0–3)", "query block 1 (rows 4–7)", "all
// query rows 0–7" (the paper order's initial O, m, ℓ), "the whole matrices" (standard
// attention). Never a block -1.
std::string describeBlocks(const StepInfo& info, Algorithm algorithm);

struct StepInfo {
    int index = 0;
    StepKind kind = StepKind::LoadQuery;
    int queryBlock = -1; // -1 when the step concerns no single query block
    int keyBlock = -1;   // -1 when no key block is involved
    Range rows;          // query rows of the tile
    Range cols;          // keys of the tile
    bool lastKeyBlock = false; // the final key block for this query block (backward: dQ_i is final)
    bool operator==(const StepInfo&) const = default;
};

struct StepState {
    StepInfo info;
    Counters counters;               // totals through this step, inclusive
    std::uint64_t sramElements = 0;  // the on-chip working set at this step
    // Flash tiles (empty for standard attention and before the tile exists)
    Matrix query, key, value;
    Matrix scores, weights;
    Vector mOld, mNew, lOld, lNew, correction;
    Matrix accOld, accNew;
    Matrix output; // the rows of O once normalised (Normalise, StoreOutput or the last paper step)
    // The backward's (empty for the forward). Rows of the query block: dO, L, D, and dQ_i in HBM
    // before and after this step (the pre-pass: dO, O in `output` and D for every row). On chip
    // for the key block: dK_j, dV_j before and after.
    Matrix dO;
    Vector lse, delta;
    Matrix dP, dS;
    Matrix dQOld, dQNew, dKOld, dKNew, dVOld, dVNew;
};

// How many steps the algorithm takes on problems of these sizes, counted in 64 bits in
// O(query blocks) from the sizes alone (no inputs are made). Throws EngineError for an invalid
// spec or options.
std::int64_t countSteps(const ProblemSpec& spec, Algorithm algorithm, const FlashOptions& options);

// Throws EngineError (LimitExceeded) when countSteps() is past kMaxStepCount: "... gives N
// steps; the step view handles at most M; use larger blocks", or when the backward's layout
// would pass kMaxBackwardLayoutFlops. Cheap: call it before any heavy work (making the inputs,
// the scene).
void validateSteps(const ProblemSpec& spec, Algorithm algorithm, const FlashOptions& options);

// A step written as text, as the command lines, presets and lecture beats take it: a step
// number K, "end", "first-rescale", or either name followed by +K or -K. K is decimal digits
// only, below kMaxStepCount.
struct StepExpression {
    enum class Anchor { Number, End, FirstRescale };
    Anchor anchor = Anchor::Number;
    std::int64_t value = 0; // the step (Number) or the offset from the anchor
    bool operator==(const StepExpression&) const = default;
};
// Throws EngineError (InvalidArgument) naming the text, what is wrong and the forms allowed.
StepExpression parseStepExpression(std::string_view text);
// The step an expression names in a run of `stepCount` steps whose rescale first bites at
// `firstRescale`; std::nullopt for first-rescale when there is none. Exact (64-bit) arithmetic:
// the result may lie outside 0 .. stepCount - 1, and the caller clamps or refuses.
std::optional<std::int64_t> resolveStepExpression(const StepExpression& expression,
                                                  std::int64_t stepCount,
                                                  std::optional<int> firstRescale);

// What the backward's steps compute once, when they are laid out: dO, the forward's O, L, m, the
// pre-pass's D and checkpoints of the gradient sums (core/backward_steps.cpp).
struct BackwardStepData;

class StepEngine {
public:
    // Throws EngineError for invalid options and for runs of more than kMaxStepCount steps;
    // a problem already validated by makeProblem. Costs O(query blocks + key blocks); the
    // backward's costs one forward and one backward pass (its states need the forward's O and L
    // for every row), refused past kMaxBackwardLayoutFlops, calling `poll` between key blocks
    // (it may throw to stop).
    StepEngine(Problem problem, Algorithm algorithm, FlashOptions options,
               const std::function<void()>& poll = {});

    const Problem& problem() const { return m_problem; }
    Algorithm algorithm() const { return m_algorithm; }
    const FlashOptions& options() const { return m_options; }

    int stepCount() const { return m_stepCount; }
    int queryBlockCount() const;
    int keyBlockCount() const;
    int visibleKeyBlocks(int queryBlock) const; // causal: a prefix of the key blocks

    StepInfo info(int step) const; // cheap: index arithmetic only
    StepState state(int step) const; // recomputes the tile's query block up to this step
    Counters countersThrough(int step) const;
    Counters countersOf(const StepInfo& info) const; // what this step alone counts

    // The first step of an outer block (query block for QueryOuter, key block for KeyValueOuter).
    int firstStepOfOuterBlock(int outerBlock) const;
    int outerBlockCount() const;

    // Where the rescale bug first changes a value: the first UpdateSum at which some row's
    // running maximum rises after its sum became positive. std::nullopt when the bug is harmless
    // for this problem (every row's maximum sits in its first visible block).
    std::optional<int> firstRescaleStep() const;

    // The backward: the first step at which a bug switched on in the options changes a value:
    // step 0 when a forward switch changed O (the pre-pass reads it), else the backward's own (S
    // unmasked, P without ℓ, dS without D, dQ overwritten); std::nullopt when none is on or it
    // changes nothing here. Up to one pass over the tiles, where the sizes do not settle it.
    std::optional<int> firstBackwardBugStep() const;
    // The upstream gradient, the forward's L = m + log ℓ and the pre-pass's D for every row
    // (empty for the forward algorithms).
    const Matrix& upstreamGradient() const;
    const Vector& logSumExp() const;
    const Vector& rowDots() const;
    // How many tiles apart the backward keeps its sums: 1 while every sum fits in the 64 MB the
    // checkpoints may take, then growing with the tiles; a state replays at most this many tiles
    // for dK_j, dV_j and for dQ_i.
    int backwardCheckpointInterval() const;

private:
    struct Outer {
        int firstStep = 0;
        Counters countersBefore; // everything counted before this outer block starts
        // Paper order: the query blocks that see this key block are [firstQuery, queryBlockCount);
        // those in [firstQuery, endsBefore) see it last (and normalise after it).
        int firstQuery = 0;
        int endsBefore = 0;
    };
    int stepsInQueryBlock(int queryBlock) const;
    int stepsInKeyBlock(int keyBlock) const;
    StepInfo infoQueryOuter(int step) const;
    StepInfo infoKeyValueOuter(int step) const;
    StepInfo infoStandard(int step) const;
    Counters stepDelta(const StepInfo& info) const;
    Counters queryBlockTotals(int queryBlock) const;
    Counters keyBlockTotals(int keyBlock) const;
    std::uint64_t sramElementsAt(const StepInfo& info) const;
    int outerOf(int step) const;
    // The backward (core/backward_steps.cpp): key blocks outer.
    void setUpBackward(const std::function<void()>& poll);
    int stepsInBackwardKeyBlock(int keyBlock) const;
    StepInfo infoBackward(int step) const;
    Counters backwardStepDelta(const StepInfo& info) const;
    Counters backwardKeyBlockTotals(int keyBlock) const;
    void fillBackwardState(StepState& s) const;
    std::uint64_t backwardSramElementsAt(const StepInfo& info) const;

    Problem m_problem;
    Algorithm m_algorithm;
    FlashOptions m_options;
    std::vector<Outer> m_outer;
    std::vector<int> m_visibleBlocks; // per query block
    std::shared_ptr<const BackwardStepData> m_backward; // shared by copies: it never changes
    int m_stepCount = 0;
};

} // namespace flashviz
