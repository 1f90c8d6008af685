// The step engine's backward pass: FlashAttention-2's Algorithm 2 as steps, key blocks outer.
// The state at a step replays only what it needs: the earlier query blocks of its key block (for
// dK_j and dV_j) and the earlier key blocks of its query block (for dQ_i), from the nearest
// checkpoint of those sums, which one pass lays down when the steps are laid out: at most
// `every` tiles each way, where `every` is 1 while every sum fits in the 64 MB the checkpoints
// may take and grows with the tiles past that (n = 4096, d = 64, 64 x 64 tiles: 6). The
// checkpoints are the very sums the pass holds there, so a state is the same, bit for bit, as
// the pass run to that step.
#include "core/backward.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/steps.h"
#include "core/tiling.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace flashviz {

struct BackwardStepData {
    Matrix dO;
    Matrix o;     // the forward's output
    Vector lse;   // L = m + log ℓ
    Vector m;     // the forward's final running maximum
    Vector delta; // D = rowsum(dO ∘ O)
    // Every `every` tiles: dK_j, dV_j after query blocks [first_j, first_j + c·every) (index
    // c - 1), and dQ_i after key blocks [0, c·every).
    int every = 1;
    std::vector<std::vector<Matrix>> dkSaved, dvSaved; // per key block
    std::vector<std::vector<Matrix>> dqSaved;          // per query block
    bool forwardWrong = false; // a forward switch changed O (so every state from the pre-pass on)
};

namespace {

constexpr StepKind kRecomputeSteps[] = {
    StepKind::RecomputeScores,       StepKind::RecomputeWeights,
    StepKind::UpdateValueGradient,   StepKind::ComputeWeightGradient,
    StepKind::ComputeScoreGradient,  StepKind::UpdateQueryGradient,
    StepKind::UpdateKeyGradient};
constexpr StepKind kStoredWeightSteps[] = {
    StepKind::ReadStoredWeights,    StepKind::UpdateValueGradient,
    StepKind::ComputeWeightGradient, StepKind::ComputeScoreGradient,
    StepKind::UpdateQueryGradient,  StepKind::UpdateKeyGradient};

int tileStepCount(const BackwardOptions& options) { return options.storeWeights ? 6 : 7; }

StepKind tileStep(const BackwardOptions& options, int index) {
    return options.storeWeights ? kStoredWeightSteps[index] : kRecomputeSteps[index];
}

template <typename Scalar>
MatrixT<Scalar> rowsOf(const Matrix& m, Range r) {
    return m.middleRows(r.begin, r.size()).template cast<Scalar>();
}
template <typename Scalar>
VectorT<Scalar> segmentOf(const Vector& v, Range r) {
    return v.segment(r.begin, r.size()).template cast<Scalar>();
}

// One tile of the backward from the engine's saved data, in the problem's precision.
template <typename Scalar>
struct TileInputs {
    const Problem& problem;
    const Matrix& dO;
    const Vector& lse;
    const Vector& offset;
    const Vector& delta;
    const BackwardOptions& options;

