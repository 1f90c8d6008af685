#include "present/hbm_contents.h"

#include "core/tiling.h"

#include <algorithm>

namespace flashviz::gui {

namespace {

std::vector<QRect> rowParts(const std::vector<Range>& runs, int cols) {
    std::vector<QRect> parts;
    for (const Range& rows : runs)
        parts.emplace_back(0, rows.begin, cols, rows.size());
    return parts;
}

// Standard attention writes S and P whole, each at one step: held once that step is done.
std::vector<QRect> wholeOnceWritten(const HbmMatrix& m, int writeStep, int step, bool whileMoving) {
    const bool written = writeStep >= 0 && (whileMoving ? step > writeStep : step >= writeStep);
    if (!written) return {};
    return {m.whole()};
}

// The rows of `all` not in `finished` (both sorted runs of rows).
std::vector<Range> rowsOutside(const std::vector<Range>& finished, int all) {
    std::vector<Range> out;
    int at = 0;
    for (const Range& r : finished) {
        if (r.begin > at) out.push_back({at, r.begin});
        at = std::max(at, r.end);
    }
    if (at < all) out.push_back({at, all});
    return out;
}

// The paper order writes O = 0, m = −∞, ℓ = 0 for every row at step 0 and each block's back
// after every key block: from then on every row is held, as a running value until it is final.
void paperOrderRunning(HbmMatrix& m, const Scene& scene, const StepInfo& info) {
    if (scene.settings.options.loopOrder != LoopOrder::KeyValueOuter || !scene.isFlash()) return;
    const bool stats = m.id == MatrixId::M || m.id == MatrixId::L;
    const auto running = [&](bool whileMoving) {
        if (whileMoving && info.index == 0) return std::vector<QRect>{}; // being written
        // m and ℓ are running values throughout; O only until its rows are final.
        const std::vector<Range> final =
            stats ? std::vector<Range>{} : finishedRowRuns(scene, info.index, whileMoving);
        return rowParts(rowsOutside(final, m.rows), m.cols);
    };
    m.running = running(false);
    m.runningWhileMoving = running(true);
}

// Done at `step`: once the step is over, and while it animates only if it was done before.
bool doneAt(int doneStep, int step, bool whileMoving) {
    return doneStep >= 0 && (whileMoving ? step > doneStep : step >= doneStep);
}

// The backward's first steps (the pre-pass, dQ = 0) write whole matrices: the step of `kind`.
int firstStepOf(const Scene& scene, StepKind kind) {
    for (int s = 0; s < scene.stepCount(); ++s)
        if (scene.engine->info(s).kind == kind) return s;
    return -1;
}

// The rows of the blocks (of `blockSize` out of `total` rows) whose step in `doneSteps` is done,
// as runs.
std::vector<Range> doneBlockRows(const std::vector<int>& doneSteps, int blockSize, int total,
                                 int step, bool whileMoving) {
    std::vector<Range> runs;
    for (std::size_t b = 0; b < doneSteps.size(); ++b) {
        if (!doneAt(doneSteps[b], step, whileMoving)) continue;
        const Range rows = blockRange(int(b), blockSize, total);
        if (!runs.empty() && runs.back().end == rows.begin)
            runs.back().end = rows.end;
        else
            runs.push_back(rows);
    }
    return runs;
}

// The backward's matrices: what the forward left (Q, K, V, O, L and with storeWeights P) and
// dO are there from the start; D from the pre-pass on; dQ from dQ = 0 on, each query block's
// rows a running value until its last key block; dK_j, dV_j once their key block stores them.
void backwardContents(HbmMatrix& m, const Scene& scene, const StepInfo& info) {
    const ProblemSpec& spec = scene.settings.spec;
    const BackwardScene& bw = *scene.backward;
    const FlashOptions& options = scene.settings.options;
    const auto held = [&](const auto& parts) {
        m.held = parts(false);
        m.heldWhileMoving = parts(true);
    };
    switch (m.id) {
    case MatrixId::RowDot: {
        const int written = firstStepOf(scene, StepKind::ComputeRowDots);
        held([&](bool moving) {
            return doneAt(written, info.index, moving) ? std::vector<QRect>{m.whole()}
                                                       : std::vector<QRect>{};
        });
        break;
    }
    case MatrixId::dQ: {
        const int zeroed = firstStepOf(scene, StepKind::InitialiseQueryGradient);
        // A query block that sees no key keeps dQ_i = 0, final once written.
        std::vector<int> finalSteps = bw.queryBlockDoneStep;
        for (int& step : finalSteps)
            if (step < 0) step = zeroed;
        held([&](bool moving) {
            return rowParts(
                doneBlockRows(finalSteps, options.blockRows, spec.queries, info.index, moving),
                m.cols);
        });
        const auto running = [&](bool moving) {
            if (!doneAt(zeroed, info.index, moving)) return std::vector<QRect>{};
            return rowParts(rowsOutside(doneBlockRows(finalSteps, options.blockRows, spec.queries,
                                                      info.index, moving),
                                        m.rows),
                            m.cols);
        };
        m.running = running(false);
        m.runningWhileMoving = running(true);
        break;
    }
    case MatrixId::dK:
    case MatrixId::dV:
        held([&](bool moving) {
            return rowParts(doneBlockRows(bw.keyBlockDoneStep, options.blockCols, spec.keys,
                                          info.index, moving),
                            m.cols);
        });
        break;
    case MatrixId::S:
        m.neverStored = true;
        break;
    case MatrixId::P:
        m.neverStored = !options.backward.storeWeights;
        if (!m.neverStored) held([&](bool) { return std::vector<QRect>{m.whole()}; });
        break;
    default: // read only: the inputs, dO and what the forward saved
        held([&](bool) { return std::vector<QRect>{m.whole()}; });
        break;
    }
}

} // namespace

HbmMatrix hbmMatrix(const Scene& scene, const StepInfo& info, MatrixId id) {
    const ProblemSpec& spec = scene.settings.spec;
    HbmMatrix m;
    m.id = id;
    switch (id) {
    case MatrixId::dO:
    case MatrixId::dQ:
        m.rows = spec.queries;
        m.cols = spec.headDim;
        break;
    case MatrixId::dK:
    case MatrixId::dV:
        m.rows = spec.keys;
        m.cols = spec.headDim;
        break;
    case MatrixId::LogSumExp:
    case MatrixId::RowDot:
        m.rows = spec.queries;
        m.cols = 1;
        break;
    case MatrixId::Q:
    case MatrixId::K:
    case MatrixId::V:
        m.rows = id == MatrixId::Q ? spec.queries : spec.keys;
        m.cols = spec.headDim;
        m.held = m.heldWhileMoving = {m.whole()};
        break;
    case MatrixId::O:
        m.rows = spec.queries;
        m.cols = spec.headDim;
        m.held = rowParts(finishedRowRuns(scene, info.index), m.cols);
        m.heldWhileMoving = rowParts(finishedRowRuns(scene, info.index, true), m.cols);
        paperOrderRunning(m, scene, info);
        break;
    case MatrixId::M:
    case MatrixId::L:
        m.rows = spec.queries;
        m.cols = 1;
        paperOrderRunning(m, scene, info);
        break;
    case MatrixId::S:
    case MatrixId::P: {
        m.rows = spec.queries;
        m.cols = spec.keys;
        if (scene.isFlash()) {
            m.neverStored = !scene.settings.options.keepFullScores || id == MatrixId::P;
            if (!m.neverStored) m.held = m.heldWhileMoving = storedScoreRegions(scene, info);
            break;
        }
        const int writeStep = id == MatrixId::S ? scene.writeScoresStep : scene.writeWeightsStep;
        m.held = wholeOnceWritten(m, writeStep, info.index, false);
        m.heldWhileMoving = wholeOnceWritten(m, writeStep, info.index, true);
        m.fillsWhileMoving = info.index == writeStep;
        break;
    }
    }
    if (scene.isBackward()) backwardContents(m, scene, info);
    return m;
}

QColor matrixColour(const Theme& theme, MatrixId id) {
    switch (id) {
    case MatrixId::Q:
        return theme.q;
    case MatrixId::K:
        return theme.k;
    case MatrixId::V:
        return theme.v;
    case MatrixId::O:
        return theme.o;
    case MatrixId::S:
        return theme.s;
    case MatrixId::P:
        return theme.p;
    case MatrixId::M:
    case MatrixId::L:
        return theme.accent;
    case MatrixId::dO:
        return theme.dO;
    case MatrixId::LogSumExp:
        return theme.lse;
    case MatrixId::RowDot:
        return theme.delta;
    case MatrixId::dQ:
        return theme.dQ;
    case MatrixId::dK:
        return theme.dK;
    case MatrixId::dV:
        return theme.dV;
    }
    return theme.text;
}

const QImage& hbmImage(const Scene& scene, MatrixId id) {
    switch (id) {
    case MatrixId::Q:
        return scene.qImage;
    case MatrixId::K:
        return scene.kImage;
    case MatrixId::V:
        return scene.vImage;
    case MatrixId::O:
        return scene.outputImage;
    case MatrixId::S:
        return scene.scoresImage;
    case MatrixId::P:
        return scene.weightsImage;
    case MatrixId::dO:
        if (scene.backward) return scene.backward->dOImage;
        break;
    case MatrixId::dQ:
        if (scene.backward) return scene.backward->dqImage;
        break;
    case MatrixId::dK:
        if (scene.backward) return scene.backward->dkImage;
        break;
    case MatrixId::dV:
        if (scene.backward) return scene.backward->dvImage;
        break;
    case MatrixId::M:
    case MatrixId::L:
        break; // running values only: no image of final values
    case MatrixId::LogSumExp:
        if (scene.backward) return scene.backward->lseImage;
        break;
    case MatrixId::RowDot:
        if (scene.backward) return scene.backward->deltaImage;
        break;
    }
    static const QImage none;
    return none;
}

QRectF elementRect(const QRectF& r, int rows, int cols, const QRect& part) {
    if (part == QRect(0, 0, cols, rows)) return r;
    return {r.left() + r.width() * part.left() / cols, r.top() + r.height() * part.top() / rows,
            r.width() * part.width() / cols, r.height() * part.height() / rows};
}

QRectF imageRegion(const QImage& image, int rows, int cols, const QRect& part) {
    if (part == QRect(0, 0, cols, rows)) return {};
    const qreal ix = qreal(image.width()) / cols, iy = qreal(image.height()) / rows;
    return {ix * part.left(), iy * part.top(), ix * part.width(), iy * part.height()};
}

std::vector<ImagePart> placeParts(const QRectF& rect, const QImage& image, int rows, int cols,
                                  const std::vector<QRect>& parts) {
    std::vector<ImagePart> placed;
    for (const QRect& part : parts)
        placed.push_back(
            {elementRect(rect, rows, cols, part), imageRegion(image, rows, cols, part)});
    return placed;
}

} // namespace flashviz::gui
