#include "app/cli/hopper_printer.h"

#include "core/units.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace flashviz::cli {

namespace {

using kernels::HopperActivity;
using kernels::HopperUnit;

template <class... Values>
std::string line(const char* format, Values... values) {
    char text[600];
    std::snprintf(text, sizeof text, format, values...);
    return text;
}

constexpr int kColumns = 96;

// The character an activity leaves in its row of the timeline.
char symbolOf(HopperActivity a) {
    switch (a) {
    case HopperActivity::LoadQ: return 'Q';
    case HopperActivity::LoadK: return 'K';
    case HopperActivity::LoadV: return 'V';
    case HopperActivity::WaitForBuffer: return 'b';
    case HopperActivity::WaitForData: return 'd';
    case HopperActivity::WaitForTurn: return 't';
    case HopperActivity::Scores: return 'S';
    case HopperActivity::Values: return 'O';
    case HopperActivity::WaitForValues: return 'o';
    case HopperActivity::Softmax: return 'x';
    case HopperActivity::StoreO: return 'w';
    case HopperActivity::Count: break;
    }
    return '?';
}

// One row of the timeline: which spans it draws.
struct Row {
    int warpgroup;
    std::string name;
    bool (*holds)(HopperActivity);
};

// Every column a span of the row touches; two different ones: '#'.
std::string timelineRow(const kernels::HopperBlockTrace& block, const Row& r, double start, double duration) {
    std::string row(kColumns, ' ');
    for (const kernels::HopperSpan& s : block.spans) {
        if (s.warpgroup != r.warpgroup || !r.holds(s.activity)) continue;
        const int first = std::clamp(int((s.startNs - start) / duration * kColumns), 0, kColumns - 1);
        const int last = std::clamp(int((s.endNs - start) / duration * kColumns), first, kColumns - 1);
        for (int c = first; c <= last; ++c) {
            char& cell = row[std::size_t(c)];
            const char symbol = symbolOf(s.activity);
            cell = cell == ' ' || cell == symbol ? symbol : '#';
        }
    }
    return row;
}

void printTimeline(std::ostream& out, const kernels::HopperTrace& trace, const kernels::HopperBlockTrace& block) {
    const double start = block.startNs(), duration = std::max(block.endNs() - start, 1.0);
    out << line("  %-23s|%s|\n", "", std::string(kColumns, '-').c_str());
    auto copiesQK = [](HopperActivity a) { return a == HopperActivity::LoadQ || a == HopperActivity::LoadK; };
    auto copiesV = [](HopperActivity a) { return a == HopperActivity::LoadV; };
    auto tensor = [](HopperActivity a) { return kernels::unitOf(a) == HopperUnit::TensorCores; };
    auto cuda = [](HopperActivity a) { return kernels::unitOf(a) == HopperUnit::CudaCores; };
    auto waits = [](HopperActivity a) { return kernels::unitOf(a) == HopperUnit::Waiting; };
    std::vector<Row> rows{{0, "producer   Q, K copies", copiesQK}, {0, "           V copies", copiesV},
                          {0, "           waits", waits}};
    for (int c = 1; c <= trace.config().consumers; ++c) {
        rows.push_back({c, line("consumer %d tensor cores", c), tensor});
        rows.push_back({c, "           CUDA cores", cuda});
        rows.push_back({c, "           waits", waits});
    }
    for (const Row& r : rows)
        out << line("  %-23s|%s|\n", r.name.c_str(), timelineRow(block, r, start, duration).c_str());
    out << line("  %-23s0%*s\n", "", kColumns, formatNanoseconds(duration).c_str());
    out << "  Q K V: copies in flight (issue until a consumer found them arrived); S: S_j = Q K_j^T,\n"
           "  O: O += P_j V_j on the tensor cores (issue to the wait that retires it); x: softmax; w: O written;\n"
           "  waits: b a free buffer, d data, t the other consumer's turn, o O += P_j V_j; #: two at once.\n";
}

void printSummary(std::ostream& out, const kernels::HopperBlockSummary& s) {
    out << line("  block time %s: a product outstanding (issued, not yet waited for) %s of it; %s of the "
                "softmax's %s ran beside one\n",
                formatNanoseconds(s.durationNs).c_str(), formatPercent(s.outstandingFraction()).c_str(),
                formatPercent(s.softmaxBesideProductsFraction()).c_str(), formatNanoseconds(s.softmaxNs).c_str());
    out << line("  tensor cores at work between %s and %s of it (the lower: every product at the shortest "
                "time of its kind waited for at once, S %s, P V %s)\n",
                formatPercent(s.tensorWorkFraction()).c_str(), formatPercent(s.outstandingFraction()).c_str(),
                formatNanoseconds(s.scoresOwnNs).c_str(), formatNanoseconds(s.valuesOwnNs).c_str());
    out << line("  %-12s %14s %14s %14s %14s\n", "warpgroup", "copies", "products out", "CUDA cores", "waiting");
    for (std::size_t wg = 0; wg < s.warpgroups.size(); ++wg) {
        const auto& t = s.warpgroups[wg];
        const std::string who = wg == 0 ? "producer" : line("consumer %d", int(wg));
        out << line("  %-12s %14s %14s %14s %14s\n", who.c_str(), formatNanoseconds(t.copyNs).c_str(),
                    formatNanoseconds(t.outstandingNs).c_str(), formatNanoseconds(t.cudaCoresNs).c_str(),
                    formatNanoseconds(t.waitingNs).c_str());
    }
}

} // namespace

void printHopperTrace(std::ostream& out, const kernels::HopperTrace& trace, int blockIndex) {
    const kernels::HopperConfig& c = trace.config();
    out << trace.kernel << " (" << trace.element << (trace.causal ? ", causal" : "") << ")\n";
    out << line("  one block: a producer warpgroup and %d consumer warpgroups of 64 query rows; %d keys "
                "per tile; %d K and %d V buffers; %s\n",
                c.consumers, c.blockCols, c.stages, c.stages,
                c.pingPong ? "overlap and ping-pong" : c.overlap ? "overlap" : "S, softmax and P V in turn");
    out << line("  launch: batch %d x heads %d, n_q %d, n_k %d, d %d; %zu blocks\n", trace.batch, trace.heads,
                trace.queries, trace.keys, trace.headDim, trace.blocks.size());
    out << line("  recorded on %s, %s: plain kernel %s, traced %s; %%globaltimer steps %s, SM clock %.3f GHz\n",
                trace.device.c_str(), trace.recorded.c_str(), formatNanoseconds(trace.plainKernelNs).c_str(),
                formatNanoseconds(trace.tracedKernelNs).c_str(), formatNanoseconds(trace.timerStepNs).c_str(),
                trace.nsPerCycle > 0 ? 1 / trace.nsPerCycle : 0.0);
    if (trace.blocks.empty()) return;
    const int index = blockIndex >= 0 ? blockIndex : kernels::longestBlock(trace);
    const kernels::HopperBlockTrace& block = trace.blocks[std::size_t(index)];
    out << line("\n  block %d of %zu: query block %d (head %d, batch %d) on SM %d%s\n", index + 1,
                trace.blocks.size(), block.queryBlock, block.head, block.batch, block.sm,
                blockIndex < 0 ? ", the longest" : "");
    printSummary(out, kernels::summarize(block, c.consumers + 1));
    out << '\n';
    printTimeline(out, trace, block);
}

} // namespace flashviz::cli