    void compute(Range rows, Range cols, BackwardTile<Scalar>& tile) const {
        const auto& spec = problem.spec;
        computeBackwardTile<Scalar>(rowsOf<Scalar>(problem.q, rows), rowsOf<Scalar>(problem.k, cols),
                                    rowsOf<Scalar>(problem.v, cols), rowsOf<Scalar>(dO, rows),
                                    segmentOf<Scalar>(lse, rows), segmentOf<Scalar>(offset, rows),
                                    segmentOf<Scalar>(delta, rows), Scalar(problem.scale()),
                                    {rows, cols, spec.queries, spec.keys, spec.causal}, options,
                                    tile);
    }
};

template <typename Scalar>
TileInputs<Scalar> tileInputs(const Problem& problem, const BackwardOptions& options,
                              const Matrix& dO, const Vector& lse, const Vector& m,
                              const Vector& delta) {
    return {problem, dO, lse, options.useLogSumExp ? lse : m, delta, options};
}

// Sums are kept every `every` tiles so that this many bytes hold them all: a state then replays
// at most `every` tiles for dK_j, dV_j and as many for dQ_i.
constexpr double kCheckpointBytes = 64.0 * 1024 * 1024;

int checkpointInterval(const std::vector<int>& visible, const FlashOptions& options, int headDim) {
    double tiles = 0;
    for (int v : visible) tiles += v;
    const double perTile = double(2 * options.blockCols + options.blockRows) * headDim * sizeof(double);
    return std::max(1, int(std::ceil(tiles * perTile / kCheckpointBytes)));
}

// The backward once, in its order, keeping the sums at every checkpoint.
template <typename Scalar>
void layDownCheckpoints(const TileInputs<Scalar>& in, const std::vector<int>& firstQuery,
                        const FlashOptions& options, BackwardStepData& data,
                        const std::function<void()>& poll) {
    const auto& spec = in.problem.spec;
    const int queryBlocks = blockCount(spec.queries, options.blockRows);
    const Scalar scale = Scalar(in.problem.scale());
    data.dkSaved.assign(firstQuery.size(), {});
    data.dvSaved.assign(firstQuery.size(), {});
    data.dqSaved.assign(std::size_t(queryBlocks), {});
    std::vector<MatrixT<Scalar>> dq(static_cast<std::size_t>(queryBlocks));
    BackwardTile<Scalar> tile;
    for (int j = 0; j < int(firstQuery.size()); ++j) {
        if (poll) poll();
        const Range cols = blockRange(j, options.blockCols, spec.keys);
        const MatrixT<Scalar> k = rowsOf<Scalar>(in.problem.k, cols);
        MatrixT<Scalar> dk = MatrixT<Scalar>::Zero(cols.size(), spec.headDim), dv = dk;
        const int first = firstQuery[std::size_t(j)];
        for (int i = first; i < queryBlocks; ++i) {
            const Range rows = blockRange(i, options.blockRows, spec.queries);
            auto& dqRows = dq[std::size_t(i)];
            if (dqRows.size() == 0) dqRows.setZero(rows.size(), spec.headDim);
            in.compute(rows, cols, tile);
            addValueGradient<Scalar>(dv, tile, rowsOf<Scalar>(in.dO, rows));
            applyQueryGradient<Scalar>(dqRows, tile, k, scale, in.options);
            addKeyGradient<Scalar>(dk, tile, rowsOf<Scalar>(in.problem.q, rows), scale);
            if ((i - first + 1) % data.every == 0) {
                data.dkSaved[std::size_t(j)].push_back(dk.template cast<double>());
                data.dvSaved[std::size_t(j)].push_back(dv.template cast<double>());
            }
            // Query block i meets key blocks 0, 1, ... in this order: this is its (j+1)-th.
            if ((j + 1) % data.every == 0) data.dqSaved[std::size_t(i)].push_back(dqRows.template cast<double>());
        }
    }
}

} // namespace

int backwardPhaseOf(StepKind kind) {
    switch (kind) {
    case StepKind::LoadQueryGradient: return 0;
    case StepKind::RecomputeScores: return 1;
    case StepKind::RecomputeWeights:
    case StepKind::ReadStoredWeights: return 2;
    case StepKind::UpdateValueGradient: return 3;
    case StepKind::ComputeWeightGradient: return 4;
    case StepKind::ComputeScoreGradient: return 5;
    case StepKind::UpdateQueryGradient: return 6;
    case StepKind::UpdateKeyGradient: return 7;
    default: return -1;
    }
}

