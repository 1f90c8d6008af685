// The input designer (core/input_design.h): the quick designs and random ones over many sizes,
// each checked twice, from S = scale · Q Kᵀ computed here and from the engine's own report; the
// step engine's first rescale; sharpness; the validation messages; determinism.
#include "core/errors.h"
#include "core/input_design.h"
#include "core/steps.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>

using namespace flashviz;
using namespace flashviz::test;

namespace {

constexpr int kBlock = 4;

enum class Quick { OneBlock, Diagonal, LastBlock, Random };

InputDesign quickDesign(Quick kind, const ProblemSpec& spec, double sharpness) {
    switch (kind) {
    case Quick::OneBlock: // the middle block: the rescale neither first nor last
        return oneBlockDesign(spec, kBlock, blockCount(spec.keys, kBlock) / 2, sharpness);
    case Quick::Diagonal:
        return diagonalDesign(spec, kBlock, sharpness);
    case Quick::LastBlock:
        return lastBlockDesign(spec, kBlock, sharpness);
    case Quick::Random:
        return randomDesign(spec, kBlock, sharpness);
    }
    return {};
}

ProblemSpec designedSpec(int n, int d, bool causal,
                         const std::function<InputDesign(const ProblemSpec&)>& make) {
    ProblemSpec spec = makeSpec(n, n, d, causal, Precision::Double, InputPattern::Gaussian, 7);
    spec.design = make(spec);
    return spec;
}

std::string refusal(const ProblemSpec& spec) {
    try {
        validate(spec);
    } catch (const EngineError& e) {
        return e.what();
    }
    return {};
}

// Checks the problem against its design from S alone, as a reader would: each row's largest
// score sits in its block and stands `sharpness` above the rest, and its running maximum over
// blocks of `blockCols` keys is flat until that block, rises there by the sharpness, and stays.
void checkScoresRealise(const Problem& p, int blockCols) {
    const ProblemSpec& spec = p.spec;
    const InputDesign& design = *spec.design;
    const Matrix s = p.scale() * p.q * p.k.transpose();
    const double tolerance = 1e-9 * (1.0 + s.cwiseAbs().maxCoeff());
    for (int row = 0; row < spec.queries; ++row) {
        const int last = lastVisibleKey(row, spec.queries, spec.keys, spec.causal);
        if (last < 0) continue;
        int best = 0;
        for (int j = 1; j <= last; ++j)
            if (s(row, j) > s(row, best)) best = j;
        const RowMaximum& wanted = design.rows[std::size_t(row)];
        QCOMPARE(best / design.blockSize, wanted.keyBlock);
        for (int j = 0; j <= last; ++j)
            if (j != best) QVERIFY(s(row, best) - s(row, j) >= wanted.sharpness - tolerance);
        // The running maximum block by block: it may rise only at the maximum's block.
        double running = -kInf;
        for (int block = 0; block * blockCols <= last; ++block) {
            double blockMax = -kInf;
            for (int j = block * blockCols; j <= std::min(last, (block + 1) * blockCols - 1); ++j)
                blockMax = std::max(blockMax, s(row, j));
            const bool rises = block > 0 && blockMax > running;
            QCOMPARE(rises, block > 0 && block == best / blockCols);
            if (rises) QVERIFY(blockMax - running >= wanted.sharpness - tolerance);
            running = std::max(running, blockMax);
        }
    }
}

// The engine's report agrees with the design: the block of the maximum, one rescale at that block
// with the factor e^−sharpness (none when it is the first), the gap.
void checkReportRealises(const Problem& p, int blockCols) {
    const ProblemSpec& spec = p.spec;
    const auto realised = realisedMaxima(p, makeOptions(8, blockCols));
    QCOMPARE(firstUnrealisedRow(spec, realised, blockCols), -1);
    for (int row = 0; row < spec.queries; ++row) {
        const RealisedRow& r = realised[std::size_t(row)];
        const RowMaximum& wanted = spec.design->rows[std::size_t(row)];
        if (lastVisibleKey(row, spec.queries, spec.keys, spec.causal) < 0) {
            QCOMPARE(r.maxKey, -1);
            continue;
        }
        QCOMPARE(r.maxKey / spec.design->blockSize, wanted.keyBlock);
        QCOMPARE(r.maxBlock, r.maxKey / blockCols);
        QVERIFY(r.gap >= wanted.sharpness * (1 - 1e-9));
        if (r.maxBlock == 0) {
            QVERIFY(r.rescales.empty());
        } else {
            QCOMPARE(int(r.rescales.size()), 1);
            QCOMPARE(r.rescales[0].keyBlock, r.maxBlock);
            QVERIFY(std::abs(std::log(r.rescales[0].factor) + wanted.sharpness) < 1e-6);
        }
    }
}

// The distinct keys the rows' maxima are put on, key 0 aside (what the codes must tell apart).
int distinctTargets(const ProblemSpec& spec) {
    std::set<int> keys;
    for (int row = 0; row < spec.queries; ++row) {
        const int b = spec.design->rows[std::size_t(row)].keyBlock;
        if (lastVisibleKey(row, spec.queries, spec.keys, spec.causal) >= 1)
            keys.insert(b > 0 ? b * spec.design->blockSize : 1);
    }
    return int(keys.size());
}

} // namespace

