#include "core/problem.h"

#include "core/errors.h"
#include "core/input_design.h"
#include "core/npy.h"

#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>
#include <unistd.h>

namespace flashviz {

namespace {

// Score heights, in units of the softmax argument, that make the patterns' point obvious.
constexpr double kSpikeScore = 8.0;     // EarlyMaximum: key 0 towers over the rest
constexpr double kRampScore = 6.0;      // LateMaximum: scores climb by this much over the keys
constexpr double kLargeInputStd = 30.0; // LargeScores: scores with a spread in the hundreds

std::string sizeText(const char* what, long long value) {
    return std::string(what) + " = " + std::to_string(value);
}

void requirePositive(long long value, const char* what) {
    if (value <= 0)
        throw EngineError(ErrorKind::InvalidArgument,
                          sizeText(what, value) + ": it must be at least 1");
}

void requireAtMost(long long value, long long limit, const char* what) {
    if (value > limit)
        throw EngineError(ErrorKind::LimitExceeded, sizeText(what, value) +
                                                        " is past FlashViz's limit of " +
                                                        std::to_string(limit));
}

// Writes the pattern's signal into column 0 of Q and K (the other columns stay random).
void plantScoreShape(Problem& p, double heightForKey(int key, int keys)) {
    const double perUnit = std::sqrt(1.0 / p.scale()); // q0 * k0 * scale == height
    p.q.col(0).setConstant(perUnit);
    for (int j = 0; j < p.spec.keys; ++j)
        p.k(j, 0) = perUnit * heightForKey(j, p.spec.keys);
}

double spikeAtFirstKey(int key, int /*keys*/) {
    return key == 0 ? kSpikeScore : 0.0;
}
double risingRamp(int key, int keys) {
    return keys == 1 ? kRampScore : kRampScore * key / double(keys - 1);
}

} // namespace

double ProblemSpec::effectiveScale() const {
    return scale ? *scale : 1.0 / std::sqrt(double(headDim));
}

std::uint64_t physicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0) return std::uint64_t(8) << 30; // unknown: assume 8 GiB
    return std::uint64_t(pages) * std::uint64_t(pageSize);
}

void requireScoreMatrixMemory(int queries, int keys, int bytesPerElement, int copies) {
    const double need = double(queries) * double(keys) * bytesPerElement * copies;
    const double have = double(physicalMemoryBytes());
    if (need <= have / 2) return;
    constexpr double gib = double(1 << 30);
    // Ordinary attention (every check's reference), standard attention's S and P and the debug
    // copy of S all hold such a matrix; FlashAttention itself never does.
    throw EngineError(ErrorKind::OutOfMemory,
                      "The n_q x n_k matrices at n_q = " + std::to_string(queries) +
                          ", n_k = " + std::to_string(keys) + " need " +
                          std::to_string(int(std::ceil(need / gib))) +
                          " GiB, more than half of this machine's memory (" +
                          std::to_string(int(have / gib)) +
                          " GiB); ordinary attention, standard attention and the debug copy of S "
                          "hold them, FlashAttention never does");
}

void validate(const ProblemSpec& spec) {
    requirePositive(spec.queries, "n_q (queries)");
    requirePositive(spec.keys, "n_k (keys)");
    requirePositive(spec.headDim, "d (head dimension)");
    requireAtMost(spec.queries, kMaxSequenceLength, "n_q (queries)");
    requireAtMost(spec.keys, kMaxSequenceLength, "n_k (keys)");
    requireAtMost(spec.headDim, kMaxHeadDim, "d (head dimension)");
    if (spec.files && spec.design)
        throw EngineError(ErrorKind::InvalidArgument,
                          "The inputs come either from .npy files or from the input designer, "
                          "not both: choose one");
    if (spec.scale && !(std::isfinite(*spec.scale) && *spec.scale > 0))
        throw EngineError(ErrorKind::InvalidArgument,
                          "The softmax scale must be a finite number above 0 (got " +
                              std::to_string(*spec.scale) + ")");
    const double inputBytes = double(spec.queries + 2.0 * spec.keys) * spec.headDim *
                              sizeof(double) * 2; // inputs + output
    if (inputBytes > double(physicalMemoryBytes()) / 2)
        throw EngineError(ErrorKind::OutOfMemory,
                          "Q, K, V and O for n_q = " + std::to_string(spec.queries) + ", n_k = " +
                              std::to_string(spec.keys) + ", d = " + std::to_string(spec.headDim) +
                              " need " + std::to_string(inputBytes / double(1 << 30)) +
                              " GiB, more than half of this machine's memory");
    validateDesign(spec); // the input designer's rows (core/input_design.h); none: nothing
}

