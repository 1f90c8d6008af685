// The Hopper kernel's traces without a GPU (kernels/hopper_trace.h): marks paired into spans on
// one time axis, the copies' arrivals, the clock fitted against %globaltimer, the summary's
// unions and overlaps, the request's checks, and the file's strict reader.
#include "core/errors.h"
#include "core/units.h"
#include "kernels/hopper_trace.h"

#include <QtTest/QtTest>

#include <string>

using namespace flashviz;
using namespace flashviz::kernels;
using M = HopperMark;

namespace {

// A mark at `cycles` on an SM whose clock started at `clock0` and whose timer reads `ns0` then,
// the timer moving in steps of `step` ns at 0.5 ns per cycle (2 GHz).
struct Clock {
    std::uint32_t clock0 = 4000000000u; // near the 32-bit wrap on purpose
    std::uint64_t ns0 = 1764979200000000000ull; // %globaltimer counts from 1970: 2025-12-06
    double step = 32;
    HopperRawMark at(M mark, int tile, double cycles) const {
        // Whole nanoseconds, as the timer counts them (a double would round them to 256 ns).
        const std::uint64_t ns = ns0 + std::uint64_t(cycles * 0.5);
        const std::uint64_t stepped = ns / std::uint64_t(step) * std::uint64_t(step);
        return {mark, tile, stepped, std::uint32_t(clock0 + std::uint32_t(cycles))};
    }
};

// As the kernel writes them: %globaltimer read at each warpgroup's first mark and at Finish alone.
void readTimerAtEnds(HopperRawBlock& b, const Clock& c) {
    for (auto& marks : b.warpgroups) {
        for (std::size_t i = 1; i < marks.size(); ++i) marks[i].globalNs = 0;
        const double last = marks.empty() ? 0 : double(std::uint32_t(marks.back().clock - c.clock0));
        marks.push_back(c.at(M::Finish, -1, last + 10));
        HopperRawMark tick = c.at(M::TimerTick, -1, last + 80); // 35 ns later: the next step
        tick.globalNs = marks.back().globalNs + std::uint64_t(c.step);
        marks.push_back(tick);
    }
}

// One block of the variant with two consumers: Q and one key tile, every mark in order.
HopperRawBlock oneTileBlock(const Clock& c) {
    HopperRawBlock b;
    b.queryBlock = 0;
    b.sm = 5;
    b.warpgroups = {
        {c.at(M::QIssued, -1, 0), c.at(M::KIssued, 0, 100), c.at(M::VIssued, 0, 200)},
    };
    for (int consumer = 0; consumer < 2; ++consumer) {
        const double o = consumer * 1000; // the second runs later (ping-pong-like)
        b.warpgroups.push_back({
            c.at(M::QWait, -1, 10), c.at(M::QReady, -1, 900), c.at(M::KWait, 0, 910), c.at(M::KReady, 0, 920),
            c.at(M::ScoresIssued, 0, 1000 + o), c.at(M::ScoresRetired, 0, 1400 + o),
            c.at(M::SoftmaxBegin, 0, 1400 + o), c.at(M::SoftmaxEnd, 0, 1800 + o),
            c.at(M::VWait, 0, 1800 + o), c.at(M::VReady, 0, 1810 + o),
            c.at(M::ValuesIssued, 0, 1820 + o), c.at(M::ValuesWait, 0, 1830 + o),
            c.at(M::ValuesRetired, 0, 2200 + o), c.at(M::StoreBegin, -1, 2210 + o), c.at(M::StoreEnd, -1, 2300 + o),
        });
    }
    readTimerAtEnds(b, c);
    return b;
}

// `fallback`: the SM clock's nominal ns per cycle, for launches too short to fit one.
// The marks the kernel makes for a block of `tiles` key tiles (hopper_flash.cuh's produce and
// consume, mark for mark), `consumers` consumers, one mark every 50 cycles per warpgroup.
enum class Schedule { InTurn, Overlap, PingPong };
HopperRawBlock scheduledBlock(const Clock& c, int tiles, int consumers, int stages, Schedule schedule) {
    HopperRawBlock b;
    double cycles = 0;
    auto add = [&](std::vector<HopperRawMark>& to, M mark, int tile) { to.push_back(c.at(mark, tile, cycles += 50)); };
    b.warpgroups.emplace_back();
    if (tiles > 0) add(b.warpgroups[0], M::QIssued, -1);
    for (int j = 0; j < tiles; ++j) {
        if (j >= stages) add(b.warpgroups[0], M::KBufferWait, j);
        add(b.warpgroups[0], M::KIssued, j);
        if (j >= stages) add(b.warpgroups[0], M::VBufferWait, j);
        add(b.warpgroups[0], M::VIssued, j);
    }
    for (int consumer = 0; consumer < consumers; ++consumer) {
        std::vector<HopperRawMark> m;
        auto turn = [&](int j) {
            if (schedule == Schedule::PingPong) add(m, M::TurnWait, j), add(m, M::TurnGranted, j);
        };
        auto values = [&](int j) { add(m, M::VWait, j), add(m, M::VReady, j), add(m, M::ValuesIssued, j); };
        auto retire = [&](int j) { add(m, M::ValuesWait, j), add(m, M::ValuesRetired, j); };
        auto scores = [&](int j) { add(m, M::KWait, j), add(m, M::KReady, j), add(m, M::ScoresIssued, j); };
        auto softmax = [&](int j) { add(m, M::SoftmaxBegin, j), add(m, M::SoftmaxEnd, j); };
        if (tiles > 0) {
            add(m, M::QWait, -1), add(m, M::QReady, -1);
            add(m, M::KWait, 0), add(m, M::KReady, 0);
            turn(0);
            add(m, M::ScoresIssued, 0), add(m, M::ScoresRetired, 0);
            softmax(0);
            for (int j = 0; j + 1 < tiles; ++j) {
                if (schedule == Schedule::InTurn) {
                    values(j), retire(j), scores(j + 1), add(m, M::ScoresRetired, j + 1), softmax(j + 1);
                } else {
                    turn(j + 1), scores(j + 1), values(j), add(m, M::ScoresRetired, j + 1), softmax(j + 1), retire(j);
                }
            }
            turn(tiles - 1), values(tiles - 1), retire(tiles - 1);
        }
        add(m, M::StoreBegin, -1), add(m, M::StoreEnd, -1);
        b.warpgroups.push_back(m);
    }
    readTimerAtEnds(b, c);
    return b;
}

HopperTrace traceOf(const std::vector<HopperRawBlock>& blocks, double fallback = 0.5) {
    HopperTrace t;
    t.configRow = 4; // wgmma_d128_br128_bc128_wg2_s2_overlap_pingpong: two consumers
    t.kernel = hopperConfigName(kHopperConfigs[4]);
    t.queries = 128 * int(blocks.size());
    t.keys = 128;
    t.headDim = 128;
    t.device = "test";
    t.recorded = "2026-12-06";
    setSpansFromMarks(t, blocks, fallback);
    return t;
}

const HopperSpan* find(const HopperBlockTrace& b, int wg, HopperActivity a, int tile) {
    for (const HopperSpan& s : b.spans)
        if (s.warpgroup == wg && s.activity == a && s.tile == tile) return &s;
    return nullptr;
}

void expectRefused(const std::string& text, const char* words) {
    try {
        (void)parseHopperTraces(text);
        QFAIL(qPrintable(QStringLiteral("accepted, expected: %1").arg(words)));
    } catch (const EngineError& e) {
        QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
        QVERIFY2(std::string(e.what()).find(words) != std::string::npos, e.what());
    }
}

} // namespace

