// Small helpers the core test suites share, so that each suite states only what it tests.
#pragma once

#include "core/counters.h"
#include "core/options.h"
#include "core/problem.h"
#include "core/steps.h"

#include <QString>
#include <QtTest/QtTest>

#include <cmath>
#include <cstdint>
#include <limits>

namespace flashviz::test {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The forward pass's shapes (tst_flash, tst_flash_versions): ragged tiles, n_q != n_k both ways,
// Br != Bc, odd d, blocks past n, the explainer's toy.
struct FlashShape {
    const char* name;
    int queries, keys, headDim, blockRows, blockCols;
};
inline constexpr FlashShape kFlashShapes[] = {
    {"toy 8x8 d4 Br4 Bc4", 8, 8, 4, 4, 4},
    {"ragged 37x37 d5 Br8 Bc8", 37, 37, 5, 8, 8},
    {"ragged 100x100 d3 Br16 Bc24", 100, 100, 3, 16, 24},
    {"nq<nk 24x70 d7 Br16 Bc8", 24, 70, 7, 16, 8},
    {"nq>nk 70x24 d5 Br8 Bc16", 70, 24, 5, 8, 16},
    {"block past n 20x13 d3 Br64 Bc64", 20, 13, 3, 64, 64},
    {"single 1x1 d1 Br1 Bc1", 1, 1, 1, 1, 1},
    {"row tiles 9x9 d2 Br1 Bc9", 9, 9, 2, 1, 9},
    {"130x130 d16 Br64 Bc64", 130, 130, 16, 64, 64},
};

// A problem's spec from the fields the suites vary; scale stays unset (1/sqrt(d)).
inline ProblemSpec makeSpec(int nq, int nk, int d, bool causal = false,
                            Precision precision = Precision::Double,
                            InputPattern pattern = InputPattern::Gaussian, std::uint64_t seed = 1) {
    ProblemSpec s;
    s.queries = nq;
    s.keys = nk;
    s.headDim = d;
    s.causal = causal;
    s.precision = precision;
    s.pattern = pattern;
    s.seed = seed;
    return s;
}

// Tile sizes and loop order; rescale, running max and the debug copy of S keep their defaults,
// so a test that switches one of them says so where it does.
inline FlashOptions makeOptions(int br, int bc, LoopOrder order = LoopOrder::QueryOuter) {
    FlashOptions o;
    o.blockRows = br;
    o.blockCols = bc;
    o.loopOrder = order;
    return o;
}

// The debug copy of S switched on (or off), for the tests whose rows vary it.
inline FlashOptions keepingFullScores(FlashOptions o, bool keep = true) {
    o.keepFullScores = keep;
    return o;
}

// How many blocks of size b cover a; the tests count tiles independently of the engine.
inline int ceilDiv(int a, int b) {
    return (a + b - 1) / b;
}

// Largest |a - b| over all entries; inf when the shapes differ, so a wrong shape never passes.
inline double maxAbs(const Matrix& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return kInf;
    if (a.size() == 0) return 0;
    return (a - b).cwiseAbs().maxCoeff();
}

// Counters on one line, for failure messages.
inline QString show(const Counters& c) {
    return QStringLiteral("read %1 B, write %2 B, %3 FLOPs, peak %4 elements")
        .arg(c.hbmReadBytes)
        .arg(c.hbmWriteBytes)
        .arg(c.flops)
        .arg(c.peakScratchElements);
}

// The six columns many data-driven tests start with: the problem's sizes, the tile sizes and
// the causal mask. addTileCaseColumns() declares them; fetchTileCase() reads the current row,
// e.g. `const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();`.
struct TileCase {
    int queries, keys, headDim, blockRows, blockCols;
    bool causal;
};

inline void addTileCaseColumns() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("blockRows");
    QTest::addColumn<int>("blockCols");
    QTest::addColumn<bool>("causal");
}

inline TileCase fetchTileCase() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, headDim);
    QFETCH(int, blockRows);
    QFETCH(int, blockCols);
    QFETCH(bool, causal);
    return {queries, keys, headDim, blockRows, blockCols, causal};
}

// Equal entry by entry, NaN equal to NaN (the buggy run's values may be NaN), shapes included.
inline bool sameValues(const Matrix& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j)
            if (!(a(i, j) == b(i, j) || (std::isnan(a(i, j)) && std::isnan(b(i, j))))) return false;
    return true;
}
inline bool sameValues(const Vector& a, const Vector& b) {
    return sameValues(Matrix(a.transpose()), Matrix(b.transpose()));
}

// Two step states alike in every field (the engine's and the window's suites compare states
// reached by different paths: walked, jumped to, built on a worker).
inline bool sameState(const StepState& a, const StepState& b) {
    return a.info == b.info && a.counters == b.counters && a.sramElements == b.sramElements &&
           sameValues(a.query, b.query) && sameValues(a.key, b.key) &&
           sameValues(a.value, b.value) && sameValues(a.scores, b.scores) &&
           sameValues(a.weights, b.weights) && sameValues(a.mOld, b.mOld) &&
           sameValues(a.mNew, b.mNew) && sameValues(a.lOld, b.lOld) && sameValues(a.lNew, b.lNew) &&
           sameValues(a.correction, b.correction) && sameValues(a.accOld, b.accOld) &&
           sameValues(a.accNew, b.accNew) && sameValues(a.output, b.output) &&
           sameValues(a.dO, b.dO) && sameValues(a.lse, b.lse) && sameValues(a.delta, b.delta) &&
           sameValues(a.dP, b.dP) && sameValues(a.dS, b.dS) && sameValues(a.dQOld, b.dQOld) &&
           sameValues(a.dQNew, b.dQNew) && sameValues(a.dKOld, b.dKOld) &&
           sameValues(a.dKNew, b.dKNew) && sameValues(a.dVOld, b.dVOld) &&
           sameValues(a.dVNew, b.dVNew);
}

} // namespace flashviz::test
