// The step engine: the order of the steps, the counters step by step, the state at step k as a
// function of k alone, the running statistics chaining from one tile to the next, and where the
// rescale bug first bites.
#include "core/attention.h"
#include "core/check.h"
#include "core/counters.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/steps.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

using namespace flashviz;
using namespace flashviz::test;

Q_DECLARE_METATYPE(flashviz::Algorithm)
Q_DECLARE_METATYPE(flashviz::LoopOrder)
Q_DECLARE_METATYPE(flashviz::Precision)
Q_DECLARE_METATYPE(flashviz::InputPattern)

namespace {

using u64 = std::uint64_t;

struct Config {
    const char* name;
    Algorithm algorithm;
    int queries, keys, headDim, blockRows, blockCols;
    bool causal;
    LoopOrder order;
    bool keep;
    InputPattern pattern;
    Precision precision;
};

const Config kConfigs[] = {
    {"flash q-outer 40x40 Br16 Bc12", Algorithm::Flash, 40, 40, 4, 16, 12, false,
     LoopOrder::QueryOuter, false, InputPattern::Gaussian, Precision::Double},
    {"flash q-outer 40x40 causal late-max", Algorithm::Flash, 40, 40, 5, 8, 8, true,
     LoopOrder::QueryOuter, false, InputPattern::LateMaximum, Precision::Double},
    {"flash q-outer 30x50 causal", Algorithm::Flash, 30, 50, 3, 8, 12, true, LoopOrder::QueryOuter,
     false, InputPattern::Gaussian, Precision::Double},
    {"flash q-outer 50x20 causal (rows without keys)", Algorithm::Flash, 50, 20, 4, 8, 6, true,
     LoopOrder::QueryOuter, false, InputPattern::LateMaximum, Precision::Double},
    {"flash q-outer 24x24 keep-S", Algorithm::Flash, 24, 24, 4, 8, 8, false, LoopOrder::QueryOuter,
     true, InputPattern::Gaussian, Precision::Double},
    {"flash q-outer 33x33 float", Algorithm::Flash, 33, 33, 7, 8, 10, false, LoopOrder::QueryOuter,
     false, InputPattern::LateMaximum, Precision::Float},
    {"flash q-outer 10x10 block past n", Algorithm::Flash, 10, 10, 2, 64, 64, false,
     LoopOrder::QueryOuter, false, InputPattern::Gaussian, Precision::Double},
    {"flash kv-outer 40x40 Br16 Bc12", Algorithm::Flash, 40, 40, 4, 16, 12, false,
     LoopOrder::KeyValueOuter, false, InputPattern::Gaussian, Precision::Double},
    {"flash kv-outer 40x40 causal late-max", Algorithm::Flash, 40, 40, 5, 8, 8, true,
     LoopOrder::KeyValueOuter, false, InputPattern::LateMaximum, Precision::Double},
    {"flash kv-outer 50x20 causal (rows without keys)", Algorithm::Flash, 50, 20, 4, 8, 6, true,
     LoopOrder::KeyValueOuter, false, InputPattern::LateMaximum, Precision::Double},
    {"flash kv-outer 20x50 causal keep-S", Algorithm::Flash, 20, 50, 4, 8, 6, true,
     LoopOrder::KeyValueOuter, true, InputPattern::Gaussian, Precision::Double},
    {"flash kv-outer 33x33 float", Algorithm::Flash, 33, 33, 7, 8, 10, false,
     LoopOrder::KeyValueOuter, false, InputPattern::LateMaximum, Precision::Float},
    {"standard 20x20", Algorithm::Standard, 20, 20, 4, 8, 8, false, LoopOrder::QueryOuter, false,
     InputPattern::Gaussian, Precision::Double},
    {"standard 12x30 causal", Algorithm::Standard, 12, 30, 3, 8, 8, true, LoopOrder::QueryOuter,
     false, InputPattern::Gaussian, Precision::Double},
};

void addConfigColumns() {
    QTest::addColumn<Algorithm>("algorithm");
    addTileCaseColumns();
    QTest::addColumn<LoopOrder>("order");
    QTest::addColumn<bool>("keep");
    QTest::addColumn<InputPattern>("pattern");
    QTest::addColumn<Precision>("precision");
}

void addConfigRows(bool flashOnly) {
    for (const Config& c : kConfigs) {
        if (flashOnly && c.algorithm != Algorithm::Flash) continue;
        QTest::newRow(c.name) << c.algorithm << c.queries << c.keys << c.headDim << c.blockRows
                              << c.blockCols << c.causal << c.order << c.keep << c.pattern
                              << c.precision;
    }
}

struct Fetched {
    Problem problem;
    Algorithm algorithm;
    FlashOptions options;
};

Fetched fetchConfig() {
    QFETCH(Algorithm, algorithm);
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    QFETCH(LoopOrder, order);
    QFETCH(bool, keep);
    QFETCH(InputPattern, pattern);
    QFETCH(Precision, precision);
    const ProblemSpec spec = makeSpec(queries, keys, headDim, causal, precision, pattern, 13);
    const FlashOptions o = keepingFullScores(makeOptions(blockRows, blockCols, order), keep);
    return {makeProblem(spec), algorithm, o};
}

Range blockOf(int index, int size, int total) {
    return {index * size, std::min(total, (index + 1) * size)};
}

// How many key blocks query block i sees, from the causal rule alone.
int visibleBlocksModel(const Problem& p, const FlashOptions& o, int i) {
    const Range rows = blockOf(i, o.blockRows, p.spec.queries);
    const int last = p.spec.causal
                         ? std::min(p.spec.keys - 1, rows.end - 1 + p.spec.keys - p.spec.queries)
                         : p.spec.keys - 1;
    return last < 0 ? 0 : last / o.blockCols + 1;
}

// Close within tol relative to magnitude; inf must match inf exactly.
bool close(double a, double b, double tol) {
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::abs(a - b) <= tol * (1 + std::abs(b));
}

// What one step adds to the traffic and FLOPs, from the comments in steps.h and the script's
// counting model. Peak scratch is checked separately.
Counters expectedDelta(const StepInfo& info, const Problem& p, const FlashOptions& o,
                       Algorithm algorithm) {
    const u64 d = u64(p.spec.headDim), nq = u64(p.spec.queries), nk = u64(p.spec.keys);
    const u64 rows = u64(info.rows.size()), cols = u64(info.cols.size());
    Counters c;
    if (algorithm == Algorithm::Standard) {
        switch (info.kind) {
        case StepKind::ReadInputs:
            c.read((nq + 2 * nk) * d);
            break;
        case StepKind::ComputeScores:
            c.matmul(nq, d, nk);
            break;
        case StepKind::WriteScores:
            c.write(nq * nk);
            break;
        case StepKind::ReadScores:
            c.read(nq * nk);
            break;
        case StepKind::WriteWeights:
            c.write(nq * nk);
            break;
        case StepKind::ReadWeights:
            c.read(nq * nk);
            break;
        case StepKind::ComputeOutput:
            c.matmul(nq, nk, d);
            break;
        case StepKind::WriteOutput:
            c.write(nq * d);
            break;
        default:
            break;
        }
        return c;
    }
    switch (info.kind) {
    case StepKind::InitialiseOutput:
        c.write(nq * d + 2 * nq);
        break; // O, m, l
    case StepKind::LoadQuery:
        c.read(rows * d);
        break;
    case StepKind::LoadKeyValue:
        c.read(2 * cols * d);
        break;
    case StepKind::LoadRunningState:
        c.read(rows * d + 2 * rows);
        break; // O_i, m_i, l_i
    case StepKind::ComputeScores:
        c.matmul(rows, d, cols);
        if (o.keepFullScores) c.write(rows * cols);
        break;
    case StepKind::UpdateOutput:
        c.matmul(rows, cols, d);
        break;
    case StepKind::StoreRunningState:
        c.write(rows * d + 2 * rows);
        break; // O_i, m_i, l_i
    case StepKind::StoreOutput:
        c.write(rows * d);
        break;
    default:
        break;
    }
    return c;
}

bool isFlashKind(StepKind k) {
    return int(k) <= int(StepKind::StoreOutput);
}

} // namespace

