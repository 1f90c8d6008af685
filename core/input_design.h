#pragma once
// The input designer: Q and K made so that each query row's largest score sits in the key block
// the lecturer chose and stands out by the sharpness chosen, and the report of what a problem's
// inputs realise, read from the engine's own online softmax.
//
// The construction works on the scores S = scale · Q Kᵀ directly. Key 0 is the reference: its
// score is exactly 0 in every row. Each chosen key block has one target key (its first key; in
// block 0 key 1, so that key 0 stays the reference) carrying a position code; a row points at
// its target's code with length sharpness, so the target scores exactly `sharpness` and every
// other target key 0 or below. The remaining keys score at most 0: exactly 0, or, where d leaves
// dimensions over, noise from the seed in [-2, 0) logits. So a row's running maximum is 0 from
// its first key block on, never rises before the chosen block, rises there by `sharpness` (the
// rescale exp(m_old − m_new) = e^−sharpness) and never again.
//
// The codes need dimensions: ±e_k in ceil(U / 2) dimensions for U different target keys
// (2 more when a row's maximum must be key 0 itself: blocks of 1 key); with fewer, the codes lie
// on circles (d >= 3), packed more tightly, and the scores of the other target keys grow with
// 1 / (1 − cos(2π / codes per circle)): a design is refused when they would pass
// kMaxDesignedScore, with the d that would hold it. d = 1 holds two different blocks, d = 2 four.
#include "core/options.h"
#include "core/problem.h"

#include <optional>
#include <string>
#include <vector>

namespace flashviz {

// A row's sharpness, in logits: from a barely visible maximum to one that takes all the weight.
inline constexpr double kMinSharpness = 0.5;
inline constexpr double kMaxSharpness = 50.0;
// How far below the reference key the noise spreads the other keys' scores, in logits.
inline constexpr double kDesignNoiseLogits = 1.0;
// The largest |score| a design may need (tightly packed codes at a small d); past it, refused.
inline constexpr double kMaxDesignedScore = 1e4;

// Why a row's sharpness is refused ("sharpness 60 is outside 0.5 to 50 logits"): not finite, or
// outside [kMinSharpness, kMaxSharpness]; nothing when it is taken.
std::optional<std::string> sharpnessRefusal(double sharpness);

// Throws EngineError (InvalidArgument) naming the row and the field: one row per query, a block
// size of at least 1, each block holding keys and seen by its row (the causal mask: a row that
// sees no key at all must name block 0, and realises nothing), each sharpness finite in
// [kMinSharpness, kMaxSharpness]; and (LimitExceeded) a design d cannot hold. A design that no
// longer fits the problem's sizes, mask or d says to design the inputs again or go back to
// generated inputs. No-op without spec.design. validate(ProblemSpec) calls it.
void validateDesign(const ProblemSpec& spec);

// Q and K from spec.design as above, V from the seed exactly as the gaussian pattern draws it
// (the same seed gives the same V), the noise from the same draws of Q and K. Same spec, same
// matrices. Throws EngineError for an invalid spec or design.
Problem designedProblem(const ProblemSpec& spec);

// How many key blocks of `blockSize` row `row` sees: all of them, a prefix under the causal
// mask, 0 when it sees no key.
int visibleDesignBlocks(const ProblemSpec& spec, int blockSize, int row);

// The quick designs for spec's sizes and mask, one sharpness for every row. A row that sees no
// key gets block 0. Throws EngineError for a block size below 1.
// Every row's maximum in `keyBlock` (rows that do not see it: their last visible block).
InputDesign oneBlockDesign(const ProblemSpec& spec, int blockSize, int keyBlock, double sharpness);
// Row i in block i · nBlocks / n_q; causal: the block of the row's own key (bottom right).
InputDesign diagonalDesign(const ProblemSpec& spec, int blockSize, double sharpness);
// Every row in its last visible block: the rescale as late as it can come.
InputDesign lastBlockDesign(const ProblemSpec& spec, int blockSize, double sharpness);
// Each row in a block drawn uniformly from those it sees, from spec.seed.
InputDesign randomDesign(const ProblemSpec& spec, int blockSize, double sharpness);

// Where the running maximum rose after the row's sum had become positive, and the factor
// exp(m_old − m_new) < 1 the engine applied there (the rescale firing).
struct RescaleEvent {
    int keyBlock = 0;
    double factor = 1.0;
    bool operator==(const RescaleEvent&) const = default;
};

// What a row's scores realise under the run's tiling, from the engine (core/tile_update.h).
struct RealisedRow {
    int maxKey = -1;   // the key of the row's largest score (the first, on a tie); -1: none seen
    int maxBlock = -1; // its key block of options.blockCols keys
    double gap = 0;    // largest score minus the next largest; +inf when the row sees one key
    std::vector<RescaleEvent> rescales;
};

// Runs the online softmax over every tile of `problem` with the options' block sizes (rescale
// and running maximum on, in double precision) and reads each row's maximum, the gap to its next
// score and the blocks where its rescale fires. O(n_q · n_k · d), memory O(tile).
std::vector<RealisedRow> realisedMaxima(const Problem& problem, const FlashOptions& options);

// The first row whose realised maximum is not in its designed block (of design.blockSize keys)
// or whose rescale does not fire exactly once, in the block of `blockCols` keys holding that
// maximum (never, when that is the row's first block); -1 when every row realises its design.
// `realised` comes from realisedMaxima with options.blockCols == blockCols. Rows that see no key
// are skipped; without a design, or with `realised` not one per row, row 0.
int firstUnrealisedRow(const ProblemSpec& spec, const std::vector<RealisedRow>& realised,
                       int blockCols);

} // namespace flashviz
