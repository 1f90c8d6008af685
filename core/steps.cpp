#include "core/steps.h"

#include "core/attention.h"
#include "core/backward.h"
#include "core/errors.h"
#include "core/tile_update.h"
#include "core/tiling.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

namespace flashviz {

const char* toString(StepKind kind) {
    switch (kind) {
    case StepKind::InitialiseOutput: return "initialise-output";
    case StepKind::LoadQuery: return "load-query";
    case StepKind::LoadKeyValue: return "load-key-value";
    case StepKind::LoadRunningState: return "load-running-state";
    case StepKind::ComputeScores: return "compute-scores";
    case StepKind::UpdateMax: return "update-max";
    case StepKind::ComputeWeights: return "compute-weights";
    case StepKind::UpdateSum: return "update-sum";
    case StepKind::UpdateOutput: return "update-output";
    case StepKind::StoreRunningState: return "store-running-state";
    case StepKind::Normalise: return "normalise";
    case StepKind::StoreOutput: return "store-output";
    case StepKind::ReadInputs: return "read-inputs";
    case StepKind::WriteScores: return "write-scores";
    case StepKind::ReadScores: return "read-scores";
    case StepKind::ComputeSoftmax: return "compute-softmax";
    case StepKind::WriteWeights: return "write-weights";
    case StepKind::ReadWeights: return "read-weights";
    case StepKind::ComputeOutput: return "compute-output";
    case StepKind::WriteOutput: return "write-output";
    case StepKind::ComputeRowDots: return "compute-row-dots";
    case StepKind::InitialiseQueryGradient: return "initialise-query-gradient";
    case StepKind::LoadQueryGradient: return "load-query-gradient";
    case StepKind::RecomputeScores: return "recompute-scores";
    case StepKind::RecomputeWeights: return "recompute-weights";
    case StepKind::ReadStoredWeights: return "read-stored-weights";
    case StepKind::UpdateValueGradient: return "update-value-gradient";
    case StepKind::ComputeWeightGradient: return "compute-weight-gradient";
    case StepKind::ComputeScoreGradient: return "compute-score-gradient";
    case StepKind::UpdateQueryGradient: return "update-query-gradient";
    case StepKind::UpdateKeyGradient: return "update-key-gradient";
    case StepKind::StoreKeyValueGradient: return "store-key-value-gradient";
    }
    return "?";
}

HbmTraffic hbmTrafficOf(StepKind kind) {
    switch (kind) {
    case StepKind::LoadQuery:
    case StepKind::LoadKeyValue:
    case StepKind::LoadRunningState:
    case StepKind::ReadInputs:
    case StepKind::ReadScores:
    case StepKind::ReadWeights:
    case StepKind::LoadQueryGradient:
    case StepKind::ReadStoredWeights: return HbmTraffic::Read;
    case StepKind::InitialiseOutput:
    case StepKind::StoreRunningState:
    case StepKind::StoreOutput:
    case StepKind::WriteScores:
    case StepKind::WriteWeights:
    case StepKind::WriteOutput:
    case StepKind::InitialiseQueryGradient:
    case StepKind::StoreKeyValueGradient: return HbmTraffic::Write;
    case StepKind::ComputeRowDots:
    case StepKind::UpdateQueryGradient: return HbmTraffic::ReadWrite;
    default: return HbmTraffic::None;
    }
}

std::optional<StandardKernel> standardKernelOf(StepKind kind) {
    switch (kind) {
    case StepKind::ReadInputs:
    case StepKind::ComputeScores:
    case StepKind::WriteScores: return StandardKernel::Scores;
    case StepKind::ReadScores:
    case StepKind::ComputeSoftmax:
    case StepKind::WriteWeights: return StandardKernel::Softmax;
    case StepKind::ReadWeights:
    case StepKind::ComputeOutput:
    case StepKind::WriteOutput: return StandardKernel::Output;
    default: return std::nullopt;
    }
}

namespace {

std::string describeBackward(StepKind kind, const BackwardOptions& options) {
    switch (kind) {
    case StepKind::ComputeRowDots:
        return "The pre-pass: D = rowsum(dO ∘ O) for every row, from O and dO in HBM";
    case StepKind::InitialiseQueryGradient: return "dQ = 0 is written to HBM";
    case StepKind::LoadQueryGradient:
        return options.storeWeights ? "Q_i, dO_i and D_i are copied into SRAM"
                                    : "Q_i, dO_i, L_i and D_i are copied into SRAM";
    case StepKind::RecomputeScores:
        return options.maskRecompute
                   ? "S_ij = scale · Q_i K_jᵀ is recomputed on chip, not read back"
                   : "S_ij = scale · Q_i K_jᵀ is recomputed without the causal mask (the bug)";
    case StepKind::RecomputeWeights:
        return options.useLogSumExp
                   ? "P_ij = exp(S_ij − L_i): the softmax itself, from the stored L = m + log ℓ"
                   : "P_ij = exp(S_ij − m_i): the running maximum alone, without ℓ (the bug)";
    case StepKind::ReadStoredWeights: return "P_ij is read from HBM, where the forward stored it";
    case StepKind::UpdateValueGradient: return "dV_j += P_ijᵀ dO_i, on chip";
    case StepKind::ComputeWeightGradient: return "dP_ij = dO_i V_jᵀ";
    case StepKind::ComputeScoreGradient:
        return options.subtractRowDot ? "dS_ij = P_ij ∘ (dP_ij − D_i)"
                                      : "dS_ij = P_ij ∘ dP_ij: D_i is left out (the bug)";
    case StepKind::UpdateQueryGradient:
        return options.accumulateDq
                   ? "dQ_i is read from HBM, scale · dS_ij K_j added, and written back"
                   : "dQ_i = scale · dS_ij K_j is written over what was there (the bug)";
    case StepKind::UpdateKeyGradient: return "dK_j += scale · dS_ijᵀ Q_i, on chip";
    case StepKind::StoreKeyValueGradient: return "The finished dK_j and dV_j are written to HBM";
    default: return {};
    }
}

} // namespace

std::string describe(StepKind kind, const FlashOptions& options, Algorithm algorithm) {
    const bool noMax = !options.runningMax;
    const bool noRescale = options.runningMax && !options.rescale;
    switch (kind) {
    case StepKind::InitialiseOutput:
        return noMax ? "O = 0, m = 0, ℓ = 0 are written to HBM" : "O = 0, m = −∞, ℓ = 0 are written to HBM";
    case StepKind::LoadQuery: return "A block of queries Q_i is copied from HBM into SRAM";
    case StepKind::LoadKeyValue:
        return algorithm == Algorithm::Backward
                   ? "K_j and V_j are copied into SRAM, where dK_j and dV_j start at 0"
                   : "A block of keys K_j and values V_j is copied into SRAM";
    case StepKind::LoadRunningState: return "O_i, m_i and ℓ_i are read back from HBM";
    case StepKind::ComputeScores:
        return algorithm == Algorithm::Standard
                   ? "The whole score matrix S = scale · Q Kᵀ is computed; too large for the chip, "
                     "it is written to HBM next"
                   : "The score tile S_ij = scale · Q_i K_jᵀ is computed on chip";
    case StepKind::UpdateMax:
        return noMax ? "No running maximum: m stays 0, so exp(S) may overflow"
                     : "Each row's running maximum becomes max(m_old, max of the tile)";
    case StepKind::ComputeWeights:
        return noMax ? "Unnormalised weights P_ij = exp(S_ij), nothing subtracted"
                     : "Unnormalised weights P_ij = exp(S_ij − m_new)";
    case StepKind::UpdateSum:
        if (noMax) return "ℓ_new = ℓ_old + row sums of P_ij";
        return noRescale ? "ℓ_new = ℓ_old + row sums of P_ij: the rescale exp(m_old − m_new) is skipped (the bug)"
                         : "ℓ_new = exp(m_old − m_new) · ℓ_old + row sums of P_ij";
    case StepKind::UpdateOutput:
        if (noMax) return "O accumulator = O + P_ij V_j";
        return noRescale ? "O accumulator = O + P_ij V_j: the rescale exp(m_old − m_new) is skipped (the bug)"
                         : "O accumulator = exp(m_old − m_new) · O + P_ij V_j";
    case StepKind::StoreRunningState: return "O_i, m_i and ℓ_i are written back to HBM";
    case StepKind::Normalise: return "Each output row is divided by its ℓ, once, at the end";
    case StepKind::StoreOutput: return "The finished O_i is written to HBM";
    case StepKind::ReadInputs: return "Q, K and V are read from HBM";
    case StepKind::WriteScores: return "The whole n × n score matrix S is written to HBM";
    case StepKind::ReadScores: return "S is read back from HBM for the softmax";
    case StepKind::ComputeSoftmax: return "P = softmax(S), row by row";
    case StepKind::WriteWeights: return "The n × n weights P are written to HBM";
    case StepKind::ReadWeights: return "P is read back from HBM to multiply by V";
    case StepKind::ComputeOutput: return "O = P V";
    case StepKind::WriteOutput: return "O is written to HBM";
    default: return describeBackward(kind, options.backward);
    }
    return {};
}

namespace {

std::string rangeText(const Range& r) {
    return r.size() == 1 ? std::to_string(r.begin)
                         : std::to_string(r.begin) + "–" + std::to_string(r.end - 1);
}

} // namespace

std::string describeBlocks(const StepInfo& info, Algorithm algorithm) {
    if (algorithm == Algorithm::Standard) return "the whole matrices";
    const std::string query =
        "query block " + std::to_string(info.queryBlock) + " (rows " + rangeText(info.rows) + ")";
    const std::string key =
        "key block " + std::to_string(info.keyBlock) + " (keys " + rangeText(info.cols) + ")";
    if (info.queryBlock >= 0 && info.keyBlock >= 0) // the outer loop's block first
        return algorithm == Algorithm::Backward ? key + ", " + query : query + ", " + key;
    if (info.queryBlock >= 0) return query;
    if (info.keyBlock >= 0) return key;
    return "all query rows " + rangeText(info.rows);
}

namespace {

constexpr StepKind kTileSteps[] = {StepKind::ComputeScores, StepKind::UpdateMax,
                                   StepKind::ComputeWeights, StepKind::UpdateSum,
                                   StepKind::UpdateOutput};
constexpr int kTileStepCount = 5;

constexpr StepKind kStandardSteps[] = {
    StepKind::ReadInputs,  StepKind::ComputeScores, StepKind::WriteScores,
    StepKind::ReadScores,  StepKind::ComputeSoftmax, StepKind::WriteWeights,
    StepKind::ReadWeights, StepKind::ComputeOutput, StepKind::WriteOutput};
constexpr int kStandardStepCount = 9;

// The order of the phases within one (query block, key block) update, to tell which values
// exist yet at a given step.
int phaseOf(StepKind kind) {
    switch (kind) {
    case StepKind::ComputeScores: return 1;
    case StepKind::UpdateMax: return 2;
    case StepKind::ComputeWeights: return 3;
    case StepKind::UpdateSum: return 4;
    case StepKind::UpdateOutput: return 5;
    case StepKind::StoreRunningState:
    case StepKind::Normalise:
    case StepKind::StoreOutput: return 6;
    default: return 0;
    }
}

} // namespace

namespace {

// How many key blocks each query block sees (all of them, or a prefix when causal). The
// counts never fall from one query block to the next: the causal rule's last visible key grows
// with the row.
std::vector<int> visibleBlocksOf(const ProblemSpec& spec, const FlashOptions& options) {
    std::vector<int> visible(std::size_t(blockCount(spec.queries, options.blockRows)));
    for (std::size_t i = 0; i < visible.size(); ++i) {
        const Range rows = blockRange(int(i), options.blockRows, spec.queries);
        visible[i] = visibleKeyBlocks(rows, spec.queries, spec.keys, options.blockCols, spec.causal);
    }
    return visible;
}

// The step count in closed form from the visible blocks, in 64 bits. Query outer: per query
// block LoadQuery, (LoadKeyValue + 5 tile steps) per visible key block, Normalise, StoreOutput.
// Paper order: InitialiseOutput, per key block LoadKeyValue and per query block seeing it
// LoadQuery, LoadRunningState, 5 tile steps, StoreRunningState, plus Normalise after its last.
std::int64_t flashStepCount(const std::vector<int>& visible, int keyBlocks, LoopOrder order) {
    std::int64_t tiles = 0, seeing = 0;
    for (int v : visible) {
        tiles += v;
        seeing += v > 0 ? 1 : 0;
    }
    if (order == LoopOrder::QueryOuter)
        return 3 * std::int64_t(visible.size()) + (1 + kTileStepCount) * tiles;
    return 1 + std::int64_t(keyBlocks) + (3 + kTileStepCount) * tiles + seeing;
}

void requireStepCount(std::int64_t steps, const ProblemSpec& spec, Algorithm algorithm,
                      const FlashOptions& options) {
    if (steps <= kMaxStepCount) return;
    throw EngineError(ErrorKind::LimitExceeded,
                      "n_q = " + std::to_string(spec.queries) + ", n_k = " +
                          std::to_string(spec.keys) + " with Br = " +
                          std::to_string(options.blockRows) + " and Bc = " +
                          std::to_string(options.blockCols) + " (" + toString(algorithm) +
                          (algorithm == Algorithm::Flash ? std::string(", ") + toString(options.loopOrder)
                                                         : std::string()) +
                          ") gives " + std::to_string(steps) +
                          " steps; the step view handles at most " +
                          std::to_string(kMaxStepCount) + "; use larger blocks");
}

// Backward: the pre-pass and dQ = 0, per key block LoadKeyValue and StoreKeyValueGradient, per
// tile LoadQueryGradient and 7 steps (6 when P is read back instead of recomputed).
std::int64_t backwardStepCount(const std::vector<int>& visible, int keyBlocks,
                               const BackwardOptions& options) {
    std::int64_t tiles = 0;
    for (int v : visible) tiles += v;
    return 2 + 2 * std::int64_t(keyBlocks) + (options.storeWeights ? 7 : 8) * tiles;
}

void requireBackwardLayout(const ProblemSpec& spec, const FlashOptions& options) {
    const double flops =
        double(flashCounts(spec.queries, spec.keys, spec.headDim, spec.causal, options).flops) +
        double(flashBackwardCounts(spec.queries, spec.keys, spec.headDim, spec.causal, options).flops);
    if (flops <= kMaxBackwardLayoutFlops) return;
    char text[300];
    std::snprintf(text, sizeof text,
                  "n_q = %d, n_k = %d, d = %d: the backward's steps need the forward and the "
                  "backward run once (%.2g FLOPs), past the %.0e the step view takes; use a "
                  "smaller problem",
                  spec.queries, spec.keys, spec.headDim, flops, kMaxBackwardLayoutFlops);
    throw EngineError(ErrorKind::LimitExceeded, text);
}

} // namespace

std::int64_t countSteps(const ProblemSpec& spec, Algorithm algorithm, const FlashOptions& options) {
    validate(spec);
    validate(options);
    if (algorithm == Algorithm::Standard) return kStandardStepCount;
    if (algorithm == Algorithm::Backward)
        return backwardStepCount(visibleBlocksOf(spec, options),
                                 blockCount(spec.keys, options.blockCols), options.backward);
    return flashStepCount(visibleBlocksOf(spec, options),
                          blockCount(spec.keys, options.blockCols), options.loopOrder);
}

void validateSteps(const ProblemSpec& spec, Algorithm algorithm, const FlashOptions& options) {
    requireStepCount(countSteps(spec, algorithm, options), spec, algorithm, options);
    if (algorithm == Algorithm::Backward) requireBackwardLayout(spec, options);
}

StepEngine::StepEngine(Problem problem, Algorithm algorithm, FlashOptions options,
                       const std::function<void()>& poll)
    : m_problem(std::move(problem)), m_algorithm(algorithm), m_options(options) {
    validate(m_options);
    const auto& spec = m_problem.spec;
    if (m_algorithm == Algorithm::Standard) {
        requireScoreMatrixMemory(spec.queries, spec.keys, int(sizeof(double)), 2);
        m_outer.push_back({0, {}, 0, 0});
        m_stepCount = kStandardStepCount;
        return;
    }
    m_visibleBlocks = visibleBlocksOf(spec, m_options);
    if (m_algorithm == Algorithm::Backward) {
        requireStepCount(backwardStepCount(m_visibleBlocks, keyBlockCount(), m_options.backward),
                         spec, m_algorithm, m_options);
        requireBackwardLayout(spec, m_options);
        setUpBackward(poll);
        return;
    }
    // Refused before anything is laid out: every step index below fits in an int.
    requireStepCount(flashStepCount(m_visibleBlocks, keyBlockCount(), m_options.loopOrder), spec,
                     m_algorithm, m_options);
    int step = 0;
    Counters before;
    if (m_options.loopOrder == LoopOrder::KeyValueOuter) {
        before += stepDelta(StepInfo{0, StepKind::InitialiseOutput, -1, -1, {}, {}, false});
        step = 1;
    }
    const bool queryOuter = m_options.loopOrder == LoopOrder::QueryOuter;
    m_outer.reserve(std::size_t(outerBlockCount()));
    for (int outer = 0; outer < outerBlockCount(); ++outer) {
        Outer o{step, before, 0, 0};
        if (!queryOuter) {
            // The first query block whose visible prefix reaches past key block `outer`, and
            // the first whose prefix reaches past the next one.
            const auto first = std::upper_bound(m_visibleBlocks.begin(), m_visibleBlocks.end(), outer);
            const auto ends = std::upper_bound(first, m_visibleBlocks.end(), outer + 1);
            o.firstQuery = int(first - m_visibleBlocks.begin());
            o.endsBefore = int(ends - m_visibleBlocks.begin());
        }
        m_outer.push_back(o);
        step += queryOuter ? stepsInQueryBlock(outer) : stepsInKeyBlock(outer);
        before += queryOuter ? queryBlockTotals(outer) : keyBlockTotals(outer);
    }
    m_stepCount = step;
}

// What one outer block counts in all, in closed form, so that construction costs
// O(blocks) rather than O(steps); countersThrough() adds the steps of one block to it.
Counters StepEngine::queryBlockTotals(int queryBlock) const {
    const auto& spec = m_problem.spec;
    const std::uint64_t d = spec.headDim;
    const Range rows = blockRange(queryBlock, m_options.blockRows, spec.queries);
    const std::uint64_t r = rows.size();
    const std::uint64_t keys =
        std::min<std::uint64_t>(std::uint64_t(m_visibleBlocks[queryBlock]) * m_options.blockCols,
                                std::uint64_t(spec.keys));
    Counters c;
    c.read(r * d + 2 * keys * d);
    c.scratch(flashWorkingSetElements(rows.size(), spec.keys, spec.headDim, m_options));
    c.flops = 4 * r * d * keys;
    if (m_options.keepFullScores && keys > 0) {
        c.write(r * keys);
        c.scratch(std::uint64_t(spec.queries) * spec.keys);
    }
    c.write(r * d);
    return c;
}

// The query blocks seeing a key block are a suffix [firstQuery, queryBlockCount), so their rows
// are the rows from firstQuery * Br on, and what they count adds up in closed form.
Counters StepEngine::keyBlockTotals(int keyBlock) const {
    const auto& spec = m_problem.spec;
    const Outer& o = m_outer[std::size_t(keyBlock)];
    const std::uint64_t d = spec.headDim;
    const std::uint64_t cols = blockRange(keyBlock, m_options.blockCols, spec.keys).size();
    const std::uint64_t r =
        std::uint64_t(spec.queries - std::min(spec.queries, o.firstQuery * m_options.blockRows));
    Counters c;
    c.read(2 * cols * d);
    if (r == 0) return c;
    c.read(r * d + r * d + 2 * r);
    c.flops += 4 * r * d * cols;
    if (m_options.keepFullScores) {
        c.write(r * cols);
        c.scratch(std::uint64_t(spec.queries) * spec.keys);
    }
    c.write(r * d + 2 * r);
    return c;
}

int StepEngine::queryBlockCount() const {
    return blockCount(m_problem.spec.queries, m_options.blockRows);
}

int StepEngine::keyBlockCount() const { return blockCount(m_problem.spec.keys, m_options.blockCols); }

int StepEngine::visibleKeyBlocks(int queryBlock) const {
    return m_algorithm == Algorithm::Standard ? keyBlockCount() : m_visibleBlocks.at(queryBlock);
}

int StepEngine::outerBlockCount() const {
    if (m_algorithm == Algorithm::Standard) return 1;
    if (m_algorithm == Algorithm::Backward) return keyBlockCount();
    return m_options.loopOrder == LoopOrder::QueryOuter ? queryBlockCount() : keyBlockCount();
}

int StepEngine::firstStepOfOuterBlock(int outerBlock) const {
    return m_outer.at(outerBlock).firstStep;
}

int StepEngine::stepsInQueryBlock(int queryBlock) const {
    return 3 + (1 + kTileStepCount) * m_visibleBlocks[queryBlock];
}

int StepEngine::stepsInKeyBlock(int keyBlock) const {
    const Outer& o = m_outer[std::size_t(keyBlock)];
    // LoadKeyValue, then 8 steps per query block seeing it and a Normalise for those ending here.
    return 1 + (3 + kTileStepCount) * (queryBlockCount() - o.firstQuery) +
           (o.endsBefore - o.firstQuery);
}

int StepEngine::outerOf(int step) const {
    auto it = std::upper_bound(m_outer.begin(), m_outer.end(), step,
                               [](int s, const Outer& o) { return s < o.firstStep; });
    return int(it - m_outer.begin()) - 1;
}

StepInfo StepEngine::info(int step) const {
    if (step < 0 || step >= m_stepCount)
        throw EngineError(ErrorKind::InvalidArgument,
                          "Step " + std::to_string(step) + " is outside 0.." +
                              std::to_string(m_stepCount - 1));
    if (m_algorithm == Algorithm::Standard) return infoStandard(step);
    if (m_algorithm == Algorithm::Backward) return infoBackward(step);
    if (m_options.loopOrder == LoopOrder::QueryOuter) return infoQueryOuter(step);
    return infoKeyValueOuter(step);
}

StepInfo StepEngine::infoStandard(int step) const {
    const auto& spec = m_problem.spec;
    return {step, kStandardSteps[step], -1, -1, {0, spec.queries}, {0, spec.keys}, false};
}

StepInfo StepEngine::infoQueryOuter(int step) const {
    const auto& spec = m_problem.spec;
    const int i = outerOf(step);
    const int offset = step - m_outer[i].firstStep;
    StepInfo info{step, StepKind::LoadQuery, i, -1,
                  blockRange(i, m_options.blockRows, spec.queries), {}, false};
    const int visible = m_visibleBlocks[i];
    if (offset == 0) return info;
    const int tileSteps = (1 + kTileStepCount) * visible;
    if (offset > tileSteps) {
        info.kind = offset == tileSteps + 1 ? StepKind::Normalise : StepKind::StoreOutput;
        return info;
    }
    const int j = (offset - 1) / (1 + kTileStepCount);
    const int phase = (offset - 1) % (1 + kTileStepCount);
    info.kind = phase == 0 ? StepKind::LoadKeyValue : kTileSteps[phase - 1];
    info.keyBlock = j;
    info.cols = blockRange(j, m_options.blockCols, spec.keys);
    info.lastKeyBlock = j == visible - 1;
    return info;
}

StepInfo StepEngine::infoKeyValueOuter(int step) const {
    const auto& spec = m_problem.spec;
    if (step == 0) return {0, StepKind::InitialiseOutput, -1, -1, {0, spec.queries}, {}, false};
    const int j = outerOf(step);
    const Outer& o = m_outer[std::size_t(j)];
    StepInfo info{step, StepKind::LoadKeyValue, -1, j, {},
                  blockRange(j, m_options.blockCols, spec.keys), false};
    int offset = step - o.firstStep;
    if (offset == 0) return info;
    --offset;
    // The query blocks ending at this key block come first (9 steps each), then the rest (8).
    constexpr int kWithNormalise = 4 + kTileStepCount, kWithout = 3 + kTileStepCount;
    const int ending = o.endsBefore - o.firstQuery;
    int i = 0;
    bool last = false;
    if (offset < ending * kWithNormalise) {
        i = o.firstQuery + offset / kWithNormalise;
        offset %= kWithNormalise;
        last = true;
    } else {
        offset -= ending * kWithNormalise;
        i = o.endsBefore + offset / kWithout;
        offset %= kWithout;
    }
    if (i >= queryBlockCount())
        throw EngineError(ErrorKind::InvalidArgument, "Step index past the end of its key block");
    info.queryBlock = i;
    info.rows = blockRange(i, m_options.blockRows, spec.queries);
    info.lastKeyBlock = last;
    if (offset == 0) info.kind = StepKind::LoadQuery;
    else if (offset == 1) info.kind = StepKind::LoadRunningState;
    else if (offset < 2 + kTileStepCount) info.kind = kTileSteps[offset - 2];
    else if (last && offset == 2 + kTileStepCount) info.kind = StepKind::Normalise;
    else info.kind = StepKind::StoreRunningState;
    return info;
}

Counters StepEngine::stepDelta(const StepInfo& info) const {
    if (m_algorithm == Algorithm::Backward) return backwardStepDelta(info);
    const auto& spec = m_problem.spec;
    const std::uint64_t d = spec.headDim;
    const std::uint64_t rows = info.rows.size(), cols = info.cols.size();
    const std::uint64_t nq = spec.queries, nk = spec.keys;
    const std::uint64_t state = rows * d + 2 * rows; // O_i, m_i, l_i in the paper's order
    Counters c;
    switch (info.kind) {
    case StepKind::InitialiseOutput:
        c.write(nq * d + 2 * nq);
        c.scratch(flashWorkingSetElements(spec.queries, spec.keys, spec.headDim, m_options));
        break;
    case StepKind::LoadQuery:
        c.read(rows * d);
        if (m_options.loopOrder == LoopOrder::QueryOuter)
            c.scratch(flashWorkingSetElements(int(rows), spec.keys, spec.headDim, m_options));
        break;
    case StepKind::LoadKeyValue: c.read(2 * cols * d); break;
    case StepKind::LoadRunningState: c.read(state); break;
    case StepKind::ComputeScores:
        if (m_algorithm == Algorithm::Standard) {
            c.matmul(nq, d, nk);
            break;
        }
        c.matmul(rows, d, cols);
        if (m_options.keepFullScores) {
            c.write(rows * cols);
            c.scratch(nq * nk);
        }
        break;
    case StepKind::UpdateOutput: c.matmul(rows, cols, d); break;
    case StepKind::StoreRunningState: c.write(state); break;
    case StepKind::StoreOutput: c.write(rows * d); break;
    case StepKind::ReadInputs: c.read(nq * d + 2 * nk * d); break;
    case StepKind::WriteScores:
        c.write(nq * nk);
        c.scratch(nq * nk);
        break;
    case StepKind::ReadScores:
    case StepKind::ReadWeights: c.read(nq * nk); break;
    case StepKind::WriteWeights: c.write(nq * nk); break;
    case StepKind::ComputeOutput: c.matmul(nq, nk, d); break;
    case StepKind::WriteOutput: c.write(nq * d); break;
    default: break;
    }
    return c;
}

Counters StepEngine::countersOf(const StepInfo& info) const {
    return stepDelta(info);
}

Counters StepEngine::countersThrough(int step) const {
    const int outer = outerOf(step);
    Counters c = outer >= 0 ? m_outer[outer].countersBefore : Counters{};
    for (int s = outer >= 0 ? m_outer[outer].firstStep : 0; s <= step; ++s) c += stepDelta(info(s));
    return c;
}

namespace {

// Replays one query block's updates in the problem's precision, keeping the detail of one.
template <typename Scalar>
struct BlockReplay {
    RowState<Scalar> state;
    TileDetail<Scalar> detail;
    MatrixT<Scalar> output;
};

template <typename Scalar>
BlockReplay<Scalar> replayQueryBlock(const Problem& problem, const FlashOptions& options,
                                     Range rows, int keyBlocks, int detailBlock, bool normalise) {
    const auto& spec = problem.spec;
    const MatrixT<Scalar> q = problem.q.middleRows(rows.begin, rows.size()).cast<Scalar>();
    BlockReplay<Scalar> r;
    r.state.reset(rows.size(), spec.headDim, options.runningMax);
    TileWorkspace<Scalar> ws;
    for (int j = 0; j < keyBlocks; ++j) {
        const Range cols = blockRange(j, options.blockCols, spec.keys);
        const MatrixT<Scalar> k = problem.k.middleRows(cols.begin, cols.size()).cast<Scalar>();
        const MatrixT<Scalar> v = problem.v.middleRows(cols.begin, cols.size()).cast<Scalar>();
        const TilePlace place{rows, cols, spec.queries, spec.keys, spec.causal};
        updateTile<Scalar>(r.state, q, k, v, Scalar(problem.scale()), place, options, ws,
                           j == detailBlock ? &r.detail : nullptr);
    }
    if (normalise) {
        r.output.resize(rows.size(), spec.headDim);
        normaliseRows<Scalar>(r.state, r.output);
    }
    return r;
}

template <typename Scalar>
void fillFlashState(StepState& s, const Problem& problem, const FlashOptions& options,
                    int visibleBlocks) {
    const StepInfo& info = s.info;
    const int phase = phaseOf(info.kind);
    const bool inTile = info.keyBlock >= 0 && phase >= 1 && phase <= 5;
    const bool finished = info.kind == StepKind::Normalise || info.kind == StepKind::StoreOutput ||
                          (info.kind == StepKind::StoreRunningState && info.lastKeyBlock);
    // How many key blocks the running state has absorbed before (or, when done, after) this step.
    int replayed = info.keyBlock >= 0 ? info.keyBlock : 0;
    if (info.kind == StepKind::Normalise || info.kind == StepKind::StoreOutput)
        replayed = visibleBlocks;
    if (info.kind == StepKind::StoreRunningState) replayed = info.keyBlock + 1;
    const int detailBlock = inTile ? info.keyBlock : -1;
    const int keyBlocks = inTile ? info.keyBlock + 1 : replayed;
    const auto r = replayQueryBlock<Scalar>(problem, options, info.rows, keyBlocks, detailBlock,
                                            finished);

    s.query = problem.q.middleRows(info.rows.begin, info.rows.size());
    if (info.keyBlock >= 0 && info.kind != StepKind::LoadQuery &&
        info.kind != StepKind::LoadRunningState) {
        s.key = problem.k.middleRows(info.cols.begin, info.cols.size());
        s.value = problem.v.middleRows(info.cols.begin, info.cols.size());
    }
    if (!inTile) { // before or after the tile updates: only the running state exists
        s.mOld = s.mNew = r.state.m.template cast<double>();
        s.lOld = s.lNew = r.state.l.template cast<double>();
        s.accOld = s.accNew = r.state.acc.template cast<double>();
        if (finished) s.output = r.output.template cast<double>();
        return;
    }
    const auto& d = r.detail;
    s.mOld = d.mOld.template cast<double>();
    s.lOld = d.lOld.template cast<double>();
    s.accOld = d.accOld.template cast<double>();
    s.scores = d.scores.template cast<double>();
    if (phase >= 2) s.mNew = d.mNew.template cast<double>();
    if (phase >= 3) s.weights = d.weights.template cast<double>();
    if (phase >= 4) {
        s.lNew = d.lNew.template cast<double>();
        s.correction = d.correction.template cast<double>();
    }
    if (phase >= 5) s.accNew = d.accNew.template cast<double>();
}

} // namespace

StepState StepEngine::state(int step) const {
    StepState s;
    s.info = info(step);
    s.counters = countersThrough(step);
    if (m_algorithm == Algorithm::Standard) return s;
    if (m_algorithm == Algorithm::Backward) {
        s.sramElements = backwardSramElementsAt(s.info);
        fillBackwardState(s);
        return s;
    }
    s.sramElements = sramElementsAt(s.info);
    if (s.info.queryBlock < 0) return s;
    const int visible = m_visibleBlocks[s.info.queryBlock];
    if (m_problem.spec.precision == Precision::Double)
        fillFlashState<double>(s, m_problem, m_options, visible);
    else
        fillFlashState<float>(s, m_problem, m_options, visible);
    return s;
}

// What sits in SRAM at this step: the Q tile, m, l and the O accumulator for the block, plus the
// K and V tiles and the score tile while a key block is being processed.
std::uint64_t StepEngine::sramElementsAt(const StepInfo& info) const {
    const std::uint64_t cols = info.cols.size();
    const std::uint64_t d = m_problem.spec.headDim;
    const std::uint64_t rows = info.queryBlock >= 0 ? std::uint64_t(info.rows.size()) : 0;
    std::uint64_t elements = rows * d + 2 * rows + rows * d;
    const bool kvResident = info.keyBlock >= 0 &&
                            (m_options.loopOrder == LoopOrder::KeyValueOuter ||
                             info.kind != StepKind::LoadQuery);
    if (kvResident) elements += 2 * cols * d;
    if (phaseOf(info.kind) >= 1 && phaseOf(info.kind) <= 5) elements += rows * cols;
    return elements;
}

std::optional<int> StepEngine::firstRescaleStep() const {
    if (m_algorithm != Algorithm::Flash || !m_options.runningMax) return std::nullopt;
    FlashOptions correct = m_options;
    correct.rescale = true;
    const auto& spec = m_problem.spec;
    // The earliest (query block, key block) in execution order whose correction bites.
    std::optional<std::pair<int, int>> first; // (outer, inner) in loop order
    for (int i = 0; i < queryBlockCount(); ++i) {
        const Range rows = blockRange(i, m_options.blockRows, spec.queries);
        RowState<double> state;
        state.reset(rows.size(), spec.headDim, true);
        TileWorkspace<double> ws;
        TileDetail<double> detail;
        const Matrix q = m_problem.q.middleRows(rows.begin, rows.size());
        for (int j = 0; j < m_visibleBlocks[i]; ++j) {
            const Range cols = blockRange(j, m_options.blockCols, spec.keys);
            updateTile<double>(state, q, m_problem.k.middleRows(cols.begin, cols.size()),
                               m_problem.v.middleRows(cols.begin, cols.size()), m_problem.scale(),
                               {rows, cols, spec.queries, spec.keys, spec.causal}, correct, ws,
                               &detail);
            const bool bites = ((detail.correction.array() < 1.0) && (detail.lOld.array() > 0.0)).any();
            if (!bites) continue;
            const std::pair<int, int> at = m_options.loopOrder == LoopOrder::QueryOuter
                                               ? std::pair{i, j}
                                               : std::pair{j, i};
            if (!first || at < *first) first = at;
            break;
        }
    }
    if (!first) return std::nullopt;
    const int outer = first->first;
    const int end = outer + 1 < outerBlockCount() ? m_outer[outer + 1].firstStep : m_stepCount;
    const int queryBlock = m_options.loopOrder == LoopOrder::QueryOuter ? first->first : first->second;
    const int keyBlock = m_options.loopOrder == LoopOrder::QueryOuter ? first->second : first->first;
    for (int s = m_outer[outer].firstStep; s < end; ++s) {
        const StepInfo i = info(s);
        if (i.kind == StepKind::UpdateSum && i.queryBlock == queryBlock && i.keyBlock == keyBlock)
            return s;
    }
    return std::nullopt;
}

namespace {

constexpr std::string_view kStepForms =
    "a step number, 'end' or 'first-rescale', either name optionally followed by +K or -K";

[[noreturn]] void badStep(std::string_view text, const std::string& why) {
    throw EngineError(ErrorKind::InvalidArgument,
                      "step '" + std::string(text) + "': " + why + " (a step is " +
                          std::string(kStepForms) + ", with K from 0 to " +
                          std::to_string(kMaxStepCount - 1) + ")");
}

// Decimal digits only (no sign, no spaces), at most kMaxStepCount - 1.
std::int64_t stepDigits(std::string_view whole, std::string_view digits, const char* what) {
    if (digits.empty()) badStep(whole, std::string("the ") + what + " is missing");
    if (digits.find_first_not_of("0123456789") != std::string_view::npos)
        badStep(whole, std::string("the ") + what + " is not a whole number");
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error == std::errc::result_out_of_range || (error == std::errc{} && value > kMaxStepCount - 1))
        badStep(whole, std::string("the ") + what + " is past " + std::to_string(kMaxStepCount - 1));
    if (error != std::errc{} || end != digits.data() + digits.size())
        badStep(whole, std::string("the ") + what + " is not a whole number");
    return value;
}

} // namespace

