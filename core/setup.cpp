#include "core/setup.h"

#include "core/errors.h"
#include "core/hardware.h"
#include "core/npy.h"
#include "core/steps.h"

#include <charconv>
#include <cmath>

namespace flashviz {

namespace {

constexpr int kToyBlockSize = 4;

[[noreturn]] void refuse(const std::string& message) {
    throw EngineError(ErrorKind::InvalidArgument, message);
}

std::string allowed(long long lowest, long long highest) {
    return "(allowed: " + std::to_string(lowest) + " to " + std::to_string(highest) + ")";
}

std::string quoted(const std::string& name, const std::string& text) {
    return "--" + name + " '" + text + "': ";
}

const std::string* find(const GivenOptions& given, const char* name) {
    const auto it = given.find(name);
    return it == given.end() ? nullptr : &it->second;
}

std::uint64_t readSeed(const std::string& text) {
    std::uint64_t seed = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
        error != std::errc{} || end != text.data() + text.size() || seed > kMaxSeed)
        refuse(quoted("seed", text) + "the seed expects a whole number from 0 to " +
               std::to_string(kMaxSeed));
    return seed;
}

double readScale(const std::string& text) {
    double scale = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), scale);
    // from_chars reads "inf" and "nan" too; refused with the rest of what is not finite.
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() ||
        !std::isfinite(scale) || !(scale > 0))
        refuse(quoted("scale", text) + "the softmax scale expects a finite number above 0");
    return scale;
}

int readSize(const GivenOptions& given, const char* name, int current, int highest,
             const char* what) {
    const std::string* text = find(given, name);
    return text ? int(readWholeNumber(name, *text, 1, highest, what)) : current;
}

template <class T, class Parse>
void readName(const GivenOptions& given, const char* name, T& value, Parse parse,
              const char* choices) {
    if (const std::string* text = find(given, name)) {
        const auto parsed = parse(*text);
        if (!parsed) refuse(quoted(name, *text) + "use " + choices);
        value = *parsed;
    }
}

// --q, --k and --v (with --do and --head) as InputFiles, or nullopt when none is given.
std::optional<InputFiles> readInputFiles(const GivenOptions& given) {
    const std::string* q = find(given, "q");
    const std::string* k = find(given, "k");
    const std::string* v = find(given, "v");
    if (!q && !k && !v) {
        for (const char* name : {"do", "head"})
            if (find(given, name))
                refuse("--" + std::string(name) +
                       " goes with inputs from files: add --q, --k "
                       "and --v");
        return std::nullopt;
    }
    std::string missing;
    for (const auto& [name, text] : {std::pair{"--q", q}, std::pair{"--k", k}, std::pair{"--v", v}})
        if (!text) missing += (missing.empty() ? "" : " and ") + std::string(name);
    if (!missing.empty())
        refuse("inputs from .npy files need --q, --k and --v: " + missing +
               (missing.size() > 3 ? " are" : " is") + " missing");
    InputFiles files{*q, *k, *v, {}, std::nullopt};
    if (const std::string* upstream = find(given, "do")) files.upstream = *upstream;
    if (const std::string* head = find(given, "head"))
        files.head = int(readWholeNumber("head", *head, 0, kMaxNpyHeads - 1, "the head index"));
    return files;
}

// A size option given beside files must be the files' size.
void requireFileSize(const GivenOptions& given, const char* name, int fromFiles, const char* what,
                     const char* file) {
    const std::string* text = find(given, name);
    if (!text) return;
    const long long value = readWholeNumber(name, *text, 1, kMaxSequenceLength, what);
    if (value != fromFiles)
        refuse(quoted(name, *text) + what + " is " + std::to_string(fromFiles) + " in " + file +
               ": leave --" + name + " out, the sizes are the files'");
}

// The inputs from the files on the command line, the sizes theirs. Other inputs asked for beside
// them are refused.
void applyInputFiles(const GivenOptions& given, const InputFiles& files, RunSetup& setup) {
    if (const std::string* pattern = find(given, "pattern"))
        refuse("--pattern '" + *pattern + "' and --q, --k, --v ask for two inputs: give one");
    setup.spec.design.reset(); // a base's designed inputs give way to the files asked for
    setup.spec = withInputFiles(setup.spec, files);
    const ProblemSpec& spec = setup.spec;
    requireFileSize(given, "n", spec.queries, "n_q (queries)", "--q's file");
    if (find(given, "n") && !find(given, "nk"))
        requireFileSize(given, "n", spec.keys, "n_k (keys)", "--k's file");
    requireFileSize(given, "nk", spec.keys, "n_k (keys)", "--k's file");
    requireFileSize(given, "d", spec.headDim, "d (head dimension)", "--q's file");
}

} // namespace