void StepEngine::setUpBackward(const std::function<void()>& poll) {
    const auto& spec = m_problem.spec;
    auto data = std::make_shared<BackwardStepData>();
    data->dO = flashviz::upstreamGradient(m_problem, m_options.backward);
    FlashOptions forward = m_options;
    forward.keepFullScores = false;
    const auto run = [&](auto zero) {
        using Scalar = decltype(zero);
        const MatrixT<Scalar> q = m_problem.q.cast<Scalar>(), k = m_problem.k.cast<Scalar>(),
                              v = m_problem.v.cast<Scalar>();
        const auto f = flashForward<Scalar>(q, k, v, m_problem.scale(), spec.causal, forward);
        const auto saved = forwardSaved<Scalar>(f.o, f.m, f.l);
        data->o = saved.o.template cast<double>();
        data->lse = saved.lse.template cast<double>();
        data->m = saved.m.template cast<double>();
        data->delta = flashviz::rowDots<Scalar>(data->dO.cast<Scalar>(), saved.o).template cast<double>();
        if (forward.rescale && forward.runningMax) return;
        FlashOptions correct = forward;
        correct.rescale = correct.runningMax = true;
        const auto right = flashForward<Scalar>(q, k, v, m_problem.scale(), spec.causal, correct);
        data->forwardWrong = right.o != f.o;
    };
    if (spec.precision == Precision::Double)
        run(double{});
    else
        run(float{});

    int step = 2; // the pre-pass and dQ = 0
    Counters before = backwardStepDelta({0, StepKind::ComputeRowDots, -1, -1, {0, spec.queries}, {}, false});
    before += backwardStepDelta({1, StepKind::InitialiseQueryGradient, -1, -1, {0, spec.queries}, {}, false});
    m_outer.reserve(std::size_t(keyBlockCount()));
    for (int j = 0; j < keyBlockCount(); ++j) {
        const int first = firstQueryBlockSeeing(j, spec.queries, spec.keys, m_options.blockRows,
                                                m_options.blockCols, spec.causal);
        m_outer.push_back({step, before, first, queryBlockCount()});
        step += stepsInBackwardKeyBlock(j);
        before += backwardKeyBlockTotals(j);
    }
    m_stepCount = step;

    std::vector<int> firstQuery;
    for (const Outer& o : m_outer) firstQuery.push_back(o.firstQuery);
    data->every = checkpointInterval(m_visibleBlocks, m_options, spec.headDim);
    const auto checkpoints = [&](auto zero) {
        using Scalar = decltype(zero);
        const auto in = tileInputs<Scalar>(m_problem, m_options.backward, data->dO, data->lse,
                                           data->m, data->delta);
        layDownCheckpoints<Scalar>(in, firstQuery, m_options, *data, poll);
    };
    if (spec.precision == Precision::Double)
        checkpoints(double{});
    else
        checkpoints(float{});
    m_backward = std::move(data);
}

int StepEngine::stepsInBackwardKeyBlock(int keyBlock) const {
    const Outer& o = m_outer[std::size_t(keyBlock)];
    return 2 + (1 + tileStepCount(m_options.backward)) * (queryBlockCount() - o.firstQuery);
}

StepInfo StepEngine::infoBackward(int step) const {
    const auto& spec = m_problem.spec;
    if (step < 2)
        return {step, step == 0 ? StepKind::ComputeRowDots : StepKind::InitialiseQueryGradient,
                -1, -1, {0, spec.queries}, {}, false};
    const int j = outerOf(step);
    const Outer& o = m_outer[std::size_t(j)];
    StepInfo info{step, StepKind::LoadKeyValue, -1, j, {},
                  blockRange(j, m_options.blockCols, spec.keys), false};
    const int offset = step - o.firstStep;
    if (offset == 0) return info;
    if (offset == stepsInBackwardKeyBlock(j) - 1) {
        info.kind = StepKind::StoreKeyValueGradient;
        return info;
    }
    const int perTile = 1 + tileStepCount(m_options.backward);
    const int i = o.firstQuery + (offset - 1) / perTile;
    const int phase = (offset - 1) % perTile;
    info.kind = phase == 0 ? StepKind::LoadQueryGradient : tileStep(m_options.backward, phase - 1);
    info.queryBlock = i;
    info.rows = blockRange(i, m_options.blockRows, spec.queries);
    info.lastKeyBlock = j == m_visibleBlocks[std::size_t(i)] - 1;
    return info;
}

Counters StepEngine::backwardStepDelta(const StepInfo& info) const {
    const auto& spec = m_problem.spec;
    const BackwardOptions& bw = m_options.backward;
    const std::uint64_t d = spec.headDim, nq = spec.queries;
    const std::uint64_t r = info.rows.size(), c = info.cols.size();
    Counters delta;
    switch (info.kind) {
    case StepKind::ComputeRowDots:
        delta.read(2 * nq * d);
        delta.write(nq);
        delta.scratch(backwardWorkingSetElements(std::min(m_options.blockRows, spec.queries),
                                                 std::min(m_options.blockCols, spec.keys),
                                                 spec.headDim, bw));
        break;
    case StepKind::InitialiseQueryGradient: delta.write(nq * d); break;
    case StepKind::LoadKeyValue: delta.read(2 * c * d); break;
    case StepKind::LoadQueryGradient: delta.read(2 * r * d + r + (bw.storeWeights ? 0 : r)); break;
    case StepKind::RecomputeScores: delta.matmul(r, d, c); break;
    case StepKind::ReadStoredWeights: delta.read(r * c); break;
    case StepKind::UpdateValueGradient: delta.matmul(c, r, d); break;
    case StepKind::ComputeWeightGradient: delta.matmul(r, d, c); break;
    case StepKind::UpdateQueryGradient:
        if (bw.accumulateDq) delta.read(r * d);
        delta.matmul(r, c, d);
        delta.write(r * d);
        break;
    case StepKind::UpdateKeyGradient: delta.matmul(c, r, d); break;
    case StepKind::StoreKeyValueGradient: delta.write(2 * c * d); break;
    default: break;
    }
    return delta;
}