class InputDesignTest : public QObject {
    Q_OBJECT
  private slots:
    void quickDesignsRealised_data();
    void quickDesignsRealised();
    void sharpnessPerRow();
    void stepEngineRescalesAtTheDesignedBlock();
    void otherTileSizesKeepTheKeys();
    void singleKeyBlocks();
    void floatPrecision();
    void quickDesignShapes();
    void validationMessages();
    void tooManyBlocksForD();
    void sameSpecSameMatrices();
};

void InputDesignTest::quickDesignsRealised_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("d");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("kind");
    const char* names[] = {"one-block", "diagonal", "last-block", "random"};
    for (int n : {8, 33, 256})
        for (int d : {1, 2, 4, 16, 64})
            for (bool causal : {false, true})
                for (int kind = 0; kind < 4; ++kind)
                    QTest::addRow("n%d d%d %s %s", n, d, causal ? "causal" : "full", names[kind])
                        << n << d << causal << kind;
}

void InputDesignTest::quickDesignsRealised() {
    QFETCH(int, n);
    QFETCH(int, d);
    QFETCH(bool, causal);
    QFETCH(int, kind);
    const ProblemSpec spec = designedSpec(
        n, d, causal, [&](const ProblemSpec& s) { return quickDesign(Quick(kind), s, 8.0); });
    const std::string why = refusal(spec);
    const int targets = distinctTargets(spec);
    if (!why.empty()) {
        // Refused only where d cannot tell the targets apart as ±e_k and has no circle for them
        // (d <= 2): from d = 3 on, circles hold every design up to these sizes.
        QVERIFY2((targets + 1) / 2 > d, why.c_str());
        QVERIFY2(d <= 2, why.c_str());
        QVERIFY2(why.find("d = " + std::to_string(d)) != std::string::npos, why.c_str());
        QVERIFY2(why.find("d = " + std::to_string((targets + 1) / 2) + " holds it") !=
                     std::string::npos,
                 why.c_str());
        QVERIFY_THROWS_EXCEPTION(EngineError, makeProblem(spec));
        return;
    }
    const Problem p = makeProblem(spec);
    QCOMPARE(p.q.rows(), n);
    QCOMPARE(p.k.cols(), d);
    checkScoresRealise(p, kBlock);
    checkReportRealises(p, kBlock);
}

void InputDesignTest::sharpnessPerRow() {
    // Random blocks and a different sharpness on every row, over the whole allowed range.
    for (int d : {4, 16, 64}) {
        ProblemSpec spec = designedSpec(
            64, d, false, [](const ProblemSpec& s) { return randomDesign(s, kBlock, 1.0); });
        std::mt19937_64 engine(3);
        for (RowMaximum& r : spec.design->rows)
            r.sharpness = kMinSharpness +
                          (kMaxSharpness - kMinSharpness) * double(engine() >> 11) * 0x1.0p-53;
        spec.design->rows[0].sharpness = kMinSharpness;
        spec.design->rows[1].sharpness = kMaxSharpness;
        const Problem p = makeProblem(spec);
        checkScoresRealise(p, kBlock);
        checkReportRealises(p, kBlock);
        // The gap is the sharpness itself: key 0 scores 0, the maximum `sharpness`.
        const auto realised = realisedMaxima(p, makeOptions(8, kBlock));
        for (int row = 0; row < spec.queries; ++row)
            QVERIFY(std::abs(realised[std::size_t(row)].gap -
                             spec.design->rows[std::size_t(row)].sharpness) < 1e-9 * 50);
    }
}

