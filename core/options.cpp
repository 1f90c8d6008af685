#include "core/options.h"

#include "core/errors.h"
#include "core/problem.h"

#include <string>

namespace flashviz {

static void requireBlock(int value, const char* name) {
    if (value <= 0)
        throw EngineError(ErrorKind::InvalidArgument, std::string(name) +
                                                          " must be at least 1 (got " +
                                                          std::to_string(value) + ")");
    if (value > kMaxSequenceLength)
        throw EngineError(ErrorKind::LimitExceeded,
                          std::string(name) + " " + std::to_string(value) +
                              " is past the limit of " + std::to_string(kMaxSequenceLength));
}

void validate(const FlashOptions& options) {
    requireBlock(options.blockRows, "The query block size Br");
    requireBlock(options.blockCols, "The key block size Bc");
}

static void requireWithin(int block, int sequence, const char* name, const char* sequenceName) {
    if (block > sequence)
        throw EngineError(ErrorKind::InvalidArgument,
                          std::string(name) + " = " + std::to_string(block) + " is larger than " +
                              sequenceName + " = " + std::to_string(sequence) + " (allowed: 1 to " +
                              std::to_string(sequence) + ")");
}

void validate(const ProblemSpec& spec, const FlashOptions& options) {
    validate(options);
    requireWithin(options.blockRows, spec.queries, "The query block size Br", "n_q");
    requireWithin(options.blockCols, spec.keys, "The key block size Bc", "n_k");
    requireOneUpstream(spec, options.backward);
}

void requireOneUpstream(const ProblemSpec& spec, const BackwardOptions& options) {
    if (options.onesUpstream && spec.files && !spec.files->upstream.empty())
        throw EngineError(ErrorKind::InvalidArgument,
                          "dO = ones (ones-upstream) and dO from " + spec.files->upstream +
                              " ask for two upstream gradients: choose one");
}

const std::vector<BackwardSwitch>& backwardSwitches() {
    static const std::vector<BackwardSwitch> switches = {
        {"no-row-dot", &BackwardOptions::subtractRowDot, false,
         "backward: leave D = rowsum(dO * O) out, dS = P * dP (a bug)", true},
        {"no-lse", &BackwardOptions::useLogSumExp, false,
         "backward: recompute P from the running maximum m alone, without log l (a bug)", true},
        {"overwrite-dq", &BackwardOptions::accumulateDq, false,
         "backward: each key block overwrites dQ_i instead of adding to it (a bug)", true},
        {"no-mask-recompute", &BackwardOptions::maskRecompute, false,
         "backward: forget the causal mask when S is recomputed (a bug)", true},
        {"store-p", &BackwardOptions::storeWeights, true,
         "backward: store P in the forward and read it back instead of recomputing it", false},
        {"ones-upstream", &BackwardOptions::onesUpstream, true,
         "backward: the upstream gradient dO is all ones (default: N(0, 1) from the seed)", false},
    };
    return switches;
}

bool isOn(const BackwardOptions& options, const BackwardSwitch& flag) {
    return options.*flag.field == flag.onValue;
}

const char* toString(Algorithm algorithm) {
    switch (algorithm) {
    case Algorithm::Standard: return "standard";
    case Algorithm::Flash: return "flash";
    case Algorithm::Backward: return "backward";
    }
    return "?";
}

const char* toString(LoopOrder order) {
    return order == LoopOrder::QueryOuter ? "query-outer" : "kv-outer";
}

std::optional<Algorithm> parseAlgorithm(std::string_view name) {
    if (name == "standard") return Algorithm::Standard;
    if (name == "flash") return Algorithm::Flash;
    if (name == "backward") return Algorithm::Backward;
    return std::nullopt;
}

std::optional<LoopOrder> parseLoopOrder(std::string_view name) {
    if (name == "query-outer" || name == "seeds" || name == "q-outer") return LoopOrder::QueryOuter;
    if (name == "kv-outer" || name == "paper") return LoopOrder::KeyValueOuter;
    return std::nullopt;
}

} // namespace flashviz
