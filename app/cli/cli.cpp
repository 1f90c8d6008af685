#include "app/cli/cli.h"

#include "app/cli/bench.h"
#include "app/cli/demos_printer.h"
#include "core/attention.h"
#include "core/check.h"
#include "core/errors.h"
#include "core/hardware.h"
#include "core/steps.h"
#include "kernels/backend_registry.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

namespace flashviz::cli {

namespace {

const char* kSummary = R"(flashviz-cli - FlashAttention, tile by tile, in a terminal.

Commands:
  demos      Print the explainer script's nine demos (traffic, online softmax, tiling,
             block size, backward pass, exactness, FLOPs, the debug copy, overflow).
  run        Run one problem with FlashAttention, check it against ordinary attention
             and print the traffic, FLOPs and scratch memory of both.
  steps      List the steps the algorithm takes on one problem, or show one step's state.
  bench      Time CPU FlashAttention against ordinary attention (fp32, Eigen).
  profiles   List the hardware profiles and where their figures come from.

Examples:
  flashviz-cli demos
  flashviz-cli run --n 8 --d 4 --br 4 --bc 4
  flashviz-cli run --n 256 --pattern late-max --no-rescale
  flashviz-cli run --n 1000 --nk 700 --br 64 --bc 48 --causal --json
  flashviz-cli steps --n 8 --step 10
  flashviz-cli bench --sizes 1024,2048)";

// A bad option: printed as "flashviz-cli: <message>" with exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

int parseInt(const QCommandLineParser& p, const QString& name, int fallback) {
    if (!p.isSet(name)) return fallback;
    bool ok = false;
    const int value = p.value(name).toInt(&ok);
    if (!ok)
        throw UsageError("--" + name.toStdString() + " expects a whole number, got '" +
                         p.value(name).toStdString() + "'");
    return value;
}

void addProblemOptions(QCommandLineParser& p) {
    p.addOptions({
        {"n", "Number of queries n_q (default 8, the explainer's toy).", "N"},
        {"nk", "Number of keys n_k (default: equal to n).", "N"},
        {"d", "Head dimension d (default 4).", "D"},
        {"br", "Query block size Br (default 4).", "B"},
        {"bc", "Key block size Bc (default 4).", "B"},
        {"seed", "Seed of the input generator (default 0).", "S"},
        {"pattern", "Inputs: gaussian, late-max, early-max or large (default gaussian).", "P"},
        {"scale", "Softmax scale (default 1/sqrt(d)).", "X"},
        {"no-rescale", "Drop the rescale exp(m_old - m_new): the classic bug."},
        {"no-running-max", "Subtract no maximum at all: exp() overflows on large scores."},
        {"keep-full-s", "Also write every score tile to an n x n S 'for debugging'."},
        {"causal", "Causal mask (bottom-right aligned when n != n_k)."},
        {"loop-order", "query-outer (the explainer's, default) or kv-outer (the paper's).", "O"},
        {"precision", "double (default) or float.", "P"},
        {"backend", "cpu (default) or cuda.", "B"},
        {"json", "Print one JSON object instead of text."},
    });
}

ProblemSpec problemFrom(const QCommandLineParser& p) {
    ProblemSpec spec;
    spec.queries = parseInt(p, "n", 8);
    spec.keys = parseInt(p, "nk", spec.queries);
    spec.headDim = parseInt(p, "d", 4);
    spec.seed = std::uint64_t(parseInt(p, "seed", 0));
    if (p.isSet("pattern")) {
        const auto pattern = parseInputPattern(p.value("pattern").toStdString());
        if (!pattern)
            throw UsageError("unknown --pattern '" + p.value("pattern").toStdString() +
                             "' (use gaussian, late-max, early-max or large)");
        spec.pattern = *pattern;
    }
    if (p.isSet("scale")) {
        bool ok = false;
        spec.scale = p.value("scale").toDouble(&ok);
        if (!ok) throw UsageError("--scale expects a number, got '" + p.value("scale").toStdString() + "'");
    }
    if (p.isSet("precision")) {
        const auto precision = parsePrecision(p.value("precision").toStdString());
        if (!precision) throw UsageError("--precision must be double or float");
        spec.precision = *precision;
    }
    spec.causal = p.isSet("causal");
    return spec;
}