void InputDesignTest::stepEngineRescalesAtTheDesignedBlock() {
    constexpr int kRows = 4;
    for (bool causal : {false, true})
        for (int block : {0, 1, 2, 3}) {
            const ProblemSpec spec = designedSpec(16, 8, causal, [&](const ProblemSpec& s) {
                return oneBlockDesign(s, kBlock, block, 6.0);
            });
            // Expected: the first query block with a row whose maximum is past block 0 (causal
            // rows that do not see `block` take their last visible one), at the earliest such
            // block among its rows.
            std::optional<std::pair<int, int>> expected;
            for (int qb = 0; qb < 16 / kRows && !expected; ++qb)
                for (int row = qb * kRows; row < (qb + 1) * kRows; ++row) {
                    const int b = spec.design->rows[std::size_t(row)].keyBlock;
                    if (b > 0 && (!expected || b < expected->second)) expected = std::pair{qb, b};
                }
            const StepEngine engine(makeProblem(spec), Algorithm::Flash,
                                    makeOptions(kRows, kBlock));
            const auto step = engine.firstRescaleStep();
            QCOMPARE(step.has_value(), expected.has_value());
            if (!step) continue;
            const StepInfo info = engine.info(*step);
            QCOMPARE(info.kind, StepKind::UpdateSum);
            QCOMPARE(info.queryBlock, expected->first);
            QCOMPARE(info.keyBlock, expected->second);
            // The engine's correction there is e^−sharpness.
            const StepState state = engine.state(*step);
            QVERIFY(std::abs(state.correction.minCoeff() - std::exp(-6.0)) < 1e-12);
        }
}

void InputDesignTest::otherTileSizesKeepTheKeys() {
    // Made for blocks of 4, run with blocks of 8 or 2: the maxima stay on the same keys.
    const ProblemSpec spec = designedSpec(
        32, 16, false, [](const ProblemSpec& s) { return diagonalDesign(s, kBlock, 5.0); });
    const Problem p = makeProblem(spec);
    for (int bc : {2, 8}) {
        const auto realised = realisedMaxima(p, makeOptions(4, bc));
        QCOMPARE(firstUnrealisedRow(spec, realised, bc), -1);
        checkScoresRealise(p, bc);
    }
}

void InputDesignTest::singleKeyBlocks() {
    // Blocks of one key: a row whose maximum is block 0 has it on key 0, the reference itself.
    for (int d : {2, 3, 4, 16})
        for (bool causal : {false, true}) {
            const ProblemSpec spec = designedSpec(
                8, d, causal, [](const ProblemSpec& s) { return randomDesign(s, 1, 4.0); });
            if (!refusal(spec).empty()) {
                QVERIFY(d <= 3);
                continue;
            }
            const Problem p = makeProblem(spec);
            checkScoresRealise(p, 1);
            checkReportRealises(p, 1);
        }
    ProblemSpec all0 = designedSpec(
        8, 1, false, [](const ProblemSpec& s) { return oneBlockDesign(s, 1, 0, 4.0); });
    checkScoresRealise(makeProblem(all0), 1);
}

void InputDesignTest::floatPrecision() {
    ProblemSpec spec = designedSpec(
        64, 4, false, [](const ProblemSpec& s) { return diagonalDesign(s, kBlock, 8.0); });
    spec.precision = Precision::Float;
    const StepEngine engine(makeProblem(spec), Algorithm::Flash, makeOptions(8, kBlock));
    const auto step = engine.firstRescaleStep();
    QVERIFY(step.has_value());
    // Rows 0..7 are in blocks 0 and 1 (16 blocks over 64 rows): the first rise is block 1.
    QCOMPARE(engine.info(*step).keyBlock, 1);
    QCOMPARE(engine.info(*step).queryBlock, 0);
}

