#include "core/input_design.h"

#include "core/errors.h"
#include "core/tile_update.h"
#include "core/tiling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <string>

namespace flashviz {

namespace {

[[noreturn]] void refuse(const std::string& why, ErrorKind kind = ErrorKind::InvalidArgument) {
    throw EngineError(kind, "input design: " + why);
}

// A design that no longer fits the problem: its sizes, mask or d changed under it (the causal
// switch, d or Bc changed with a design in force, a session edited by hand).
[[noreturn]] void refuseForProblem(const std::string& why,
                                   ErrorKind kind = ErrorKind::InvalidArgument) {
    refuse(why + ": design the inputs again, or choose Generated in the settings panel", kind);
}

std::string number(double value) {
    std::ostringstream text;
    text.precision(6);
    text << value;
    return text.str();
}

std::string rowText(int row) {
    return "row " + std::to_string(row);
}

// The key a row's maximum is put on: the first key of its block, key 1 in block 0 (key 0 is the
// reference, scoring 0 in every row), key 0 itself where block 0 has no other key for the row;
// -1 when the row sees no key.
int targetKeyOf(int block, int blockSize, int lastKey) {
    if (lastKey < 0) return -1;
    if (block > 0) return block * blockSize;
    return blockSize >= 2 && lastKey >= 1 ? 1 : 0;
}

// Per row its target key, and the target keys other than key 0 in order: each gets a code.
struct Targets {
    std::vector<int> keyOfRow;
    std::vector<char> referenceIsMax; // the row's maximum is key 0 and it sees other keys
    std::vector<int> codedKeys;       // sorted, distinct, all > 0
    bool anyReferenceMax = false;
    int codeOf(int key) const {
        return int(std::lower_bound(codedKeys.begin(), codedKeys.end(), key) - codedKeys.begin());
    }
};

Targets targetsOf(const ProblemSpec& spec) {
    const InputDesign& design = *spec.design;
    Targets t;
    t.keyOfRow.resize(std::size_t(spec.queries));
    t.referenceIsMax.resize(std::size_t(spec.queries));
    for (int row = 0; row < spec.queries; ++row) {
        const int last = lastVisibleKey(row, spec.queries, spec.keys, spec.causal);
        const int key = targetKeyOf(design.rows[std::size_t(row)].keyBlock, design.blockSize, last);
        t.keyOfRow[std::size_t(row)] = key;
        if (key > 0) t.codedKeys.push_back(key);
        const bool reference = key == 0 && last >= 1;
        t.referenceIsMax[std::size_t(row)] = reference;
        t.anyReferenceMax = t.anyReferenceMax || reference;
    }
    std::sort(t.codedKeys.begin(), t.codedKeys.end());
    t.codedKeys.erase(std::unique(t.codedKeys.begin(), t.codedKeys.end()), t.codedKeys.end());
    return t;
}

// The position codes of the target keys: ±e_k (two per dimension, no two of them closer than
// orthogonal) while they fit, else spread over circles in pairs of dimensions (and the odd
// dimension left as a line holding two).
struct CodeBook {
    int codes = 0;
    int dims = 0;
    bool circles = false;
    int lineCodes = 0;   // circles: the codes on the leftover line
    int circleCount = 0; // circles: dims / 2

    static int crossDims(int codes) { return (codes + 1) / 2; }