class TstSteps : public QObject {
    Q_OBJECT

  private slots:
    void blockCounts_data() {
        addConfigColumns();
        addConfigRows(true);
    }
    void blockCounts();
    void infoSequence_data() {
        addConfigColumns();
        addConfigRows(false);
    }
    void infoSequence();
    void countersAddUp_data() {
        addConfigColumns();
        addConfigRows(false);
    }
    void countersAddUp();
    void stateIsAFunctionOfTheStep_data() {
        addConfigColumns();
        addConfigRows(false);
    }
    void stateIsAFunctionOfTheStep();
    void runningStateChains_data() {
        addConfigColumns();
        addConfigRows(true);
    }
    void runningStateChains();
    void firstRescaleStep_data();
    void firstRescaleStep();
    void badStepIndex();
    void stepCountsPastIntAreRefused_data();
    void stepCountsPastIntAreRefused();
    void countStepsMatchesTheEngine_data() {
        addConfigColumns();
        addConfigRows(false);
    }
    void countStepsMatchesTheEngine();
    void largePaperOrderRunsStepCheaply();
    void stepExpressions_data();
    void stepExpressions();
    void badStepExpressions_data();
    void badStepExpressions();
    void namesAndDescriptions();
    void descriptionsFollowTheSwitches();
    void descriptionsFollowTheAlgorithm();
    void blocksAreNamedWithoutMinusOne();
};

void TstSteps::blockCounts() {
    const Fetched f = fetchConfig();
    const StepEngine engine(f.problem, f.algorithm, f.options);
    QCOMPARE(engine.queryBlockCount(), ceilDiv(f.problem.spec.queries, f.options.blockRows));
    QCOMPARE(engine.keyBlockCount(), ceilDiv(f.problem.spec.keys, f.options.blockCols));
    for (int i = 0; i < engine.queryBlockCount(); ++i)
        QCOMPARE(engine.visibleKeyBlocks(i), visibleBlocksModel(f.problem, f.options, i));
    QCOMPARE(engine.outerBlockCount(), f.options.loopOrder == LoopOrder::QueryOuter
                                           ? engine.queryBlockCount()
                                           : engine.keyBlockCount());
    QVERIFY(engine.problem().q == f.problem.q);
    QVERIFY(engine.options() == f.options);
    QVERIFY(engine.algorithm() == f.algorithm);
}

