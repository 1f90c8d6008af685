#pragma once
// Traces of the Hopper kernel made up for the tests (never shipped): the marks its trace mode
// writes (kernels/hopper_marks.h), in the order hopper_flash.cuh writes them (the SM's clock at
// each, %globaltimer at a warpgroup's first mark and at Finish, then TimerTick one step later),
// for a schedule simulated with fixed durations, turned into spans by the same code as a real
// launch (kernels::setSpansFromMarks). The producer waits for buffers the consumers hand back, the
// consumers for the copies and (ping-pong) for each other's turns; the times are iterated until
// every warpgroup agrees with the others.
#include "kernels/hopper_trace.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace flashviz::gui::test {

// Durations in SM cycles.
struct SyntheticDurations {
    double copy = 1500, scores = 400, values = 700, softmax = 600, store = 300;
};

namespace detail {

using kernels::HopperMark;
using kernels::HopperRawMark;

inline constexpr std::uint64_t kTimerStepNs = 32;

struct Writer {
    std::vector<HopperRawMark>* marks;
    double t = 0;
    std::uint32_t clock0;
    std::uint64_t global0;
    double nsPerCycle;
    // %globaltimer as read at t: it moves in steps and never runs ahead.
    std::uint64_t reading() const {
        return global0 + std::uint64_t(t * nsPerCycle / double(kTimerStepNs)) * kTimerStepNs;
    }
    void record(HopperMark mark, int tile = -1) {
        HopperRawMark m;
        m.mark = mark;
        m.tile = tile;
        m.clock = clock0 + std::uint32_t(t);
        m.globalNs = marks->empty() ? reading() : 0;
        marks->push_back(m);
    }
    void finish() {
        record(HopperMark::Finish);
        marks->back().globalNs = reading();
        const std::uint64_t next = marks->back().globalNs + kTimerStepNs;
        t = std::max(t + 1, double(next - global0) / nsPerCycle);
        record(HopperMark::TimerTick);
        marks->back().globalNs = next;
    }
    void wait(HopperMark begin, HopperMark end, int tile, double ready) {
        record(begin, tile);
        t = std::max(t + 1, ready);
        record(end, tile);
    }
};

// What each warpgroup's last pass produced, which the others wait on.
struct Times {
    double qArrive = 0;
    std::vector<double> kArrive, vArrive;                // per tile
    std::vector<std::vector<double>> sRetired, vRetired; // per consumer, per tile
    std::vector<std::vector<double>> turnEnds;           // per consumer, per turn
};

inline void producer(Writer& w, const kernels::HopperConfig& c, int tiles,
                     const SyntheticDurations& d, const Times& before, Times& after) {
    w.record(HopperMark::QIssued);
    after.qArrive = w.t + d.copy;
    w.t += 10;
    for (int j = 0; j < tiles; ++j) {
        auto freed = [&](const std::vector<std::vector<double>>& retired) {
            double at = 0;
            for (const auto& perTile : retired)
                at = std::max(at, perTile[std::size_t(j - c.stages)]);
            return at;
        };
        if (j >= c.stages)
            w.wait(HopperMark::KBufferWait, HopperMark::KIssued, j, freed(before.sRetired));
        else
            w.record(HopperMark::KIssued, j);
        after.kArrive[std::size_t(j)] = w.t + d.copy;
        w.t += 5;
        if (j >= c.stages)
            w.wait(HopperMark::VBufferWait, HopperMark::VIssued, j, freed(before.vRetired));
        else
            w.record(HopperMark::VIssued, j);
        after.vArrive[std::size_t(j)] = w.t + d.copy;
        w.t += 5;
    }
    w.finish();
}

inline void consumer(Writer& w, const kernels::HopperConfig& c, int index, int tiles,
                     const SyntheticDurations& d, const Times& before, Times& after) {
    std::vector<double>& sDone = after.sRetired[std::size_t(index)];
    std::vector<double>& vDone = after.vRetired[std::size_t(index)];
    std::vector<double>& turnEnds = after.turnEnds[std::size_t(index)];
    turnEnds.clear();
    const auto beginTurn = [&](int tile) {
        if (!c.pingPong) return;
        const std::size_t k = turnEnds.size();
        const auto& other = before.turnEnds[std::size_t(1 - index)];
        const double granted = index == 0 ? (k == 0                 ? 0
                                             : k - 1 < other.size() ? other[k - 1]
                                                                    : 0)
                                          : (k < other.size() ? other[k] : 0);
        w.wait(HopperMark::TurnWait, HopperMark::TurnGranted, tile, granted);
    };
    const auto endTurn = [&] { turnEnds.push_back(w.t); };
    const auto softmax = [&](int j) {
        w.record(HopperMark::SoftmaxBegin, j);
        w.t += d.softmax;
        w.record(HopperMark::SoftmaxEnd, j);
    };
    const auto retireScores = [&](int j, double done) {
        w.t = std::max(w.t + 1, done);
        w.record(HopperMark::ScoresRetired, j);
        sDone[std::size_t(j)] = w.t;
    };
    double valuesDone = 0;
    const auto issueValues = [&](int j, double queuedUntil) {
        w.wait(HopperMark::VWait, HopperMark::VReady, j, before.vArrive[std::size_t(j)]);
        w.record(HopperMark::ValuesIssued, j);
        valuesDone = std::max(w.t, queuedUntil) + d.values; // behind any product already queued
    };
    const auto retireValues = [&](int j) {
        w.record(HopperMark::ValuesWait, j);
        w.t = std::max(w.t + 1, valuesDone);
        w.record(HopperMark::ValuesRetired, j);
        vDone[std::size_t(j)] = w.t;
    };
    w.t = 3.0 * index;
    w.wait(HopperMark::QWait, HopperMark::QReady, -1, before.qArrive);
    w.wait(HopperMark::KWait, HopperMark::KReady, 0, before.kArrive[0]);
    beginTurn(0);
    w.record(HopperMark::ScoresIssued, 0);
    double scoresDone = w.t + d.scores;
    endTurn();
    retireScores(0, scoresDone);
    softmax(0);
    for (int j = 0; j + 1 < tiles; ++j) {
        const int next = j + 1;
        if (c.overlap) {
            beginTurn(next);
            w.wait(HopperMark::KWait, HopperMark::KReady, next, before.kArrive[std::size_t(next)]);
            w.record(HopperMark::ScoresIssued, next);
            scoresDone = w.t + d.scores;
            issueValues(j, scoresDone);
            endTurn();
            retireScores(next, scoresDone);
            softmax(next);
            retireValues(j);
        } else {
            issueValues(j, 0);
            retireValues(j);
            w.wait(HopperMark::KWait, HopperMark::KReady, next, before.kArrive[std::size_t(next)]);
            w.record(HopperMark::ScoresIssued, next);
            retireScores(next, w.t + d.scores);
            softmax(next);
        }
    }
    beginTurn(tiles - 1);
    issueValues(tiles - 1, 0);
    endTurn();
    retireValues(tiles - 1);
    w.record(HopperMark::StoreBegin);
    w.t += d.store;
    w.record(HopperMark::StoreEnd);
    w.finish();
}

} // namespace detail

