#include "app/cli/cli.h"

#include "app/cli/bench.h"
#include "app/cli/demos_printer.h"
#include "app/cli/hopper_printer.h"
#include "app/cli/traffic_printer.h"
#include "app/cli/versions_printer.h"
#include "app/measured/shipped_measurements.h"
#include "core/attention.h"
#include "core/flash_versions.h"
#include "core/analysis.h"
#include "core/backward.h"
#include "core/check.h"
#include "core/errors.h"
#include "core/hardware.h"
#include "core/run.h"
#include "core/setup.h"
#include "core/step_export.h"
#include "core/steps.h"
#include "core/units.h"
#include "kernels/backend_registry.h"
#include "kernels/kernel_shapes.h"

#include <QCommandLineParser>
#include <QFile>
#include <QSaveFile>
#include <QCoreApplication>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <algorithm>
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
  run        Run one problem with FlashAttention (or --algorithm standard), check it against
             ordinary attention and print the traffic, FLOPs and scratch memory of both;
             with --backward, FlashAttention-2's backward pass, its gradients checked.
  steps      List the steps the algorithm takes on one problem (up to %1 without --all),
             or show one step's state; with --json, the state at each of those steps.
  bench      Time CPU FlashAttention against ordinary attention (fp32, Eigen).
  versions   What FlashAttention-2 changed, on one problem: both versions run and checked,
             their non-matmul operations counted; one tile split across warps by keys
             (FlashAttention-1) and by query rows (-2); the grid of thread blocks on a GPU.
  traffic    One problem's memory traffic through a GPU's SMs, L2 and DRAM (the L2-aware
             model, with its assumptions), for FlashAttention and standard attention; then the
             model against the hardware counters FlashViz measured on that GPU, if it has them.
  hopper-trace
             How a Hopper GPU runs FlashViz's wgmma kernel: one small launch recorded in the
             kernel's trace mode (%globaltimer at each stage of each warpgroup), summed up and
             drawn as a timeline; on an H100 or H200, else from a file (--in) or the traces
             FlashViz ships (--shipped). --out saves what was recorded.
  profiles   List the hardware profiles and where their figures come from.

Examples:
  flashviz-cli demos
  flashviz-cli run --n 8 --d 4 --br 4 --bc 4
  flashviz-cli run --n 256 --pattern late-max --no-rescale
  flashviz-cli run --n 1000 --nk 700 --br 64 --bc 48 --causal --json
  flashviz-cli run --backward --no-row-dot
  flashviz-cli run --backward --backend cuda --n 1024 --d 64 --br 64 --bc 64 --tc-check fp16
  flashviz-cli steps --algorithm backward --step 12
  flashviz-cli steps --n 8 --step 10
  flashviz-cli steps --n 8 --step first-rescale --no-rescale --json
  flashviz-cli steps --n 1024 --br 64 --bc 64 --all
  flashviz-cli steps --n 64 --pattern late-max --step first-rescale+1
  flashviz-cli bench --sizes 1024,2048
  flashviz-cli versions --n 8192 --d 64 --br 128 --bc 64 --gpu a100-40gb --heads 16
  flashviz-cli traffic --n 4096 --d 64 --batch 4 --heads 32 --gpu h200
  flashviz-cli hopper-trace --shipped --d 128
  flashviz-cli hopper-trace --d 64 --causal --n 2048 --out trace.json

Each command takes only its own options (listed with the commands that take them).
Exit status: 0 done, 1 an internal error, 2 an option or a problem refused (the message names
the valid range).)";

// `steps` without --step lists at most this many steps unless --all asks for every one.
constexpr int kMaxListedSteps = 1000;

// A bad option: printed as "flashviz-cli: <message>" with exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string valueOf(const QCommandLineParser& p, const QString& name) {
    return p.value(name).toStdString();
}

// --name as a whole number in [lowest, highest]; `what` says what it is ("the demo number").
int parseInt(const QCommandLineParser& p, const QString& name, int fallback, int lowest,
             int highest, const char* what) {
    if (!p.isSet(name)) return fallback;
    try {
        return int(readWholeNumber(name.toStdString(), valueOf(p, name), lowest, highest, what));
    } catch (const EngineError& e) {
        throw UsageError(e.what());
    }
}