RunSetup toySetup() {
    RunSetup toy;
    toy.spec.queries = 8;
    toy.spec.keys = 8;
    toy.spec.headDim = 4;
    toy.spec.seed = kToySeed;
    toy.spec.pattern = InputPattern::Gaussian;
    toy.options.blockRows = kToyBlockSize;
    toy.options.blockCols = kToyBlockSize;
    return toy;
}

double defaultSramBudgetBytes() {
    return findHardwareProfile(kDefaultHardwareId).sharedMemoryPerSmBytes.value;
}

const std::vector<ProblemOption>& problemOptions() {
    static const std::vector<ProblemOption> options = [] {
        const std::string n = std::to_string(kMaxSequenceLength);
        const std::string d = std::to_string(kMaxHeadDim);
        const std::string toyBlock = std::to_string(kToyBlockSize);
        std::vector<ProblemOption> list{
            {"n", "N", "number of queries n_q, 1 to " + n + "; sets n_k too unless --nk is given",
             "8"},
            {"nk", "N", "number of keys n_k, 1 to " + n, "equal to n"},
            {"d", "D", "head dimension d, 1 to " + d, "4"},
            {"br", "B", "query block size Br, 1 to n_q", toyBlock + ", or n_q when smaller"},
            {"bc", "B", "key block size Bc, 1 to n_k", toyBlock + ", or n_k when smaller"},
            {"seed", "S", "seed of the input generator, 0 to 2^63-1", std::to_string(kToySeed)},
            {"pattern", "P", "the inputs, gaussian, late-max, early-max or large", "gaussian"},
            {"scale", "X", "softmax scale, a finite number above 0", "1/sqrt(d)"},
            {"causal", "", "causal mask (bottom-right aligned when n != n_k)", ""},
            {"loop-order", "O",
             "the loop order, query-outer (the explainer's) or kv-outer (the paper's)",
             "query-outer"},
            {"precision", "P", "the arithmetic, double or float", "double"},
            {"algorithm", "A",
             "the algorithm: flash or standard attention, or backward (FlashAttention-2's "
             "backward pass)",
             "flash"},
            {"backward", "", "the backward pass: the same as --algorithm backward", ""},
            {"no-rescale", "", "drop the rescale exp(m_old - m_new): the classic bug", ""},
            {"no-running-max", "", "subtract no maximum at all: exp() overflows on large scores",
             ""},
            {"keep-full-s", "", "also write every score tile to an n x n S 'for debugging'", ""},
            {"q", "FILE",
             "Q from an .npy file (float32 or float64, (n_q, d) or (h, n_q, d)); with --k and "
             "--v, and the sizes are the files'",
             ""},
            {"k", "FILE", "K from an .npy file, (n_k, d) or (h, n_k, d); with --q and --v", ""},
            {"v", "FILE", "V from an .npy file, (n_k, d) or (h, n_k, d); with --q and --k", ""},
            {"do", "FILE",
             "the backward's upstream gradient dO from an .npy file, (n_q, d) or (h, n_q, d); "
             "with --q, --k, --v and --backward",
             "N(0, 1) from the seed"},
            {"head", "H",
             "the head of (h, n, d) files, 0 to h - 1 (" + std::to_string(kMaxNpyHeads - 1) +
                 " at most); with --q, --k and --v",
             ""},
        };
        for (const BackwardSwitch& flag : backwardSwitches())
            list.push_back({flag.name, "", flag.help, ""});
        return list;
    }();
    return options;
}

long long readWholeNumber(const std::string& name, const std::string& text, long long lowest,
                          long long highest, const std::string& what) {
    const std::string option = quoted(name, text);
    const std::size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
    if (text.size() == start || text.find_first_not_of("0123456789", start) != std::string::npos)
        refuse(option + what + " expects a whole number " + allowed(lowest, highest));
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    // Digits past long long read as out of range, not as garbage.
    if (error == std::errc::result_out_of_range && start == 1)
        refuse(option + what + " must be at least " + std::to_string(lowest) + " " +
               allowed(lowest, highest));
    if (error == std::errc::result_out_of_range || value > highest)
        throw EngineError(ErrorKind::LimitExceeded, option + what + " is past the limit of " +
                                                        std::to_string(highest) + " " +
                                                        allowed(lowest, highest));
    if (error != std::errc{} || end != text.data() + text.size())
        refuse(option + what + " expects a whole number " + allowed(lowest, highest));
    if (value < lowest)
        refuse(option + what + " must be at least " + std::to_string(lowest) + " " +
               allowed(lowest, highest));
    return value;
}

FlashOptions withBlocksWithin(FlashOptions options, const ProblemSpec& spec, bool rowsSet,
                              bool colsSet) {
    if (!rowsSet) options.blockRows = std::min(options.blockRows, spec.queries);
    if (!colsSet) options.blockCols = std::min(options.blockCols, spec.keys);
    return options;
}

