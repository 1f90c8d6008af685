#pragma once
// How the tiled algorithm runs: block sizes, loop order and the switches the app can flip.
#include <optional>
#include <string_view>
#include <vector>

namespace flashviz {

struct ProblemSpec;

// Flash and Standard compute attention's output; Backward its gradients dQ, dK, dV, as
// FlashAttention-2's backward pass does it (core/backward.h).
enum class Algorithm { Standard, Flash, Backward };

enum class LoopOrder {
    QueryOuter,    // the explainer's order: a query block stays on chip while K/V blocks stream
    KeyValueOuter, // the paper's Algorithm 1: K/V block outer; O, m, l go to HBM every inner step
};

// The backward pass's switches. Each of the first four breaks it the way people break it; the
// last undoes FlashAttention's trade (correct, but the n_q x n_k P is stored and read back).
struct BackwardOptions {
    bool subtractRowDot = true;  // false: the bug, D_i left out: dS = P ∘ dP
    bool useLogSumExp = true;    // false: the bug, P = exp(S - m) from the running maximum alone
    bool accumulateDq = true;    // false: the bug, each key block overwrites dQ_i
    bool maskRecompute = true;   // false: the bug, the causal mask forgotten when S is recomputed
    bool storeWeights = false;   // true: the forward stores P and the backward reads it back
    bool onesUpstream = false;   // the upstream gradient dO: all ones, or N(0, 1) from the seed
    bool operator==(const BackwardOptions&) const = default;
    bool anyBug() const { return !subtractRowDot || !useLogSumExp || !accumulateDq || !maskRecompute; }
};

// The backward's switches by the name the command lines use (presets, saved settings and
// lecture.json use the BackwardOptions field names as JSON keys): switching one on sets `field`
// to `onValue`.
struct BackwardSwitch {
    const char* name; // "no-row-dot", "no-lse", "overwrite-dq", "no-mask-recompute", "store-p", "ones-upstream"
    bool BackwardOptions::*field;
    bool onValue;
    const char* help;
    bool isBug; // breaks the gradients (store-p and ones-upstream do not)
};
const std::vector<BackwardSwitch>& backwardSwitches();
bool isOn(const BackwardOptions& options, const BackwardSwitch& flag);

struct FlashOptions {
    int blockRows = 64;     // Br: query rows per tile
    int blockCols = 64;     // Bc: keys per tile
    bool rescale = true;    // false: the bug, exp(m_old - m_new) is never applied
    bool runningMax = true; // false: no maximum is subtracted at all (overflow on large scores)
    bool keepFullScores = false; // "for debugging": every score tile is also written to an n x n S
    LoopOrder loopOrder = LoopOrder::QueryOuter; // the forward's; the backward is key-block outer
    BackwardOptions backward;
    bool operator==(const FlashOptions&) const = default;
};

// Throws EngineError for a block of size <= 0 or past the sequence limit.
void validate(const FlashOptions& options);
// The options on this problem: validate(options), and each block no larger than its sequence
// (Br <= n_q, Bc <= n_k), so that a tile never claims rows the problem does not have. Every face
// checks settings with this before it runs them.
void validate(const ProblemSpec& spec, const FlashOptions& options);
// Refuses dO = ones (onesUpstream) together with a dO file (spec.files->upstream): two upstream
// gradients. validate(spec, options) checks it; so does the backward where it takes dO.
void requireOneUpstream(const ProblemSpec& spec, const BackwardOptions& options);

const char* toString(Algorithm algorithm);
const char* toString(LoopOrder order);
std::optional<Algorithm> parseAlgorithm(std::string_view name);
std::optional<LoopOrder> parseLoopOrder(std::string_view name);

} // namespace flashviz