// The options of each command; anything else on its command line is refused by name.
const std::map<std::string, std::set<QString>>& commandOptions() {
    static const std::set<QString> problem = [] {
        std::set<QString> names;
        for (const ProblemOption& o : problemOptions())
            names.insert(QString::fromStdString(o.name));
        return names;
    }();
    static const std::map<std::string, std::set<QString>> options = [] {
        std::map<std::string, std::set<QString>> o;
        o["demos"] = {"only"};
        o["run"] = problem;
        o["run"].insert({"backend", kLowPrecisionCheckOption, "json"});
        o["steps"] = problem;
        o["steps"].insert({"step", "all", "json"});
        o["bench"] = {"sizes", "repeats", "br", "bc", "d", "json"};
        o["versions"] = problem;
        o["versions"].insert({"gpu", "batch", "heads", "warps"});
        o["traffic"] = problem;
        o["traffic"].insert({"gpu", "batch", "heads", "dtype", "measured"});
        o["hopper-trace"] = {"n", "nk", "d", "causal", "dtype", "heads", "batch", "repeats",
                             "variant", "all-variants", "in", "out", "shipped", "block"};
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

// The problem options as core describes them (the window's command line lists the same), with
// the commands that take them and their defaults here.
void addProblemOptions(QCommandLineParser& p) {
    static const std::map<std::string, std::string> benchDefault{
        {"d", "64"}, {"br", "64"}, {"bc", "128"}};
    for (const ProblemOption& o : problemOptions()) {
        const auto bench = benchDefault.find(o.name);
        QString help = QString::fromStdString(
            (bench == benchDefault.end() ? "run, steps: " : "run, steps, bench: ") + o.help);
        if (!o.toyDefault.empty())
            help += QString::fromStdString(
                " (default " + o.toyDefault +
                (bench == benchDefault.end() ? std::string() : "; bench " + bench->second) + ")");
        p.addOption(o.valueName.empty()
                        ? QCommandLineOption(QString::fromStdString(o.name), help + '.')
                        : QCommandLineOption(QString::fromStdString(o.name), help + '.',
                                             QString::fromStdString(o.valueName)));
    }
    p.addOptions({
        {"backend", "run: cpu (default) or cuda; the CUDA backend alone, the CPU never stands in.",
         "B"},
        {kLowPrecisionCheckOption,
         QString("run --backward --backend cuda: the tensor-core gradient check beside the "
                 "backward, its kernels on the inputs rounded to fp16 or bf16, or off "
                 "(default %1).")
             .arg(toString(kDefaultLowPrecision)),
         "TYPE"},
        {"json", "run, bench, steps: print one JSON object instead of text (steps: the state at "
                  "--step K, or at every step listed, as the window's step data export)."},
    });
}

// The problem, its algorithm and options from the command line, on the explainer's toy.
RunSetup setupFrom(const QCommandLineParser& p) {
    GivenOptions given;
    for (const ProblemOption& o : problemOptions()) {
        const QString name = QString::fromStdString(o.name);
        if (p.isSet(name)) given[o.name] = o.valueName.empty() ? std::string() : valueOf(p, name);
    }
    RunSetup setup;
    try {
        setup = readProblemOptions(given, toySetup());
    } catch (const EngineError& e) {
        if (e.kind() == ErrorKind::OutOfMemory) throw;
        throw UsageError(e.what());
    }
    return setup;
}

// The backward switches on, by their command-line names: "--no-row-dot, --store-p", or "none".
std::string switchesOn(const BackwardOptions& options) {
    std::string names;
    for (const BackwardSwitch& flag : backwardSwitches())
        if (isOn(options, flag)) names += (names.empty() ? "--" : ", --") + std::string(flag.name);
    return names.empty() ? "none" : names;
}

std::string describeRun(const RunSetup& setup) {
    const ProblemSpec& s = setup.spec;
    const FlashOptions& o = setup.options;
    char sizes[200], rest[200];
    std::snprintf(sizes, sizeof sizes, "n_q = %d, n_k = %d, d = %d, Br = %d, Bc = %d, ", s.queries,
                  s.keys, s.headDim, o.blockRows, o.blockCols);
    std::snprintf(
        rest, sizeof rest, ", %s, %s%s%s%s%s", toString(s.precision),
        // The backward's loop is always key blocks outer; the loop order is its forward's.
        setup.algorithm == Algorithm::Backward
            ? (std::string("key blocks outer (forward ") + toString(o.loopOrder) + ")").c_str()
            : toString(o.loopOrder),
        s.causal ? ", causal" : "", o.rescale ? "" : ", NO RESCALE",
        o.runningMax ? "" : ", NO RUNNING MAX", o.keepFullScores ? ", full S kept" : "");
    // Where the inputs came from (a pattern and seed, or files of any length), as core says it.
    const std::string text = sizes + describeInputs(s) + rest;
    if (setup.algorithm != Algorithm::Backward) return text;
    return text + std::string(", backward switches: ") + switchesOn(o.backward);
}

void printCountersRow(std::ostream& out, const char* name, const Counters& c) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-9s %14.3f %14.3f %14.3f %16llu\n", name,
                  c.hbmReadBytes / 1048576.0, c.hbmWriteBytes / 1048576.0, c.flops / 1e9,
                  static_cast<unsigned long long>(c.peakScratchElements));
    out << line;
}

// `run` checks every output against ordinary attention, which holds the n_q x n_k scores: a
// problem too large for them is refused with the way to see FlashAttention without the check.
// The backward's reference, ordinary attention's gradients in closed form, holds two of them
// (P and dS).
void requireReferenceMemory(const RunSetup& setup) {
    const ProblemSpec& spec = setup.spec;
    const bool backward = setup.algorithm == Algorithm::Backward;
    try {
        requireScoreMatrixMemory(spec.queries, spec.keys, int(sizeof(double)), backward ? 2 : 1);
    } catch (const EngineError& e) {
        throw UsageError(
            std::string(backward ? "run --backward checks the backward pass's gradients against "
                                   "ordinary attention's, whose closed form holds two n_q x n_k "
                                   "matrices and cannot run here. "
                                 : "run checks its output against ordinary attention, which "
                                   "cannot run here. ") +
            e.what() + ". `flashviz-cli steps" + (backward ? " --algorithm backward" : "") +
            "` takes the same options and walks " +
            (backward ? "the backward's" : "FlashAttention's") +
            " steps without the check (e.g. --br 256 --bc 256 --step end)");
    }
}

nlohmann::json backwardCountersJson(const Counters& c, std::uint64_t storedElements) {
    nlohmann::json j = countersJson(c);
    j["stored_floats"] = storedElements;
    return j;
}

// "  dQ wrong rows: 0 1 2 ... (40 in all)": the first dozen, for a terminal line.
void printWrongRows(std::ostream& out, const std::string& label, const CheckReport& check) {
    if (check.wrongRows.empty()) return;
    out << "  " << label << ':';
    for (size_t i = 0; i < check.wrongRows.size() && i < 12; ++i)
        out << ' ' << check.wrongRows[i];
    if (check.wrongRows.size() > 12) out << " ... (" << check.wrongRows.size() << " in all)";
    out << '\n';
}

void printBackwardRow(std::ostream& out, const char* name, const Counters& c,
                      std::uint64_t stored) {
    char line[240];
    std::snprintf(line, sizeof line, "  %-22s %14llu %14llu %14llu %14llu %14llu\n", name,
                  static_cast<unsigned long long>(c.hbmReadBytes),
                  static_cast<unsigned long long>(c.hbmWriteBytes),
                  static_cast<unsigned long long>(c.flops),
                  static_cast<unsigned long long>(c.peakScratchElements),
                  static_cast<unsigned long long>(stored));
    out << line;
}

