#pragma once
// A problem: the sizes, the inputs Q, K, V and how they were made. Same spec, same inputs,
// on every machine: the generator is specified here, not left to the standard library.
#include "core/inputs.h"
#include "core/types.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace flashviz {

enum class InputPattern {
    Gaussian,     // the explainer's toy: Q, K ~ N(0, 1)/sqrt(d), V ~ N(0, 1)
    LateMaximum,  // scores rise with the key index: each row's maximum arrives in a late block
    EarlyMaximum, // scores fall with the key index: the maximum sits in the first block
    LargeScores,  // scores in the hundreds: exp() overflows without a running maximum
};

enum class Precision { Double, Float };

inline constexpr int kMaxSequenceLength = 1 << 20;
inline constexpr int kMaxHeadDim = 1024;

struct ProblemSpec {
    int queries = 8; // n_q
    int keys = 8;    // n_k
    int headDim = 4; // d
    std::uint64_t seed = 0;
    InputPattern pattern = InputPattern::Gaussian;
    std::optional<double> scale; // softmax scale; 1/sqrt(d) when unset
    Precision precision = Precision::Double;
    bool causal = false; // bottom-right aligned: query i sees keys j <= i + (n_k - n_q)
    // The user's own inputs (core/inputs.h), at most one of the two; the pattern then stays only
    // as a label, and the sizes are the files' or the design's.
    std::optional<InputFiles> files;
    std::optional<InputDesign> design;

    double effectiveScale() const;
    bool operator==(const ProblemSpec&) const = default;
};

struct Problem {
    ProblemSpec spec;
    Matrix q; // n_q x d
    Matrix k; // n_k x d
    Matrix v; // n_k x d
    // The backward's dO (n_q x d) when a file gives it (InputFiles::upstream); otherwise the
    // backward draws it from the seed (upstreamGradient, core/backward.h).
    std::optional<Matrix> upstream = std::nullopt;
    double scale() const { return spec.effectiveScale(); }
};

// Throws EngineError for sizes out of range, a bad scale, or inputs that would not fit in memory.
void validate(const ProblemSpec& spec);

// This machine's physical memory; requests for more than half of it are refused up front.
std::uint64_t physicalMemoryBytes();

// Refuses (EngineError::OutOfMemory) an n_q x n_k scratch this machine cannot hold: ordinary
// attention's scores, standard attention's S and P, the debug copy of S.
void requireScoreMatrixMemory(int queries, int keys, int bytesPerElement, int copies);

// Builds the inputs the spec describes: generated from the pattern and the seed, or read from
// spec.files (whose shapes must be the spec's sizes: withInputFiles sets them). Throws
// EngineError for an invalid spec or a bad file.
Problem makeProblem(const ProblemSpec& spec);

// Q, K, V (and dO) read from .npy files (core/npy.h), every check made: each file, the head
// index (it applies to the (h, n, d) files, and at least one must be one), the shapes agreeing
// (Q n_q x d, K and V n_k x d, dO n_q x d) and the memory they need, before any data is read;
// then the data, every value finite. Messages name the matrix and its file:
// "K: k.npy: int32 ('<i4'); FlashViz reads ...".
struct InputMatrices {
    Matrix q, k, v;
    std::optional<Matrix> upstream = std::nullopt;
};
InputMatrices loadInputFiles(const InputFiles& files);

// `spec` with its inputs from `files`, the sizes n_q, n_k and d set from them: every check of
// loadInputFiles that needs only the files' headers and lengths, so that choosing files, and
// reading settings or a session that name them, costs no more than the headers however large
// the files are. Their values are read, and a non-finite one refused, by makeProblem (the build).
// Throws EngineError naming the file.
ProblemSpec withInputFiles(ProblemSpec spec, const InputFiles& files);

// Where the inputs come from, in one line, for the CLI's run and the window's status:
// "gaussian inputs, seed 1", or "inputs from q.npy, k.npy, v.npy (head 3), dO from do.npy"
// (with FileNames, the files without their folders).
enum class InputPaths { AsGiven, FileNames };
std::string describeInputs(const ProblemSpec& spec, InputPaths paths = InputPaths::AsGiven);

// Wraps given inputs (shapes must agree, every value finite). The spec's sizes are taken from
// the matrices; its pattern and seed are kept only as a label.
Problem makeProblem(Matrix q, Matrix k, Matrix v, ProblemSpec spec = {});

const char* toString(InputPattern pattern);
const char* toString(Precision precision);
std::optional<InputPattern> parseInputPattern(std::string_view name);
std::optional<Precision> parsePrecision(std::string_view name);
const std::vector<InputPattern>& allInputPatterns();
std::string describe(InputPattern pattern);

// The deterministic generator behind every pattern: mt19937_64 (fixed by the C++ standard)
// feeding a Box-Muller transform (std::normal_distribution differs between libraries).
class NormalGenerator {
  public:
    explicit NormalGenerator(std::uint64_t seed);
    double next();
    Matrix matrix(int rows, int cols, double stddev);

  private:
    std::mt19937_64 m_engine;
    std::optional<double> m_spare;
};

} // namespace flashviz