void InputDesignTest::quickDesignShapes() {
    const ProblemSpec full = makeSpec(16, 16, 4);
    const InputDesign diagonal = diagonalDesign(full, 4, 3.0);
    QCOMPARE(int(diagonal.rows.size()), 16);
    for (int row = 0; row < 16; ++row) {
        QCOMPARE(diagonal.rows[std::size_t(row)].keyBlock, row / 4);
        QCOMPARE(diagonal.rows[std::size_t(row)].sharpness, 3.0);
        QCOMPARE(lastBlockDesign(full, 4, 3.0).rows[std::size_t(row)].keyBlock, 3);
        QCOMPARE(oneBlockDesign(full, 4, 2, 3.0).rows[std::size_t(row)].keyBlock, 2);
    }
    // Causal, more queries than keys: the first rows see nothing (block 0), the rest their
    // prefix; one block past what a row sees falls back to its last visible block.
    const ProblemSpec causal = makeSpec(12, 8, 4, true);
    const InputDesign last = lastBlockDesign(causal, 4, 3.0);
    const InputDesign one = oneBlockDesign(causal, 4, 1, 3.0);
    for (int row = 0; row < 12; ++row) {
        const int visible = visibleDesignBlocks(causal, 4, row);
        QCOMPARE(visible, row < 4 ? 0 : (row - 4) / 4 + 1);
        QCOMPARE(last.rows[std::size_t(row)].keyBlock, std::max(visible - 1, 0));
        QCOMPARE(one.rows[std::size_t(row)].keyBlock, std::min(1, std::max(visible - 1, 0)));
        QCOMPARE(diagonalDesign(causal, 4, 3.0).rows[std::size_t(row)].keyBlock,
                 last.rows[std::size_t(row)].keyBlock);
    }
    // Random: every block a row sees is drawn somewhere, none it does not; the seed decides.
    const ProblemSpec big =
        makeSpec(400, 32, 16, false, Precision::Double, InputPattern::Gaussian, 5);
    const InputDesign random = randomDesign(big, 4, 2.0);
    std::set<int> seen;
    for (const RowMaximum& r : random.rows)
        seen.insert(r.keyBlock);
    QCOMPARE(int(seen.size()), 8);
    QVERIFY(random == randomDesign(big, 4, 2.0));
    ProblemSpec other = big;
    other.seed = 6;
    QVERIFY(!(random == randomDesign(other, 4, 2.0)));
    QVERIFY_THROWS_EXCEPTION(EngineError, diagonalDesign(full, 0, 3.0));
}

void InputDesignTest::validationMessages() {
    const auto expect = [](ProblemSpec spec, const char* words) {
        const std::string why = refusal(spec);
        QVERIFY2(why.find(words) != std::string::npos, (why + " | expected: " + words).c_str());
        QVERIFY_THROWS_EXCEPTION(EngineError, makeProblem(spec));
    };
    const ProblemSpec good =
        designedSpec(8, 4, false, [](const ProblemSpec& s) { return diagonalDesign(s, 4, 8.0); });
    QVERIFY(refusal(good).empty());
    ProblemSpec s = good;
    s.design->rows.pop_back();
    expect(s, "7 rows for n_q = 8 queries");
    s = good;
    s.design->rows[3].keyBlock = 2;
    expect(s, "row 3: key block 2 is not one of the 2 blocks (0 to 1) of n_k = 8 keys");
    s = good;
    s.design->rows[3].keyBlock = -1;
    expect(s, "row 3: key block -1");
    s = good;
    s.design->blockSize = 0;
    expect(s, "blockSize 0 must be from 1");
    s = good;
    s.design->rows[5].sharpness = std::nan("");
    expect(s, "row 5: the sharpness is not a finite number");
    s.design->rows[5].sharpness = std::numeric_limits<double>::infinity();
    expect(s, "row 5: the sharpness is not a finite number");
    s.design->rows[5].sharpness = 0.1;
    expect(s, "row 5: sharpness 0.1 is outside 0.5 to 50 logits");
    s.design->rows[5].sharpness = 60;
    expect(s, "row 5: sharpness 60 is outside");
    // Causal: row 2 sees keys 0..2, block 0 only.
    s = good;
    s.causal = true;
    s.design->rows[2].keyBlock = 1;
    expect(s,
           "row 2: key block 1 lies past what the row sees under the causal mask (blocks 0 to 0)");
    ProblemSpec wide = designedSpec(
        12, 4, false, [](const ProblemSpec& sp) { return oneBlockDesign(sp, 4, 0, 8.0); });
    wide.keys = 8;
    wide.causal = true; // rows 0..3 see no key
    wide.design = lastBlockDesign(wide, 4, 8.0);
    QVERIFY(refusal(wide).empty());
    wide.design->rows[1].keyBlock = 1;
    expect(wide, "row 1 sees no key under the causal mask: its block must be 0, not 1");
    // Every message names the designer.
    QVERIFY(refusal(wide).rfind("input design: ", 0) == 0);
    // A design the problem changed under (the causal switch, d, n_q, n_k) says what to do; one
    // wrong in itself (a sharpness) does not.
    constexpr const char* redesign =
        ": design the inputs again, or choose Generated in the settings panel";
    s = good;
    s.design = lastBlockDesign(good, 4, 8.0);
    s.causal = true; // switched on under it: row 0 sees key 0 alone, its block 1 lies past it
    const std::string causal = refusal(s);
    QVERIFY2(
        causal.find("lies past what the row sees under the causal mask") != std::string::npos &&
            causal.size() > std::strlen(redesign) &&
            causal.compare(causal.size() - std::strlen(redesign), std::string::npos, redesign) == 0,
        causal.c_str());
    s = good;
    s.design->rows.pop_back();
    QVERIFY2(refusal(s).find(redesign) != std::string::npos, refusal(s).c_str());
    s = good;
    s.headDim = 1;
    s.design = diagonalDesign(s, 1, 8.0); // eight different maxima: d = 1 tells two apart
    QVERIFY2(refusal(s).find(redesign) != std::string::npos, refusal(s).c_str());
    s = good;
    s.design->rows[5].sharpness = 60;
    QVERIFY2(refusal(s).find(redesign) == std::string::npos, refusal(s).c_str());
    QCOMPARE(sharpnessRefusal(60).value_or(""),
             std::string("sharpness 60 is outside 0.5 to 50 logits"));
    QVERIFY(!sharpnessRefusal(kMaxSharpness));
    s = good;
    s.files = InputFiles{"q.npy", "k.npy", "v.npy", {}, {}};
    QVERIFY(!refusal(s).empty());
}