// The script's model counts FLOPs and stored floats only, and has one n.
void printModelRow(std::ostream& out, const char* name, const BackwardCost& cost) {
    char line[240];
    std::snprintf(line, sizeof line, "  %-22s %14s %14s %14llu %14s %14llu\n", name, "-", "-",
                  static_cast<unsigned long long>(cost.flops), "-",
                  static_cast<unsigned long long>(cost.storedElements));
    out << line;
}

nlohmann::json lowPrecisionErrorJson(const LowPrecisionError& e) {
    // The ratio is null where the plain error is 0 (JSON has no inf).
    return {{"error", e.kernel},
            {"plain_error", e.plain},
            {"ratio", e.plain > 0 ? nlohmann::json(e.ratio()) : nlohmann::json(nullptr)},
            {"non_finite", e.nonFinite},
            {"plain_non_finite", e.referenceNonFinite},
            {"passed", e.passed()}};
}

// The backend's fp16 / bf16 kernels beside the run (core/run.h), when it has a word on them.
void addLowPrecision(nlohmann::json& j, const BackwardRunResult& run) {
    if (const auto& c = run.lowPrecisionCheck)
        j["low_precision"] = {{"type", toString(c->type)},
                              {"kernel", c->kernel},
                              {"passed", c->passed()},
                              {"verdict", c->verdict()},
                              {"allowed_ratio", kLowPrecisionErrorFactor},
                              {"dq", lowPrecisionErrorJson(c->dq)},
                              {"dk", lowPrecisionErrorJson(c->dk)},
                              {"dv", lowPrecisionErrorJson(c->dv)}};
    else if (!run.lowPrecisionNote.empty())
        j["low_precision_note"] = run.lowPrecisionNote;
}

void printLowPrecision(std::ostream& out, const BackwardRunResult& run) {
    if (const auto& c = run.lowPrecisionCheck) {
        out << toString(c->type) << " tensor cores: " << c->verdict() << '\n'
            << "  the kernels " << c->kernel << " on the inputs rounded to " << toString(c->type)
            << ", against fp64 and plain " << toString(c->type) << " attention (pass: within "
            << kLowPrecisionErrorFactor << "x its error or 1e-6): " << c->summary() << '\n';
    } else if (!run.lowPrecisionNote.empty()) {
        out << "tensor cores: " << run.lowPrecisionNote << '\n';
    }
}

int commandRunBackward(const RunSetup& setup, Backend& backend, LowPrecisionCheck tcCheck,
                       bool json, std::ostream& out) {
    const ProblemSpec& spec = setup.spec;
    RunRequest request;
    request.algorithm = Algorithm::Backward;
    request.options = setup.options;
    request.lowPrecision = tcCheck;
    const BackwardRunResult run = runBackwardAndCheck(makeProblem(spec), backend, request);
    const GradientCheck& check = run.check;
    const BackwardTrade trade =
        backwardTrade(spec.queries, spec.keys, spec.headDim, spec.causal, setup.options);
    const BackwardCost standard = countedStandardBackward(spec.queries, spec.keys, spec.headDim);
    const bool square = spec.queries == spec.keys;
    const BackwardComparison model = backwardCosts(spec.queries, spec.headDim);
    const std::string why =
        backwardModelWhy(spec.queries, spec.keys, spec.headDim, spec.causal, setup.options);
    if (json) {
        nlohmann::json switches;
        for (const BackwardSwitch& flag : backwardSwitches())
            switches[flag.name] = isOn(setup.options.backward, flag);
        nlohmann::json j{{"backend", run.backendName},
                         {"algorithm", toString(setup.algorithm)},
                         {"max_abs_diff_dq", check.dq.maxAbsDiff},
                         {"max_abs_diff_dk", check.dk.maxAbsDiff},
                         {"max_abs_diff_dv", check.dv.maxAbsDiff},
                         {"passed", check.passed()},
                         {"tolerance", check.dq.tolerance},
                         {"wrong_rows_dq", check.dq.wrongRows},
                         {"wrong_rows_dk", check.dk.wrongRows},
                         {"wrong_rows_dv", check.dv.wrongRows},
                         {"non_finite", check.dq.nonFiniteCount + check.dk.nonFiniteCount +
                                            check.dv.nonFiniteCount},
                         {"backward", backwardCountersJson(run.counters, run.storedElements)},
                         // With P stored: the backward's read of it and the forward's write.
                         {"backward_p_stored", backwardCountersJson(trade.stored, trade.storedKept)},
                         {"standard_backward",
                          {{"flops", standard.flops}, {"stored_floats", standard.storedElements}}},
                         {"switches", switches},
                         {"problem", describeRun(setup)},
                         {"why", why}};
        addLowPrecision(j, run);
        // The script's model has one n (n_q = n_k).
        if (square)
            j["script_model"] = {
                {"flash",
                 {{"flops", model.flash.flops}, {"stored_floats", model.flash.storedElements}}},
                {"standard",
                 {{"flops", model.standard.flops},
                  {"stored_floats", model.standard.storedElements}}}};
        out << j.dump(2) << '\n';
        return 0;
    }
    out << "FlashAttention backward on " << run.backendName << ": " << describeRun(setup) << '\n';
    for (const BackwardSwitch& flag : backwardSwitches())
        if (isOn(setup.options.backward, flag))
            out << "  --" << flag.name << ": " << flag.help << '\n';
    out << '\n';
    out << "check against ordinary attention's gradients: " << check.summary() << '\n';
    printLowPrecision(out, run);
    printWrongRows(out, "dQ wrong rows", check.dq);
    printWrongRows(out, "dK wrong rows", check.dk);
    printWrongRows(out, "dV wrong rows", check.dv);
    char header[240];
    std::snprintf(header, sizeof header, "\n  %-22s %14s %14s %14s %14s %14s\n", "", "HBM read B",
                  "HBM write B", "FLOPs", "peak scratch", "stored floats");
    out << header;
    // The run beside the other side of the trade: P stored (its traffic with the forward's
    // write of P), or (with --store-p) recomputed.
    if (setup.options.backward.storeWeights) {
        printBackwardRow(out, "backward (P stored)", run.counters, run.storedElements);
        printBackwardRow(out, "  + forward writes P", trade.stored, trade.storedKept);
        printBackwardRow(out, "the same, P recomputed", trade.recompute, trade.recomputeKept);
    } else {
        printBackwardRow(out, "backward", run.counters, run.storedElements);
        printBackwardRow(out, "P stored, + its write", trade.stored, trade.storedKept);
    }
    printModelRow(out, "standard (counted)", standard);
    if (square) {
        printModelRow(out, "script's model, flash", model.flash);
        printModelRow(out, "script's model, std", model.standard);
    } else {
        out << "  (the script's model takes n_q = n_k)\n";
    }
    out << '\n' << wrapped(why, 92) << '\n';
    return 0;
}

