#include "present/hbm_contents.h"

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

} // namespace

HbmMatrix hbmMatrix(const Scene& scene, const StepInfo& info, MatrixId id) {
    const ProblemSpec& spec = scene.settings.spec;
    HbmMatrix m;
    m.id = id;
    switch (id) {
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
    return m;
}

QColor matrixColour(const Theme& theme, MatrixId id) {
    switch (id) {
    case MatrixId::Q: return theme.q;
    case MatrixId::K: return theme.k;
    case MatrixId::V: return theme.v;
    case MatrixId::O: return theme.o;
    case MatrixId::S: return theme.s;
    case MatrixId::P: return theme.p;
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
    }
    return scene.qImage;
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