// Every tile's count is linear in its rows, so the query blocks seeing a key block (a suffix of
// rows) count as one block of all their rows.
Counters StepEngine::backwardKeyBlockTotals(int keyBlock) const {
    const auto& spec = m_problem.spec;
    const Outer& o = m_outer[std::size_t(keyBlock)];
    const Range cols = blockRange(keyBlock, m_options.blockCols, spec.keys);
    const Range rows{std::min(spec.queries, o.firstQuery * m_options.blockRows), spec.queries};
    Counters c = backwardStepDelta({0, StepKind::LoadKeyValue, -1, keyBlock, {}, cols, false});
    if (rows.size() > 0) {
        const StepInfo tile{0, StepKind::LoadQueryGradient, -1, keyBlock, rows, cols, false};
        c += backwardStepDelta(tile);
        for (int t = 0; t < tileStepCount(m_options.backward); ++t) {
            StepInfo step = tile;
            step.kind = tileStep(m_options.backward, t);
            c += backwardStepDelta(step);
        }
    }
    c += backwardStepDelta({0, StepKind::StoreKeyValueGradient, -1, keyBlock, {}, cols, false});
    return c;
}

std::uint64_t StepEngine::backwardSramElementsAt(const StepInfo& info) const {
    const auto& spec = m_problem.spec;
    const std::uint64_t d = spec.headDim;
    if (info.kind == StepKind::ComputeRowDots) { // one block of O and dO at a time, and its D
        const std::uint64_t r = std::min(m_options.blockRows, spec.queries);
        return 2 * r * d + r;
    }
    if (info.keyBlock < 0) return 0;
    const std::uint64_t c = info.cols.size();
    std::uint64_t elements = 4 * c * d; // K_j, V_j, dK_j, dV_j
    const int phase = backwardPhaseOf(info.kind);
    if (phase < 0) return elements;
    const std::uint64_t r = info.rows.size();
    elements += 2 * r * d + (m_options.backward.storeWeights ? r : 2 * r); // Q_i, dO_i, (L_i), D_i
    if (phase >= 1) elements += r * c; // S, then P in its place
    if (phase >= 4) elements += r * c; // dP, then dS in its place
    if (phase == 6) elements += r * d; // dQ_i, read for the update
    return elements;
}