// --tc-check: the format of the backward's tensor-core check (core/low_precision.h), the default
// where not given. Refused where it would change nothing: on the forward, and a format on the
// CPU backend, which has no tensor-core kernels ("off" is what the CPU does anyway).
LowPrecisionCheck tcCheckFrom(const QCommandLineParser& p, const RunSetup& setup,
                              BackendKind kind) {
    const QString name = kLowPrecisionCheckOption;
    if (!p.isSet(name)) return kDefaultLowPrecision;
    const std::string text = valueOf(p, name);
    const auto parsed = parseLowPrecisionCheck(text);
    if (!parsed) throw UsageError(unknownLowPrecisionCheckMessage(text));
    if (setup.algorithm != Algorithm::Backward)
        throw UsageError("--" + name.toStdString() +
                         " is the backward's tensor-core check, and "
                         "this is " +
                         toString(setup.algorithm) + " attention's forward: add --backward");
    if (*parsed && kind == BackendKind::Cpu)
        throw UsageError("--" + name.toStdString() + " " + text + " checks the CUDA backend's " +
                         "tensor-core kernels, and the CPU backend has none: add --backend cuda");
    return *parsed;
}

int commandRun(const QCommandLineParser& p, std::ostream& out) {
    const RunSetup setup = setupFrom(p);
    BackendKind kind = BackendKind::Cpu;
    if (p.isSet("backend")) {
        const auto parsed = parseBackendKind(valueOf(p, "backend"));
        if (!parsed) throw UsageError(unknownBackendMessage(valueOf(p, "backend")));
        kind = *parsed;
    }
    const LowPrecisionCheck tcCheck = tcCheckFrom(p, setup, kind);
    requireReferenceMemory(setup);
    if (setup.algorithm == Algorithm::Backward)
        return commandRunBackward(setup, *makeBackend(kind), tcCheck, p.isSet("json"), out);
    const Problem problem = makeProblem(setup.spec);
    const auto backend = makeBackend(kind);
    RunRequest request;
    request.algorithm = setup.algorithm;
    request.options = setup.options;
    const RunResult run =
        runAndCheck(problem, *backend, request); // the backend alone: no CPU stands in
    const CheckReport& check = run.check;
    const ProblemSpec& spec = setup.spec;
    // Standard attention is counted as the three passes; flash's figures then come from the model.
    const Counters flash =
        setup.algorithm == Algorithm::Flash
            ? run.counters
            : flashCounts(spec.queries, spec.keys, spec.headDim, spec.causal, setup.options);
    if (p.isSet("json")) {
        nlohmann::json j{{"backend", run.backendName},
                         {"max_abs_diff", check.maxAbsDiff},
                         {"passed", check.passed()},
                         {"tolerance", check.tolerance},
                         {"wrong_rows", check.wrongRows},
                         {"non_finite", check.nonFiniteCount},
                         {"algorithm", toString(setup.algorithm)},
                         {"standard", countersJson(run.standardCounters)},
                         {"flash", countersJson(flash)},
                         {"problem", describeRun(setup)}};
        out << j.dump(2) << '\n';
        return 0;
    }
    out << (setup.algorithm == Algorithm::Flash ? "FlashAttention on " : "Standard attention on ")
        << run.backendName << ": " << describeRun(setup) << "\n\n";
    out << "check against ordinary attention: " << check.summary() << '\n';
    printWrongRows(out, "wrong rows", check);
    char header[200];
    std::snprintf(header, sizeof header, "\n  %-9s %14s %14s %14s %16s\n", "", "HBM read MB",
                  "HBM write MB", "GFLOPs", "peak scratch");
    out << header;
    printCountersRow(out, "standard", run.standardCounters);
    printCountersRow(out, "flash", flash);
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

// A tile's values row by row, "[0.1 0.2; 0.3 0.4]", or for a large one its shape and largest
// magnitude: a terminal line, not a dump.
std::string matrixText(const Matrix& m) {
    constexpr Eigen::Index kMaxShown = 64;
    char item[64];
    if (m.size() > kMaxShown) {
        // Masked scores are -inf: the largest magnitude is of the finite values, the rest counted.
        const auto finite = m.array().isFinite();
        const Eigen::Index nonFinite = m.size() - finite.count();
        std::snprintf(item, sizeof item, "%lld x %lld, max |value| %.4g",
                      static_cast<long long>(m.rows()), static_cast<long long>(m.cols()),
                      finite.select(m.array().abs(), 0.0).maxCoeff());
        return item +
               (nonFinite ? ", " + std::to_string(nonFinite) + " not finite" : std::string());
    }
    std::string s;
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) {
            std::snprintf(item, sizeof item, "%s%.4g", c ? " " : r ? "; " : "", m(r, c));
            s += item;
        }
    return "[" + s + "]";
}