    int codesOnCircle(int circle) const {
        const int rest = codes - lineCodes;
        return rest / circleCount + (circle < rest % circleCount ? 1 : 0);
    }
    // Code c written into out[0 .. dims).
    void write(int c, double* out) const {
        if (!circles || c < lineCodes) {
            const int dim = circles ? dims - 1 : c / 2;
            out[dim] = c % 2 == 0 ? 1.0 : -1.0;
            return;
        }
        const int onCircles = c - lineCodes;
        const int circle = onCircles % circleCount;
        const double angle =
            2.0 * std::numbers::pi * (onCircles / circleCount) / codesOnCircle(circle);
        out[2 * circle] = std::cos(angle);
        out[2 * circle + 1] = std::sin(angle);
    }
    // The largest dot product of code c with another code (-1 when it has no other).
    double coherence(int c) const {
        const double elsewhere = codes > 2 ? 0.0 : -1.0; // other dimensions are orthogonal
        if (!circles || c < lineCodes) return elsewhere;
        const int circle = (c - lineCodes) % circleCount;
        const int here = codesOnCircle(circle);
        const double neighbour = here >= 2 ? std::cos(2.0 * std::numbers::pi / here) : -1.0;
        return std::max(neighbour, codes > here ? 0.0 : -1.0);
    }
};

// How a row points at its code: a target `length` along it and `lift` taken off every target
// key (the height dimension), so that its own target scores `sharpness` and the nearest other
// target at most 0: with codes no closer than orthogonal no lift is needed (those score exactly
// 0 or below), with codes at cosine mu the nearest scores −sharpness.
struct Pointer {
    double length = 0;
    double lift = 0;
};
Pointer pointerFor(double sharpness, double coherence) {
    if (coherence <= 0) return {sharpness, 0.0};
    const double length = 2.0 * sharpness / (1.0 - coherence);
    return {length, length * (1.0 + coherence) / 2.0};
}

// The dimensions of Q̃ and K̃ (S = Q̃ K̃ᵀ): [anchor] [height] codes [noise].
struct Plan {
    bool anchor = false; // the other keys' level: −1 in K̃, the row's depth in Q̃
    bool height = false; // every target key's 1, the row's −lift
    CodeBook book;
    int noiseDims = 0;
    int heightDim() const { return anchor ? 1 : 0; }
    int codeDim() const { return heightDim() + (height ? 1 : 0); }
    int noiseDim() const { return codeDim() + book.dims; }
};

// The d the plain codes (±e_k) need for this design: what a refusal suggests.
int plainDims(const Targets& t) {
    const int codes = int(t.codedKeys.size());
    return std::max(1, CodeBook::crossDims(codes) + (t.anyReferenceMax ? (codes >= 2 ? 2 : 1) : 0));
}

Plan planFor(const ProblemSpec& spec, const Targets& t) {
    const int d = spec.headDim;
    const int codes = int(t.codedKeys.size());
    Plan plan;
    plan.book.codes = codes;
    // A row whose maximum is key 0 pushes the other keys down (the anchor) and, with two or more
    // codes that cannot all point away from one direction, the target keys (the height).
    const bool referenceHeight = t.anyReferenceMax && codes >= 2;
    const int plain =
        CodeBook::crossDims(codes) + (t.anyReferenceMax ? 1 : 0) + (referenceHeight ? 1 : 0);
    if (plain <= d) {
        plan.book.dims = CodeBook::crossDims(codes);
        plan.anchor = t.anyReferenceMax;
        plan.height = referenceHeight;
        const int spare = d - plain;
        if (plan.anchor)
            plan.noiseDims = spare;
        else if (spare >= 2) { // the noise needs the anchor to stay below key 0
            plan.anchor = true;
            plan.noiseDims = spare - 1;
        }
        return plan;
    }
    plan.anchor = t.anyReferenceMax;
    plan.height = true;
    plan.book.circles = true;
    plan.book.dims = d - 1 - (plan.anchor ? 1 : 0);
    const std::string need = "; d = " + std::to_string(plainDims(t)) +
                             " holds it exactly, or fewer different blocks (or larger ones) fit";
    const std::string what = "the rows' maxima sit at " + std::to_string(codes) +
                             " different keys, which d = " + std::to_string(d);
    if (plan.book.dims < 2)
        refuseForProblem(what + " cannot tell apart" + need, ErrorKind::LimitExceeded);
    plan.book.circleCount = plan.book.dims / 2;
    plan.book.lineCodes = plan.book.dims % 2 == 1 ? 2 : 0;
    double largest = 0;
    for (int row = 0; row < spec.queries; ++row) {
        const int key = t.keyOfRow[std::size_t(row)];
        if (key <= 0) continue;
        const Pointer p = pointerFor(spec.design->rows[std::size_t(row)].sharpness,
                                     plan.book.coherence(t.codeOf(key)));
        largest = std::max(largest, p.length + p.lift); // the opposite code's score, negated
    }
    if (largest > kMaxDesignedScore)
        refuseForProblem(what + " packs so tightly that scores would reach " + number(-largest) +
                             ", past the " + number(kMaxDesignedScore) + " a design may use" + need,
                         ErrorKind::LimitExceeded);
    return plan;
}

} // namespace

int visibleDesignBlocks(const ProblemSpec& spec, int blockSize, int row) {
    const int last = lastVisibleKey(row, spec.queries, spec.keys, spec.causal);
    return last < 0 ? 0 : last / blockSize + 1;
}

std::optional<std::string> sharpnessRefusal(double sharpness) {
    if (!std::isfinite(sharpness)) return "the sharpness is not a finite number";
    if (sharpness < kMinSharpness || sharpness > kMaxSharpness)
        return "sharpness " + number(sharpness) + " is outside " + number(kMinSharpness) + " to " +
               number(kMaxSharpness) + " logits";
    return std::nullopt;
}

void validateDesign(const ProblemSpec& spec) {
    if (!spec.design) return;
    const InputDesign& design = *spec.design;
    if (design.blockSize < 1 || design.blockSize > kMaxSequenceLength)
        refuse("blockSize " + std::to_string(design.blockSize) + " must be from 1 to " +
               std::to_string(kMaxSequenceLength));
    if (int(design.rows.size()) != spec.queries)
        refuseForProblem(std::to_string(design.rows.size()) + " rows for n_q = " +
                         std::to_string(spec.queries) + " queries; a design has one row per query");
    const int blocks = blockCount(spec.keys, design.blockSize);
    for (int row = 0; row < spec.queries; ++row) {
        const RowMaximum& r = design.rows[std::size_t(row)];
        if (r.keyBlock < 0 || r.keyBlock >= blocks)
            refuseForProblem(rowText(row) + ": key block " + std::to_string(r.keyBlock) +
                             " is not one of the " + std::to_string(blocks) + " blocks (0 to " +
                             std::to_string(blocks - 1) +
                             ") of n_k = " + std::to_string(spec.keys) + " keys in blocks of " +
                             std::to_string(design.blockSize));
        const int visible = visibleDesignBlocks(spec, design.blockSize, row);
        if (visible == 0 && r.keyBlock != 0)
            refuseForProblem(rowText(row) +
                             " sees no key under the causal mask: its block must be 0, not " +
                             std::to_string(r.keyBlock));
        if (visible > 0 && r.keyBlock >= visible)
            refuseForProblem(rowText(row) + ": key block " + std::to_string(r.keyBlock) +
                             " lies past what the row sees under the causal mask (blocks 0 to " +
                             std::to_string(visible - 1) + ")");
        if (const std::optional<std::string> why = sharpnessRefusal(r.sharpness))
            refuse(rowText(row) + ": " + *why);
    }
    (void)planFor(spec, targetsOf(spec));
}

Problem designedProblem(const ProblemSpec& spec) {
    if (!spec.design) refuse("the problem has no design");
    validate(spec); // validateDesign among its checks
    const int nq = spec.queries, nk = spec.keys, d = spec.headDim;
    // The gaussian pattern's draws in its order: Q, K (here the noise), then V as it has it.
    NormalGenerator rng(spec.seed);
    const Matrix qDraws = rng.matrix(nq, d, 1.0 / std::sqrt(double(d)));
    const Matrix kDraws = rng.matrix(nk, d, 1.0 / std::sqrt(double(d)));
    Problem p{spec, Matrix::Zero(nq, d), Matrix::Zero(nk, d), rng.matrix(nk, d, 1.0), {}};

    const Targets t = targetsOf(spec);
    const Plan plan = planFor(spec, t);
    const int noise = plan.noiseDims;
    // Noise scores q·k of the other keys lie within ±kDesignNoiseLogits; the anchor takes a
    // little more off, so that they stay strictly below key 0's 0.
    const std::vector<char> isTarget = [&] {
        std::vector<char> target(std::size_t(nk), 0);
        for (int key : t.codedKeys)
            target[std::size_t(key)] = 1;
        return target;
    }();
    double spread = 0;
    if (noise > 0) {
        const double qNorm = qDraws.rightCols(noise).rowwise().norm().maxCoeff();
        double kNorm = 0;
        for (int j = 1; j < nk; ++j)
            if (!isTarget[std::size_t(j)])
                kNorm = std::max(kNorm, kDraws.row(j).tail(noise).norm());
        if (qNorm > 0 && kNorm > 0) spread = std::sqrt(kDesignNoiseLogits / (qNorm * kNorm));
    }
    const double depth = spread > 0 ? kDesignNoiseLogits * (1.0 + 1e-3) : 0.0;

    // K̃: key 0 all zero; target keys their code (and the height 1); the others the anchor's −1
    // and their noise.
    for (int j = 1; j < nk; ++j) {
        auto k = p.k.row(j);
        if (isTarget[std::size_t(j)]) {
            if (plan.height) k(plan.heightDim()) = 1.0;
            plan.book.write(t.codeOf(j), k.data() + plan.codeDim());
        } else {
            if (plan.anchor) k(0) = -1.0;
            if (noise > 0) k.tail(noise) = spread * kDraws.row(j).tail(noise);
        }
    }
    // Q̃: the row's pointer at its code, its depth under the anchor, its noise.
    std::vector<double> code(std::size_t(plan.book.dims));
    for (int row = 0; row < nq; ++row) {
        auto q = p.q.row(row);
        if (noise > 0) q.tail(noise) = spread * qDraws.row(row).tail(noise);
        const double sharpness = spec.design->rows[std::size_t(row)].sharpness;
        const int key = t.keyOfRow[std::size_t(row)];
        if (plan.anchor) q(0) = depth;
        if (t.referenceIsMax[std::size_t(row)]) {
            // Key 0 is the maximum: every other key goes `sharpness` below it.
            q(0) += sharpness;
            if (plan.height)
                q(plan.heightDim()) = -sharpness;
            else if (!t.codedKeys.empty()) { // one code: point away from it
                std::fill(code.begin(), code.end(), 0.0);
                plan.book.write(0, code.data());
                for (int c = 0; c < plan.book.dims; ++c)
                    q(plan.codeDim() + c) = -sharpness * code[std::size_t(c)];
            }
            continue;
        }
        if (key <= 0) continue; // sees no key, or key 0 alone
        const int c = t.codeOf(key);
        const Pointer pointer = pointerFor(sharpness, plan.book.coherence(c));
        std::fill(code.begin(), code.end(), 0.0);
        plan.book.write(c, code.data());
        for (int dim = 0; dim < plan.book.dims; ++dim)
            q(plan.codeDim() + dim) = pointer.length * code[std::size_t(dim)];
        if (plan.height) q(plan.heightDim()) = -pointer.lift;
    }
    // S = scale · Q Kᵀ = Q̃ K̃ᵀ: the scale split evenly between Q and K.
    const double unscale = 1.0 / std::sqrt(p.scale());
    p.q *= unscale;
    p.k *= unscale;
    return p;
}

namespace {

// Row `row`'s block under `pick`, kept inside what the row sees (block 0 when it sees nothing).
template <typename Pick>
InputDesign designFor(const ProblemSpec& spec, int blockSize, double sharpness, Pick pick) {
    if (blockSize < 1) refuse("blockSize " + std::to_string(blockSize) + " must be at least 1");
    InputDesign design;
    design.blockSize = blockSize;
    design.rows.resize(std::size_t(std::max(spec.queries, 0)));
    for (int row = 0; row < spec.queries; ++row) {
        const int visible = visibleDesignBlocks(spec, blockSize, row);
        design.rows[std::size_t(row)] = {
            visible == 0 ? 0 : std::clamp(pick(row, visible), 0, visible - 1), sharpness};
    }
    return design;
}

} // namespace

InputDesign oneBlockDesign(const ProblemSpec& spec, int blockSize, int keyBlock, double sharpness) {
    return designFor(spec, blockSize, sharpness, [&](int, int) { return keyBlock; });
}

InputDesign diagonalDesign(const ProblemSpec& spec, int blockSize, double sharpness) {
    const int blocks = blockCount(spec.keys, std::max(blockSize, 1));
    return designFor(spec, blockSize, sharpness, [&](int row, int visible) {
        if (spec.causal) return visible - 1; // the block of the row's own key
        return int(std::int64_t(row) * blocks / spec.queries);
    });
}

InputDesign lastBlockDesign(const ProblemSpec& spec, int blockSize, double sharpness) {
    return designFor(spec, blockSize, sharpness, [](int, int visible) { return visible - 1; });
}

InputDesign randomDesign(const ProblemSpec& spec, int blockSize, double sharpness) {
    // Its own stream of the seed (std::uniform_int_distribution differs between libraries).
    std::mt19937_64 engine(spec.seed ^ 0x9e3779b97f4a7c15ULL);
    return designFor(spec, blockSize, sharpness, [&](int, int visible) {
        const double unit = double(engine() >> 11) * 0x1.0p-53; // [0, 1)
        return int(unit * visible);
    });
}

std::vector<RealisedRow> realisedMaxima(const Problem& problem, const FlashOptions& options) {
    validate(options);
    FlashOptions run = options;
    run.rescale = true;
    run.runningMax = true;
    run.keepFullScores = false;
    const ProblemSpec& spec = problem.spec;
    constexpr double none = -std::numeric_limits<double>::infinity();
    std::vector<RealisedRow> out(std::size_t(spec.queries));
    std::vector<double> best(out.size(), none), next(out.size(), none);
    for (int i = 0; i < blockCount(spec.queries, run.blockRows); ++i) {
        const Range rows = blockRange(i, run.blockRows, spec.queries);
        RowState<double> state;
        state.reset(rows.size(), spec.headDim, true);
        TileWorkspace<double> workspace;
        TileDetail<double> detail;
        const int visible =
            visibleKeyBlocks(rows, spec.queries, spec.keys, run.blockCols, spec.causal);
        for (int j = 0; j < visible; ++j) {
            const Range cols = blockRange(j, run.blockCols, spec.keys);
            updateTile<double>(state, problem.q.middleRows(rows.begin, rows.size()),
                               problem.k.middleRows(cols.begin, cols.size()),
                               problem.v.middleRows(cols.begin, cols.size()), problem.scale(),
                               {rows, cols, spec.queries, spec.keys, spec.causal}, run, workspace,
                               &detail);
            for (int r = 0; r < rows.size(); ++r) {
                const std::size_t row = std::size_t(rows.begin + r);
                for (int c = 0; c < cols.size(); ++c) {
                    const double s = detail.scores(r, c);
                    if (!std::isfinite(s)) continue; // masked
                    if (s > best[row]) {
                        next[row] = best[row];
                        best[row] = s;
                        out[row].maxKey = cols.begin + c;
                    } else if (s > next[row])
                        next[row] = s;
                }
                // As the step engine's first rescale: the maximum rose over a positive sum.
                if (detail.correction(r) < 1.0 && detail.lOld(r) > 0.0)
                    out[row].rescales.push_back({j, detail.correction(r)});
            }
        }
    }
    for (std::size_t row = 0; row < out.size(); ++row) {
        RealisedRow& r = out[row];
        if (r.maxKey < 0) continue;
        r.maxBlock = r.maxKey / run.blockCols;
        r.gap = next[row] == none ? std::numeric_limits<double>::infinity() : best[row] - next[row];
    }
    return out;
}

int firstUnrealisedRow(const ProblemSpec& spec, const std::vector<RealisedRow>& realised,
                       int blockCols) {
    if (!spec.design || realised.size() != spec.design->rows.size()) return 0;
    const InputDesign& design = *spec.design;
    for (int row = 0; row < spec.queries; ++row) {
        if (lastVisibleKey(row, spec.queries, spec.keys, spec.causal) < 0) continue;
        const RealisedRow& r = realised[std::size_t(row)];
        const RowMaximum& wanted = design.rows[std::size_t(row)];
        if (r.maxKey < 0 || r.maxKey / design.blockSize != wanted.keyBlock) return row;
        const int runBlock = r.maxKey / blockCols;
        const bool firesThere =
            runBlock == 0 ? r.rescales.empty()
                          : r.rescales.size() == 1 && r.rescales.front().keyBlock == runBlock;
        if (!firesThere) return row;
        if (r.gap < wanted.sharpness * (1.0 - 1e-9) - 1e-9) return row;
    }
    return -1;
}

} // namespace flashviz