void TstSteps::infoSequence() {
    const Fetched f = fetchConfig();
    const Problem& p = f.problem;
    const StepEngine engine(p, f.algorithm, f.options);
    const int n = engine.stepCount();
    QVERIFY(n > 0);
    std::vector<StepInfo> infos;
    for (int k = 0; k < n; ++k) {
        infos.push_back(engine.info(k));
        QCOMPARE(infos.back().index, k);
    }

    if (f.algorithm == Algorithm::Standard) {
        // Read the inputs, S out and back, P out and back, O out: each phase present, in order.
        const StepKind order[] = {StepKind::ReadInputs,    StepKind::WriteScores,
                                  StepKind::ReadScores,    StepKind::ComputeSoftmax,
                                  StepKind::WriteWeights,  StepKind::ReadWeights,
                                  StepKind::ComputeOutput, StepKind::WriteOutput};
        int previous = -1;
        for (StepKind kind : order) {
            const auto it = std::find_if(infos.begin(), infos.end(),
                                         [kind](const StepInfo& s) { return s.kind == kind; });
            QVERIFY2(it != infos.end(), toString(kind));
            QVERIFY2(int(it - infos.begin()) > previous, toString(kind));
            previous = int(it - infos.begin());
        }
        QVERIFY(infos.front().kind == StepKind::ReadInputs);
        QVERIFY(infos.back().kind == StepKind::WriteOutput);
        for (const StepInfo& s : infos)
            QVERIFY2(!isFlashKind(s.kind) || s.kind == StepKind::ComputeScores, toString(s.kind));
        return;
    }

    for (const StepInfo& s : infos) {
        QVERIFY2(isFlashKind(s.kind), toString(s.kind));
        if (s.queryBlock >= 0)
            QVERIFY(s.rows == blockOf(s.queryBlock, f.options.blockRows, p.spec.queries));
        if (s.keyBlock >= 0)
            QVERIFY(s.cols == blockOf(s.keyBlock, f.options.blockCols, p.spec.keys));
        if (s.queryBlock >= 0 && s.keyBlock >= 0) {
            QVERIFY(s.keyBlock < visibleBlocksModel(p, f.options, s.queryBlock));
            QCOMPARE(s.lastKeyBlock,
                     s.keyBlock == visibleBlocksModel(p, f.options, s.queryBlock) - 1);
        }
    }

    if (f.options.loopOrder == LoopOrder::QueryOuter) {
        // Per query block: load Q; per visible key block: load K/V and the five tile steps;
        // then normalise and store, exactly in the order the header lists them.
        std::vector<std::tuple<StepKind, int, int>> expected;
        for (int i = 0; i < engine.queryBlockCount(); ++i) {
            expected.emplace_back(StepKind::LoadQuery, i, -1);
            for (int j = 0; j < visibleBlocksModel(p, f.options, i); ++j)
                for (StepKind k :
                     {StepKind::LoadKeyValue, StepKind::ComputeScores, StepKind::UpdateMax,
                      StepKind::ComputeWeights, StepKind::UpdateSum, StepKind::UpdateOutput})
                    expected.emplace_back(k, i, j);
            expected.emplace_back(StepKind::Normalise, i, -1);
            expected.emplace_back(StepKind::StoreOutput, i, -1);
        }
        QCOMPARE(n, int(expected.size()));
        for (int k = 0; k < n; ++k) {
            const auto& [kind, i, j] = expected[size_t(k)];
            QVERIFY2(infos[size_t(k)].kind == kind,
                     qPrintable(QStringLiteral("step %1: %2, expected %3")
                                    .arg(k)
                                    .arg(toString(infos[size_t(k)].kind), toString(kind))));
            QCOMPARE(infos[size_t(k)].queryBlock, i);
            if (j >= 0) QCOMPARE(infos[size_t(k)].keyBlock, j);
        }
        for (int i = 0; i < engine.queryBlockCount(); ++i) {
            const int first = engine.firstStepOfOuterBlock(i);
            QVERIFY(infos[size_t(first)].kind == StepKind::LoadQuery);
            QCOMPARE(infos[size_t(first)].queryBlock, i);
            if (i > 0) QCOMPARE(infos[size_t(first - 1)].queryBlock, i - 1);
        }
        QCOMPARE(engine.firstStepOfOuterBlock(0), 0);
        return;
    }

    // The paper's order: O, m, l initialised first; then per key block, K/V loaded once and,
    // per query block that sees it, Q and the running state loaded, the tile updated, the
    // running state stored.
    QVERIFY(infos.front().kind == StepKind::InitialiseOutput);
    std::map<std::pair<int, int>, std::vector<StepKind>> perTile;
    std::set<int> kvLoaded;
    int lastKeyBlock = -1;
    for (const StepInfo& s : infos) {
        if (s.kind == StepKind::InitialiseOutput) {
            QCOMPARE(s.index, 0);
            continue;
        }
        QVERIFY(s.keyBlock >= lastKeyBlock); // key blocks outer: never go back
        lastKeyBlock = s.keyBlock;
        if (s.kind == StepKind::LoadKeyValue) {
            QVERIFY2(kvLoaded.insert(s.keyBlock).second, "K_j, V_j loaded twice");
            continue;
        }
        QVERIFY2(kvLoaded.count(s.keyBlock) == 1, "a tile step before its K/V load");
        perTile[{s.queryBlock, s.keyBlock}].push_back(s.kind);
    }
    QCOMPARE(int(kvLoaded.size()), engine.keyBlockCount());
    int tiles = 0;
    for (int i = 0; i < engine.queryBlockCount(); ++i)
        for (int j = 0; j < visibleBlocksModel(p, f.options, i); ++j, ++tiles) {
            const auto it = perTile.find({i, j});
            QVERIFY2(it != perTile.end(),
                     qPrintable(QStringLiteral("tile (%1, %2) missing").arg(i).arg(j)));
            std::vector<StepKind> kinds = it->second;
            // Normalise happens once per query block, after its last key block.
            const bool last = j == visibleBlocksModel(p, f.options, i) - 1;
            const auto normalise = std::find(kinds.begin(), kinds.end(), StepKind::Normalise);
            if (!last) QVERIFY(normalise == kinds.end());
            if (normalise != kinds.end()) kinds.erase(normalise);
            const std::vector<StepKind> expected{
                StepKind::LoadQuery,    StepKind::LoadRunningState, StepKind::ComputeScores,
                StepKind::UpdateMax,    StepKind::ComputeWeights,   StepKind::UpdateSum,
                StepKind::UpdateOutput, StepKind::StoreRunningState};
            QVERIFY2(kinds == expected, qPrintable(QStringLiteral("tile (%1, %2)").arg(i).arg(j)));
        }
    QCOMPARE(int(perTile.size()), tiles);
    for (int j = 0; j < engine.keyBlockCount(); ++j) {
        const int first = engine.firstStepOfOuterBlock(j);
        QCOMPARE(infos[size_t(first)].keyBlock, j);
        QVERIFY(infos[size_t(first)].kind == StepKind::LoadKeyValue);
        if (j > 0) QVERIFY(infos[size_t(first - 1)].keyBlock == j - 1);
    }
}

