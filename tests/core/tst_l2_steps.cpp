// The step view's run through L2 (core/l2_steps.h): its DRAM bytes step by step, against the
// counting model and against what each matrix costs to bring in once.
#include "core/l2_steps.h"
#include "core/problem.h"
#include "core/steps.h"

#include "test_support.h"

#include <QTest>

#include <limits>

using namespace flashviz;
using namespace flashviz::test;
using u64 = std::uint64_t;

namespace {

struct Run {
    const char* name;
    Algorithm algorithm;
    int queries, keys, headDim, blockRows, blockCols;
    bool causal;
    LoopOrder order;
    bool keep, storeWeights;
};

const Run kRuns[] = {
    {"flash q-outer", Algorithm::Flash, 40, 40, 4, 16, 12, false, LoopOrder::QueryOuter, false, false},
    {"flash q-outer causal", Algorithm::Flash, 40, 40, 5, 8, 8, true, LoopOrder::QueryOuter, false, false},
    {"flash q-outer rows without keys", Algorithm::Flash, 50, 20, 4, 8, 6, true, LoopOrder::QueryOuter, false, false},
    {"flash q-outer keep-S", Algorithm::Flash, 24, 24, 4, 8, 8, false, LoopOrder::QueryOuter, true, false},
    {"flash paper order", Algorithm::Flash, 40, 40, 4, 16, 12, false, LoopOrder::KeyValueOuter, false, false},
    {"flash paper order causal keep-S", Algorithm::Flash, 20, 50, 4, 8, 6, true, LoopOrder::KeyValueOuter, true, false},
    {"standard", Algorithm::Standard, 20, 20, 4, 8, 8, false, LoopOrder::QueryOuter, false, false},
    {"backward", Algorithm::Backward, 24, 24, 4, 8, 8, false, LoopOrder::QueryOuter, false, false},
    {"backward causal", Algorithm::Backward, 24, 32, 4, 8, 8, true, LoopOrder::QueryOuter, false, false},
    {"backward stored P", Algorithm::Backward, 24, 24, 4, 8, 8, false, LoopOrder::QueryOuter, false, true},
};

std::shared_ptr<const StepEngine> engineFor(const Run& r) {
    FlashOptions o = keepingFullScores(makeOptions(r.blockRows, r.blockCols, r.order), r.keep);
    o.backward.storeWeights = r.storeWeights;
    return std::make_shared<const StepEngine>(
        makeProblem(makeSpec(r.queries, r.keys, r.headDim, r.causal)), r.algorithm, o);
}

constexpr double kHuge = 1e18, kTiny = 1;

void addRuns() {
    QTest::addColumn<int>("index");
    for (int i = 0; i < int(std::size(kRuns)); ++i) QTest::newRow(kRuns[i].name) << i;
}

} // namespace

class TstL2Steps : public QObject {
    Q_OBJECT
  private slots:
    void stepsAddUpToTheRun_data() { addRuns(); }
    void stepsAddUpToTheRun();
    void neverMoreThanCounted_data() { addRuns(); }
    void neverMoreThanCounted();
    void whatDoesNotFitIsTheCountingModel_data() { addRuns(); }
    void whatDoesNotFitIsTheCountingModel();
    void eachMatrixComesInOnce();
    void footprintDecidesTheFit();
    void assumptionsSayWhichCase();
};

// through(k) is the sum of the steps up to k, across every outer block's checkpoint.
void TstL2Steps::stepsAddUpToTheRun() {
    QFETCH(int, index);
    const auto engine = engineFor(kRuns[index]);
    const StepL2Model model(engine, kHuge);
    QVERIFY(model.fits());
    DramTraffic sum;
    QCOMPARE(model.through(-1), DramTraffic{});
    for (int s = 0; s < engine->stepCount(); ++s) {
        sum += model.ofStep(s);
        QCOMPARE(model.through(s), sum);
    }
    QCOMPARE(model.total(), sum);
}

// L2 only ever saves DRAM traffic: per step and in total at most what the counting model counts.
void TstL2Steps::neverMoreThanCounted() {
    QFETCH(int, index);
    const auto engine = engineFor(kRuns[index]);
    const StepL2Model model(engine, kHuge);
    for (int s = 0; s < engine->stepCount(); ++s) {
        const DramTraffic d = model.ofStep(s);
        const Counters c = engine->countersOf(engine->info(s));
        QVERIFY(d.readBytes <= c.hbmReadBytes);
        QVERIFY(d.writeBytes <= c.hbmWriteBytes);
    }
    const Counters all = engine->countersThrough(engine->stepCount() - 1);
    QVERIFY(model.total().readBytes < all.hbmReadBytes || engine->algorithm() == Algorithm::Standard ||
            all.hbmReadBytes == 0);
}