class TestHopperTrace : public QObject {
    Q_OBJECT

private slots:
    void packedMarksKeepTheirTile() {
        const HopperRawMark m = unpackMark({123, 456, std::uint32_t(M::KIssued) | (7u << 8)});
        QCOMPARE(m.mark, M::KIssued);
        QCOMPARE(m.tile, 7);
        QCOMPARE(m.globalNs, std::uint64_t(123));
        QCOMPARE(m.clock, 456u);
        QCOMPARE(unpackMark({0, 0, std::uint32_t(M::StoreBegin) | (std::uint32_t(-1) << 8)}).tile, -1);
    }

    void marksBecomeSpansOnOneAxis() {
        const Clock clock;
        const HopperTrace t = traceOf({oneTileBlock(clock)});
        QCOMPARE(t.blocks.size(), std::size_t(1));
        // 1.65 µs of one block is too few 32 ns timer steps to fit a rate: the nominal one.
        QCOMPARE(t.nsPerCycle, 0.5);
        QCOMPARE(t.timerStepNs, 32.0);
        QCOMPARE(traceOf({oneTileBlock(clock)}, 0.7).nsPerCycle, 0.7);
        const HopperBlockTrace& b = t.blocks[0];
        QCOMPARE(b.sm, 5);
        QCOMPARE(b.startNs(), 0.0); // the launch's first mark
        const HopperSpan* scores = find(b, 1, HopperActivity::Scores, 0);
        QVERIFY(scores);
        QVERIFY(std::abs(scores->durationNs() - 400 * t.nsPerCycle) < 1e-6);
        // Values and the wait for it both end when it retires.
        const HopperSpan* values = find(b, 2, HopperActivity::Values, 0);
        const HopperSpan* waited = find(b, 2, HopperActivity::WaitForValues, 0);
        QVERIFY(values && waited);
        QCOMPARE(values->endNs, waited->endNs);
        QVERIFY(waited->startNs > values->startNs);
        // A copy runs from its issue to the first consumer that saw it arrive.
        const HopperSpan* q = find(b, 0, HopperActivity::LoadQ, -1);
        QVERIFY(q);
        QVERIFY(std::abs(q->endNs - 900 * t.nsPerCycle) < 1e-6);
        const HopperSpan* v = find(b, 0, HopperActivity::LoadV, 0);
        QVERIFY(v);
        QVERIFY(std::abs(v->endNs - 1810 * t.nsPerCycle) < 1e-6); // consumer 1's, the earlier
        // Spans are ordered by warpgroup, then start.
        for (std::size_t i = 1; i < b.spans.size(); ++i)
            QVERIFY(std::pair(b.spans[i - 1].warpgroup, b.spans[i - 1].startNs) <=
                    std::pair(b.spans[i].warpgroup, b.spans[i].startNs));
    }

