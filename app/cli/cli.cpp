#include "app/cli/cli.h"

#include "app/cli/bench.h"
#include "app/cli/demos_printer.h"
#include "core/check.h"
#include "core/errors.h"
#include "core/hardware.h"
#include "core/run.h"
#include "core/steps.h"
#include "kernels/backend_registry.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
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
  flashviz-cli steps --n 64 --pattern late-max --step first-rescale+1
  flashviz-cli bench --sizes 1024,2048

Each command takes only its own options (listed with the commands that take them).)";

// A bad option: printed as "flashviz-cli: <message>" with exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string valueOf(const QCommandLineParser& p, const QString& name) {
    return p.value(name).toStdString();
}

std::string range(long long lowest, long long highest) {
    return "(allowed: " + std::to_string(lowest) + " to " + std::to_string(highest) + ")";
}

// A whole number written plainly: digits with an optional leading '-', nothing else. Values
// past long long read as out of range, not as garbage.
std::optional<long long> wholeNumber(const std::string& text, bool* tooLarge) {
    *tooLarge = false;
    const std::size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
    if (text.size() == start || text.find_first_not_of("0123456789", start) != std::string::npos)
        return std::nullopt;
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc::result_out_of_range) {
        *tooLarge = true;
        return std::nullopt;
    }
    if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// --name as a whole number in [lowest, highest]; `what` says what it is ("n_q (queries)").
int parseInt(const QCommandLineParser& p, const QString& name, int fallback, int lowest,
             int highest, const char* what) {
    if (!p.isSet(name)) return fallback;
    const std::string text = valueOf(p, name);
    const std::string option = "--" + name.toStdString() + " '" + text + "': ";
    bool tooLarge = false;
    const auto value = wholeNumber(text, &tooLarge);
    if (!value && !tooLarge)
        throw UsageError(option + what + " expects a whole number " + range(lowest, highest));
    if (tooLarge || *value > highest)
        throw UsageError(option + what + " is past the limit of " + std::to_string(highest) + " " +
                         range(lowest, highest));
    if (*value < lowest)
        throw UsageError(option + what + " must be at least " + std::to_string(lowest) + " " +
                         range(lowest, highest));
    return int(*value);
}

std::uint64_t parseSeed(const QCommandLineParser& p) {
    if (!p.isSet("seed")) return 0;
    const std::string text = valueOf(p, "seed");
    std::uint64_t seed = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
        error != std::errc{} || end != text.data() + text.size())
        throw UsageError("--seed '" + text + "': the seed expects a whole number from 0 to " +
                         std::to_string(std::numeric_limits<std::uint64_t>::max()));
    return seed;
}

// The options of each command; anything else on its command line is refused by name.
const std::map<std::string, std::set<QString>>& commandOptions() {
    static const std::set<QString> problem{
        "n",           "nk",      "d",          "br",         "bc",
        "seed",        "pattern", "scale",      "no-rescale", "no-running-max",
        "keep-full-s", "causal",  "loop-order", "precision"};
    static const std::map<std::string, std::set<QString>> options = [] {
        std::map<std::string, std::set<QString>> o;
        o["demos"] = {"only"};
        o["run"] = problem;
        o["run"].insert({"backend", "json"});
        o["steps"] = problem;
        o["steps"].insert({"algorithm", "step"});
        o["bench"] = {"sizes", "repeats", "br", "bc", "d", "json"};
        o["profiles"] = {};
        return o;
    }();
    return options;
}

void requireOwnOptions(const QCommandLineParser& p, const std::string& command) {
    const auto& own = commandOptions().at(command);
    for (const QString& name : p.optionNames()) {
        if (own.count(name)) continue;
        std::string takes;
        for (const QString& o : own)
            takes += (takes.empty() ? "--" : ", --") + o.toStdString();
        throw UsageError(command + " does not take --" + name.toStdString() +
                         (takes.empty() ? " (it takes no options)" : " (it takes " + takes + ")"));
    }
}

void addProblemOptions(QCommandLineParser& p) {
    const QString n = QString::number(kMaxSequenceLength), d = QString::number(kMaxHeadDim);
    p.addOptions({
        {"n", "run, steps: number of queries n_q, 1 to " + n + " (default 8, the explainer's toy).",
         "N"},
        {"nk", "run, steps: number of keys n_k, 1 to " + n + " (default: equal to n).", "N"},
        {"d", "run, steps, bench: head dimension d, 1 to " + d + " (default 4; bench 64).", "D"},
        {"br", "run, steps, bench: query block size Br, 1 to " + n + " (default 4; bench 64).",
         "B"},
        {"bc", "run, steps, bench: key block size Bc, 1 to " + n + " (default 4; bench 128).", "B"},
        {"seed", "run, steps: seed of the input generator, 0 to 2^64-1 (default 0).", "S"},
        {"pattern", "run, steps: inputs gaussian, late-max, early-max or large (default gaussian).",
         "P"},
        {"scale", "run, steps: softmax scale, a finite number above 0 (default 1/sqrt(d)).", "X"},
        {"no-rescale", "run, steps: drop the rescale exp(m_old - m_new): the classic bug."},
        {"no-running-max",
         "run, steps: subtract no maximum at all: exp() overflows on large scores."},
        {"keep-full-s", "run, steps: also write every score tile to an n x n S 'for debugging'."},
        {"causal", "run, steps: causal mask (bottom-right aligned when n != n_k)."},
        {"loop-order",
         "run, steps: query-outer (the explainer's, default) or kv-outer (the paper's).", "O"},
        {"precision", "run, steps: double (default) or float.", "P"},
        {"backend", "run: cpu (default) or cuda.", "B"},
        {"json", "run, bench: print one JSON object instead of text."},
    });
}