void InputDesignTest::tooManyBlocksForD() {
    // Three different maxima (keys 1, 4, 8) need two dimensions as ±e_k; d = 1 has no circle.
    ProblemSpec spec =
        designedSpec(12, 1, false, [](const ProblemSpec& s) { return diagonalDesign(s, 4, 8.0); });
    const std::string why = refusal(spec);
    QVERIFY2(why.find("the rows' maxima sit at 3 different keys, which d = 1 cannot tell apart; "
                      "d = 2 holds it exactly") != std::string::npos,
             why.c_str());
    // Two fit in one dimension.
    spec.design->rows[11].keyBlock = 1;
    spec.design->rows[10].keyBlock = 1;
    spec.design->rows[9].keyBlock = 1;
    spec.design->rows[8].keyBlock = 1;
    QVERIFY(refusal(spec).empty());
    checkScoresRealise(makeProblem(spec), 4);
    // Circles packed too tightly at a high sharpness: refused with the scores it would need.
    ProblemSpec tight = designedSpec(
        4096, 3, false, [](const ProblemSpec& s) { return diagonalDesign(s, 4, kMaxSharpness); });
    const std::string tooTight = refusal(tight);
    QVERIFY2(tooTight.find("packs so tightly that scores would reach") != std::string::npos,
             tooTight.c_str());
    QVERIFY(tooTight.find("d = 512 holds it exactly") != std::string::npos);
}

void InputDesignTest::sameSpecSameMatrices() {
    const ProblemSpec spec =
        designedSpec(33, 16, true, [](const ProblemSpec& s) { return randomDesign(s, 4, 8.0); });
    const Problem a = makeProblem(spec), b = makeProblem(spec);
    QVERIFY(a.q == b.q);
    QVERIFY(a.k == b.k);
    QVERIFY(a.v == b.v);
    // V is the gaussian pattern's for the seed.
    ProblemSpec gaussian = spec;
    gaussian.design.reset();
    QVERIFY(makeProblem(gaussian).v == a.v);
    // Another seed: other noise in Q and K, the same design realised.
    ProblemSpec other = spec;
    other.seed = spec.seed + 1;
    const Problem c = makeProblem(other);
    QVERIFY(!(c.q == a.q));
    QVERIFY(!(c.k == a.k));
    checkScoresRealise(c, 4);
    // The noise reaches the scores: the other keys do not all score the same.
    const Matrix s = c.scale() * c.q * c.k.transpose();
    QVERIFY(s(32, 2) != s(32, 3));
    QVERIFY(s(32, 2) < 0);
    QVERIFY(s(32, 2) >= -2 * kDesignNoiseLogits * 1.01);
    QCOMPARE(s(32, 0), 0.0); // the reference key
}

QTEST_APPLESS_MAIN(InputDesignTest)
#include "tst_input_design.moc"
