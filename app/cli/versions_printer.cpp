#include "app/cli/versions_printer.h"

#include "core/units.h"

#include <cstdio>
#include <string>

namespace flashviz::cli {

namespace {

template <class... Values>
std::string line(const char* format, Values... values) {
    char text[600];
    std::snprintf(text, sizeof text, format, values...);
    return text;
}

unsigned long long ull(std::uint64_t v) { return static_cast<unsigned long long>(v); }

const char* plural(std::uint64_t n) { return n == 1 ? "" : "s"; }

void printCountsRow(std::ostream& out, const char* name, const NonMatmulFlops& f) {
    out << line("  %-18s %12llu %12llu %12llu %12llu %12llu %14llu\n", name, ull(f.exp), ull(f.max),
                ull(f.add), ull(f.multiply), ull(f.divide), ull(f.total()));
}

void printSplit(std::ostream& out, const WarpSplit& s) {
    const bool byKeys = s.version == FlashVersion::One;
    out << "  " << toString(s.version)
        << (byKeys ? " (split-K): each warp takes keys" : " (split-Q): each warp takes query rows")
        << '\n';
    std::string shares = "   ";
    for (int w = 0; w < s.warps; ++w) {
        const Range r = byKeys ? s.shares[std::size_t(w)].keys : s.shares[std::size_t(w)].rows;
        shares += r.size() > 0 ? line(" w%d [%d, %d)", w, r.begin, r.end) : line(" w%d idle", w);
    }
    out << shares << '\n';
    out << line("    shared-memory exchange: %llu B written, %llu B read, %d barriers per tile; "
                "Q, K, V read from shared memory: %llu B\n",
                ull(s.exchangeWriteBytes), ull(s.exchangeReadBytes), s.exchangeBarriers,
                ull(s.operandReadBytes));
}

void printGrid(std::ostream& out, const GridPicture& g) {
    out << line("  %s: %llu thread block%s, each %d query block%s; %d of %d SMs busy; %llu wave%s "
                "of up to %llu (the last %llu); time %llu unit%s\n",
                toString(g.version), ull(g.blocks), plural(g.blocks), g.queryBlocksPerThreadBlock,
                plural(std::uint64_t(g.queryBlocksPerThreadBlock)), g.busySms, g.sms, ull(g.waves),
                plural(g.waves), ull(g.residentBlocks), ull(g.tailBlocks), ull(g.timeUnits()),
                plural(g.timeUnits()));
}

} // namespace

void printVersions(std::ostream& out, const ProblemSpec& spec, const VersionsRequest& r,
                   const HardwareProfile& hw, const VersionComparison& c, const VersionsReport& v,
                   bool bugSwitchesGiven) {
    out << line("What FlashAttention-2 changed: n_q = %d, n_k = %d, d = %d, Br = %d, Bc = %d%s, on "
                "the %s\n\n",
                spec.queries, spec.keys, spec.headDim, r.blockRows, r.blockCols,
                spec.causal ? ", causal" : "", hw.name.c_str());

    out << "1. Non-matmul operations, counted by each pass as it ran (one per element operation)\n";
    out << line("  %-18s %12s %12s %12s %12s %12s %14s\n", "", "exp/log", "max", "add", "multiply",
                "divide", "total");
    printCountsRow(out, toString(FlashVersion::One), c.one.nonMatmul);
    printCountsRow(out, toString(FlashVersion::Two), c.two.nonMatmul);
    out << line("  matmul FLOPs, both: %llu; -1 does %sx the non-matmul operations of -2\n",
                ull(c.two.matmulFlops), formatTimes(v.nonMatmulRatio()).c_str());
    out << "  checked against ordinary attention: " << toString(FlashVersion::One) << ' '
        << c.one.check.summary() << "; " << toString(FlashVersion::Two) << ' '
        << c.two.check.summary() << line("; max |O_1 - O_2| %.3g\n", c.maxDifference);
    if (bugSwitchesGiven)
        out << "  (both run without the bug switches, which break only FlashAttention-2's run "
               "elsewhere)\n";
    out << line("  on the %s the tensor cores run matmuls %sx faster than the CUDA cores run the "
                "rest: non-matmul time is at least %s of the matmul time for -1, %s for -2\n\n",
                hw.name.c_str(), formatTimes(v.timeOne.rateRatio).c_str(),
                formatPercent(v.timeOne.nonMatmulPerMatmul()).c_str(),
                formatPercent(v.timeTwo.nonMatmulPerMatmul()).c_str());

    out << line("2. One %d x %d tile across %d warp%s (%s operands, fp32 partials)\n",
                v.tile.rows.size(), v.tile.cols.size(), v.warps, plural(std::uint64_t(v.warps)),
                r.kernel.elementBytes == 2 ? "fp16 / bf16" : "fp32");
    printSplit(out, v.splitOne);
    printSplit(out, v.splitTwo);
    out << '\n';

    const KernelShape& k = r.kernel;
    out << line("3. The grid: batch %d x %d heads, n_q = %d, kernel %s (Br %d, %d threads, %llu B "
                "of shared memory)",
                r.batch, r.heads, spec.queries, k.name.c_str(), k.blockRows, k.threads,
                ull(k.sharedBytes));
    if (!v.gridError.empty()) {
        out << ": " << v.gridError << '\n';
        return;
    }
    out << line(": %d block%s per SM, limited by %s\n", v.gridTwo.occupancy.blocksPerSm,
                plural(std::uint64_t(v.gridTwo.occupancy.blocksPerSm)),
                v.gridTwo.occupancy.limitedBy.c_str());
    printGrid(out, v.gridOne);
    printGrid(out, v.gridTwo);
    out << "  -2's grid finishes " << formatTimes(v.gridSpeedup())
        << "x sooner if every query block costs the same (a unit: one query block's work on one "
           "slot)\n";
}

} // namespace flashviz::cli