void TstSteps::countersAddUp() {
    const Fetched f = fetchConfig();
    const Problem& p = f.problem;
    const StepEngine engine(p, f.algorithm, f.options);
    Counters previous;
    for (int k = 0; k < engine.stepCount(); ++k) {
        const StepState s = engine.state(k);
        QVERIFY(s.counters == engine.countersThrough(k));
        const Counters want = expectedDelta(s.info, p, f.options, f.algorithm);
        Counters got;
        got.hbmReadBytes = s.counters.hbmReadBytes - previous.hbmReadBytes;
        got.hbmWriteBytes = s.counters.hbmWriteBytes - previous.hbmWriteBytes;
        got.flops = s.counters.flops - previous.flops;
        QVERIFY2(got.hbmReadBytes == want.hbmReadBytes && got.hbmWriteBytes == want.hbmWriteBytes &&
                     got.flops == want.flops,
                 qPrintable(QStringLiteral("step %1 (%2): added %3, expected %4")
                                .arg(k)
                                .arg(toString(s.info.kind))
                                .arg(show(got), show(want))));
        QVERIFY(s.counters.peakScratchElements >= previous.peakScratchElements);
        QVERIFY(s.counters.hbmReadBytes >= previous.hbmReadBytes);
        // The direction the views draw, from the kind alone, is the direction the bytes go;
        // only the debug copy of S writes from a step that computes.
        const HbmTraffic way = hbmTrafficOf(s.info.kind);
        const bool debugCopy = f.options.keepFullScores && s.info.kind == StepKind::ComputeScores;
        QCOMPARE(got.hbmReadBytes > 0, way == HbmTraffic::Read);
        QCOMPARE(got.hbmWriteBytes > 0, way == HbmTraffic::Write || debugCopy);
        if (f.algorithm == Algorithm::Standard) QVERIFY(standardKernelOf(s.info.kind));
        previous = s.counters;
    }
    if (f.algorithm == Algorithm::Standard) {
        QVERIFY2(previous == standardCounts(p.spec.queries, p.spec.keys, p.spec.headDim),
                 qPrintable(show(previous)));
        QVERIFY(previous == standardForward(p).counters);
    } else {
        const Counters closed =
            flashCounts(p.spec.queries, p.spec.keys, p.spec.headDim, p.spec.causal, f.options);
        QVERIFY2(previous == closed, qPrintable(show(previous) + " vs " + show(closed)));
        QVERIFY(previous == flashForward(p, f.options).counters);
    }
}

void TstSteps::stateIsAFunctionOfTheStep() {
    const Fetched f = fetchConfig();
    // Walk forward through every step on one engine...
    const StepEngine walker(f.problem, f.algorithm, f.options);
    std::vector<StepState> walked;
    for (int k = 0; k < walker.stepCount(); ++k)
        walked.push_back(walker.state(k));
    // ...then ask a fresh engine for the same steps backwards, and a third one for a scattered
    // sample: the state must not depend on what was asked before.
    const StepEngine fresh(f.problem, f.algorithm, f.options);
    for (int k = fresh.stepCount() - 1; k >= 0; --k)
        QVERIFY2(sameState(fresh.state(k), walked[size_t(k)]),
                 qPrintable(QStringLiteral("step %1").arg(k)));
    const StepEngine jumper(f.problem, f.algorithm, f.options);
    for (int k = 0; k < jumper.stepCount(); k += 7) {
        const int target = (k * 37) % jumper.stepCount();
        QVERIFY(sameState(jumper.state(target), walked[size_t(target)]));
    }
    // Standard attention has no tiles to show.
    if (f.algorithm == Algorithm::Standard)
        for (const StepState& s : walked)
            QVERIFY(s.query.size() == 0 && s.scores.size() == 0);
}

