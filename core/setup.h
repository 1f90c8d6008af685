#pragma once
// A run as every face starts it and as a command line sets it: the defaults (the explainer's toy,
// the GPU drawn and its SRAM budget) and the problem options that flashviz-cli and the window's
// command line share, with their names, help, validation and messages written once.
#include "core/options.h"
#include "core/problem.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace flashviz {

// The problem, the algorithm and its options: what a command line sets.
struct RunSetup {
    ProblemSpec spec;
    FlashOptions options;
    Algorithm algorithm = Algorithm::Flash;
    bool operator==(const RunSetup&) const = default;
};

// The seed of the explainer's toy, in the window, the CLI and the README's examples alike.
inline constexpr std::uint64_t kToySeed = 1;
// The explainer's toy: 8 tokens, d = 4, 4 x 4 tiles, gaussian inputs (seed kToySeed), flash.
RunSetup toySetup();

// Seeds run from 0 to 2^63 - 1 on every face: saved settings and presets are JSON, whose
// integers FlashViz reads as signed 64-bit numbers.
inline constexpr std::uint64_t kMaxSeed = std::uint64_t(std::numeric_limits<std::int64_t>::max());

// The GPU the window draws first, and whose shared memory per SM is the SRAM budget the
// window's stage, its block-size chart and `flashviz-cli demos` (demo 4) assume.
inline constexpr const char* kDefaultHardwareId = "a100-40gb";
double defaultSramBudgetBytes();

// One problem option of the command line, e.g. {"n", "N", "number of queries n_q, 1 to 1048576",
// "8, the explainer's toy"}. A switch has an empty valueName.
struct ProblemOption {
    std::string name;       // without the leading "--"
    std::string valueName;  // "" for a switch
    std::string help;       // what it sets and its range
    std::string toyDefault; // the value when the option is absent and the run starts as the toy
};
// --n --nk --d --br --bc --seed --pattern --scale --causal --loop-order --precision --algorithm
// --no-rescale --no-running-max --keep-full-s --backward and the backward switches (core/options.h),
// in the order help lists them.
const std::vector<ProblemOption>& problemOptions();

// The problem options given on a command line: name (without "--") -> text ("" for a switch).
using GivenOptions = std::map<std::string, std::string>;

// A block size not set explicitly follows a shorter sequence (`--n 2` alone is a valid toy, and
// so is n = 2 typed into the window's field): Br <= n_q and Bc <= n_k where not set.
FlashOptions withBlocksWithin(FlashOptions options, const ProblemSpec& spec, bool rowsSet,
                              bool colsSet);

// Reads the given options over `base` (the toy, a preset, saved settings). --n sets n_k too
// unless --nk is given; a block size not given shrinks to a shorter sequence. Every value is
// read strictly and checked as the engine would take it (sizes, the blocks against the sequence,
// the memory the inputs need). Throws EngineError naming the option, the value and the range:
// "--n '0': n_q (queries) must be at least 1 (allowed: 1 to 1048576)".
RunSetup readProblemOptions(const GivenOptions& given, RunSetup base);

// A whole number written plainly (digits with an optional leading '-') within [lowest,
// highest] for --name; throws EngineError "--name 'text': <what> ... (allowed: lo to hi)".
long long readWholeNumber(const std::string& name, const std::string& text, long long lowest,
                          long long highest, const std::string& what);

// A --step expression resolved in a run of `stepCount` steps; `firstRescale` (asked only for
// "first-rescale") gives the step where the rescale first bites. Returns the step, or throws
// EngineError naming the steps the run has (never clamped).
int resolveStepOption(const std::string& text, std::int64_t stepCount,
                      const std::function<std::optional<int>()>& firstRescale);

} // namespace flashviz