FlashOptions optionsFrom(const QCommandLineParser& p) {
    FlashOptions o;
    o.blockRows = parseInt(p, "br", 4);
    o.blockCols = parseInt(p, "bc", 4);
    o.rescale = !p.isSet("no-rescale");
    o.runningMax = !p.isSet("no-running-max");
    o.keepFullScores = p.isSet("keep-full-s");
    if (p.isSet("loop-order")) {
        const auto order = parseLoopOrder(p.value("loop-order").toStdString());
        if (!order) throw UsageError("--loop-order must be query-outer or kv-outer");
        o.loopOrder = *order;
    }
    validate(o);
    return o;
}

nlohmann::json countersJson(const Counters& c) {
    return {{"hbm_bytes", c.hbmBytes()},          {"hbm_read_bytes", c.hbmReadBytes},
            {"hbm_write_bytes", c.hbmWriteBytes}, {"flops", c.flops},
            {"peak_scratch_floats", c.peakScratchElements}};
}

std::string describeRun(const ProblemSpec& s, const FlashOptions& o) {
    char text[400];
    std::snprintf(text, sizeof text,
                  "n_q = %d, n_k = %d, d = %d, Br = %d, Bc = %d, %s inputs, seed %llu, %s, %s%s%s%s%s",
                  s.queries, s.keys, s.headDim, o.blockRows, o.blockCols, toString(s.pattern),
                  static_cast<unsigned long long>(s.seed), toString(s.precision), toString(o.loopOrder),
                  s.causal ? ", causal" : "", o.rescale ? "" : ", NO RESCALE",
                  o.runningMax ? "" : ", NO RUNNING MAX", o.keepFullScores ? ", full S kept" : "");
    return text;
}

void printCountersRow(std::ostream& out, const char* name, const Counters& c) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-9s %14.3f %14.3f %14.3f %16llu\n", name,
                  c.hbmReadBytes / 1048576.0, c.hbmWriteBytes / 1048576.0, c.flops / 1e9,
                  static_cast<unsigned long long>(c.peakScratchElements));
    out << line;
}

int commandRun(const QCommandLineParser& p, std::ostream& out) {
    const ProblemSpec spec = problemFrom(p);
    const FlashOptions options = optionsFrom(p);
    BackendKind kind = BackendKind::Cpu;
    if (p.isSet("backend")) {
        const auto parsed = parseBackendKind(p.value("backend").toStdString());
        if (!parsed) throw UsageError("--backend must be cpu or cuda");
        kind = *parsed;
    }
    const Problem problem = makeProblem(spec);
    const auto backend = makeBackend(kind);
    const Matrix reference = referenceAttention(problem); // first: it refuses an n x n too large
    const FlashResult flash = backend->flash(problem, options);
    const CheckReport check = compareOutputs(flash.o, reference, checkTolerance(*backend, spec));
    const Counters standard = standardCounts(spec.queries, spec.keys, spec.headDim);
    if (p.isSet("json")) {
        nlohmann::json j{{"backend", backend->name()},
                         {"max_abs_diff", check.maxAbsDiff},
                         {"passed", check.passed()},
                         {"tolerance", check.tolerance},
                         {"wrong_rows", check.wrongRows},
                         {"non_finite", check.nonFiniteCount},
                         {"standard", countersJson(standard)},
                         {"flash", countersJson(flash.counters)},
                         {"problem", describeRun(spec, options)}};
        out << j.dump(2) << '\n';
        return 0;
    }
    out << "FlashAttention on " << backend->name() << ": " << describeRun(spec, options) << "\n\n";
    out << "check against ordinary attention: " << check.summary() << '\n';
    if (!check.wrongRows.empty()) {
        out << "  wrong rows:";
        for (size_t i = 0; i < check.wrongRows.size() && i < 12; ++i) out << ' ' << check.wrongRows[i];
        if (check.wrongRows.size() > 12) out << " ... (" << check.wrongRows.size() << " in all)";
        out << '\n';
    }
    char header[200];
    std::snprintf(header, sizeof header, "\n  %-9s %14s %14s %14s %16s\n", "", "HBM read MB",
                  "HBM write MB", "GFLOPs", "peak scratch");
    out << header;
    printCountersRow(out, "standard", standard);
    printCountersRow(out, "flash", flash.counters);
    return 0;
}