void TstSteps::runningStateChains() {
    const Fetched f = fetchConfig();
    const Problem& p = f.problem;
    const StepEngine engine(p, f.algorithm, f.options);
    const FlashResult run = flashForward(p, f.options);
    const double tol = p.spec.precision == Precision::Double ? 1e-12 : 2e-5;
    const double scale = p.scale();

    std::map<int, StepState> lastUpdate; // per query block, the latest UpdateOutput state
    std::set<int> blocksWithOutput;
    for (int k = 0; k < engine.stepCount(); ++k) {
        const StepState s = engine.state(k);
        const StepInfo& info = s.info;
        if (info.queryBlock < 0) continue;
        const int rows = info.rows.size();
        QVERIFY(s.query == p.q.middleRows(info.rows.begin, rows));

        if (s.output.size() > 0) {
            // Whatever step shows a finished block must show flashForward's rows.
            const Matrix want = run.o.middleRows(info.rows.begin, rows);
            QVERIFY2(
                s.output.rows() == rows && (s.output - want).cwiseAbs().maxCoeff() <= tol,
                qPrintable(QStringLiteral("step %1: output differs from flashForward").arg(k)));
            blocksWithOutput.insert(info.queryBlock);
        }
        if (f.options.loopOrder == LoopOrder::QueryOuter &&
            (info.kind == StepKind::Normalise || info.kind == StepKind::StoreOutput))
            QVERIFY2(s.output.rows() == rows, "Normalise and StoreOutput show the output rows");

        if (info.kind == StepKind::ComputeScores || info.kind == StepKind::UpdateOutput) {
            QVERIFY(s.key == p.k.middleRows(info.cols.begin, info.cols.size()));
            QVERIFY(s.value == p.v.middleRows(info.cols.begin, info.cols.size()));
            QCOMPARE(s.scores.rows(), Eigen::Index(rows));
            QCOMPARE(s.scores.cols(), Eigen::Index(info.cols.size()));
        }
        if (info.kind == StepKind::LoadQuery && f.options.loopOrder == LoopOrder::QueryOuter) {
            QVERIFY((s.mNew.array() == -kInf).all());
            QVERIFY((s.lNew.array() == 0).all());
        }
        if (info.kind == StepKind::ComputeScores) {
            // The on-chip set holds at least the Q, K, V and score tiles.
            const u64 atLeast = u64(rows) * u64(p.spec.headDim) +
                                2 * u64(info.cols.size()) * u64(p.spec.headDim) +
                                u64(rows) * u64(info.cols.size());
            QVERIFY2(s.sramElements >= atLeast, qPrintable(QStringLiteral("step %1: SRAM %2 < %3")
                                                               .arg(k)
                                                               .arg(s.sramElements)
                                                               .arg(atLeast)));
        }
        if (info.kind != StepKind::UpdateOutput) continue;

        // The tile's arithmetic, checked against the inputs.
        for (int r = 0; r < rows; ++r) {
            const int row = info.rows.begin + r;
            for (int c = 0; c < info.cols.size(); ++c) {
                const int col = info.cols.begin + c;
                if (!p.spec.causal || causallyVisible(row, col, p.spec.queries, p.spec.keys)) {
                    QVERIFY(close(s.scores(r, c), scale * p.q.row(row).dot(p.k.row(col)), tol));
                    QVERIFY(close(s.weights(r, c), std::exp(s.scores(r, c) - s.mNew(r)), tol));
                } else {
                    QCOMPARE(s.scores(r, c), -kInf);
                    QCOMPARE(s.weights(r, c), 0.0);
                }
            }
            QVERIFY(close(s.mNew(r), std::max(s.mOld(r), s.scores.row(r).maxCoeff()), tol));
            if (s.mNew(r) == -kInf) {
                QCOMPARE(s.lNew(r), 0.0);
                continue;
            }
            const double correction = s.mOld(r) == -kInf ? 0.0 : std::exp(s.mOld(r) - s.mNew(r));
            if (s.lOld(r) > 0)
                QVERIFY2(close(s.correction(r), correction, tol),
                         qPrintable(QStringLiteral("step %1 row %2: correction %3, expected %4")
                                        .arg(k)
                                        .arg(r)
                                        .arg(s.correction(r))
                                        .arg(correction)));
            QVERIFY(close(s.lNew(r), correction * s.lOld(r) + s.weights.row(r).sum(), tol));
            const Eigen::RowVectorXd acc =
                correction * s.accOld.row(r) + s.weights.row(r) * s.value;
            for (int c = 0; c < p.spec.headDim; ++c)
                QVERIFY(close(s.accNew(r, c), acc(c), tol));
        }

        // The chain: this tile's old values are the previous tile's new ones (same query block).
        const auto prev = lastUpdate.find(info.queryBlock);
        if (prev == lastUpdate.end()) {
            QCOMPARE(info.keyBlock, 0);
            QVERIFY((s.mOld.array() == -kInf).all());
            QVERIFY((s.lOld.array() == 0).all());
            QVERIFY((s.accOld.array() == 0).all());
        } else {
            QCOMPARE(info.keyBlock, prev->second.info.keyBlock + 1);
            QVERIFY(sameValues(s.mOld, prev->second.mNew));
            QVERIFY(sameValues(s.lOld, prev->second.lNew));
            QVERIFY(sameValues(s.accOld, prev->second.accNew));
        }
        lastUpdate[info.queryBlock] = s;
        if (info.lastKeyBlock) {
            // The last update's statistics are the run's final m and l.
            for (int r = 0; r < rows; ++r) {
                QVERIFY(close(s.mNew(r), run.m(info.rows.begin + r), tol));
                QVERIFY(close(s.lNew(r), run.l(info.rows.begin + r), tol));
            }
        }
    }
    // Every query block shows its finished rows at some step. In the paper's order a block that
    // sees no key at all has no step: its O = 0 was written by InitialiseOutput.
    int blocksWithWork = 0;
    for (int i = 0; i < engine.queryBlockCount(); ++i)
        if (visibleBlocksModel(p, f.options, i) > 0) ++blocksWithWork;
    QCOMPARE(int(blocksWithOutput.size()), f.options.loopOrder == LoopOrder::QueryOuter
                                               ? engine.queryBlockCount()
                                               : blocksWithWork);
}

void TstSteps::firstRescaleStep_data() {
    QTest::addColumn<InputPattern>("pattern");
    QTest::addColumn<LoopOrder>("order");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("blockCols");
    for (InputPattern pattern : allInputPatterns())
        for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter})
            for (bool causal : {false, true})
                for (int bc : {6, 40})
                    QTest::addRow("%s %s%s Bc%d", toString(pattern),
                                  order == LoopOrder::QueryOuter ? "q-outer" : "kv-outer",
                                  causal ? " causal" : "", bc)
                        << pattern << order << causal << bc;
}