    void blocksOnOtherSmsShareTheAxis() {
        Clock first, second;
        second.clock0 = 17;         // another SM's clock, unrelated
        second.ns0 = first.ns0 + 3000; // started 3 µs later
        // Two blocks give enough timer steps to fit the rate (0.5 ns per cycle), not the nominal 0.7.
        const HopperTrace t = traceOf({oneTileBlock(first), oneTileBlock(second)}, 0.7);
        QVERIFY2(std::abs(t.nsPerCycle - 0.5) < 0.05, qPrintable(QString::number(t.nsPerCycle)));
        const double gap = t.blocks[1].startNs() - t.blocks[0].startNs();
        // Within one timer step of the truth.
        QVERIFY2(std::abs(gap - 3000) <= 32, qPrintable(QString::number(gap)));
    }

    // Every schedule the kernel has, mark for mark: each tile's S, softmax and P V once per
    // consumer, each copy once, a buffer wait for every tile from Stages on, turns in ping-pong.
    void everyScheduleBecomesSpans() {
        for (Schedule schedule : {Schedule::InTurn, Schedule::Overlap, Schedule::PingPong}) {
            const int tiles = 4, stages = 2;
            const HopperTrace t = traceOf({scheduledBlock(Clock{}, tiles, 2, stages, schedule)});
            const HopperBlockTrace& b = t.blocks[0];
            auto count = [&](int wg, HopperActivity a, int tile) {
                int n = 0;
                for (const HopperSpan& s : b.spans) n += s.warpgroup == wg && s.activity == a && s.tile == tile;
                return n;
            };
            for (int j = 0; j < tiles; ++j) {
                QCOMPARE(count(0, HopperActivity::LoadK, j), 1);
                QCOMPARE(count(0, HopperActivity::LoadV, j), 1);
                QCOMPARE(count(0, HopperActivity::WaitForBuffer, j), j >= stages ? 2 : 0); // K's and V's
                for (int wg : {1, 2}) {
                    QCOMPARE(count(wg, HopperActivity::Scores, j), 1);
                    QCOMPARE(count(wg, HopperActivity::Values, j), 1);
                    QCOMPARE(count(wg, HopperActivity::WaitForValues, j), 1);
                    QCOMPARE(count(wg, HopperActivity::Softmax, j), 1);
                    // Ping-pong: a turn for each tile's products, and the last tile's P V a turn of its own.
                    QCOMPARE(count(wg, HopperActivity::WaitForTurn, j),
                             schedule == Schedule::PingPong ? (j == tiles - 1 ? 2 : 1) : 0);
                }
            }
            QCOMPARE(count(0, HopperActivity::LoadQ, -1), 1);
            // With overlap, S_{j+1} is issued before P_j V_j and P_j V_j is waited for after the
            // softmax of S_{j+1}; in turn, after it.
            const HopperSpan* values0 = find(b, 1, HopperActivity::Values, 0);
            const HopperSpan* softmax1 = find(b, 1, HopperActivity::Softmax, 1);
            QCOMPARE(values0->endNs > softmax1->endNs, schedule != Schedule::InTurn);
        }
    }

