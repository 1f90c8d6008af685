#pragma once
// The algorithms as a sequence of steps fine enough to animate. The state at step k is computed
// from (problem, algorithm, options, k) alone: no history is kept, stepping back costs the same
// as stepping forward, and memory stays O(tile).
#include "core/counters.h"
#include "core/flash.h"
#include "core/options.h"
#include "core/problem.h"

#include <optional>
#include <string>
#include <vector>

namespace flashviz {

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
};
const char* toString(StepKind kind);
// A sentence for the status bar and the narration, as the step computes with these options:
// with the rescale or the running maximum switched off it says what is skipped.
std::string describe(StepKind kind, const FlashOptions& options = {});

struct StepInfo {
    int index = 0;
    StepKind kind = StepKind::LoadQuery;
    int queryBlock = -1; // -1 when the step concerns no single query block
    int keyBlock = -1;   // -1 when no key block is involved
    Range rows;          // query rows of the tile
    Range cols;          // keys of the tile
    bool lastKeyBlock = false; // the final key block for this query block
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
};

class StepEngine {
public:
    // Throws EngineError for invalid options; a problem already validated by makeProblem.
    StepEngine(Problem problem, Algorithm algorithm, FlashOptions options);

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

    // The first step of an outer block (query block for QueryOuter, key block for KeyValueOuter).
    int firstStepOfOuterBlock(int outerBlock) const;
    int outerBlockCount() const;

    // Where the rescale bug first changes a value: the first UpdateSum at which some row's
    // running maximum rises after its sum became positive. std::nullopt when the bug is harmless
    // for this problem (every row's maximum sits in its first visible block).
    std::optional<int> firstRescaleStep() const;

private:
    struct Outer {
        int firstStep = 0;
        Counters countersBefore; // everything counted before this outer block starts
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

    Problem m_problem;
    Algorithm m_algorithm;
    FlashOptions m_options;
    std::vector<Outer> m_outer;
    std::vector<int> m_visibleBlocks; // per query block
    int m_stepCount = 0;
};

} // namespace flashviz