void TstSteps::firstRescaleStep() {
    QFETCH(InputPattern, pattern);
    QFETCH(LoopOrder, order);
    QFETCH(bool, causal);
    QFETCH(int, blockCols);
    const ProblemSpec spec = makeSpec(36, 40, 4, causal, Precision::Double, pattern, 3);
    const Problem p = makeProblem(spec);
    const FlashOptions o = makeOptions(8, blockCols, order);
    const StepEngine engine(p, Algorithm::Flash, o);
    const std::optional<int> first = engine.firstRescaleStep();

    // The definition, applied step by step: an UpdateSum where a row with a positive sum sees
    // its maximum rise.
    std::optional<int> expected;
    for (int k = 0; k < engine.stepCount() && !expected; ++k) {
        if (engine.info(k).kind != StepKind::UpdateSum) continue;
        const StepState s = engine.state(k);
        for (Eigen::Index r = 0; r < s.mNew.size(); ++r)
            if (s.lOld(r) > 0 && s.mNew(r) > s.mOld(r)) {
                expected = k;
                QVERIFY(s.correction(r) < 1.0);
            }
    }
    QCOMPARE(first.has_value(), expected.has_value());
    if (first) {
        QCOMPARE(*first, *expected);
        QVERIFY(engine.info(*first).kind == StepKind::UpdateSum);
    }

    if (pattern == InputPattern::EarlyMaximum || blockCols >= spec.keys)
        QVERIFY2(!first.has_value(), "the maximum is in the first block: the rescale never bites");
    if (pattern == InputPattern::LateMaximum && blockCols < spec.keys)
        QVERIFY2(first.has_value(),
                 "the maximum rises after the first block: the rescale must bite");

    // The bug changes the answer exactly when there is such a step.
    FlashOptions bug = o;
    bug.rescale = false;
    const StepEngine bugEngine(p, Algorithm::Flash, bug);
    QCOMPARE(bugEngine.firstRescaleStep(), first); // the maxima do not depend on the rescale
    const Matrix good = flashForward(p, o).o;
    const Matrix bad = flashForward(p, bug).o;
    if (!first) {
        QVERIFY((good - bad).cwiseAbs().maxCoeff() <= 1e-14);
    } else if (pattern == InputPattern::LateMaximum) {
        const CheckReport report = compareOutputs(bad, referenceAttention(p), 1e-10);
        const Range rows = engine.info(*first).rows;
        QVERIFY(std::any_of(report.wrongRows.begin(), report.wrongRows.end(),
                            [&](int r) { return r >= rows.begin && r < rows.end; }));
    }

    // Without a running maximum nothing is ever rescaled.
    FlashOptions noMax = o;
    noMax.runningMax = false;
    QVERIFY(!StepEngine(p, Algorithm::Flash, noMax).firstRescaleStep().has_value());
}

void TstSteps::badStepIndex() {
    ProblemSpec spec;
    const Problem p = makeProblem(spec);
    const StepEngine engine(p, Algorithm::Flash, FlashOptions{});
    for (int bad : {-1, engine.stepCount(), engine.stepCount() + 100}) {
        try {
            (void)engine.info(bad);
            QFAIL("info() accepted a step outside the run");
        } catch (const EngineError& e) {
            QVERIFY(e.kind() == ErrorKind::InvalidArgument);
            QVERIFY(std::string(e.what()).size() > 10);
        }
        QVERIFY_THROWS_EXCEPTION(EngineError, (void)engine.state(bad));
    }
    FlashOptions zero;
    zero.blockRows = 0;
    QVERIFY_THROWS_EXCEPTION(EngineError, StepEngine(p, Algorithm::Flash, zero));
}

// Sizes inside the documented limits whose step count does not fit the int steps are numbered
// with: refused up front with the count, the limit and what to change, in a fraction of a
// second (the count of 1 + Kb + 8 tiles + ... used to wrap to a negative int, and the paper
// order spent O(query blocks x key blocks) finding it).
void TstSteps::stepCountsPastIntAreRefused_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<LoopOrder>("order");
    QTest::addColumn<qint64>("steps");
    // Query outer: 3 per query block + 6 per tile; paper order: 1 + Kb + 8 per tile + Qb.
    QTest::newRow("n 100000, query outer") << 100000 << LoopOrder::QueryOuter
                                           << qint64(3) * 25000 + qint64(6) * 25000 * 25000;
    QTest::newRow("n 100000, kv outer") << 100000 << LoopOrder::KeyValueOuter
                                        << 1 + qint64(25000) + qint64(8) * 25000 * 25000 + 25000;
    QTest::newRow("n 2^18, kv outer") << (1 << 18) << LoopOrder::KeyValueOuter
                                      << 1 + qint64(65536) * 2 + qint64(8) * 65536 * 65536;
}