ProblemSpec problemFrom(const QCommandLineParser& p) {
    ProblemSpec spec;
    spec.queries = parseInt(p, "n", 8, 1, kMaxSequenceLength, "n_q (queries)");
    spec.keys = parseInt(p, "nk", spec.queries, 1, kMaxSequenceLength, "n_k (keys)");
    spec.headDim = parseInt(p, "d", 4, 1, kMaxHeadDim, "d (head dimension)");
    spec.seed = parseSeed(p);
    if (p.isSet("pattern")) {
        const auto pattern = parseInputPattern(valueOf(p, "pattern"));
        if (!pattern)
            throw UsageError("unknown --pattern '" + valueOf(p, "pattern") +
                             "' (use gaussian, late-max, early-max or large)");
        spec.pattern = *pattern;
    }
    if (p.isSet("scale")) {
        const std::string text = valueOf(p, "scale");
        double scale = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), scale);
        // from_chars reads "inf" and "nan" too; refused with the rest of what is not finite.
        if (text.empty() || error != std::errc{} || end != text.data() + text.size() ||
            !std::isfinite(scale) || !(scale > 0))
            throw UsageError("--scale '" + text +
                             "': the softmax scale expects a finite number above 0");
        spec.scale = scale;
    }
    if (p.isSet("precision")) {
        const auto precision = parsePrecision(valueOf(p, "precision"));
        if (!precision)
            throw UsageError("--precision '" + valueOf(p, "precision") + "': use double or float");
        spec.precision = *precision;
    }
    spec.causal = p.isSet("causal");
    validate(spec); // the memory the inputs need, before anything is made
    return spec;
}