namespace {

// dK_j and dV_j after query blocks [first, end) of key block j, and dQ_i after key blocks
// [0, end) of query block i: the replays a state needs, each from its nearest checkpoint.
template <typename Scalar>
void replayKeyBlock(const TileInputs<Scalar>& in, const BackwardStepData& data, int keyBlock,
                    Range cols, int first, int end, int blockRows, MatrixT<Scalar>& dk,
                    MatrixT<Scalar>& dv) {
    const int d = in.problem.spec.headDim;
    const int saved = (end - first) / data.every;
    if (saved > 0) {
        dk = data.dkSaved[std::size_t(keyBlock)][std::size_t(saved - 1)].template cast<Scalar>();
        dv = data.dvSaved[std::size_t(keyBlock)][std::size_t(saved - 1)].template cast<Scalar>();
    } else {
        dk.setZero(cols.size(), d);
        dv.setZero(cols.size(), d);
    }
    BackwardTile<Scalar> tile;
    for (int i = first + saved * data.every; i < end; ++i) {
        const Range rows = blockRange(i, blockRows, in.problem.spec.queries);
        in.compute(rows, cols, tile);
        addValueGradient<Scalar>(dv, tile, rowsOf<Scalar>(in.dO, rows));
        addKeyGradient<Scalar>(dk, tile, rowsOf<Scalar>(in.problem.q, rows),
                               Scalar(in.problem.scale()));
    }
}

template <typename Scalar>
MatrixT<Scalar> replayQueryGradient(const TileInputs<Scalar>& in, const BackwardStepData& data,
                                    int queryBlock, Range rows, int end, int blockCols) {
    const int saved = end / data.every;
    MatrixT<Scalar> dq =
        saved > 0 ? MatrixT<Scalar>(data.dqSaved[std::size_t(queryBlock)][std::size_t(saved - 1)]
                                        .template cast<Scalar>())
                  : MatrixT<Scalar>::Zero(rows.size(), in.problem.spec.headDim);
    BackwardTile<Scalar> tile;
    for (int j = saved * data.every; j < end; ++j) {
        const Range cols = blockRange(j, blockCols, in.problem.spec.keys);
        in.compute(rows, cols, tile);
        applyQueryGradient<Scalar>(dq, tile, rowsOf<Scalar>(in.problem.k, cols),
                                   Scalar(in.problem.scale()), in.options);
    }
    return dq;
}

template <typename Scalar>
void fillTile(StepState& s, const TileInputs<Scalar>& in, const BackwardStepData& data,
              int firstQuery, int blockRows, int blockCols) {
    const StepInfo& info = s.info;
    const int phase = backwardPhaseOf(info.kind);
    MatrixT<Scalar> dk, dv;
    replayKeyBlock<Scalar>(in, data, info.keyBlock, info.cols, firstQuery, info.queryBlock,
                           blockRows, dk, dv);
    s.dKOld = dk.template cast<double>();
    s.dVOld = dv.template cast<double>();
    MatrixT<Scalar> dq =
        replayQueryGradient<Scalar>(in, data, info.queryBlock, info.rows, info.keyBlock, blockCols);
    s.dQOld = dq.template cast<double>();
    if (phase == 0) return;
    BackwardTile<Scalar> tile;
    in.compute(info.rows, info.cols, tile);
    const Scalar scale = Scalar(in.problem.scale());
    if (!in.options.storeWeights) s.scores = tile.scores.template cast<double>();
    if (phase >= 2) s.weights = tile.weights.template cast<double>();
    if (phase >= 3) {
        addValueGradient<Scalar>(dv, tile, rowsOf<Scalar>(in.dO, info.rows));
        s.dVNew = dv.template cast<double>();
    }
    if (phase >= 4) s.dP = tile.dWeights.template cast<double>();
    if (phase >= 5) s.dS = tile.dScores.template cast<double>();
    if (phase >= 6) {
        applyQueryGradient<Scalar>(dq, tile, rowsOf<Scalar>(in.problem.k, info.cols), scale,
                                   in.options);
        s.dQNew = dq.template cast<double>();
    }
    if (phase >= 7) {
        addKeyGradient<Scalar>(dk, tile, rowsOf<Scalar>(in.problem.q, info.rows), scale);
        s.dKNew = dk.template cast<double>();
    }
}

} // namespace

void StepEngine::fillBackwardState(StepState& s) const {
    const BackwardStepData& data = *m_backward;
    const StepInfo& info = s.info;
    if (info.kind == StepKind::ComputeRowDots) {
        s.dO = data.dO;
        s.output = data.o;
        s.delta = data.delta;
        return;
    }
    if (info.keyBlock < 0) return; // dQ = 0: nothing on chip
    const auto& spec = m_problem.spec;
    s.key = m_problem.k.middleRows(info.cols.begin, info.cols.size());
    s.value = m_problem.v.middleRows(info.cols.begin, info.cols.size());
    const Outer& o = m_outer[std::size_t(info.keyBlock)];
    const auto fill = [&](auto zero) {
        using Scalar = decltype(zero);
        const auto in = tileInputs<Scalar>(m_problem, m_options.backward, data.dO, data.lse,
                                           data.m, data.delta);
        if (info.queryBlock < 0) { // LoadKeyValue (zero) or StoreKeyValueGradient (final)
            const int end = info.kind == StepKind::LoadKeyValue ? o.firstQuery : queryBlockCount();
            MatrixT<Scalar> dk, dv;
            replayKeyBlock<Scalar>(in, data, info.keyBlock, info.cols, o.firstQuery, end,
                                   m_options.blockRows, dk, dv);
            s.dKOld = s.dKNew = dk.template cast<double>();
            s.dVOld = s.dVNew = dv.template cast<double>();
            return;
        }
        fillTile<Scalar>(s, in, data, o.firstQuery, m_options.blockRows, m_options.blockCols);
    };
    if (spec.precision == Precision::Double)
        fill(double{});
    else
        fill(float{});
    if (info.queryBlock < 0) return;
    s.query = m_problem.q.middleRows(info.rows.begin, info.rows.size());
    s.dO = data.dO.middleRows(info.rows.begin, info.rows.size());
    s.lse = data.lse.segment(info.rows.begin, info.rows.size());
    s.delta = data.delta.segment(info.rows.begin, info.rows.size());
}