// The backward's values at a step, as the forward's m, ℓ and correction are printed.
void printBackwardState(std::ostream& out, const StepState& s) {
    const auto vector = [&](const char* name, const Vector& v) {
        if (v.size()) out << "  " << name << ' ' << vectorText(v) << '\n';
    };
    const auto matrix = [&](const char* name, const Matrix& m) {
        if (m.size()) out << "  " << name << ' ' << matrixText(m) << '\n';
    };
    // Before this tile, and after it once this step or an earlier one of the tile updated it.
    const auto change = [&](const char* name, const Matrix& before, const Matrix& after) {
        if (!after.size() && !before.size()) return;
        out << "  " << name;
        if (!after.size())
            out << " before this tile " << matrixText(before) << '\n';
        else if (before == after)
            out << " unchanged " << matrixText(after) << '\n';
        else
            out << " before this tile " << matrixText(before) << " -> " << matrixText(after)
                << '\n';
    };
    vector("L = m + log l", s.lse);
    vector("D = rowsum(dO o O)", s.delta);
    matrix("dO", s.dO);
    matrix("S", s.scores);
    matrix("P", s.weights);
    matrix("dP", s.dP);
    matrix("dS", s.dS);
    change("dQ_i (HBM)", s.dQOld, s.dQNew);
    change("dK_j (chip)", s.dKOld, s.dKNew);
    change("dV_j (chip)", s.dVOld, s.dVNew);
}

// Where a backward bug first changes a value, or nothing when none is on.
void printFirstBugStep(std::ostream& out, const StepEngine& engine) {
    if (engine.algorithm() != Algorithm::Backward || !engine.options().backward.anyBug()) return;
    const std::optional<int> step = engine.firstBackwardBugStep();
    out << (step ? "the bug first changes a value at step " + std::to_string(*step)
                 : std::string("the bug changes no value on this problem"))
        << '\n';
}

// --step as a step expression (a number, end, first-rescale, +K/-K), resolved in this run.
int stepFrom(const QCommandLineParser& p, const StepEngine& engine) {
    try {
        return resolveStepOption(valueOf(p, "step"), engine.stepCount(),
                                 [&engine] { return engine.firstRescaleStep(); });
    } catch (const EngineError& e) {
        throw UsageError(e.what());
    }
}

// The steps `steps` shows: the one --step names, or every one.
std::vector<int> listedSteps(const QCommandLineParser& p, const StepEngine& engine) {
    if (p.isSet("step")) return {stepFrom(p, engine)};
    std::vector<int> steps(std::size_t(engine.stepCount()));
    for (int k = 0; k < engine.stepCount(); ++k)
        steps[std::size_t(k)] = k;
    return steps;
}

int commandSteps(const QCommandLineParser& p, std::ostream& out) {
    const RunSetup setup = setupFrom(p);
    const ProblemSpec& spec = setup.spec;
    const FlashOptions& options = setup.options;
    // The step count, before the inputs are made.
    validateSteps(spec, setup.algorithm, options);
    const std::int64_t count = countSteps(spec, setup.algorithm, options);
    if (!p.isSet("step") && !p.isSet("all") && count > kMaxListedSteps)
        throw UsageError("this run has " + std::to_string(count) + " steps, more than the " +
                         std::to_string(kMaxListedSteps) +
                         " listed without --all: show one with --step K (0 to " +
                         std::to_string(count - 1) + "), or list every one with --all");
    if (p.isSet("step") && p.isSet("all"))
        throw UsageError("--step shows one step and --all lists every one: give one of them");
    const StepEngine engine(makeProblem(spec), setup.algorithm, options);
    if (p.isSet("json")) {
        out << stepDataJsonText(stepDataJson(engine, listedSteps(p, engine)));
        return 0;
    }
    if (p.isSet("step")) {
        const StepState s = engine.state(stepFrom(p, engine));
        out << "step " << s.info.index << " of " << engine.stepCount() << ": "
            << toString(s.info.kind) << " (" << describeBlocks(s.info, setup.algorithm) << ")\n  "
            << describe(s.info.kind, options, setup.algorithm) << '\n';
        if (s.mOld.size()) out << "  m before " << vectorText(s.mOld) << '\n';
        if (s.mNew.size()) out << "  m after  " << vectorText(s.mNew) << '\n';
        if (s.lOld.size()) out << "  l before " << vectorText(s.lOld) << '\n';
        if (s.lNew.size()) out << "  l after  " << vectorText(s.lNew) << '\n';
        if (s.correction.size())
            out << "  correction exp(m_old - m_new) " << vectorText(s.correction) << '\n';
        if (setup.algorithm == Algorithm::Backward) printBackwardState(out, s);
        out << "  HBM read " << s.counters.hbmReadBytes << " B, written "
            << s.counters.hbmWriteBytes << " B, FLOPs " << s.counters.flops << ", SRAM "
            << s.sramElements << " elements\n";
        printFirstBugStep(out, engine);
        return 0;
    }
    out << engine.stepCount() << " steps\n";
    for (int k = 0; k < engine.stepCount(); ++k) {
        const StepInfo i = engine.info(k);
        char line[240];
        // The backward's kind names run to 25 characters ("initialise-query-gradient").
        std::snprintf(line, sizeof line, "%6d  %-*s %s\n", k,
                      setup.algorithm == Algorithm::Backward ? 25 : 20, toString(i.kind),
                      describeBlocks(i, setup.algorithm).c_str());
        out << line;
    }
    return 0;
}