void TstSteps::stepCountsPastIntAreRefused() {
    QFETCH(int, n);
    QFETCH(LoopOrder, order);
    QFETCH(qint64, steps);
    // d = 1: the inputs are small, the step count is not.
    const Problem p = makeProblem(Matrix::Zero(n, 1), Matrix::Zero(n, 1), Matrix::Zero(n, 1));
    const FlashOptions o = makeOptions(4, 4, order);
    QElapsedTimer timer;
    timer.start();
    try {
        const StepEngine engine(p, Algorithm::Flash, o);
        QFAIL(qPrintable(QStringLiteral("accepted, with %1 steps").arg(engine.stepCount())));
    } catch (const EngineError& e) {
        QCOMPARE(e.kind(), ErrorKind::LimitExceeded);
        const std::string message = e.what();
        QVERIFY2(message.find("gives " + std::to_string(steps) + " steps") != std::string::npos,
                 e.what());
        QVERIFY2(message.find("at most " + std::to_string(kMaxStepCount)) != std::string::npos,
                 e.what());
        QVERIFY2(message.find("larger blocks") != std::string::npos, e.what());
    }
    QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed()) + " ms"));
    // The same count from the sizes alone, without inputs, and the same refusal.
    QCOMPARE(qint64(countSteps(p.spec, Algorithm::Flash, o)), steps);
    QVERIFY_THROWS_EXCEPTION(EngineError, validateSteps(p.spec, Algorithm::Flash, o));
    // With blocks large enough, the same sizes are fine.
    const FlashOptions large = makeOptions(1024, 1024, order);
    QVERIFY(countSteps(p.spec, Algorithm::Flash, large) < kMaxStepCount);
    validateSteps(p.spec, Algorithm::Flash, large);
}

void TstSteps::countStepsMatchesTheEngine() {
    const Fetched f = fetchConfig();
    const StepEngine engine(f.problem, f.algorithm, f.options);
    QCOMPARE(countSteps(f.problem.spec, f.algorithm, f.options), std::int64_t(engine.stepCount()));
    validateSteps(f.problem.spec, f.algorithm, f.options);
}

// The paper's order with many query blocks per key block (n = 2^20, Br = 16, Bc = 2^16): the
// engine is built in O(blocks), and a step deep inside a key block is found and counted without
// walking the 9 x 65536 steps before it one by one through an O(query blocks) lookup each.
void TstSteps::largePaperOrderRunsStepCheaply() {
    const int n = kMaxSequenceLength;
    const Problem p = makeProblem(Matrix::Zero(n, 1), Matrix::Zero(n, 1), Matrix::Zero(n, 1));
    const FlashOptions o = makeOptions(16, 1 << 16, LoopOrder::KeyValueOuter);
    QElapsedTimer timer;
    timer.start();
    const StepEngine engine(p, Algorithm::Flash, o);
    const qint64 qb = n / 16, kb = 16;
    QCOMPARE(qint64(engine.stepCount()), 1 + kb + 8 * qb * kb + qb);
    QCOMPARE(engine.firstStepOfOuterBlock(1), int(1 + 1 + 8 * qb));
    const int last = engine.stepCount() - 1;
    const StepInfo end = engine.info(last);
    QCOMPARE(end.kind, StepKind::StoreRunningState);
    QCOMPARE(end.queryBlock, int(qb - 1));
    QCOMPARE(end.keyBlock, int(kb - 1));
    QVERIFY(end.lastKeyBlock);
    // Everything counted through the last step is the closed form of the whole run.
    QVERIFY(engine.countersThrough(last) == flashCounts(n, n, 1, false, o));
    // A step in the middle of key block 7: query block 40000's UpdateSum.
    const int middle = engine.firstStepOfOuterBlock(7) + 1 + 8 * 40000 + 5;
    const StepState s = engine.state(middle);
    QCOMPARE(s.info.kind, StepKind::UpdateSum);
    QCOMPARE(s.info.queryBlock, 40000);
    QCOMPARE(s.info.keyBlock, 7);
    QCOMPARE(s.mNew.size(), Eigen::Index(16));
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed()) + " ms"));
}

void TstSteps::stepExpressions_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("stepCount");
    QTest::addColumn<int>("firstRescale"); // -1: none
    QTest::addColumn<qint64>("step");      // -1: resolves to nothing
    const qint64 max = kMaxStepCount - 1;
    QTest::newRow("number") << "12" << 100 << 20 << qint64(12);
    QTest::newRow("zero") << "0" << 100 << 20 << qint64(0);
    QTest::newRow("past the end, exact") << "500" << 100 << 20 << qint64(500);
    QTest::newRow("largest number") << "2147483646" << 100 << 20 << max;
    QTest::newRow("end") << "end" << 100 << 20 << qint64(99);
    QTest::newRow("end-3") << "end-3" << 100 << 20 << qint64(96);
    QTest::newRow("first-rescale") << "first-rescale" << 100 << 20 << qint64(20);
    QTest::newRow("first-rescale+1") << "first-rescale+1" << 100 << 20 << qint64(21);
    QTest::newRow("first-rescale-25") << "first-rescale-25" << 100 << 20 << qint64(-5);
    // No wrap-around: the sum is exact, and far past the end.
    QTest::newRow("first-rescale+max") << "first-rescale+2147483646" << 100 << 20 << 20 + max;
    QTest::newRow("end+max") << "end+2147483646" << int(kMaxStepCount) << 20 << 2 * max;
    QTest::newRow("no first rescale") << "first-rescale+1" << 100 << -1 << qint64(-1);
}

void TstSteps::stepExpressions() {
    QFETCH(QString, text);
    QFETCH(int, stepCount);
    QFETCH(int, firstRescale);
    QFETCH(qint64, step);
    const StepExpression e = parseStepExpression(text.toStdString());
    const auto first = firstRescale < 0 ? std::nullopt : std::optional<int>(firstRescale);
    const auto resolved = resolveStepExpression(e, stepCount, first);
    if (step == -1) {
        QVERIFY(!resolved);
        return;
    }
    QVERIFY(resolved);
    QCOMPARE(qint64(*resolved), step);
}

