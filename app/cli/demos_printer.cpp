#include "app/cli/demos_printer.h"

#include "core/analysis.h"
#include "core/hardware.h"
#include "core/setup.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace flashviz::cli {

namespace {

// Characters, not bytes: ℓ, ∘ and ² are two or three bytes of UTF-8 each.
std::size_t characterCount(const std::string& text) {
    return std::size_t(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

constexpr double KB = 1024.0;
constexpr double MB = 1024.0 * 1024.0;

std::string format(const char* fmt, ...) {
    char buffer[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buffer, sizeof buffer, fmt, args);
    va_end(args);
    return buffer;
}

void heading(std::ostream& out, const std::string& title) {
    const std::string rule(68, '=');
    out << '\n' << rule << '\n' << title << '\n' << rule << '\n';
}

void note(std::ostream& out, const char* text) {
    out << '\n' << text << '\n';
}

std::string vectorText(const Vector& v, int count, int decimals) {
    std::string s = "[";
    for (int i = 0; i < count && i < v.size(); ++i) {
        if (i) s += ' ';
        s += format("%.*f", decimals, v(i));
    }
    return s + "]";
}

// Non-finite values print as inf and nan whatever their sign bit, as numpy does.
std::string expText(const Vector& v) {
    std::string s = "[";
    for (int i = 0; i < v.size(); ++i) {
        const double x = v(i);
        s += i ? " " : "";
        s += std::isnan(x) ? "nan" : std::isinf(x) ? (x > 0 ? "inf" : "-inf") : format("%g", x);
    }
    return s + "]";
}

void demoMemoryBound(std::ostream& out) {
    heading(out, "DEMO 1: is attention memory-bound? It depends on the arithmetic");
    const int d = 64;
    out << "head dim d = " << d << ", float32\n\n";
    out << format("%7s %10s %9s %11s %10s\n", "n", "HBM MB", "GFLOPs", "bytes/flop", "n^2 share");
    const auto rows = memoryBoundTable(d, {128, 512, 2048, 8192});
    for (const auto& r : rows)
        out << format("%7d %10.2f %9.3f %11.3f %9.1f%%\n", r.n, r.hbmBytes / MB, r.flops / 1e9,
                      r.bytesPerFlop, 100 * r.squareShare);
    const auto& a100 = findHardwareProfile("a100-40gb");
    const double fed = a100.hbmBandwidthBytesPerSecond.value / a100.fp32FlopsPerSecond.value;
    const auto& last = rows.back();
    const bool keepsUp = last.bytesPerFlop <= fed;
    // The explainer script concluded "memory-bound" from these same two figures; say where its
    // own numbers disagree.
    const std::string average =
        format("Traffic grows like n^2 and so does arithmetic, so bytes per FLOP settle near "
               "%.3f. An A100 feeds %.3f bytes per FLOP to its fp32 CUDA cores (%.2f TB/s over "
               "%.1f TFLOP/s). The explainer script set these two side by side and called "
               "attention memory-bound; %s",
               last.bytesPerFlop, fed, a100.hbmBandwidthBytesPerSecond.value / 1e12,
               a100.fp32FlopsPerSecond.value / 1e12,
               keepsUp ? format("its own figures say otherwise: %.3f is below %.3f, so on "
                                "average the memory keeps up with fp32 arithmetic.",
                                last.bytesPerFlop, fed)
                             .c_str()
                       : format("its figures agree: %.3f is above %.3f, so the fp32 "
                                "arithmetic waits for memory.",
                                last.bytesPerFlop, fed)
                             .c_str());
    const FlashOptions tiles;
    const std::string perKernel = format("Kernel by kernel, at n = %d: ", last.n) +
                                  memoryBoundVerdict(a100, last.n, d, tiles);
    out << '\n' << wrapped(average) << "\n\n" << wrapped(perKernel) << "\n\n";
    const auto& from = rows[rows.size() - 2]; // the share only grows with n
    out << wrapped(format("From n = %d on, %.1f%% or more of the traffic is the n x n score "
                          "matrix, which nobody wanted to keep.",
                          from.n, 100 * from.squareShare))
        << '\n';
}

void demoOnlineSoftmax(std::ostream& out) {
    heading(out, "DEMO 2: online softmax -- the whole idea, in two variables");
    const auto demo = onlineSoftmaxDemo(scriptSoftmaxRow(), 8);
    out << "one row of " << demo.scores.size() << " scores, streamed in "
        << demo.scores.size() / demo.block << " blocks of " << demo.block << "\n\n";
    out << format("ordinary softmax vs online softmax, max abs diff: %.2e  <- exact to float "
                  "precision\n",
                  demo.onlineMaxDiff);
    out << format("ordinary softmax vs NO-RESCALE version, max abs diff: %.2e  <- wrong\n",
                  demo.brokenMaxDiff);
    out << format("no-rescale weights sum to %.6f, not 1.0\n", demo.brokenSum);
    out << "\nfirst 6 weights, side by side:\n";
    out << "  correct:  " << vectorText(demo.reference, 6, 6) << '\n';
    out << "  online:   " << vectorText(demo.online, 6, 6) << '\n';
    out << "  broken:   " << vectorText(demo.broken, 6, 6) << '\n';
    note(out, "One multiplication separates `online` from `broken`: when a block raises the\n"
              "maximum, the running sum must be scaled by exp(m_old - m_new). Without it, terms\n"
              "measured against different maxima are added together. No error is raised; the\n"
              "weights are simply wrong.");
}

void demoTiled(std::ostream& out) {
    heading(out, "DEMO 3: tiled attention -- same answer, flat memory");
    out << format("%7s %14s %13s %15s %12s %13s\n", "n", "max abs diff", "std peak KB",
                  "flash peak KB", "std HBM MB", "flash HBM MB");
    for (const auto& r : tiledComparison(64, {128, 256, 512, 1024, 2048}, 64, 2))
        out << format("%7d %14.2e %13.1f %15.1f %12.2f %13.2f\n", r.n, r.maxAbsDiff,
                      r.standard.peakScratchBytes() / KB, r.flash.peakScratchBytes() / KB,
                      r.standard.hbmBytes() / MB, r.flash.hbmBytes() / MB);
    note(out, "The error is rounding noise: tiling computes the same function. The standard\n"
              "peak grows 16x for every 4x in n; the flash peak stays put, because only a few\n"
              "tiles and two statistics per row are ever held at once.");
}

void demoBlockSize(std::ostream& out) {
    heading(out, "DEMO 4: block size -- the trade-off, and who sets it");
    const std::vector<int> blocks = {16, 32, 64, 128, 256, 512, 1024};
    const auto script = blockSizeSweep(1024, 64, blocks, kScriptSramBudgetBytes);
    const auto wholeSm = blockSizeSweep(1024, 64, blocks, std::uint64_t(defaultSramBudgetBytes()));
    const auto& gpu = findHardwareProfile(kDefaultHardwareId);
    out << "n = " << script.n << ", d = " << script.headDim << ", SRAM budget assumed "
        << script.sramBudgetBytes / 1024 << " KB (the script's)\nand "
        << wholeSm.sramBudgetBytes / 1024 << " KB (one SM of the " << gpu.name
        << ", as the window judges tiles)\n";
    out << format("standard attention traffic: %.2f MB\n\n", script.standard.hbmBytes() / MB);
    const std::string fitsScript = format("fits %d KB?", int(script.sramBudgetBytes / 1024));
    const std::string fitsSm = format("fits %d KB?", int(wholeSm.sramBudgetBytes / 1024));
    out << format("%7s %10s %21s  %-14s%s\n", "block", "HBM MB", "tile working set KB",
                  fitsScript.c_str(), fitsSm.c_str());
    const auto verdict = [](bool fits) { return fits ? "yes" : "NO -- spills"; };
    for (std::size_t i = 0; i < script.rows.size(); ++i) {
        const auto& r = script.rows[i];
        out << format("%7d %10.2f %21.1f  %-14s%s\n", r.block, r.flash.hbmBytes() / MB,
                      r.flash.peakScratchBytes() / KB, verdict(r.fits),
                      verdict(wholeSm.rows[i].fits));
    }
    std::string between; // blocks that fit the whole SM but not the script's budget
    for (std::size_t i = 0; i < script.rows.size(); ++i)
        if (wholeSm.rows[i].fits && !script.rows[i].fits)
            between += (between.empty() ? "" : ", ") + std::to_string(script.rows[i].block);
    note(out,
         format("Bigger blocks mean fewer passes over K and V, so traffic falls; but the tile\n"
                "must fit in on-chip memory. An SM of the %s offers %.0f KB of\n"
                "shared memory; the script assumed a kernel plans for about %d KB of it.\n"
                "That budget, not the algebra, chooses the block size%s.",
                gpu.name.c_str(), wholeSm.sramBudgetBytes / KB, int(script.sramBudgetBytes / 1024),
                between.empty()
                    ? ""
                    : (":\nblock " + between + " fits the whole SM but not the script's budget")
                          .c_str())
             .c_str());
}

void demoBackward(std::ostream& out) {
    heading(out, "DEMO 5: the backward pass -- pay flops, save bytes");
    out << format("%7s %15s %17s %12s %14s %12s\n", "n", "std stored MB", "flash stored MB",
                  "std GFLOPs", "flash GFLOPs", "extra flops");
    for (const auto& r : backwardTable(64, {512, 2048, 8192}))
        out << format("%7d %15.2f %17.2f %12.2f %14.2f %11.0f%%\n", r.n,
                      r.costs.standard.storedElements * 4 / MB,
                      r.costs.flash.storedElements * 4 / MB, r.costs.standard.flops / 1e9,
                      r.costs.flash.flops / 1e9, 100 * r.extraFlopsFraction);
    note(out, "The backward pass of FlashAttention keeps only m and l per row and recomputes\n"
              "the score tiles: a fifth more arithmetic, and at n = 8192 about 256 MB less held\n"
              "per head. Gradient checkpointing's trade, for one operator.");
    const FlashOptions tiles; // FlashAttention's 64 x 64 tiles
    const std::vector<int> ns{512, 2048, 8192};
    out << format(
        "\nAs FlashViz's engine counts FlashAttention-2's backward (d = 64, %d x %d tiles):\n",
        tiles.blockRows, tiles.blockCols);
    out << format("%7s %15s %17s %14s %12s %14s %13s %15s\n", "n", "std stored MB",
                  "flash stored MB", "P stored: MB", "std GFLOPs", "flash GFLOPs", "flash HBM MB",
                  "P stored: HBM MB");
    for (const auto& r : countedBackwardTable(64, ns, tiles))
        out << format("%7d %15.2f %17.2f %14.2f %12.2f %14.2f %13.2f %15.2f\n", r.n,
                      r.standard.storedElements * 4 / MB, r.flashStoredElements * 4 / MB,
                      r.storedWeightsStoredElements * 4 / MB, r.standard.flops / 1e9,
                      r.flash.flops / 1e9, r.flash.hbmBytes() / MB,
                      r.storedWeights.hbmBytes() / MB);
    out << '\n' << wrapped(backwardModelWhy(ns.back(), ns.back(), 64, false, tiles)) << '\n';
}

void demoExactness(std::ostream& out) {
    heading(out, "DEMO 6: this is not an approximation");
    const auto e = exactnessDemo(512, 64, 64, 64, 5);
    out << format("flash vs standard, max abs diff:  %.3e\n", e.flashMaxDiff);
    out << format("flash vs standard, allclose:      %s\n", e.flashAllClose ? "True" : "False");
    out << format("local-window vs standard, max abs diff: %.3e\n", e.windowMaxDiff);
    out << format("local-window vs standard, allclose:     %s\n",
                  e.windowAllClose ? "True" : "False");
    note(out, "A local window (each query sees keys within 64 positions) is cheaper and a\n"
              "different function. FlashAttention moves fewer bytes and computes the same one:\n"
              "a trained model's outputs do not change when you switch it on.");
}

void demoFlops(std::ostream& out) {
    heading(out, "DEMO 7: no, it is not doing less arithmetic");
    out << format("%7s %12s %14s %12s %14s %12s\n", "n", "std GFLOPs", "flash GFLOPs", "std HBM MB",
                  "flash HBM MB", "traffic cut");
    for (const auto& r : flopsVersusTraffic(64, {512, 1024, 2048, 4096}, 64, 6))
        out << format("%7d %12.3f %14.3f %12.2f %14.2f %11.1fx\n", r.n, r.standard.flops / 1e9,
                      r.flash.flops / 1e9, r.standard.hbmBytes() / MB, r.flash.hbmBytes() / MB,
                      r.trafficCut);
    note(out, "The FLOP columns match exactly; only the traffic moves. FlashAttention is an\n"
              "IO result, not an arithmetic one.");
}

void demoDebugCopy(std::ostream& out) {
    heading(out, "DEMO 8: keeping the n x n matrix 'just for debugging'");
    const auto d = debugCopyDemo(1024, 64, 64, 7);
    out << format("tiled, matrix discarded: peak extra %8.1f KB, traffic %.2f MB\n",
                  d.clean.peakScratchBytes() / KB, d.clean.hbmBytes() / MB);
    out << format("tiled, matrix kept:      peak extra %8.1f KB, traffic %.2f MB\n",
                  d.withCopy.peakScratchBytes() / KB, d.withCopy.hbmBytes() / MB);
    out << format("memory saving lost: %.0fx worse peak\n", d.peakRatio);
    note(out, "The saving never came from the loops; it came from never allocating the n x n\n"
              "buffer. One line that keeps a copy brings it straight back.");
}

void demoOverflow(std::ostream& out) {
    heading(out, "DEMO 9: skip the running max -- exp() overflows to inf");
    const auto o = overflowDemo(scriptOverflowScores());
    out << "scores: " << vectorText(o.scores, int(o.scores.size()), 1) << '\n';
    out << "exp(scores) with no max subtracted: " << expText(o.rawExp) << '\n';
    out << "resulting weights:                  " << expText(o.naiveWeights) << '\n';
    out << "safe softmax (max subtracted):      " << vectorText(o.safeWeights, 4, 6) << '\n';
    note(out, "exp(800) does not fit in a double. Subtracting the row maximum first keeps every\n"
              "exponent at or below 0. A tile at a time, the maximum is not known in advance,\n"
              "which is exactly why FlashAttention carries a running one.");
}

void summary(std::ostream& out) {
    heading(out, "IN SHORT");
    out << "\n"
           "  cost      the n x n scores and weights travel to HBM and back; on tensor cores\n"
           "            that traffic, not the arithmetic, sets the time (demo 1 says when).\n"
           "  tiling    Q in row blocks, K and V in column blocks: only a Br x Bc tile of scores\n"
           "            ever exists, in on-chip memory.\n"
           "  algebra   a running maximum m and sum l per row; whenever m rises, l and the\n"
           "            output accumulator are both scaled by exp(m_old - m_new).\n"
           "  backward  nothing n x n is stored: the tiles are recomputed from m and l.\n"
           "  exact     the same function as ordinary attention, to rounding: not an\n"
           "            approximation, and no fewer FLOPs.\n";
}

} // namespace

std::string wrapped(const std::string& text, std::size_t width) {
    std::string out, line, word;
    auto flush = [&] {
        if (word.empty()) return;
        if (!line.empty() && characterCount(line) + 1 + characterCount(word) > width) {
            out += line + '\n';
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        word.clear();
    };
    for (char c : text) {
        if (c == ' ' || c == '\n')
            flush();
        else
            word += c;
    }
    flush();
    return out + line;
}

void printDemos(std::ostream& out, int only) {
    using Demo = void (*)(std::ostream&);
    const Demo demos[] = {demoMemoryBound, demoOnlineSoftmax, demoTiled,
                          demoBlockSize,   demoBackward,      demoExactness,
                          demoFlops,       demoDebugCopy,     demoOverflow};
    for (int i = 0; i < 9; ++i)
        if (only == 0 || only == i + 1) demos[i](out);
    if (only == 0) summary(out);
}

} // namespace flashviz::cli
