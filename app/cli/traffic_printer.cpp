#include "app/cli/traffic_printer.h"

#include "core/units.h"

#include <cstdio>

namespace flashviz::cli {

namespace {

std::string signedPercent(double error) {
    return (error >= 0 ? "+" : "-") + formatPercent(std::abs(error));
}

void modelRow(std::ostream& out, const char* name, const TrafficEstimate& e) {
    char line[320];
    std::snprintf(line, sizeof line, "  %-22s %10s %10s %10s %10s %10s\n", name,
                  formatByteAmount(e.counting.total()).c_str(), formatByteAmount(e.l2.read).c_str(),
                  formatByteAmount(e.l2.write).c_str(), formatByteAmount(e.dram.read).c_str(),
                  formatByteAmount(e.dram.write).c_str());
    out << line;
}

void assumptions(std::ostream& out, const char* name, const TrafficEstimate& e) {
    out << "  " << name << ":\n";
    for (const std::string& a : e.assumptions) out << "    - " << a << '\n';
}

} // namespace

void printTrafficModel(std::ostream& out, const HardwareProfile& hw, const TrafficShape& flash,
                       const std::string& kernelName, const TrafficShape& standard) {
    const TrafficEstimate f = estimateTraffic(flash, hw);
    const TrafficEstimate s = estimateTraffic(standard, hw);
    out << "Memory traffic on " << hw.name << ": L2 " << formatMemoryCapacity(hw.l2Bytes.value) << " ("
        << hw.l2Bytes.source << ")\n";
    out << "Problem: n_q " << flash.queries << ", n_k " << flash.keys << ", d " << flash.headDim
        << ", batch " << flash.batch << " x " << flash.heads << " heads"
        << (flash.causal ? ", causal" : "") << "\n";
    out << "FlashAttention: " << kernelName << " (" << (flash.elementBytes == 2 ? "fp16/bf16" : "fp32")
        << ", Br " << flash.blockRows << ", Bc " << flash.blockCols << ", "
        << (flash.residentBlocks > 0 ? std::to_string(flash.residentBlocks) + " blocks at once"
                                     : std::string("one block per SM"))
        << "); standard attention: fp32, three kernels\n\n";
    char header[320];
    std::snprintf(header, sizeof header, "  %-22s %10s %10s %10s %10s %10s\n", "", "counting",
                  "L2 read", "L2 write", "DRAM read", "DRAM write");
    out << header;
    modelRow(out, "FlashAttention", f);
    modelRow(out, "standard attention", s);
    out << "\n  counting: the counting model's \"HBM traffic\"; L2: what the SMs move to and from "
           "L2; DRAM: what L2 moves to and from HBM (the L2-aware model)\n\nAssumptions:\n";
    assumptions(out, "FlashAttention", f);
    assumptions(out, "standard attention", s);
}

int printTrafficMeasured(std::ostream& out, const HardwareProfile& hw, const MeasuredTrafficFile& m) {
    out << "\nMeasured with Nsight Compute on " << m.gpu << " (" << m.date << "; driver " << m.driver
        << "; " << m.ncu << "), each kernel from an empty L2:\n";
    char header[400];
    std::snprintf(header, sizeof header, "  %-4s %-6s %-40s %10s %10s %8s %10s %10s %8s %10s %8s\n",
                  "d", "n", "method", "L2 meas.", "counting", "error", "DRAM meas.", "model",
                  "error", "L2 model", "error");
    out << header;
    int misses = 0, countingMisses = 0, l2Misses = 0;
    std::vector<std::string> reasons;
    for (const MeasuredTraffic& p : m.points) {
        const TrafficCheck c = checkTraffic(p, hw);
        misses += !c.dramWithin;
        countingMisses += !c.countingWithin;
        l2Misses += !c.l2Within;
        char line[480];
        std::snprintf(line, sizeof line, "  %-4d %-6d %-40s %10s %10s %8s %10s %10s %8s %10s %8s\n",
                      p.shape.headDim, p.shape.queries, p.method.c_str(),
                      formatByteAmount(p.l2Bytes).c_str(), formatByteAmount(c.model.counting.total()).c_str(),
                      signedPercent(c.countingL2Error).c_str(),
                      formatByteAmount(p.dramReadBytes + p.dramWriteBytes).c_str(),
                      formatByteAmount(c.model.dram.total()).c_str(), signedPercent(c.dramError).c_str(),
                      formatByteAmount(c.model.l2.total()).c_str(), signedPercent(c.l2Error).c_str());
        out << line;
        if (!c.why.empty() && (!c.dramWithin || !c.countingWithin || !c.l2Within))
            reasons.push_back(std::to_string(p.shape.headDim) + "/" + std::to_string(p.shape.queries) +
                              " " + p.method + ": " + c.why);
    }
    const std::size_t n = m.points.size();
    out << "\n  within " << formatPercent(kTrafficTolerance) << ": DRAM (L2-aware model) "
        << n - std::size_t(misses) << " of " << n << "; L2 (counting model) "
        << n - std::size_t(countingMisses) << " of " << n << "; L2 (L2 model) "
        << n - std::size_t(l2Misses) << " of " << n << '\n';
    for (const std::string& r : reasons) out << "  - " << r << '\n';
    return misses;
}

} // namespace flashviz::cli