// A run larger than the usable L2: every counted byte goes to DRAM, step by step.
void TstL2Steps::whatDoesNotFitIsTheCountingModel() {
    QFETCH(int, index);
    const auto engine = engineFor(kRuns[index]);
    const StepL2Model model(engine, kTiny);
    QVERIFY(!model.fits());
    for (int s = 0; s < engine->stepCount(); ++s) {
        const Counters c = engine->countersThrough(s);
        QCOMPARE(model.through(s), (DramTraffic{c.hbmReadBytes, c.hbmWriteBytes}));
    }
}

// With everything in L2, DRAM reads each input once and receives each output once, whatever
// the loop order re-reads.
void TstL2Steps::eachMatrixComesInOnce() {
    const u64 e = kBytesPerElement;
    const auto total = [](const Run& r) { return StepL2Model(engineFor(r), kHuge).total(); };
    {   // Q-outer reads K, V once per query block; DRAM once. O written once.
        const Run& r = kRuns[0];
        const u64 q = u64(r.queries) * r.headDim * e, kv = u64(r.keys) * r.headDim * e;
        QCOMPARE(total(r), (DramTraffic{q + 2 * kv, q}));
        const auto engine = engineFor(r);
        QVERIFY(engine->countersThrough(engine->stepCount() - 1).hbmReadBytes > q + 2 * kv);
    }
    {   // Causal, 50 queries over 20 keys: the first rows see no keys; K, V still come once.
        const Run& r = kRuns[2];
        const u64 q = u64(r.queries) * r.headDim * e, kv = u64(r.keys) * r.headDim * e;
        QCOMPARE(total(r), (DramTraffic{q + 2 * kv, q}));
    }
    {   // The debug copy of S: each tile written once, all of them reach DRAM.
        const Run& r = kRuns[3];
        const u64 q = u64(r.queries) * r.headDim * e, kv = u64(r.keys) * r.headDim * e;
        QCOMPARE(total(r), (DramTraffic{q + 2 * kv, q + u64(r.queries) * r.keys * e}));
    }
    {   // The paper order: O, m, ℓ written at the start and rewritten in L2; Q read once.
        const Run& r = kRuns[4];
        const u64 q = u64(r.queries) * r.headDim * e, kv = u64(r.keys) * r.headDim * e;
        QCOMPARE(total(r), (DramTraffic{q + 2 * kv, q + 2 * u64(r.queries) * e}));
    }
    {   // Standard attention: S and P are read back from L2, written to DRAM once.
        const Run& r = kRuns[6];
        const u64 q = u64(r.queries) * r.headDim * e, kv = u64(r.keys) * r.headDim * e,
                  s = u64(r.queries) * r.keys * e;
        QCOMPARE(total(r), (DramTraffic{q + 2 * kv, 2 * s + q}));
    }
    {   // The backward: Q, K, V, O, dO, L read once; D, dQ, dK, dV written once.
        const Run& r = kRuns[7];
        const u64 q = u64(r.queries) * r.headDim * e, kv = u64(r.keys) * r.headDim * e,
                  col = u64(r.queries) * e;
        QCOMPARE(total(r), (DramTraffic{3 * q + 2 * kv + col, col + q + 2 * kv}));
    }
    {   // ... with P stored by the forward: P read once per tile, L not at all.
        const Run& r = kRuns[9];
        const u64 q = u64(r.queries) * r.headDim * e, kv = u64(r.keys) * r.headDim * e,
                  col = u64(r.queries) * e, p = u64(r.queries) * r.keys * e;
        QCOMPARE(total(r), (DramTraffic{3 * q + 2 * kv + p, col + q + 2 * kv}));
    }
}

// The fit is the run's matrices against the usable L2, at the byte.
void TstL2Steps::footprintDecidesTheFit() {
    const Run& r = kRuns[0];
    const double bytes = double(2 * r.queries * r.headDim + 2 * r.keys * r.headDim) *
                         double(kBytesPerElement);
    QCOMPARE(StepL2Model(engineFor(r), kHuge).footprintBytes(), bytes);
    QVERIFY(StepL2Model(engineFor(r), bytes).fits());
    QVERIFY(!StepL2Model(engineFor(r), bytes - 1).fits());
    const Run& s = kRuns[6]; // standard: S and P too
    QCOMPARE(StepL2Model(engineFor(s), kHuge).footprintBytes(),
             double(2 * s.queries * s.headDim + 2 * s.keys * s.headDim + 2 * s.queries * s.keys) *
                 double(kBytesPerElement));
}

void TstL2Steps::assumptionsSayWhichCase() {
    const auto fits = StepL2Model(engineFor(kRuns[0]), kHuge).assumptions();
    const auto spills = StepL2Model(engineFor(kRuns[0]), kTiny).assumptions();
    QCOMPARE(fits.size(), std::size_t(2));
    QVERIFY(QString::fromStdString(fits[0]).contains(QStringLiteral("they fit")));
    QVERIFY(QString::fromStdString(spills[0]).contains(QStringLiteral("do not fit")));
    QVERIFY(QString::fromStdString(spills[1]).contains(QStringLiteral("every counted byte")));
}

QTEST_APPLESS_MAIN(TstL2Steps)
#include "tst_l2_steps.moc"