// Both versions run on the problem and checked; the counts, the warp split and the grid from the
// report the window's page draws, the kernel the one FlashViz would launch on that GPU.
int commandVersions(const QCommandLineParser& p, std::ostream& out) {
    RunSetup setup = setupFrom(p);
    if (setup.algorithm != Algorithm::Flash)
        throw UsageError("versions compares two FlashAttention forward passes: leave --algorithm "
                         "and --backward out");
    const std::string gpu = p.isSet("gpu") ? valueOf(p, "gpu") : std::string(kDefaultHardwareId);
    const HardwareProfile* hardware = nullptr;
    try {
        hardware = &findHardwareProfile(gpu);
    } catch (const EngineError& e) {
        throw UsageError(e.what());
    }
    requireReferenceMemory(setup);
    const ProblemSpec& spec = setup.spec;
    VersionsRequest request;
    request.queries = spec.queries;
    request.keys = spec.keys;
    request.headDim = spec.headDim;
    request.causal = spec.causal;
    request.blockRows = setup.options.blockRows;
    request.blockCols = setup.options.blockCols;
    request.kernel = kernels::kernelShapeFor(spec.headDim, request.blockRows, request.blockCols, *hardware);
    request.warps = parseInt(p, "warps", kKernelWarps, 1, kMaxWarps, "the number of warps");
    request.batch = parseInt(p, "batch", kDefaultGridBatch, 1, kMaxGridCount, "the batch");
    request.heads = parseInt(p, "heads", kDefaultGridHeads, 1, kMaxGridCount, "the number of heads");
    const VersionsReport report = versionsReport(request, *hardware);
    const Problem problem = makeProblem(spec);
    const VersionComparison comparison =
        compareVersions(problem, setup.options, referenceAttention(problem));
    const FlashOptions& o = setup.options;
    printVersions(out, spec, request, *hardware, comparison, report,
                  !o.rescale || !o.runningMax || o.keepFullScores);
    return comparison.one.check.passed() && comparison.two.check.passed() ? 0 : 1;
}

const HardwareProfile& hardwareOption(const QCommandLineParser& p) {
    const std::string gpu = p.isSet("gpu") ? valueOf(p, "gpu") : std::string(kDefaultHardwareId);
    try {
        return findHardwareProfile(gpu);
    } catch (const EngineError& e) {
        throw UsageError(e.what());
    }
}

// The model for the problem's sizes; then the measured points of that GPU: the file given, else
// the one FlashViz ships. Exit 1 when a measured point misses the 10 % on DRAM bytes.
int commandTraffic(const QCommandLineParser& p, std::ostream& out) {
    const RunSetup setup = setupFrom(p);
    const HardwareProfile& hw = hardwareOption(p);
    const ProblemSpec& spec = setup.spec;
    const int batch = parseInt(p, "batch", kDefaultGridBatch, 1, kMaxGridCount, "the batch");
    const int heads = parseInt(p, "heads", kDefaultGridHeads, 1, kMaxGridCount, "the number of heads");
    const std::string dtype = p.isSet("dtype") ? valueOf(p, "dtype") : "fp16";
    if (dtype != "fp16" && dtype != "bf16" && dtype != "fp32")
        throw UsageError("--dtype must be fp16, bf16 or fp32, not '" + dtype + "'");
    KernelShape kernel =
        kernels::kernelShapeFor(spec.headDim, setup.options.blockRows, setup.options.blockCols, hw);
    if (dtype == "fp32") { // FlashViz's fp32 kernels: the user's tiles, in 4-byte elements
        kernel = kernels::mirrorKernelShape(setup.options.blockRows, setup.options.blockCols,
                                            spec.headDim);
        kernel.elementBytes = 4;
    }
    printTrafficModel(out, hw,
                      flashLaunchShape(spec.queries, spec.keys, spec.headDim, batch, heads,
                                       spec.causal, kernel, hw),
                      kernel.name,
                      standardLaunchShape(spec.queries, spec.keys, spec.headDim, batch, heads,
                                          spec.causal));
    std::optional<MeasuredTrafficFile> given;
    if (p.isSet("measured")) {
        QFile file(p.value("measured"));
        if (!file.open(QIODevice::ReadOnly))
            throw UsageError("cannot read " + valueOf(p, "measured") + ": " +
                             file.errorString().toStdString());
        try {
            given = parseMeasuredTraffic(file.readAll().toStdString());
        } catch (const EngineError& e) {
            throw UsageError(valueOf(p, "measured") + ": " + e.what());
        }
    }
    const MeasuredTrafficFile* measured = given ? &*given : measured::shippedTrafficFor(hw.id);
    if (!measured) {
        out << "\nFlashViz has no hardware-counter measurement of " << hw.name
            << " (kernels/bench/ncu_traffic.py makes one).\n";
        return 0;
    }
    const HardwareProfile& measuredOn =
        measured->hardwareId.empty() ? hw : findHardwareProfile(measured->hardwareId);
    return printTrafficMeasured(out, measuredOn, *measured) == 0 ? 0 : 1;
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
        char hbm[400];
        std::snprintf(hbm, sizeof hbm, "  %-26s %10s %-8s (%s)\n", "HBM",
                      formatMemoryCapacity(h.hbmBytes.value).c_str(), "",
                      h.hbmBytes.source.c_str());
        out << hbm;
        show("HBM bandwidth", h.hbmBandwidthBytesPerSecond, 1e12, "TB/s");
        char l2[400];
        std::snprintf(l2, sizeof l2, "  %-26s %10s %-8s (%s)\n", "L2",
                      formatMemoryCapacity(h.l2Bytes.value).c_str(), "", h.l2Bytes.source.c_str());
        out << l2;
        show("L2 read bandwidth", h.l2BandwidthBytesPerSecond, 1e12, "TB/s");
        show("on-chip bandwidth", h.sramBandwidthBytesPerSecond, 1e12, "TB/s");
        show("fp32", h.fp32FlopsPerSecond, 1e12, "TFLOP/s");
        show("fp16 tensor cores", h.fp16TensorFlopsPerSecond, 1e12, "TFLOP/s");
    }
    for (const auto& b : listBackends())
        out << "backend " << b.name << ": "
            << (b.available ? "available" : "unavailable - " + b.reason) << '\n';
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
        try {
            sizes.push_back(int(readWholeNumber("sizes", part, 1, kMaxBenchSize, "a size")));
        } catch (const EngineError&) {
            throw UsageError("--sizes '" + text + "': each size is a whole number from 1 to " +
                             std::to_string(kMaxBenchSize) + ", separated by commas (got '" + part +
                             "')");
        }
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

