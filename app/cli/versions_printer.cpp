#include "app/cli/versions_printer.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace flashviz::cli {

namespace {

std::string line(const char* format, auto... values) {
    char text[400];
    std::snprintf(text, sizeof text, format, values...);
    return text;
}

unsigned long long ull(std::uint64_t v) { return static_cast<unsigned long long>(v); }

void printCountsRow(std::ostream& out, const char* name, const NonMatmulFlops& f) {
    out << line("  %-18s %12llu %12llu %12llu %12llu %12llu %14llu\n", name, ull(f.exp), ull(f.max),
                ull(f.add), ull(f.multiply), ull(f.divide), ull(f.total()));
}

void printSplit(std::ostream& out, const WarpSplit& s) {
    const bool byKeys = s.version == FlashVersion::One;
    out << "  " << toString(s.version) << (byKeys ? " (split-K): each warp takes keys" : " (split-Q): each warp takes query rows") << '\n';
    std::string shares = "   ";
    for (int w = 0; w < s.warps; ++w) {
        const Range r = byKeys ? s.shares[std::size_t(w)].keys : s.shares[std::size_t(w)].rows;
        shares += line(" w%d [%d, %d)", w, r.begin, r.end);
    }
    out << shares << '\n';
    out << line("    shared-memory exchange: %llu B written, %llu B read, %d barriers per tile; "
                "Q, K, V read from shared memory: %llu B\n",
                ull(s.exchangeWriteBytes), ull(s.exchangeReadBytes), s.exchangeBarriers,
                ull(s.operandReadBytes));
}

void printGrid(std::ostream& out, const GridPicture& g) {
    out << line("  %s: %llu thread blocks, each %d query block%s; %d of %d SMs busy; %llu wave%s "
                "of up to %llu (last %llu); time %llu unit%s\n",
                toString(g.version), ull(g.blocks), g.queryBlocksPerThreadBlock,
                g.queryBlocksPerThreadBlock == 1 ? "" : "s", g.busySms, g.sms, ull(g.waves),
                g.waves == 1 ? "" : "s", ull(g.residentBlocks), ull(g.tailBlocks),
                ull(g.timeUnits()), g.timeUnits() == 1 ? "" : "s");
}

} // namespace

void printVersions(std::ostream& out, const ProblemSpec& spec, const VersionsRequest& r,
                   const HardwareProfile& hw, const VersionComparison& c, const VersionsReport& v) {
    out << line("What FlashAttention-2 changed: n_q = %d, n_k = %d, d = %d, Br = %d, Bc = %d%s, on "
                "the %s\n\n",
                spec.queries, spec.keys, spec.headDim, r.blockRows, r.blockCols,
                spec.causal ? ", causal" : "", hw.name.c_str());

    out << "1. Non-matmul operations, counted as each pass ran (one per element operation)\n";
    out << line("  %-18s %12s %12s %12s %12s %12s %14s\n", "", "exp/log", "max", "add", "multiply",
                "divide", "total");
    printCountsRow(out, toString(FlashVersion::One), c.one.nonMatmul);
    printCountsRow(out, toString(FlashVersion::Two), c.two.nonMatmul);
    out << line("  matmul FLOPs, both: %llu; -1 does %.2fx the non-matmul operations of -2\n",
                ull(c.two.matmulFlops), v.nonMatmulRatio());
    out << "  checked against ordinary attention: " << toString(FlashVersion::One) << ' '
        << c.one.check.summary() << "; " << toString(FlashVersion::Two) << ' '
        << c.two.check.summary() << line("; max |O_1 - O_2| %.3g\n", c.maxDifference);
    out << line("  on the %s the tensor cores run matmuls %.1fx faster than the CUDA cores run "
                "the rest: non-matmul time is %.1f%% of the matmul time for -1, %.1f%% for -2\n\n",
                hw.name.c_str(), v.timeOne.rateRatio, 100 * v.timeOne.nonMatmulPerMatmul(),
                100 * v.timeTwo.nonMatmulPerMatmul());

    out << line("2. One %d x %d tile across %d warps (fp16 operands, fp32 partials)\n",
                std::min(r.blockRows, spec.queries), std::min(r.blockCols, spec.keys), r.warps);
    printSplit(out, v.splitOne);
    printSplit(out, v.splitTwo);
    out << '\n';

    const KernelShape& k = r.kernel;
    out << line("3. The grid: batch %d x %d heads, n_q = %d, kernel %s (Br %d, %d threads, %llu B "
                "of shared memory): %d blocks per SM, limited by %s\n",
                r.batch, r.heads, spec.queries, k.name.c_str(), k.blockRows, k.threads,
                ull(k.sharedBytes), v.gridTwo.occupancy.blocksPerSm,
                v.gridTwo.occupancy.limitedBy.c_str());
    printGrid(out, v.gridOne);
    printGrid(out, v.gridTwo);
    out << line("  -2's grid finishes %.1fx sooner (time units: a query block's work on one slot)\n",
                v.gridSpeedup());
}

} // namespace flashviz::cli