    // A causal block above the diagonal visits no key tile: no copies, only O written (as 0).
    void aBlockWithoutTilesWritesOnly() {
        const HopperTrace t = traceOf({scheduledBlock(Clock{}, 0, 2, 2, Schedule::PingPong),
                                       scheduledBlock(Clock{}, 2, 2, 2, Schedule::PingPong)});
        const HopperBlockTrace& empty = t.blocks[0];
        QCOMPARE(empty.spans.size(), std::size_t(2));
        for (const HopperSpan& s : empty.spans) QCOMPARE(s.activity, HopperActivity::StoreO);
        const HopperBlockSummary sum = summarize(empty, 3);
        QCOMPARE(sum.softmaxNs, 0.0);
        QCOMPARE(sum.softmaxBesideProductsFraction(), 0.0);
        QCOMPARE(sum.tensorWorkFraction(), 0.0);
    }

    void unpairedMarksAreABug() {
        HopperRawBlock b = oneTileBlock(Clock{});
        b.warpgroups[1].erase(b.warpgroups[1].end() - 3); // StoreEnd lost (Finish, TimerTick follow)
        try {
            (void)traceOf({b});
            QFAIL("an unended span accepted");
        } catch (const EngineError& e) {
            QCOMPARE(e.kind(), ErrorKind::BackendFailure);
            QVERIFY2(std::string(e.what()).find("never ends") != std::string::npos, e.what());
        }
        HopperRawBlock c = oneTileBlock(Clock{});
        std::swap(c.warpgroups[1][4], c.warpgroups[1][5]); // retired before issued
        QVERIFY_THROWS_EXCEPTION(EngineError, (void)traceOf({c}));
        HopperRawBlock d = oneTileBlock(Clock{});
        for (auto& marks : d.warpgroups)
            for (auto& m : marks) m.globalNs = 0; // the timer never read
        QVERIFY_THROWS_EXCEPTION(EngineError, (void)traceOf({d}));
        // A mark that ends what never began, in order.
        HopperRawBlock e = oneTileBlock(Clock{});
        e.warpgroups[1].insert(e.warpgroups[1].begin() + 4, e.warpgroups[1][4]);
        e.warpgroups[1][4].mark = M::ScoresRetired;
        e.warpgroups[1][4].tile = 3;
        try {
            (void)traceOf({e});
            QFAIL("a lone end accepted");
        } catch (const EngineError& error) {
            QVERIFY2(std::string(error.what()).find("a mark that ends nothing") != std::string::npos, error.what());
        }
    }