std::string vectorText(const Vector& v) {
    std::string s;
    char item[32];
    for (int i = 0; i < v.size(); ++i) {
        std::snprintf(item, sizeof item, "%s%.4g", i ? " " : "", v(i));
        s += item;
    }
    return "[" + s + "]";
}

int commandSteps(const QCommandLineParser& p, std::ostream& out) {
    const ProblemSpec spec = problemFrom(p);
    const FlashOptions options = optionsFrom(p);
    Algorithm algorithm = Algorithm::Flash;
    if (p.isSet("algorithm")) {
        const auto parsed = parseAlgorithm(p.value("algorithm").toStdString());
        if (!parsed) throw UsageError("--algorithm must be flash or standard");
        algorithm = *parsed;
    }
    const StepEngine engine(makeProblem(spec), algorithm, options);
    if (p.isSet("step")) {
        const StepState s = engine.state(parseInt(p, "step", 0));
        out << "step " << s.info.index << " of " << engine.stepCount() << ": "
            << toString(s.info.kind) << " (query block " << s.info.queryBlock << ", key block "
            << s.info.keyBlock << ")\n  " << describe(s.info.kind, options) << '\n';
        if (s.mOld.size()) out << "  m before " << vectorText(s.mOld) << '\n';
        if (s.mNew.size()) out << "  m after  " << vectorText(s.mNew) << '\n';
        if (s.lOld.size()) out << "  l before " << vectorText(s.lOld) << '\n';
        if (s.lNew.size()) out << "  l after  " << vectorText(s.lNew) << '\n';
        if (s.correction.size()) out << "  correction exp(m_old - m_new) " << vectorText(s.correction) << '\n';
        out << "  HBM read " << s.counters.hbmReadBytes << " B, written " << s.counters.hbmWriteBytes
            << " B, FLOPs " << s.counters.flops << ", SRAM " << s.sramElements << " elements\n";
        return 0;
    }
    out << engine.stepCount() << " steps\n";
    for (int k = 0; k < engine.stepCount(); ++k) {
        const StepInfo i = engine.info(k);
        char line[160];
        std::snprintf(line, sizeof line, "%6d  %-20s q%-4d k%-4d\n", k, toString(i.kind),
                      i.queryBlock, i.keyBlock);
        out << line;
    }
    return 0;
}

int commandProfiles(std::ostream& out) {
    for (const auto& h : hardwareProfiles()) {
        out << h.id << ": " << h.name << '\n';
        const auto show = [&](const char* label, const Figure& f, double unit, const char* suffix) {
            char line[400];
            std::snprintf(line, sizeof line, "  %-26s %10.1f %-8s (%s)\n", label, f.value / unit,
                          suffix, f.source.c_str());
            out << line;
        };
        show("SMs", h.smCount, 1, "");
        show("shared memory per SM", h.sharedMemoryPerSmBytes, 1024, "KB");
        show("HBM", h.hbmBytes, 1e9, "GB");
        show("HBM bandwidth", h.hbmBandwidthBytesPerSecond, 1e12, "TB/s");
        show("on-chip bandwidth", h.sramBandwidthBytesPerSecond, 1e12, "TB/s");
        show("fp32", h.fp32FlopsPerSecond, 1e12, "TFLOP/s");
        show("fp16 tensor cores", h.fp16TensorFlopsPerSecond, 1e12, "TFLOP/s");
    }
    for (const auto& b : listBackends())
        out << "backend " << b.name << ": " << (b.available ? "available" : "unavailable - " + b.reason) << '\n';
    return 0;
}