FlashOptions optionsFrom(const QCommandLineParser& p) {
    FlashOptions o;
    o.blockRows = parseInt(p, "br", 4, 1, kMaxSequenceLength, "Br (query block size)");
    o.blockCols = parseInt(p, "bc", 4, 1, kMaxSequenceLength, "Bc (key block size)");
    o.rescale = !p.isSet("no-rescale");
    o.runningMax = !p.isSet("no-running-max");
    o.keepFullScores = p.isSet("keep-full-s");
    if (p.isSet("loop-order")) {
        const auto order = parseLoopOrder(valueOf(p, "loop-order"));
        if (!order)
            throw UsageError("--loop-order '" + valueOf(p, "loop-order") +
                             "': use query-outer or kv-outer");
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
        const auto parsed = parseBackendKind(valueOf(p, "backend"));
        if (!parsed) throw UsageError(unknownBackendMessage(valueOf(p, "backend")));
        kind = *parsed;
    }
    const Problem problem = makeProblem(spec);
    const auto backend = makeBackend(kind);
    RunRequest request;
    request.options = options;
    const RunResult run = runAndCheck(problem, *backend, request); // the backend alone: no CPU stands in
    const CheckReport& check = run.check;
    if (p.isSet("json")) {
        nlohmann::json j{{"backend", run.backendName},
                         {"max_abs_diff", check.maxAbsDiff},
                         {"passed", check.passed()},
                         {"tolerance", check.tolerance},
                         {"wrong_rows", check.wrongRows},
                         {"non_finite", check.nonFiniteCount},
                         {"standard", countersJson(run.standardCounters)},
                         {"flash", countersJson(run.counters)},
                         {"problem", describeRun(spec, options)}};
        out << j.dump(2) << '\n';
        return 0;
    }
    out << "FlashAttention on " << run.backendName << ": " << describeRun(spec, options) << "\n\n";
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
    printCountersRow(out, "standard", run.standardCounters);
    printCountersRow(out, "flash", run.counters);
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

// --step as a step expression (a number, end, first-rescale, +K/-K), resolved in this run.
int stepFrom(const QCommandLineParser& p, const StepEngine& engine) {
    const std::string text = valueOf(p, "step");
    StepExpression expression;
    try {
        expression = parseStepExpression(text);
    } catch (const EngineError& e) {
        throw UsageError(std::string("--step: ") + e.what());
    }
    const std::optional<int> firstRescale =
        expression.anchor == StepExpression::Anchor::FirstRescale ? engine.firstRescaleStep()
                                                                  : std::nullopt;
    const auto step = resolveStepExpression(expression, engine.stepCount(), firstRescale);
    if (!step)
        throw UsageError("--step '" + text +
                         "': the rescale never changes a value in this run (every row's maximum "
                         "is in its first visible block, or the running maximum is off)");
    if (*step < 0 || *step >= engine.stepCount())
        throw UsageError("--step '" + text + "' names step " + std::to_string(*step) +
                         "; this run has steps 0 to " + std::to_string(engine.stepCount() - 1));
    return int(*step);
}

int commandSteps(const QCommandLineParser& p, std::ostream& out) {
    const ProblemSpec spec = problemFrom(p);
    const FlashOptions options = optionsFrom(p);
    Algorithm algorithm = Algorithm::Flash;
    if (p.isSet("algorithm")) {
        const auto parsed = parseAlgorithm(valueOf(p, "algorithm"));
        if (!parsed)
            throw UsageError("--algorithm '" + valueOf(p, "algorithm") +
                             "': use flash or standard");
        algorithm = *parsed;
    }
    validateSteps(spec, algorithm, options); // the step count, before the inputs are made
    const StepEngine engine(makeProblem(spec), algorithm, options);
    if (p.isSet("step")) {
        const StepState s = engine.state(stepFrom(p, engine));
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

std::vector<int> parseSizes(const QCommandLineParser& p) {
    const std::string text = valueOf(p, "sizes");
    std::vector<int> sizes;
    std::size_t begin = 0;
    while (true) {
        const std::size_t comma = text.find(',', begin);
        const std::string part =
            text.substr(begin, comma == std::string::npos ? comma : comma - begin);
        bool tooLarge = false;
        const auto n = wholeNumber(part, &tooLarge);
        if (!n || *n < 1 || *n > kMaxBenchSize)
            throw UsageError("--sizes '" + text + "': each size is a whole number from 1 to " +
                             std::to_string(kMaxBenchSize) + ", separated by commas (got '" + part +
                             "')");
        sizes.push_back(int(*n));
        if (comma == std::string::npos) break;
        begin = comma + 1;
    }
    return sizes;
}

int commandBench(const QCommandLineParser& p, std::ostream& out, std::ostream& err) {
    BenchOptions options;
    if (p.isSet("sizes")) options.sizes = parseSizes(p);
    options.repeats =
        parseInt(p, "repeats", options.repeats, 1, kMaxBenchRepeats, "the repeat count");
    options.blockRows =
        parseInt(p, "br", options.blockRows, 1, kMaxSequenceLength, "Br (query block size)");
    options.blockCols =
        parseInt(p, "bc", options.blockCols, 1, kMaxSequenceLength, "Bc (key block size)");
    options.headDim = parseInt(p, "d", options.headDim, 1, kMaxHeadDim, "d (head dimension)");
    validate(options); // everything, before any timing starts
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
        {"only", "demos: print only demo K, 1 to 9.", "K"},
        {"step",
         "steps: show the full state at step K: a number, end or first-rescale, either "
         "name optionally followed by +K or -K.",
         "K"},
        {"algorithm", "steps: flash (default) or standard.", "A"},
        {"sizes",
         QString("bench: comma-separated n values, each 1 to %1, at most %2 of them "
                 "(default 1024,2048,4096,8192).")
             .arg(kMaxBenchSize)
             .arg(kMaxBenchSizeCount),
         "LIST"},
        {"repeats",
         QString("bench: timed runs per size, 1 to %1; the median is reported "
                 "(default 5).")
             .arg(kMaxBenchRepeats),
         "R"},
    });
    if (!p.parse(args)) throw UsageError(p.errorText().toStdString());
    if (p.isSet("help") || p.positionalArguments().isEmpty()) {
        out << p.helpText().toStdString();
        if (!p.isSet("help"))
            throw UsageError("no command given (use demos, run, steps, bench or profiles)");
        return 0;
    }
    if (p.isSet("version")) {
        out << "flashviz-cli " << QCoreApplication::applicationVersion().toStdString() << '\n';
        return 0;
    }
    const QString command = p.positionalArguments().first();
    if (p.positionalArguments().size() > 1)
        throw UsageError("unexpected argument '" + p.positionalArguments().at(1).toStdString() + "'");
    if (!commandOptions().count(command.toStdString()))
        throw UsageError("unknown command '" + command.toStdString() +
                         "' (use demos, run, steps, bench or profiles; --help explains each)");
    requireOwnOptions(p, command.toStdString());
    if (command == "demos") {
        const int only = parseInt(p, "only", 0, 1, 9, "the demo number");
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
    } catch (const std::exception& e) {
        err << "flashviz-cli: internal error: " << e.what() << '\n';
        return 1;
    }
    return 2;
}

int run(int argc, char** argv) { return run(argc, argv, std::cout, std::cerr); }

} // namespace flashviz::cli
