// flashviz-gpu-bench: times the fp32 FlashAttention kernels against ordinary attention on the
// GPU (cuBLAS S = scale Q K^T, softmax kernel, cuBLAS O = P V) at a fixed number of tokens
// (batch x n) and a fixed model width (heads x d), the way FlashAttention's own benchmarks do.
// Medians over repeats, timed with CUDA events; TFLOP/s = 4 n^2 d batch heads / t (halved with
// --causal); scratch is what each method allocates beyond Q, K, V, O, and the peak is the drop in
// free device memory. Every output is checked against the baseline. No Qt, no core sources.
#include "kernels/cuda/bench/bench_util.h"
#include "kernels/cuda/bench/benchmark_run.h"
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_memory.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/sm80/tc_backward_buffers.h"
#include "kernels/cuda/sm80/tc_launch.h"

#include "core/errors.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace flashviz;
using namespace flashviz::cuda;

namespace {

struct Options {
    std::vector<int> dims{64, 128};
    std::vector<int> lengths{1024, 2048, 4096, 8192, 16384};
    int tokens = 16384; // batch x n
    int width = 2048;   // heads x d
    int repeats = 10;
    bool allVariants = false;
    bool causal = false;
    bool baseline = true;
    std::vector<int> only; // fast-kernel ids to time (empty: see allVariants)
    bool fp32 = true;      // the fp32 fast kernel's rows
    std::vector<TcElement> tcTypes; // tensor-core rows in these types (--tc)
    std::string csv;
    bool api = false; // --api: run the library call the app's benchmark view makes instead
    bool once = false; // --once: each method's checked launch only, untimed (for profilers)
    bool backward = false; // --backward: the tensor-core backward after each type's forward rows
    bool backwardVariants = false; // --backward-variants: every backward variant, not the default
    std::vector<std::string> backwardMatch; // --backward-match: of those, names containing one of these
    GpuBenchPass pass = GpuBenchPass::Forward; // --pass, with --api
};

std::vector<int> parseList(const char* text) {
    std::vector<int> out;
    for (const char* p = text; *p;) {
        out.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
    }
    return out;
}

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> splitNames(const std::string& list) {
    std::vector<std::string> out;
    for (std::size_t at = 0; at < list.size();) {
        const std::size_t end = std::min(list.find(',', at), list.size());
        if (end > at) out.push_back(list.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

void usage() {
    std::printf(
        "usage: flashviz-gpu-bench [--d 64,128] [--n 1024,2048,...] [--tokens 16384]\n"
        "         [--width 2048] [--repeats 10] [--variants] [--causal] [--no-baseline]\n"
        "         [--only ID,ID] [--tc fp16,bf16] [--no-fp32] [--csv FILE] [--api] [--once]\n"
        "         [--backward] [--backward-variants] [--backward-match TEXT,TEXT]\n"
        "         [--pass forward|backward|forward+backward]\n"
        "  --variants   time every compiled tile configuration of the fast kernel, not only\n"
        "               the default for d\n"
        "  --only       time only these fast-kernel variants (ids as listed at the start: rows\n"
        "               of kernels/kernel_configs.h' kFastConfigs)\n"
        "  --tc         also time the tensor-core kernel in these types (inputs rounded from\n"
        "               the fp32 ones; checked against the fp32 baseline); with --variants\n"
        "               every tensor-core variant, else the default for d\n"
        "  --no-fp32    leave out the fp32 fast kernel\n"
        "  --backward   with --tc, also time the tensor-core backward (dQ, dK, dV; its pre-pass,\n"
        "               kernel and post-pass) after the default forward wrote O and the LSE;\n"
        "               TFLOP/s = 2.5 x the forward's count; every backward variant with\n"
        "               --variants. Its gradients are checked for non-finite values only (the\n"
        "               GPU suite tst_cuda_tensor_core_backward checks them against fp64)\n"
        "  --api        measure through the library call the app's GPU benchmark view makes\n"
        "               (kernels/gpu_benchmark.h): standard-fp32, flash-fp32, -fp16, -bf16 at\n"
        "               the first --d and every --n, printing its points\n"
        "  --backward-variants  with --backward, every backward variant (the forward's default)\n"
        "  --backward-match     with --backward-variants, only those whose names contain one of\n"
        "               these texts (e.g. dqrows_tiles,_staggered)\n"
        "  --pass       with --api, the pass it times (kernels/gpu_benchmark.h' GpuBenchPass)\n"
        "  --once       launch each method once (its checked run) and time nothing: one\n"
        "               launch per method for a profiler (kernels/bench/ncu_traffic.py)\n");
}

struct Row {
    int d = 0, n = 0, batch = 0, heads = 0;
    std::string method;
    Timing t;
    double tflops = 0;
    double ratioVsBaseline = 0; // baseline time / this time
    double scratchBytes = 0;
    double peakBytes = 0;
    Diff diff;
    bool checked = false;
};

std::size_t freeBytes() { return memoryInfo().freeBytes; }

struct TcBuffers {
    TcElement type;
    DeviceBuffer<std::uint16_t> q, k, v, o;
};

// The backward rows of one type at (d, n): the default forward writes O and the LSE once, then
// each backward variant is timed (zeroing dQ's accumulator, pre-pass, kernel, post-pass). dO
// is V's values: any data times alike.
void addBackwardRows(std::vector<Row>& rows, const Options& opt, const TcBuffers& b, int d, int n,
                     int batch, int heads, float scale, double forwardFlops) {
    const std::size_t elements = std::size_t(batch) * heads * n * d;
    const TcParams forward = denseSelfAttentionParams(b.q.get(), b.k.get(), b.v.get(), b.o.get(), batch,
                                                      heads, n, d, scale, opt.causal, b.type);
    TcBackwardBuffers buffers(forward);
    const TcBackwardParams p = buffers.params(b.v.get()); // dO: V's values
    launchTcFlash(p);
    const TcBackwardKernelInfo* chosen = defaultTcBackwardKernel(d, opt.causal);
    const char* typeName = b.type == TcElement::Fp16 ? "fp16" : "bf16";
    std::vector<float> gradient(elements);
    for (const auto& info : tcBackwardKernels()) {
        if (info.headDim != d || !tcBackwardKernelRunsHere(info)) continue;
        if (!opt.allVariants && !opt.backwardVariants && !(chosen && info.id == chosen->id)) continue;
        if (!opt.backwardMatch.empty() &&
            std::none_of(opt.backwardMatch.begin(), opt.backwardMatch.end(),
                         [&](const std::string& text) { return info.name.find(text) != std::string::npos; }))
            continue;
        Row r{d, n, batch, heads, std::string("tcbwd-") + typeName + "-" + info.name, {}, 0, 0, 0, 0, {}, false};
        const std::size_t before = freeBytes();
        launchTcBackward(p, info.id);
        synchronize("The tensor-core backward");
        r.peakBytes = double(before) - double(freeBytes()) + double(buffers.scratchBytes());
        r.scratchBytes = double(buffers.scratchBytes());
        DeviceBuffer<float> widened(elements, "a gradient in fp32");
        for (const auto* g : {&buffers.dq, &buffers.dk, &buffers.dv}) {
            convertTcToFloat(g->get(), widened.get(), elements, b.type);
            widened.download(gradient.data(), elements);
            for (float x : gradient) r.diff.nonFinite += !std::isfinite(x);
        }
        if (!opt.once) {
            r.t = timeIt([&] { launchTcBackward(p, info.id); }, opt.repeats);
            r.tflops = 2.5 * forwardFlops / (r.t.medianMs * 1e-3) / 1e12;
        }
        rows.push_back(r);
    }
}

// The benchmark view's path: one call, its progress reports and its points.
int runApi(const Options& opt) {
    GpuBenchRequest request;
    request.sizes = opt.lengths;
    request.headDim = opt.dims.empty() ? 64 : opt.dims.front();
    request.causal = opt.causal;
    request.repeats = opt.repeats;
    request.tokens = opt.tokens;
    request.headsTimesDim = opt.width;
    request.pass = opt.pass;
    const std::vector<GpuBenchPoint> points =
        runBenchmark(request, [](int done, int total) {
            std::printf("progress %d/%d\n", done, total);
            std::fflush(stdout);
            return true;
        });
    std::printf("%-14s %-6s %-4s %-4s %10s %9s %12s %-28s %s\n", "variant", "n", "B", "H",
                "median ms", "TFLOP/s", "scratch", "kernel", "note");
    for (const GpuBenchPoint& point : points)
        std::printf("%-14s %-6d %-4d %-4d %10.3f %9.2f %12s %-28s %s\n", point.variant.c_str(),
                    point.n, point.batch, point.heads, point.medianMs, point.tflops,
                    formatBytes(point.scratchBytes).c_str(),
                    point.kernel.empty() ? "-" : point.kernel.c_str(), point.note.c_str());
    return points.size() == std::size_t(gpuBenchPointCount(request)) ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    Options opt;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                usage();
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--d") opt.dims = parseList(next());
        else if (a == "--n") opt.lengths = parseList(next());
        else if (a == "--tokens") opt.tokens = std::atoi(next());
        else if (a == "--width") opt.width = std::atoi(next());
        else if (a == "--repeats") opt.repeats = std::max(1, std::atoi(next()));
        else if (a == "--variants") opt.allVariants = true;
        else if (a == "--causal") opt.causal = true;
        else if (a == "--no-baseline") opt.baseline = false;
        else if (a == "--only") opt.only = parseList(next());
        else if (a == "--csv") opt.csv = next();
        else if (a == "--no-fp32") opt.fp32 = false;
        else if (a == "--api") opt.api = true;
        else if (a == "--once") opt.once = true;
        else if (a == "--backward") opt.backward = true;
        else if (a == "--backward-variants") opt.backward = opt.backwardVariants = true;
        else if (a == "--backward-match") opt.backwardMatch = splitNames(next());
        else if (a == "--pass") {
            const std::optional<GpuBenchPass> pass = parseGpuBenchPass(next());
            if (!pass) {
                usage();
                return 2;
            }
            opt.pass = *pass;
        }
        else if (a == "--tc") {
            for (const std::string& name : splitNames(next())) {
                if (name == "fp16") opt.tcTypes.push_back(TcElement::Fp16);
                else if (name == "bf16") opt.tcTypes.push_back(TcElement::Bf16);
                else {
                    usage();
                    return 2;
                }
            }
        }
        else {
            usage();
            return a == "--help" || a == "-h" ? 0 : 2;
        }
    }

    try {
        if (opt.api) return runApi(opt);
        cudaDeviceProp prop{};
        check(cudaGetDeviceProperties(&prop, 0), "Reading the GPU's properties");
        int clockKhz = 0;
        (void)cudaDeviceGetAttribute(&clockKhz, cudaDevAttrClockRate, 0);
        std::printf("device: %s, sm_%d%d, %d SMs, %.0f MHz peak, %s, shared/block %s\n", prop.name,
                    prop.major, prop.minor, prop.multiProcessorCount, clockKhz / 1e3,
                    formatBytes(double(prop.totalGlobalMem)).c_str(),
                    formatBytes(double(prop.sharedMemPerBlockOptin)).c_str());
        std::printf("shape: batch x n = %d tokens, heads x d = %d, fp32, %s, %d repeats (median)\n",
                    opt.tokens, opt.width, opt.causal ? "causal" : "non-causal", opt.repeats);
        for (const auto& k : fastKernels())
            std::printf("fast kernel %d: %s, %s, %d threads, %s shared\n", k.id, k.name.c_str(),
                        k.arithmetic == FastArithmetic::Tf32x3 ? "3xTF32 tensor cores" : "fp32 FMA",
                        k.threads, formatBytes(double(k.sharedBytes)).c_str());
        for (const auto& k : tcKernels())
            std::printf("tensor-core kernel %d: %s, %s, %d threads, %d rows per warp, Q in %s, %s "
                        "shared%s\n",
                        k.id, k.name.c_str(), k.wgmma ? "wgmma + TMA (Hopper)" : "mma.sync",
                        k.threads, k.rowsPerWarp, k.qInRegisters ? "registers" : "shared memory",
                        formatBytes(double(k.sharedBytes)).c_str(),
                        tcKernelRunsHere(k) ? "" : " (not on this GPU)");

        const std::size_t elements = std::size_t(opt.tokens) * std::size_t(opt.width);
        std::vector<float> hq(elements), hk(elements), hv(elements);
        fillRandom(hq, 1);
        fillRandom(hk, 2);
        fillRandom(hv, 3);
        DeviceBuffer<float> q(elements, "Q"), k(elements, "K"), v(elements, "V"),
            o(elements, "O");
        q.upload(hq.data(), elements);
        k.upload(hk.data(), elements);
        v.upload(hv.data(), elements);
        BlasHandle blas;
        // fp16 / bf16 copies of the same inputs, one set per type, and one output each.
        std::vector<TcBuffers> tcBuffers;
        for (const TcElement t : opt.tcTypes) {
            TcBuffers b{t, DeviceBuffer<std::uint16_t>(elements, "Q (16-bit)"),
                        DeviceBuffer<std::uint16_t>(elements, "K (16-bit)"),
                        DeviceBuffer<std::uint16_t>(elements, "V (16-bit)"),
                        DeviceBuffer<std::uint16_t>(elements, "O (16-bit)")};
            convertFloatToTc(q.get(), b.q.get(), elements, t);
            convertFloatToTc(k.get(), b.k.get(), elements, t);
            convertFloatToTc(v.get(), b.v.get(), elements, t);
            tcBuffers.push_back(std::move(b));
        }
        synchronize("Converting the inputs to fp16/bf16");

        std::vector<Row> rows;
        std::vector<float> reference(elements), result(elements);
        for (const int d : opt.dims) {
            for (const int n : opt.lengths) {
                if (opt.tokens % n != 0 || opt.width % d != 0) continue;
                const int batch = opt.tokens / n, heads = opt.width / d;
                AttentionParams p = denseSelfAttentionParams(q.get(), k.get(), v.get(), o.get(),
                                                             batch, heads, n, d, opt.causal);
                const double flops = 4.0 * double(n) * n * d * batch * heads * (opt.causal ? 0.5 : 1.0);
                const std::size_t firstRow = rows.size();

                // Baseline: three steps with the n x n scratch per (batch, head).
                Row base{d, n, batch, heads, "cublas-3step", {}, 0, 1, 0, 0, {}, false};
                bool haveReference = false;
                const double scratch = double(batch) * heads * double(n) * n * sizeof(float);
                if (opt.baseline && scratch + (1ull << 30) < double(freeBytes())) {
                    const std::size_t before = freeBytes();
                    DeviceBuffer<float> scores(std::size_t(scratch / sizeof(float)), "S");
                    o.fillBytes(0xFF);
                    launchStandardAttention(blas, p, scores.get());
                    synchronize("Standard attention");
                    base.peakBytes = double(before) - double(freeBytes());
                    o.download(reference.data(), elements);
                    haveReference = true;
                    if (!opt.once) {
                        base.t = timeIt([&] { launchStandardAttention(blas, p, scores.get()); },
                                        opt.repeats);
                        base.tflops = flops / (base.t.medianMs * 1e-3) / 1e12;
                    }
                    base.scratchBytes = scratch;
                    rows.push_back(base);
                } else if (opt.baseline) {
                    std::printf("d=%d n=%d: baseline skipped, its %s scratch does not fit\n", d, n,
                                formatBytes(scratch).c_str());
                }

                // A flash output (in `result`) against the baseline's, or at least counted for
                // non-finite values when the baseline did not fit.
                auto checkResult = [&](Row& r) {
                    if (haveReference) {
                        r.diff = compare(result, reference);
                        r.checked = true;
                    } else {
                        std::size_t bad = 0;
                        for (float x : result) bad += !std::isfinite(x);
                        r.diff.nonFinite = bad;
                    }
                };

                // Flash: the default variant for d, or every variant.
                std::vector<FastKernelInfo> kernels;
                const FastKernelInfo* chosen = defaultFastKernel(d);
                for (const auto& info : fastKernels())
                    if (opt.fp32 && info.headDim == d &&
                        (opt.only.empty()
                             ? (opt.allVariants || (chosen && info.id == chosen->id))
                             : std::find(opt.only.begin(), opt.only.end(), info.id) != opt.only.end()) &&
                        info.sharedBytes <= maxSharedBytesPerBlock())
                        kernels.push_back(info);
                DeviceBuffer<float> m(std::size_t(batch) * heads * n, "m"),
                    l(std::size_t(batch) * heads * n, "l");
                p.m = m.get();
                p.l = l.get();
                for (const auto& info : kernels) {
                    Row r{d, n, batch, heads, "flash-" + info.name, {}, 0, 0, 0, 0, {}, false};
                    const std::size_t before = freeBytes();
                    o.fillBytes(0xFF);
                    launchFlashFast(p, info.id);
                    synchronize("The flash kernel");
                    r.peakBytes = double(before) - double(freeBytes()) + double(m.bytes() + l.bytes());
                    r.scratchBytes = double(m.bytes() + l.bytes());
                    o.download(result.data(), elements);
                    checkResult(r);
                    if (!opt.once) {
                        r.t = timeIt([&] { launchFlashFast(p, info.id); }, opt.repeats);
                        r.tflops = flops / (r.t.medianMs * 1e-3) / 1e12;
                        if (haveReference) r.ratioVsBaseline = base.t.medianMs / r.t.medianMs;
                    }
                    rows.push_back(r);
                }
                // Tensor-core rows: same inputs rounded to fp16 / bf16, same check.
                const TcKernelInfo* tcDefault = defaultTcKernel(d, opt.causal);
                for (auto& b : tcBuffers) {
                    const char* typeName = b.type == TcElement::Fp16 ? "fp16" : "bf16";
                    for (const auto& info : tcKernels()) {
                        if (info.headDim != d || !tcKernelRunsHere(info)) continue;
                        if (!opt.allVariants && !(tcDefault && info.id == tcDefault->id)) continue;
                        const TcParams tp =
                            denseSelfAttentionParams(b.q.get(), b.k.get(), b.v.get(), b.o.get(),
                                                     batch, heads, n, d, p.scale, opt.causal, b.type);
                        Row r{d, n, batch, heads, std::string("tc-") + typeName + "-" + info.name,
                              {}, 0, 0, 0, 0, {}, false};
                        const std::size_t before = freeBytes();
                        b.o.fillBytes(0xFF);
                        launchTcFlash(tp, info.id);
                        synchronize("The tensor-core flash kernel");
                        r.peakBytes = double(before) - double(freeBytes());
                        convertTcToFloat(b.o.get(), o.get(), elements, b.type);
                        o.download(result.data(), elements);
                        checkResult(r);
                        if (!opt.once) {
                            r.t = timeIt([&] { launchTcFlash(tp, info.id); }, opt.repeats);
                            r.tflops = flops / (r.t.medianMs * 1e-3) / 1e12;
                            if (haveReference) r.ratioVsBaseline = base.t.medianMs / r.t.medianMs;
                        }
                        rows.push_back(r);
                    }
                    if (opt.backward) addBackwardRows(rows, opt, b, d, n, batch, heads, p.scale, flops);
                }
                for (auto it = rows.begin() + std::ptrdiff_t(firstRow); it != rows.end(); ++it)
                    std::printf("d=%-4d n=%-6d B=%-3d H=%-3d %-36s %9.3f ms (min %.3f max %.3f) "
                                "%6.2f TFLOP/s  x%.2f vs 3-step  scratch %-10s peak %-10s "
                                "max|diff| %.2e rel %.2e nonfinite %zu%s\n",
                                it->d, it->n, it->batch, it->heads, it->method.c_str(),
                                it->t.medianMs, it->t.minMs, it->t.maxMs, it->tflops,
                                it->ratioVsBaseline, formatBytes(it->scratchBytes).c_str(),
                                formatBytes(it->peakBytes).c_str(), it->diff.maxAbs,
                                it->diff.relative, it->diff.nonFinite,
                                it->checked || it->method == "cublas-3step" ? "" : " (unchecked)");
                std::fflush(stdout);
            }
        }

        std::printf("\n%-5s %-6s %-36s %10s %9s %9s %11s %11s %10s\n", "d", "n", "method", "ms",
                    "TFLOP/s", "vs 3step", "scratch", "peak", "rel err");
        for (const auto& r : rows)
            std::printf("%-5d %-6d %-36s %10.3f %9.2f %9.2f %11s %11s %10.2e\n", r.d, r.n,
                        r.method.c_str(), r.t.medianMs, r.tflops, r.ratioVsBaseline,
                        formatBytes(r.scratchBytes).c_str(), formatBytes(r.peakBytes).c_str(),
                        r.diff.relative);
        if (!opt.csv.empty()) {
            std::ofstream csv(opt.csv);
            csv << "d,n,batch,heads,causal,method,median_ms,min_ms,max_ms,tflops,ratio_vs_3step,"
                   "scratch_bytes,peak_bytes,max_abs_diff,rel_err,nonfinite\n";
            for (const auto& r : rows)
                csv << r.d << ',' << r.n << ',' << r.batch << ',' << r.heads << ','
                    << (opt.causal ? 1 : 0) << ',' << r.method << ',' << r.t.medianMs << ','
                    << r.t.minMs << ',' << r.t.maxMs << ',' << r.tflops << ','
                    << r.ratioVsBaseline << ',' << r.scratchBytes << ',' << r.peakBytes << ','
                    << r.diff.maxAbs << ',' << r.diff.relative << ',' << r.diff.nonFinite << '\n';
        }
        bool ok = true;
        for (const auto& r : rows)
            // fp16 / bf16 rows carry their inputs' rounding (2^-11, 2^-8) against the fp32 baseline.
            if (r.diff.nonFinite > 0 ||
                (r.checked && r.diff.relative > (r.method.rfind("tc-", 0) == 0 ? 2e-2 : 1e-4))) {
                std::printf("CHECK FAILED: d=%d n=%d %s rel %.2e nonfinite %zu\n", r.d, r.n,
                            r.method.c_str(), r.diff.relative, r.diff.nonFinite);
                ok = false;
            }
        return ok ? 0 : 1;
    } catch (const EngineError& e) {
        std::fprintf(stderr, "flashviz-gpu-bench: %s\n", e.what());
        return 1;
    }
}