const Matrix& StepEngine::upstreamGradient() const {
    static const Matrix none;
    return m_backward ? m_backward->dO : none;
}

const Vector& StepEngine::logSumExp() const {
    static const Vector none;
    return m_backward ? m_backward->lse : none;
}

const Vector& StepEngine::rowDots() const {
    static const Vector none;
    return m_backward ? m_backward->delta : none;
}

int StepEngine::backwardCheckpointInterval() const { return m_backward ? m_backward->every : 0; }

// Whether a switched-on backward bug can change a value here at all, from the sizes alone: the
// mask is only forgotten where there is one, dQ only overwritten where a second key block adds
// to it, and a stored P is beyond the recompute's two bugs.
static bool anyBugCanBite(const BackwardOptions& b, bool causal, int keyBlocks) {
    const bool recompute = !b.storeWeights;
    return !b.subtractRowDot || (recompute && !b.useLogSumExp) ||
           (!b.accumulateDq && keyBlocks > 1) || (recompute && causal && !b.maskRecompute);
}

std::optional<int> StepEngine::firstBackwardBugStep() const {
    if (m_algorithm != Algorithm::Backward) return std::nullopt;
    const BackwardStepData& data = *m_backward;
    if (data.forwardWrong) return 0; // the pre-pass reads the forward's O, and it is wrong
    const auto& spec = m_problem.spec;
    if (!anyBugCanBite(m_options.backward, spec.causal, keyBlockCount())) return std::nullopt;
    BackwardOptions correct = m_options.backward;
    correct.subtractRowDot = correct.useLogSumExp = correct.accumulateDq = correct.maskRecompute = true;
    const auto wrong = tileInputs<double>(m_problem, m_options.backward, data.dO, data.lse, data.m,
                                          data.delta);
    const auto right = tileInputs<double>(m_problem, correct, data.dO, data.lse, data.m, data.delta);
    const int perTile = 1 + tileStepCount(m_options.backward);
    // The step of `kind` in tile (j, i), from the same table infoBackward() reads.
    const auto stepOf = [&](int j, int i, StepKind kind) {
        const Outer& o = m_outer[std::size_t(j)];
        int index = 0;
        while (tileStep(m_options.backward, index) != kind) ++index;
        return o.firstStep + 1 + (i - o.firstQuery) * perTile + 1 + index;
    };
    Matrix dq = Matrix::Zero(spec.queries, spec.headDim); // the correct dQ, as it accumulates
    BackwardTile<double> good, bad;
    for (int j = 0; j < keyBlockCount(); ++j) {
        const Range cols = blockRange(j, m_options.blockCols, spec.keys);
        const Matrix k = m_problem.k.middleRows(cols.begin, cols.size());
        for (int i = m_outer[std::size_t(j)].firstQuery; i < queryBlockCount(); ++i) {
            const Range rows = blockRange(i, m_options.blockRows, spec.queries);
            right.compute(rows, cols, good);
            wrong.compute(rows, cols, bad);
            if (!m_options.backward.storeWeights && bad.scores != good.scores)
                return stepOf(j, i, StepKind::RecomputeScores);
            if (bad.weights != good.weights) // only the recompute's bugs change P
                return stepOf(j, i, StepKind::RecomputeWeights);
            if (bad.dScores != good.dScores) return stepOf(j, i, StepKind::ComputeScoreGradient);
            auto dqRows = dq.middleRows(rows.begin, rows.size());
            Matrix overwritten = dqRows;
            applyQueryGradient<double>(overwritten, good, k, m_problem.scale(), m_options.backward);
            applyQueryGradient<double>(dqRows, good, k, m_problem.scale(), correct);
            if (overwritten != dqRows) return stepOf(j, i, StepKind::UpdateQueryGradient);
        }
    }
    return std::nullopt;
}

} // namespace flashviz