namespace {

Problem generatedProblem(const ProblemSpec& spec) {
    Problem p{spec, {}, {}, {}, {}};
    NormalGenerator rng(spec.seed);
    const double d = spec.headDim;
    switch (spec.pattern) {
    case InputPattern::LargeScores:
        p.q = rng.matrix(spec.queries, spec.headDim, kLargeInputStd);
        p.k = rng.matrix(spec.keys, spec.headDim, kLargeInputStd);
        p.v = rng.matrix(spec.keys, spec.headDim, 1.0);
        return p;
    default:
        p.q = rng.matrix(spec.queries, spec.headDim, 1.0 / std::sqrt(d));
        p.k = rng.matrix(spec.keys, spec.headDim, 1.0 / std::sqrt(d));
        p.v = rng.matrix(spec.keys, spec.headDim, 1.0);
    }
    if (spec.pattern == InputPattern::EarlyMaximum) plantScoreShape(p, spikeAtFirstKey);
    if (spec.pattern == InputPattern::LateMaximum) plantScoreShape(p, risingRamp);
    return p;
}

std::string shapeText(const NpyHeader& h) {
    return std::to_string(h.rows()) + " x " + std::to_string(h.cols());
}

// A matrix of the inputs, its name and its file, as messages name them: "K (k.npy)".
struct InputFile {
    const char* name;
    const std::string& path;
    std::string label() const { return std::string(name) + " (" + path + ")"; }
};

// Runs `read` on one file, its messages prefixed with the matrix they are for.
template <class Read> auto readAs(const InputFile& file, Read read) {
    try {
        return read(file.path);
    } catch (const EngineError& e) {
        throw EngineError(e.kind(), std::string(file.name) + ": " + e.what());
    }
}

void requireNamed(const InputFiles& files) {
    std::string missing;
    for (const auto& [name, path] :
         {std::pair{"Q", &files.q}, std::pair{"K", &files.k}, std::pair{"V", &files.v}})
        if (path->empty()) missing += (missing.empty() ? "" : ", ") + std::string(name);
    if (!missing.empty())
        throw EngineError(ErrorKind::InvalidArgument,
                          "Inputs from .npy files need a file for each of Q, K and V; none is "
                          "given for " +
                              missing);
}

Problem filesProblem(const ProblemSpec& spec) {
    InputMatrices inputs = loadInputFiles(*spec.files);
    // The sizes were set from the files when they were chosen; a file changed since would make
    // every step the window laid out for them wrong.
    if (inputs.q.rows() != spec.queries || inputs.k.rows() != spec.keys ||
        inputs.q.cols() != spec.headDim)
        throw EngineError(
            ErrorKind::InvalidArgument,
            "The .npy inputs now hold n_q = " + std::to_string(inputs.q.rows()) + ", n_k = " +
                std::to_string(inputs.k.rows()) + ", d = " + std::to_string(inputs.q.cols()) +
                ", and the problem was set for n_q = " + std::to_string(spec.queries) +
                ", n_k = " + std::to_string(spec.keys) + ", d = " + std::to_string(spec.headDim) +
                ": the files changed since they were chosen; choose them again");
    return Problem{spec, std::move(inputs.q), std::move(inputs.k), std::move(inputs.v),
                   std::move(inputs.upstream)};
}

} // namespace

Problem makeProblem(const ProblemSpec& spec) {
    validate(spec);
    // Where the inputs come from: the one place that decides.
    if (spec.files) return filesProblem(spec);
    if (spec.design) return designedProblem(spec);
    return generatedProblem(spec);
}