void TstSteps::badStepExpressions_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << "" << "empty";
    QTest::newRow("negative") << "-3" << "negative";
    QTest::newRow("offset past int") << "first-rescale+2147483647" << "past 2147483646";
    QTest::newRow("offset past int64") << "first-rescale+99999999999999999999999" << "past";
    QTest::newRow("number past int") << "2147483647" << "past 2147483646";
    QTest::newRow("number past int64") << "99999999999999999999999" << "past";
    QTest::newRow("offset below") << "first-rescale-2147483647" << "past 2147483646";
    QTest::newRow("garbage after the name") << "first-rescalex" << "only +K or -K";
    QTest::newRow("no offset") << "first-rescale+" << "missing";
    QTest::newRow("double sign") << "first-rescale+-5" << "not a whole number";
    QTest::newRow("word offset") << "end-two" << "not a whole number";
    QTest::newRow("trailing garbage") << "12abc" << "not a whole number";
    QTest::newRow("plus number") << "+12" << "not a whole number";
    QTest::newRow("space") << " 12" << "not a whole number";
    QTest::newRow("fraction") << "1.5" << "not a whole number";
    QTest::newRow("word") << "later" << "not a whole number";
}

void TstSteps::badStepExpressions() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    try {
        (void)parseStepExpression(text.toStdString());
        QFAIL("accepted");
    } catch (const EngineError& e) {
        QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
        const std::string what = e.what();
        QVERIFY2(what.find(message.toStdString()) != std::string::npos, e.what());
        QVERIFY2(what.find("'" + text.toStdString() + "'") != std::string::npos, e.what());
        QVERIFY2(what.find("first-rescale") != std::string::npos, e.what()); // the forms allowed
    }
}

void TstSteps::namesAndDescriptions() {
    std::set<std::string> names;
    for (int k = int(StepKind::InitialiseOutput); k <= int(kLastStepKind); ++k) {
        const StepKind kind = StepKind(k);
        names.insert(toString(kind));
        QVERIFY(!describe(kind).empty());
        QVERIFY(!describe(kind, {}, Algorithm::Backward).empty());
    }
    QCOMPARE(int(names.size()), int(kLastStepKind) + 1);
}

// The sentence under the animation says what the step computes with the switches as set: with
// the bug on, the rescale it no longer applies is named as skipped.
void TstSteps::descriptionsFollowTheSwitches() {
    FlashOptions correct;
    FlashOptions noRescale;
    noRescale.rescale = false;
    FlashOptions noMax;
    noMax.runningMax = false;
    for (const StepKind kind : {StepKind::UpdateSum, StepKind::UpdateOutput}) {
        QVERIFY(describe(kind, correct).find("exp(m_old − m_new) ·") != std::string::npos);
        QVERIFY(describe(kind, correct).find("skipped") == std::string::npos);
        QVERIFY(describe(kind, noRescale).find("skipped (the bug)") != std::string::npos);
        QVERIFY(describe(kind, noMax).find("exp(m_old") == std::string::npos);
    }
    QVERIFY(describe(StepKind::UpdateMax, noMax).find("m stays 0") != std::string::npos);
    QVERIFY(describe(StepKind::ComputeWeights, noMax).find("S_ij − m_new") == std::string::npos);
    QCOMPARE(describe(StepKind::LoadQuery, noRescale), describe(StepKind::LoadQuery, correct));
}

// Standard attention's score step computes the whole S for HBM (the next step writes it), not a
// tile kept on chip: its sentence says so, and FlashAttention's keeps "on chip".
void TstSteps::descriptionsFollowTheAlgorithm() {
    const std::string standard = describe(StepKind::ComputeScores, {}, Algorithm::Standard);
    QVERIFY2(standard.find("on chip") == std::string::npos, standard.c_str());
    QVERIFY2(standard.find("HBM") != std::string::npos, standard.c_str());
    const std::string flash = describe(StepKind::ComputeScores, {}, Algorithm::Flash);
    QVERIFY2(flash.find("on chip") != std::string::npos, flash.c_str());
    // Every step of standard attention that computes says nothing of a tile kept on chip.
    const StepEngine engine(makeProblem(makeSpec(8, 8, 4, false, Precision::Double,
                                                 InputPattern::Gaussian, 1)),
                            Algorithm::Standard, makeOptions(4, 4, LoopOrder::QueryOuter));
    for (int s = 0; s < engine.stepCount(); ++s) {
        const std::string text = describe(engine.info(s).kind, {}, Algorithm::Standard);
        QVERIFY2(text.find("tile") == std::string::npos, text.c_str());
    }
}

// Every step of either loop order names its blocks in words, with no "block -1" and no empty
// range ("keys 0–-1"): the paper order's first step concerns all query rows.
void TstSteps::blocksAreNamedWithoutMinusOne() {
    for (const LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter}) {
        const StepEngine engine(makeProblem(makeSpec(8, 8, 4, false, Precision::Double,
                                                     InputPattern::Gaussian, 1)),
                                Algorithm::Flash, makeOptions(4, 2, order));
        for (int s = 0; s < engine.stepCount(); ++s) {
            const std::string text = describeBlocks(engine.info(s), Algorithm::Flash);
            QVERIFY2(!text.empty() && text.find("-1") == std::string::npos, text.c_str());
        }
        if (order == LoopOrder::KeyValueOuter)
            QCOMPARE(describeBlocks(engine.info(0), Algorithm::Flash),
                     std::string("all query rows 0–7"));
        else
            QCOMPARE(describeBlocks(engine.info(2), Algorithm::Flash),
                     std::string("query block 0 (rows 0–3), key block 0 (keys 0–1)"));
    }
    QCOMPARE(describeBlocks(StepInfo{}, Algorithm::Standard), std::string("the whole matrices"));
}

QTEST_APPLESS_MAIN(TstSteps)
#include "tst_steps.moc"