    void summaryCountsUnionsAndOverlap() {
        HopperBlockTrace b;
        using A = HopperActivity;
        b.spans = {
            {0, A::LoadK, 0, 0, 100},   {0, A::LoadV, 0, 50, 150},  // copies: union 150
            {1, A::Scores, 1, 100, 300}, {1, A::Values, 0, 100, 400}, // consumer 1 tensor: 300
            {1, A::Softmax, 1, 300, 500},                             // 100 under its own Values
            {2, A::Scores, 1, 450, 600},                              // ...and 50 under consumer 2's
            {2, A::WaitForTurn, 1, 0, 450}, {2, A::WaitForData, 1, 400, 450}, // waits: union 450
            {2, A::Softmax, 1, 600, 700},                             // none hidden
            {2, A::StoreO, -1, 700, 800},
        };
        const HopperBlockSummary s = summarize(b, 3);
        QCOMPARE(s.durationNs, 800.0);
        QCOMPARE(s.outstandingNs, 450.0); // [100, 400] and [450, 600]
        QCOMPARE(s.softmaxNs, 300.0);                     // the store is not softmax
        QCOMPARE(s.softmaxBesideProductsNs, 150.0);
        QCOMPARE(s.softmaxBesideProductsFraction(), 0.5);
        QCOMPARE(s.warpgroups[0].copyNs, 150.0);
        QCOMPARE(s.warpgroups[1].outstandingNs, 300.0);
        QCOMPARE(s.warpgroups[2].waitingNs, 450.0);
        QCOMPARE(s.warpgroups[2].cudaCoresNs, 200.0); // softmax and store: the CUDA cores
        QVERIFY(std::abs(s.outstandingFraction() - 450.0 / 800) < 1e-12);
        // The shortest products no softmax of their warpgroup ran beside: consumer 1's S
        // ([100, 300]: its softmax starts at 300) and none of the P V (consumer 1's runs beside
        // its softmax), so P V counts 0; consumer 2's S [450, 600] is 150.
        QCOMPARE(s.scoresOwnNs, 150.0);
        QCOMPARE(s.valuesOwnNs, 0.0);
        QCOMPARE(s.tensorWorkNs, 300.0); // two S at 150, one P V at 0
        QCOMPARE(s.tensorWorkFraction(), 300.0 / 800);
        // Two consumers' products at once: their times add up past the outstanding time, which
        // caps them.
        HopperBlockTrace together;
        together.spans = {{1, A::Scores, 0, 0, 100}, {2, A::Scores, 0, 0, 100}, {1, A::Softmax, 0, 100, 300}};
        const HopperBlockSummary t = summarize(together, 3);
        QCOMPARE(t.outstandingNs, 100.0);
        QCOMPARE(t.tensorWorkNs, 100.0);
    }

    void longestBlockIsShownFirst() {
        HopperTrace t;
        t.blocks.resize(3);
        t.blocks[0].spans = {{1, HopperActivity::Scores, 0, 0, 10}};
        t.blocks[1].spans = {{1, HopperActivity::Scores, 0, 5, 40}};
        t.blocks[2].spans = {{1, HopperActivity::Scores, 0, 0, 20}};
        QCOMPARE(longestBlock(t), 1);
    }

    void requestsAreChecked() {
        HopperTraceRequest r;
        validateHopperTraceRequest(r);
        // The defaults an H100 runs: three consumers at d = 64 without the mask, ping-pong with it.
        r.headDim = 64;
        QCOMPARE(hopperConfigName(kHopperConfigs[hopperTraceRow(r)]), std::string("wgmma_d64_br192_bc128_wg3_s2_overlap"));
        r.causal = true;
        QCOMPARE(hopperConfigName(kHopperConfigs[hopperTraceRow(r)]),
                 std::string("wgmma_d64_br128_bc128_wg2_s4_overlap_pingpong"));
        r.headDim = 128;
        QCOMPARE(hopperConfigName(kHopperConfigs[hopperTraceRow(r)]),
                 std::string("wgmma_d128_br128_bc128_wg2_s2_overlap_pingpong"));
        auto refused = [](HopperTraceRequest bad, ErrorKind kind, const char* words) {
            try {
                validateHopperTraceRequest(bad);
                QFAIL(words);
            } catch (const EngineError& e) {
                QCOMPARE(e.kind(), kind);
                QVERIFY2(std::string(e.what()).find(words) != std::string::npos, e.what());
            }
        };
        HopperTraceRequest bad;
        bad.headDim = 96;
        refused(bad, ErrorKind::Unsupported, "d = 64 and 128");
        bad = {};
        bad.configRow = 0; // a d = 64 row for d = 128
        refused(bad, ErrorKind::InvalidArgument, "not built for d = 128");
        bad = {};
        bad.configRow = kHopperConfigCount;
        refused(bad, ErrorKind::InvalidArgument, "does not exist");
        bad = {};
        bad.element = "fp8";
        refused(bad, ErrorKind::InvalidArgument, "fp16 or bf16");
        bad = {};
        bad.keys = kHopperTraceMaxTokens + 1;
        refused(bad, ErrorKind::LimitExceeded, "n_k is at most");
        bad = {};
        bad.heads = 16;
        bad.batch = 8;
        refused(bad, ErrorKind::LimitExceeded, "batch x heads");
        bad = {};
        bad.queries = 0;
        refused(bad, ErrorKind::InvalidArgument, "n_q must be at least 1");
        bad = {};
        bad.queries = bad.keys = kHopperTraceMaxTokens; // 128 blocks x 128 tiles: the cap itself
        validateHopperTraceRequest(bad);
        bad.heads = 2;
        refused(bad, ErrorKind::LimitExceeded, "(block, key tile) pairs");
    }