// --variant as a row of kHopperConfigs: its name or its index; -1 when not given.
int hopperVariantOption(const QCommandLineParser& p) {
    if (!p.isSet("variant")) return -1;
    const std::string given = valueOf(p, "variant");
    std::string names;
    for (int row = 0; row < kernels::kHopperConfigCount; ++row) {
        const std::string name = kernels::hopperConfigName(kernels::kHopperConfigs[row]);
        if (given == name || given == std::to_string(row)) return row;
        names += (row ? ", " : "") + std::to_string(row) + " " + name;
    }
    throw UsageError("--variant '" + given + "' is not a Hopper kernel variant (" + names + ")");
}

kernels::HopperTraceRequest hopperRequestFrom(const QCommandLineParser& p) {
    kernels::HopperTraceRequest r;
    r.configRow = hopperVariantOption(p);
    r.headDim = r.configRow >= 0 ? kernels::kHopperConfigs[r.configRow].headDim : r.headDim;
    r.headDim = parseInt(p, "d", r.headDim, 1, kMaxHeadDim, "d (head dimension)");
    r.causal = p.isSet("causal");
    r.element = p.isSet("dtype") ? valueOf(p, "dtype") : r.element;
    r.queries = parseInt(p, "n", r.queries, 1, kernels::kHopperTraceMaxTokens, "n_q");
    r.keys = parseInt(p, "nk", p.isSet("n") ? r.queries : r.keys, 1, kernels::kHopperTraceMaxTokens, "n_k");
    r.heads = parseInt(p, "heads", r.heads, 1, kernels::kHopperTraceMaxHeads, "the number of heads");
    r.batch = parseInt(p, "batch", r.batch, 1, kernels::kHopperTraceMaxHeads, "the batch");
    r.repeats = parseInt(p, "repeats", r.repeats, 1, kernels::kHopperTraceMaxRepeats, "the repeat count");
    try {
        kernels::validateHopperTraceRequest(r);
    } catch (const EngineError& e) {
        throw UsageError(e.what());
    }
    return r;
}

// --all-variants: every row, with the mask it is preferred for (both for rows preferred for any).
std::vector<kernels::HopperTraceRequest> everyHopperVariant(const kernels::HopperTraceRequest& base) {
    std::vector<kernels::HopperTraceRequest> out;
    for (int row = 0; row < kernels::kHopperConfigCount; ++row) {
        const kernels::HopperConfig& c = kernels::kHopperConfigs[row];
        for (const bool causal : {false, true}) {
            if (c.masks == (causal ? kernels::MaskPreference::Full : kernels::MaskPreference::Causal)) continue;
            kernels::HopperTraceRequest r = base;
            r.configRow = row;
            r.headDim = c.headDim;
            r.causal = causal;
            out.push_back(r);
        }
    }
    return out;
}

std::vector<kernels::HopperTrace> readHopperTraceFile(const QString& name) {
    QFile file(name);
    if (!file.open(QIODevice::ReadOnly))
        throw UsageError("cannot read " + name.toStdString() + ": " + file.errorString().toStdString());
    try {
        return kernels::parseHopperTraces(file.readAll().toStdString());
    } catch (const EngineError& e) {
        throw UsageError(name.toStdString() + ": " + e.what());
    }
}

void writeHopperTraces(const QCommandLineParser& p, const std::vector<kernels::HopperTrace>& traces,
                       std::ostream& err) {
    QSaveFile file(p.value("out"));
    const std::string text = kernels::hopperTracesJson(traces);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), qint64(text.size())) != qint64(text.size()) ||
        !file.commit())
        throw UsageError("cannot write " + valueOf(p, "out") + ": " + file.errorString().toStdString());
    err << "wrote " << traces.size() << " trace" << (traces.size() == 1 ? "" : "s") << " to " << valueOf(p, "out")
        << '\n';
}

int commandHopperTrace(const QCommandLineParser& p, std::ostream& out, std::ostream& err) {
    const bool fromFile = p.isSet("in"), shipped = p.isSet("shipped");
    if (fromFile && shipped) throw UsageError("--in and --shipped each name the traces to show: give one");
    if (fromFile || shipped)
        for (const char* recording : {"out", "all-variants", "n", "nk", "heads", "batch", "dtype", "repeats"})
            if (p.isSet(recording))
                throw UsageError(std::string("--") + recording + " is for recording; --in and --shipped show "
                                 "recorded traces (filtered by --variant, --d and --causal)");
    if (p.isSet("all-variants") && p.isSet("variant"))
        throw UsageError("--all-variants records every variant: leave out --variant");
    // Checked before any recording: a bad --block must not cost a minute of GPU time.
    const int block = parseInt(p, "block", 0, 1, kernels::kHopperTraceMaxBlockTiles, "--block") - 1;
    std::vector<kernels::HopperTrace> traces;
    if (fromFile || shipped) {
        traces = fromFile ? readHopperTraceFile(p.value("in")) : measured::shippedHopperTraces();
        // Filtered by the variant, d and mask where given.
        const int row = hopperVariantOption(p);
        const int d = parseInt(p, "d", 0, 1, kMaxHeadDim, "d (head dimension)");
        std::erase_if(traces, [&](const kernels::HopperTrace& t) {
            return (row >= 0 && t.configRow != row) || (d > 0 && t.headDim != d) ||
                   (p.isSet("causal") && !t.causal);
        });
        if (traces.empty())
            throw UsageError(std::string(fromFile ? "the file holds" : "FlashViz ships") + " no trace of that variant, d and mask");
    } else {
        const kernels::HopperTraceRequest base = hopperRequestFrom(p);
        const GpuBenchAvailability here = hopperTraceAvailability();
        if (!here.available)
            throw EngineError(ErrorKind::Unsupported, "The Hopper trace cannot run here: " + here.reason +
                                                          " (--shipped shows the traces FlashViz ships).");
        const auto requests = p.isSet("all-variants") ? everyHopperVariant(base)
                                                      : std::vector<kernels::HopperTraceRequest>{base};
        for (const kernels::HopperTraceRequest& r : requests) {
            err << "recording " << (r.configRow >= 0 ? kernels::hopperConfigName(kernels::kHopperConfigs[r.configRow])
                                                     : std::string("the default variant"))
                << (r.causal ? " (causal)" : "") << "...\n";
            traces.push_back(recordHopperTrace(r));
        }
        if (p.isSet("out")) writeHopperTraces(p, traces, err); // saved before anything can refuse
    }
    for (std::size_t i = 0; i < traces.size(); ++i) {
        const int blocks = int(traces[i].blocks.size());
        if (block >= blocks)
            throw UsageError("--block " + std::to_string(block + 1) + ": " + traces[i].kernel + "'s trace has " +
                             std::to_string(blocks) + " blocks");
        out << (i ? "\n" : "");
        printHopperTrace(out, traces[i], block);
    }
    return 0;
}