// One block's marks: the producer first, then each consumer.
inline kernels::HopperRawBlock simulateHopperBlock(const kernels::HopperConfig& c, int tiles,
                                                   int queryBlock, std::uint32_t clock0,
                                                   std::uint64_t global0, double nsPerCycle,
                                                   const SyntheticDurations& d = {}) {
    const std::size_t n = std::size_t(c.consumers);
    detail::Times times;
    times.kArrive.assign(std::size_t(tiles), 0);
    times.vArrive.assign(std::size_t(tiles), 0);
    times.sRetired.assign(n, std::vector<double>(std::size_t(tiles), 0));
    times.vRetired = times.sRetired;
    times.turnEnds.assign(n, {});
    kernels::HopperRawBlock block;
    block.queryBlock = queryBlock;
    block.sm = 2 * queryBlock + 1;
    for (int pass = 0; pass < 4 * tiles + 8; ++pass) {
        detail::Times next = times;
        block.warpgroups.assign(n + 1, {});
        detail::Writer producer{&block.warpgroups[0], 0, clock0, global0, nsPerCycle};
        detail::producer(producer, c, tiles, d, times, next);
        for (std::size_t i = 0; i < n; ++i) {
            detail::Writer consumer{&block.warpgroups[i + 1], 0, clock0, global0, nsPerCycle};
            detail::consumer(consumer, c, int(i), tiles, d, times, next);
        }
        const bool settled = next.kArrive == times.kArrive && next.vArrive == times.vArrive &&
                             next.sRetired == times.sRetired && next.vRetired == times.vRetired &&
                             next.turnEnds == times.turnEnds && next.qArrive == times.qArrive;
        times = next;
        if (settled) break;
    }
    return block;
}

// A launch of `blocks` query blocks over `keyTiles` key tiles of row `row` of kHopperConfigs: under
// the causal mask the early blocks visit fewer tiles (bottom-right aligned, n_q = n_k).
inline kernels::HopperTrace syntheticHopperTrace(int row, bool causal, int blocks = 4,
                                                 int keyTiles = 8,
                                                 const SyntheticDurations& d = {}) {
    const kernels::HopperConfig& c = kernels::kHopperConfigs[row];
    kernels::HopperTrace t;
    t.configRow = row;
    t.kernel = kernels::hopperConfigName(c);
    t.causal = causal;
    t.queries = blocks * c.blockRows();
    t.keys = keyTiles * c.blockCols;
    t.headDim = c.headDim;
    t.device = "a simulated GPU (tests)";
    t.recorded = "2026-12-06";
    t.plainKernelNs = 20000;
    t.tracedKernelNs = 23000;
    const double nsPerCycle = 0.57;
    std::vector<kernels::HopperRawBlock> raw;
    for (int q = 0; q < blocks; ++q) {
        const int lastKey = std::min((q + 1) * c.blockRows(), t.queries) - 1 + t.keys - t.queries;
        const int tiles = causal ? std::min(keyTiles, lastKey / c.blockCols + 1) : keyTiles;
        raw.push_back(simulateHopperBlock(c, std::max(tiles, 1), q, 1000u + 77u * std::uint32_t(q),
                                          1'765'000'000'000'000'000u + 640u * std::uint64_t(q),
                                          nsPerCycle, d));
    }
    kernels::setSpansFromMarks(t, raw, nsPerCycle);
    return t;
}

} // namespace flashviz::gui::test
