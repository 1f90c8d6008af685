#include "core/steps.h"

#include "core/attention.h"
#include "core/errors.h"
#include "core/tile_update.h"

#include <algorithm>
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
    }
    return "?";
}

std::string describe(StepKind kind, const FlashOptions& options) {
    const bool noMax = !options.runningMax;
    const bool noRescale = options.runningMax && !options.rescale;
    switch (kind) {
    case StepKind::InitialiseOutput:
        return noMax ? "O = 0, m = 0, ℓ = 0 are written to HBM" : "O = 0, m = −∞, ℓ = 0 are written to HBM";
    case StepKind::LoadQuery: return "A block of queries Q_i is copied from HBM into SRAM";
    case StepKind::LoadKeyValue: return "A block of keys K_j and values V_j is copied into SRAM";
    case StepKind::LoadRunningState: return "O_i, m_i and ℓ_i are read back from HBM";
    case StepKind::ComputeScores: return "The score tile S_ij = scale · Q_i K_jᵀ is computed on chip";
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
    }
    return {};
}

namespace {

Range blockRange(int block, int size, int total) {
    return {block * size, std::min(total, (block + 1) * size)};
}

int blockCount(int total, int size) { return (total + size - 1) / size; }

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

StepEngine::StepEngine(Problem problem, Algorithm algorithm, FlashOptions options)
    : m_problem(std::move(problem)), m_algorithm(algorithm), m_options(options) {
    validate(m_options);
    const auto& spec = m_problem.spec;
    if (m_algorithm == Algorithm::Standard) {
        requireScoreMatrixMemory(spec.queries, spec.keys, int(sizeof(double)), 2);
        m_outer.push_back({0, {}});
        m_stepCount = kStandardStepCount;
        return;
    }
    for (int i = 0; i < queryBlockCount(); ++i) {
        const Range rows = blockRange(i, m_options.blockRows, spec.queries);
        const int lastKey = lastVisibleKey(rows.end - 1, spec.queries, spec.keys, spec.causal);
        m_visibleBlocks.push_back(lastKey < 0 ? 0 : lastKey / m_options.blockCols + 1);
    }
    int step = 0;
    Counters before;
    if (m_options.loopOrder == LoopOrder::KeyValueOuter) {
        before += stepDelta(StepInfo{0, StepKind::InitialiseOutput, -1, -1, {}, {}, false});
        step = 1;
    }
    for (int outer = 0; outer < outerBlockCount(); ++outer) {
        m_outer.push_back({step, before});
        const bool queryOuter = m_options.loopOrder == LoopOrder::QueryOuter;
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

Counters StepEngine::keyBlockTotals(int keyBlock) const {
    const auto& spec = m_problem.spec;
    const std::uint64_t d = spec.headDim;
    const std::uint64_t cols = blockRange(keyBlock, m_options.blockCols, spec.keys).size();
    Counters c;
    c.read(2 * cols * d);
    for (int i = 0; i < queryBlockCount(); ++i) {
        if (keyBlock >= m_visibleBlocks[i]) continue;
        const std::uint64_t r = blockRange(i, m_options.blockRows, spec.queries).size();
        c.read(r * d + r * d + 2 * r);
        c.flops += 4 * r * d * cols;
        if (m_options.keepFullScores) {
            c.write(r * cols);
            c.scratch(std::uint64_t(spec.queries) * spec.keys);
        }
        c.write(r * d + 2 * r);
    }
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
    return m_options.loopOrder == LoopOrder::QueryOuter ? queryBlockCount() : keyBlockCount();
}

int StepEngine::firstStepOfOuterBlock(int outerBlock) const {
    return m_outer.at(outerBlock).firstStep;
}

int StepEngine::stepsInQueryBlock(int queryBlock) const {
    return 3 + (1 + kTileStepCount) * m_visibleBlocks[queryBlock];
}

int StepEngine::stepsInKeyBlock(int keyBlock) const {
    int steps = 1; // LoadKeyValue
    for (int i = 0; i < queryBlockCount(); ++i) {
        if (keyBlock >= m_visibleBlocks[i]) continue;
        steps += 3 + kTileStepCount + (keyBlock == m_visibleBlocks[i] - 1 ? 1 : 0);
    }
    return steps;
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
    StepInfo info{step, StepKind::LoadKeyValue, -1, j, {},
                  blockRange(j, m_options.blockCols, spec.keys), false};
    int offset = step - m_outer[j].firstStep;
    if (offset == 0) return info;
    --offset;
    for (int i = 0; i < queryBlockCount(); ++i) {
        if (j >= m_visibleBlocks[i]) continue;
        const bool last = j == m_visibleBlocks[i] - 1;
        const int steps = 3 + kTileStepCount + (last ? 1 : 0);
        if (offset >= steps) {
            offset -= steps;
            continue;
        }
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
    throw EngineError(ErrorKind::InvalidArgument, "Step index past the end of its key block");
}

Counters StepEngine::stepDelta(const StepInfo& info) const {
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
    if (m_algorithm == Algorithm::Standard || !m_options.runningMax) return std::nullopt;
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

} // namespace flashviz