RunSetup readProblemOptions(const GivenOptions& given, RunSetup base) {
    for (const auto& [name, text] : given) {
        bool known = false;
        for (const ProblemOption& o : problemOptions())
            known = known || o.name == name;
        if (!known) refuse("--" + name + " is not a problem option");
    }
    ProblemSpec& spec = base.spec;
    FlashOptions& options = base.options;
    if (const std::optional<InputFiles> files = readInputFiles(given)) {
        applyInputFiles(given, *files, base);
    } else {
        // Inputs from files (a base's) fix the sizes; a new size asks for other inputs.
        for (const char* name : {"n", "nk", "d", "pattern"})
            if (spec.files && find(given, name))
                refuse("--" + std::string(name) + ": the inputs come from " + describeInputs(spec) +
                       ", whose shapes fix the sizes; give --q, --k and "
                       "--v for other files");
        spec.queries = readSize(given, "n", spec.queries, kMaxSequenceLength, "n_q (queries)");
        spec.keys = find(given, "n") && !find(given, "nk") ? spec.queries : spec.keys;
        spec.keys = readSize(given, "nk", spec.keys, kMaxSequenceLength, "n_k (keys)");
        spec.headDim = readSize(given, "d", spec.headDim, kMaxHeadDim, "d (head dimension)");
    }
    options = withBlocksWithin(options, spec, find(given, "br") != nullptr,
                               find(given, "bc") != nullptr);
    options.blockRows =
        readSize(given, "br", options.blockRows, kMaxSequenceLength, "Br (query block size)");
    options.blockCols =
        readSize(given, "bc", options.blockCols, kMaxSequenceLength, "Bc (key block size)");
    if (const std::string* text = find(given, "seed")) spec.seed = readSeed(*text);
    if (const std::string* text = find(given, "scale")) spec.scale = readScale(*text);
    readName(given, "pattern", spec.pattern, parseInputPattern,
             "gaussian, late-max, early-max or large");
    readName(given, "loop-order", options.loopOrder, parseLoopOrder, "query-outer or kv-outer");
    readName(given, "precision", spec.precision, parsePrecision, "double or float");
    readName(given, "algorithm", base.algorithm, parseAlgorithm, "flash, standard or backward");
    if (find(given, "backward")) {
        if (const std::string* text = find(given, "algorithm"); text && *text != "backward")
            refuse("--backward and --algorithm '" + *text + "' ask for two algorithms; give one");
        base.algorithm = Algorithm::Backward;
    }
    for (const BackwardSwitch& flag : backwardSwitches()) {
        if (!find(given, flag.name)) continue;
        // On the forward it would change nothing shown: say so rather than ignore it.
        if (base.algorithm != Algorithm::Backward)
            refuse("--" + std::string(flag.name) + " is a switch of the backward pass, and this is " +
                   toString(base.algorithm) + " attention's forward: add --backward");
        options.backward.*flag.field = flag.onValue;
    }
    if (find(given, "do") && base.algorithm != Algorithm::Backward)
        refuse("--do is the backward's upstream gradient, and this is " +
               std::string(toString(base.algorithm)) + " attention's forward: add --backward");
    if (find(given, "causal")) spec.causal = true;
    if (find(given, "no-rescale")) options.rescale = false;
    if (find(given, "no-running-max")) options.runningMax = false;
    if (find(given, "keep-full-s")) {
        if (base.algorithm == Algorithm::Backward)
            refuse("--keep-full-s is the forward's debug copy of S; the backward keeps none: "
                   "leave it out, or add --store-p to keep P");
        options.keepFullScores = true;
    }
    validate(spec); // the memory the inputs need, before anything is made
    validate(spec, options);
    return base;
}

int resolveStepOption(const std::string& text, std::int64_t stepCount,
                      const std::function<std::optional<int>()>& firstRescale) {
    StepExpression expression;
    try {
        expression = parseStepExpression(text);
    } catch (const EngineError& e) {
        refuse(std::string("--step: ") + e.what());
    }
    const std::optional<int> rescale =
        expression.anchor == StepExpression::Anchor::FirstRescale ? firstRescale() : std::nullopt;
    const auto step = resolveStepExpression(expression, stepCount, rescale);
    if (!step)
        refuse("--step '" + text +
               "': no step of this run rescales (standard attention has no rescale; in "
               "FlashAttention every row's maximum is then in its first visible block, or the "
               "running maximum is off); this run has steps 0 to " +
               std::to_string(stepCount - 1));
    if (*step < 0 || *step >= stepCount)
        refuse("--step '" + text + "' names step " + std::to_string(*step) +
               "; this run has steps 0 to " + std::to_string(stepCount - 1));
    return int(*step);
}

} // namespace flashviz