namespace {

// The headers of the input files, each checked against the others.
struct InputHeaders {
    NpyHeader q, k, v;
    std::optional<NpyHeader> upstream;
};

// Every check of the files that needs no data: each file there, its header and its length (the
// header's shape, core/npy.h), the head index, the shapes agreeing and the memory they need.
InputHeaders checkedHeaders(const InputFiles& files) {
    requireNamed(files);
    const InputFile q{"Q", files.q}, k{"K", files.k}, v{"V", files.v}, dO{"dO", files.upstream};
    const auto read = [](const InputFile& file) { return readAs(file, loadNpyHeader); };
    InputHeaders h{read(q), read(k), read(v), std::nullopt};
    if (!files.upstream.empty()) h.upstream = read(dO);
    const bool anyHeads = h.q.shape.size() == 3 || h.k.shape.size() == 3 || h.v.shape.size() == 3 ||
                          (h.upstream && h.upstream->shape.size() == 3);
    if (files.head && !anyHeads)
        throw EngineError(ErrorKind::InvalidArgument,
                          "Head index " + std::to_string(*files.head) +
                              ": none of the files holds heads (each is one (n, d) matrix); "
                              "leave the head index out");
    // The head index applies to the (h, n, d) files; a 2-D one (often dO) is its one head.
    const auto requireHead = [&files](const InputFile& file, const NpyHeader& header) {
        if (header.shape.size() == 3)
            readAs(file, [&](const std::string& path) {
                return chooseNpyHead(header, files.head, path);
            });
    };
    requireHead(q, h.q);
    requireHead(k, h.k);
    requireHead(v, h.v);
    if (h.upstream) requireHead(dO, *h.upstream);
    if (h.k.cols() != h.q.cols() || h.v.cols() != h.q.cols() || h.v.rows() != h.k.rows())
        throw EngineError(ErrorKind::InvalidArgument,
                          "Shapes do not agree: " + q.label() + " is " + shapeText(h.q) + ", " +
                              k.label() + " " + shapeText(h.k) + ", " + v.label() + " " +
                              shapeText(h.v) + "; Q must be n_q x d, K and V n_k x d, with one d");
    if (h.upstream && (h.upstream->rows() != h.q.rows() || h.upstream->cols() != h.q.cols()))
        throw EngineError(ErrorKind::InvalidArgument,
                          dO.label() + " is " + shapeText(*h.upstream) + "; dO must be n_q x d = " +
                              shapeText(h.q) + ", the shape of " + q.label());
    ProblemSpec sizes;
    sizes.queries = h.q.rows();
    sizes.keys = h.k.rows();
    sizes.headDim = h.q.cols();
    validate(sizes); // the memory they need, before it is taken
    return h;
}

} // namespace

InputMatrices loadInputFiles(const InputFiles& files) {
    const InputHeaders h = checkedHeaders(files);
    const InputFile q{"Q", files.q}, k{"K", files.k}, v{"V", files.v}, dO{"dO", files.upstream};
    const auto matrix = [&files](const InputFile& file, const NpyHeader& header) {
        const std::optional<int> head = header.shape.size() == 3 ? files.head : std::nullopt;
        return readAs(file, [head](const std::string& path) { return loadNpyMatrix(path, head); });
    };
    InputMatrices out{matrix(q, h.q), matrix(k, h.k), matrix(v, h.v), std::nullopt};
    if (h.upstream) out.upstream = matrix(dO, *h.upstream);
    return out;
}

ProblemSpec withInputFiles(ProblemSpec spec, const InputFiles& files) {
    const InputHeaders h = checkedHeaders(files);
    spec.files = files;
    spec.queries = h.q.rows();
    spec.keys = h.k.rows();
    spec.headDim = h.q.cols();
    validate(spec);
    return spec;
}

std::string describeInputs(const ProblemSpec& spec, InputPaths paths) {
    if (spec.design)
        return "designed inputs (each row's maximum in a chosen block of " +
               std::to_string(spec.design->blockSize) + " keys), seed " + std::to_string(spec.seed);
    if (!spec.files)
        return std::string(toString(spec.pattern)) + " inputs, seed " + std::to_string(spec.seed);
    const InputFiles& f = *spec.files;
    const auto shown = [paths](const std::string& path) {
        return paths == InputPaths::FileNames ? std::filesystem::path(path).filename().string()
                                              : path;
    };
    std::string text = "inputs from " + shown(f.q) + ", " + shown(f.k) + ", " + shown(f.v);
    if (f.head) text += " (head " + std::to_string(*f.head) + ")";
    if (!f.upstream.empty()) text += ", dO from " + shown(f.upstream);
    return text;
}

