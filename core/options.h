#pragma once
// How the tiled algorithm runs: block sizes, loop order and the switches the app can flip.
#include <optional>
#include <string_view>

namespace flashviz {

struct ProblemSpec;

enum class Algorithm { Standard, Flash };

enum class LoopOrder {
    QueryOuter,    // the explainer's order: a query block stays on chip while K/V blocks stream
    KeyValueOuter, // the paper's Algorithm 1: K/V block outer; O, m, l go to HBM every inner step
};

struct FlashOptions {
    int blockRows = 64;     // Br: query rows per tile
    int blockCols = 64;     // Bc: keys per tile
    bool rescale = true;    // false: the bug, exp(m_old - m_new) is never applied
    bool runningMax = true; // false: no maximum is subtracted at all (overflow on large scores)
    bool keepFullScores = false; // "for debugging": every score tile is also written to an n x n S
    LoopOrder loopOrder = LoopOrder::QueryOuter;
    bool operator==(const FlashOptions&) const = default;
};

// Throws EngineError for a block of size <= 0 or past the sequence limit.
void validate(const FlashOptions& options);
// The options on this problem: validate(options), and each block no larger than its sequence
// (Br <= n_q, Bc <= n_k), so that a tile never claims rows the problem does not have. Every face
// checks settings with this before it runs them.
void validate(const ProblemSpec& spec, const FlashOptions& options);

const char* toString(Algorithm algorithm);
const char* toString(LoopOrder order);
std::optional<Algorithm> parseAlgorithm(std::string_view name);
std::optional<LoopOrder> parseLoopOrder(std::string_view name);

} // namespace flashviz