std::vector<int> parseSizes(const QString& text) {
    std::vector<int> sizes;
    for (const QString& part : text.split(',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = part.trimmed().toInt(&ok);
        if (!ok || n <= 0) throw UsageError("--sizes expects positive numbers like 1024,2048");
        sizes.push_back(n);
    }
    if (sizes.empty()) throw UsageError("--sizes expects at least one size");
    return sizes;
}

int commandBench(const QCommandLineParser& p, std::ostream& out, std::ostream& err) {
    BenchOptions options;
    if (p.isSet("sizes")) options.sizes = parseSizes(p.value("sizes"));
    options.repeats = parseInt(p, "repeats", options.repeats);
    options.blockRows = parseInt(p, "br", options.blockRows);
    options.blockCols = parseInt(p, "bc", options.blockCols);
    options.headDim = parseInt(p, "d", options.headDim);
    if (options.repeats <= 0) throw UsageError("--repeats must be at least 1");
    const bool json = p.isSet("json");
    const BenchReport report = runBenchmark(options, json ? nullptr : &err);
    if (!json) {
        printBenchmark(report, out);
        return 0;
    }
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : report.rows)
        rows.push_back({{"n", r.n},
                        {"flash_ms", r.flashMs},
                        {"standard_ms", r.standardMs},
                        {"flash_gflops", r.flashGflops},
                        {"standard_gflops", r.standardGflops},
                        {"flash_peak_bytes", r.flashPeakBytes},
                        {"standard_peak_bytes", r.standardPeakBytes},
                        {"max_abs_diff", r.maxAbsDiff}});
    out << nlohmann::json{{"gemm_gflops", report.gemmGflops},
                          {"step_state_ms", report.stepStateMs},
                          {"head_dim", options.headDim},
                          {"threads", 1},
                          {"rows", rows}}
               .dump(2)
        << '\n';
    return 0;
}

int dispatch(const QStringList& args, std::ostream& out, std::ostream& err) {
    QCommandLineParser p;
    p.setApplicationDescription(kSummary);
    p.addPositionalArgument("command", "demos, run, steps, bench or profiles");
    p.addHelpOption();
    p.addVersionOption();
    addProblemOptions(p);
    p.addOptions({
        {"only", "demos: print only demo K (1-9).", "K"},
        {"step", "steps: show the full state at step K.", "K"},
        {"algorithm", "steps: flash (default) or standard.", "A"},
        {"sizes", "bench: comma-separated n values (default 1024,2048,4096,8192).", "LIST"},
        {"repeats", "bench: timed runs per size; the median is reported (default 5).", "R"},
    });
    if (!p.parse(args)) throw UsageError(p.errorText().toStdString());
    if (p.isSet("help") || p.positionalArguments().isEmpty()) {
        out << p.helpText().toStdString();
        return p.isSet("help") ? 0 : 2;
    }
    if (p.isSet("version")) {
        out << "flashviz-cli " << QCoreApplication::applicationVersion().toStdString() << '\n';
        return 0;
    }
    const QString command = p.positionalArguments().first();
    if (p.positionalArguments().size() > 1)
        throw UsageError("unexpected argument '" + p.positionalArguments().at(1).toStdString() + "'");
    if (command == "demos") {
        const int only = parseInt(p, "only", 0);
        if (only < 0 || only > 9) throw UsageError("--only takes a demo number from 1 to 9");
        printDemos(out, only);
        return 0;
    }
    if (command == "run") return commandRun(p, out);
    if (command == "steps") return commandSteps(p, out);
    if (command == "bench") return commandBench(p, out, err);
    if (command == "profiles") return commandProfiles(out);
    throw UsageError("unknown command '" + command.toStdString() +
                     "' (use demos, run, steps, bench or profiles; --help explains each)");
}

} // namespace

int run(int argc, char** argv, std::ostream& out, std::ostream& err) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("flashviz-cli");
    QCoreApplication::setApplicationVersion("0.1.0");
    try {
        return dispatch(QCoreApplication::arguments(), out, err);
    } catch (const UsageError& e) {
        err << "flashviz-cli: " << e.what() << "\nTry 'flashviz-cli --help'.\n";
    } catch (const EngineError& e) {
        err << "flashviz-cli: " << e.what() << '\n';
    } catch (const std::bad_alloc&) {
        err << "flashviz-cli: out of memory\n";
    }
    return 2;
}

int run(int argc, char** argv) { return run(argc, argv, std::cout, std::cerr); }

} // namespace flashviz::cli