int dispatch(const QStringList& args, std::ostream& out, std::ostream& err) {
    QCommandLineParser p;
    p.setApplicationDescription(QString::fromUtf8(kSummary).arg(kMaxListedSteps));
    p.addPositionalArgument("command", "demos, run, steps, bench, versions, traffic, hopper-trace or profiles");
    p.addHelpOption();
    // --version alone: Qt's version option also takes -v, the short form of --v FILE.
    p.addOption({"version", "Displays version information."});
    addProblemOptions(p);
    p.addOptions({
        {"only", "demos: print only demo K, 1 to 9.", "K"},
        {"step",
         "steps: show the full state at step K: a number, end or first-rescale, either "
         "name optionally followed by +K or -K.",
         "K"},
        {"all", QString("steps: list every step, also past %1.").arg(kMaxListedSteps)},
        {"sizes",
         QString("bench: comma-separated n values, each 1 to %1, at most %2 of them "
                 "(default 1024,2048,4096,8192).")
             .arg(kMaxBenchSize)
             .arg(kMaxBenchSizeCount),
         "LIST"},
        {"gpu", QString("versions, traffic: the hardware profile the grid runs on (default %1; see profiles).")
                    .arg(kDefaultHardwareId), "ID"},
        {"batch", QString("versions, traffic: the batch of the grid picture, 1 to %1 (default %2); "
                          "hopper-trace: the launch's batch (default 1).")
                      .arg(kMaxGridCount).arg(kDefaultGridBatch), "B"},
        {"heads", QString("versions, traffic: heads of the grid picture, 1 to %1 (default %2); "
                          "hopper-trace: heads of the launch (default 1).")
                      .arg(kMaxGridCount).arg(kDefaultGridHeads), "H"},
        {"dtype", "traffic: the flash kernel's element type, fp16, bf16 or fp32 (default fp16); "
                  "hopper-trace: fp16 or bf16.",
         "TYPE"},
        {"variant", QString("hopper-trace: the Hopper kernel's variant, by name or number 0 to %1 "
                            "(default: the one the GPU runs for --d and --causal).")
                        .arg(kernels::kHopperConfigCount - 1), "V"},
        {"all-variants", "hopper-trace: record every variant, each with the mask it is built for."},
        {"in", "hopper-trace: show the traces of this file rather than record.", "FILE"},
        {"shipped", "hopper-trace: show the traces FlashViz ships (recorded on an H100)."},
        {"out", "hopper-trace: save what was recorded to this JSON file.", "FILE"},
        {"block", "hopper-trace: the block whose timeline is drawn, 1 to the trace's blocks (default: "
                  "the longest).", "K"},
        {"measured", "traffic: a measurement file (kernels/bench/ncu_traffic.py) instead of the one "
                     "FlashViz ships for the GPU.", "FILE"},
        {"warps", QString("versions: warps sharing one tile, 1 to %1 (default: as many as the "
                          "grid's kernel runs, else %2).")
                      .arg(kMaxWarps).arg(kFallbackWarps), "W"},
        {"repeats",
         QString("bench: timed runs per size, 1 to %1; the median is reported "
                 "(default 5); hopper-trace: untraced runs timed beside the trace (default 10).")
             .arg(kMaxBenchRepeats),
         "R"},
    });
    if (!p.parse(args)) throw UsageError(p.errorText().toStdString());
    // --help-all as --help: a terminal program has no Qt options worth listing.
    const bool help = p.isSet("help") || p.isSet("help-all");
    if (help || p.positionalArguments().isEmpty()) {
        out << p.helpText().toStdString();
        if (!help) throw UsageError("no command given (use demos, run, steps, bench, versions, traffic, hopper-trace or profiles)");
        return 0;
    }
    if (p.isSet("version")) {
        out << "flashviz-cli " << QCoreApplication::applicationVersion().toStdString() << '\n';
        return 0;
    }
    const QString command = p.positionalArguments().first();
    if (p.positionalArguments().size() > 1)
        throw UsageError("unexpected argument '" + p.positionalArguments().at(1).toStdString() +
                         "'");
    if (!commandOptions().count(command.toStdString()))
        throw UsageError("unknown command '" + command.toStdString() +
                         "' (use demos, run, steps, bench, versions, traffic, hopper-trace or profiles; --help explains each)");
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
    if (command == "versions") return commandVersions(p, out);
    if (command == "traffic") return commandTraffic(p, out);
    if (command == "hopper-trace") return commandHopperTrace(p, out, err);
    throw UsageError("unknown command '" + command.toStdString() +
                     "' (use demos, run, steps, bench, versions, traffic, hopper-trace or profiles; --help explains each)");
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

int run(int argc, char** argv) {
    return run(argc, argv, std::cout, std::cerr);
}

} // namespace flashviz::cli