static void requireFinite(const Matrix& m, const char* name) {
    if (!m.allFinite())
        throw EngineError(ErrorKind::NonFinite, std::string("The input ") + name +
                                                    " holds inf or NaN values; attention " +
                                                    "needs finite inputs");
}

Problem makeProblem(Matrix q, Matrix k, Matrix v, ProblemSpec spec) {
    if (q.cols() != k.cols() || k.cols() != v.cols() || k.rows() != v.rows())
        throw EngineError(ErrorKind::InvalidArgument,
                          "Shapes do not agree: Q is " + std::to_string(q.rows()) + "x" +
                              std::to_string(q.cols()) + ", K " + std::to_string(k.rows()) + "x" +
                              std::to_string(k.cols()) + ", V " + std::to_string(v.rows()) + "x" +
                              std::to_string(v.cols()) + " (need Q n_q x d, K and V n_k x d)");
    spec.queries = int(q.rows());
    spec.keys = int(k.rows());
    spec.headDim = int(q.cols());
    validate(spec);
    requireFinite(q, "Q");
    requireFinite(k, "K");
    requireFinite(v, "V");
    return Problem{spec, std::move(q), std::move(k), std::move(v), {}};
}

const char* toString(InputPattern pattern) {
    switch (pattern) {
    case InputPattern::Gaussian:
        return "gaussian";
    case InputPattern::LateMaximum:
        return "late-max";
    case InputPattern::EarlyMaximum:
        return "early-max";
    case InputPattern::LargeScores:
        return "large";
    }
    return "?";
}

const char* toString(Precision precision) {
    return precision == Precision::Double ? "double" : "float";
}

std::optional<InputPattern> parseInputPattern(std::string_view name) {
    for (InputPattern p : allInputPatterns())
        if (name == toString(p)) return p;
    return std::nullopt;
}

std::optional<Precision> parsePrecision(std::string_view name) {
    if (name == "double" || name == "fp64") return Precision::Double;
    if (name == "float" || name == "fp32") return Precision::Float;
    return std::nullopt;
}

const std::vector<InputPattern>& allInputPatterns() {
    static const std::vector<InputPattern> all{InputPattern::Gaussian, InputPattern::LateMaximum,
                                               InputPattern::EarlyMaximum,
                                               InputPattern::LargeScores};
    return all;
}

std::string describe(InputPattern pattern) {
    switch (pattern) {
    case InputPattern::Gaussian:
        return "Gaussian inputs as in the explainer: Q, K ~ N(0, 1/d), V ~ N(0, 1)";
    case InputPattern::LateMaximum:
        return "Scores climb with the key index, so each row's maximum arrives in its last block "
               "and the running maximum rises at every block: the rescale matters";
    case InputPattern::EarlyMaximum:
        return "Key 0 scores far above the rest, so each row's maximum is in its first block: "
               "the running maximum never rises and a missing rescale goes unnoticed";
    case InputPattern::LargeScores:
        return "Scores in the hundreds: exp() overflows unless a maximum is subtracted";
    }
    return {};
}

NormalGenerator::NormalGenerator(std::uint64_t seed) : m_engine(seed) {}

double NormalGenerator::next() {
    // Box-Muller: two uniforms in (0, 1] give two independent normals.
    if (m_spare) {
        const double value = *m_spare;
        m_spare.reset();
        return value;
    }
    constexpr double toUnit = 1.0 / 18446744073709551616.0; // 2^-64
    const double u1 = (double(m_engine()) + 1.0) * toUnit;
    const double u2 = double(m_engine()) * toUnit;
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    m_spare = radius * std::sin(angle);
    return radius * std::cos(angle);
}

Matrix NormalGenerator::matrix(int rows, int cols, double stddev) {
    Matrix m(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            m(r, c) = stddev * next();
    return m;
}

} // namespace flashviz