StepExpression parseStepExpression(std::string_view text) {
    if (text.empty()) badStep(text, "it is empty");
    for (const auto& [name, anchor] : {std::pair{std::string_view("first-rescale"),
                                                StepExpression::Anchor::FirstRescale},
                                      std::pair{std::string_view("end"),
                                                StepExpression::Anchor::End}}) {
        if (text.substr(0, name.size()) != name) continue;
        const std::string_view rest = text.substr(name.size());
        if (rest.empty()) return {anchor, 0};
        if (rest[0] != '+' && rest[0] != '-')
            badStep(text, "only +K or -K may follow '" + std::string(name) + "'");
        const std::int64_t k = stepDigits(text, rest.substr(1), "offset");
        return {anchor, rest[0] == '-' ? -k : k};
    }
    if (text[0] == '-') badStep(text, "a step number cannot be negative");
    return {StepExpression::Anchor::Number, stepDigits(text, text, "step number")};
}

std::optional<std::int64_t> resolveStepExpression(const StepExpression& e, std::int64_t stepCount,
                                                  std::optional<int> firstRescale) {
    // |value| < kMaxStepCount and the anchors are below it too: the sums stay far inside int64.
    switch (e.anchor) {
    case StepExpression::Anchor::Number: return e.value;
    case StepExpression::Anchor::End: return stepCount - 1 + e.value;
    case StepExpression::Anchor::FirstRescale:
        if (!firstRescale) return std::nullopt;
        return std::int64_t(*firstRescale) + e.value;
    }
    return std::nullopt;
}

} // namespace flashviz