    void filesRoundTrip() {
        const HopperTrace t = traceOf({oneTileBlock(Clock{})});
        const std::vector<HopperTrace> back = parseHopperTraces(hopperTracesJson({t}));
        QCOMPARE(back.size(), std::size_t(1));
        QCOMPARE(back[0].configRow, 4);
        QCOMPARE(back[0].device, std::string("test"));
        QCOMPARE(back[0].blocks[0].spans.size(), t.blocks[0].spans.size());
        for (std::size_t i = 0; i < t.blocks[0].spans.size(); ++i) {
            const HopperSpan &a = t.blocks[0].spans[i], &b = back[0].blocks[0].spans[i];
            QCOMPARE(a.activity, b.activity);
            QCOMPARE(a.tile, b.tile);
            QVERIFY(std::abs(a.startNs - b.startNs) <= 0.05 && std::abs(a.endNs - b.endNs) <= 0.05);
        }
        // Summaries agree on the reread file (times kept to 0.1 ns).
        QVERIFY(std::abs(summarize(back[0].blocks[0], 3).outstandingNs - summarize(t.blocks[0], 3).outstandingNs) < 0.2);
    }

    void badFilesAreRefusedByName() {
        const std::string good = hopperTracesJson({traceOf({oneTileBlock(Clock{})})});
        expectRefused("{not json", "is not JSON");
        expectRefused(R"({"format":"other","version":1,"traces":[]})", "is not a flashviz-hopper-trace file");
        expectRefused(R"({"format":"flashviz-hopper-trace","version":2,"traces":[]})", "version other than 1");
        expectRefused(R"({"format":"flashviz-hopper-trace","version":1,"traces":[]})", "holds no traces");
        auto replaced = [&](const std::string& from, const std::string& to) {
            std::string s = good;
            const std::size_t at = s.find(from);
            if (at == std::string::npos) qFatal("no '%s' in the file", from.c_str());
            return s.replace(at, from.size(), to);
        };
        expectRefused(replaced("wgmma_d128_br128_bc128_wg2_s2_overlap_pingpong", "wgmma_d256"),
                      "a kernel this FlashViz does not have");
        expectRefused(replaced("\"load-q\"", "\"teleport\""), "unknown activity 'teleport'");
        expectRefused(replaced("[0,\"load-q\",-1,0.0", "[7,\"load-q\",-1,0.0"), "a warpgroup the kernel does not have");
        expectRefused(replaced("\"headDim\":128", "\"headDim\":64"), "a d its kernel is not built for");
        expectRefused(replaced("\"queryBlock\":0", "\"queryBlock\":3"), "a block the launch does not have");
        expectRefused(replaced("\"queryBlock\":0", "\"queryBlock\":11184811"), "a block the launch does not have");
        expectRefused(replaced("[1,\"scores\",0,", "[1,\"scores\",1,"), "one of the launch's key tiles");
        expectRefused(replaced("\"element\":\"fp16\"", "\"element\":\"fp32\""), "fp16 or bf16");
        expectRefused(replaced("\"causal\":false", "\"causal\":1"), "'causal' not true or false");
    }

    void shortTimesReadTheSameEverywhere() {
        QCOMPARE(formatNanoseconds(0), std::string("0 ns"));
        QCOMPARE(formatNanoseconds(850), std::string("850 ns"));
        QCOMPARE(formatNanoseconds(1250), std::string("1.25 \u00b5s"));
        QCOMPARE(formatNanoseconds(12500), std::string("12.5 \u00b5s"));
        QCOMPARE(formatNanoseconds(999.7), std::string("1.00 \u00b5s"));
        QCOMPARE(formatNanoseconds(1.2e6), std::string("1.20 ms"));
        QCOMPARE(formatNanoseconds(std::nan("")), std::string("nan"));
        QCOMPARE(formatNanoseconds(INFINITY), std::string("inf"));
    }
};

QTEST_APPLESS_MAIN(TestHopperTrace)
#include "tst_hopper_trace.moc"
