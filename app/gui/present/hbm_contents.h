#pragma once
// What HBM holds at a step, the one answer the memory stage and the matrices view both draw:
// which matrices are stored there, their shapes, which parts of each are written yet (S and P
// by standard attention, O block by block, the debug copy of S tile by tile), and where those
// parts fall in a matrix drawn at some rectangle. Parts are in element coordinates
// (x = column, y = row).
#include "session/scene.h"
#include "style/theme.h"

#include <QImage>
#include <QRect>
#include <QRectF>

#include <vector>

namespace flashviz::gui {

// M and L: the paper order's running maximum m and sum ℓ of every query row, kept in HBM
// between key blocks (one column each). The backward's: the upstream gradient dO, the forward's
// log-sum-exp L = m + log ℓ and the pre-pass's D = rowsum(dO ∘ O) (a column each), and the
// gradients dQ, dK, dV.
enum class MatrixId { Q, K, V, O, S, P, M, L, dO, LogSumExp, RowDot, dQ, dK, dV };

struct HbmMatrix {
    MatrixId id = MatrixId::Q;
    int rows = 0, cols = 0;
    // FlashAttention's S (and P) without the debug copy, the backward's S (and P unless the
    // forward stored it): only the current tile exists, on chip.
    bool neverStored = false;
    std::vector<QRect> held;            // the parts in HBM once the step is done
    std::vector<QRect> heldWhileMoving; // the parts in HBM while the step's change animates
    // The paper order writes O_i, m_i, ℓ_i back after every key block, the backward dQ_i after
    // every tile: the parts that hold such a running value (not yet final, drawn as written but
    // not as the final image), once the step is done and while it animates.
    std::vector<QRect> running, runningWhileMoving;
    // Standard attention's S and P at the step that writes them: they fill in row after row as
    // the step animates.
    bool fillsWhileMoving = false;

    QRect whole() const { return {0, 0, cols, rows}; }
    double bytes() const { return double(rows) * double(cols) * double(kBytesPerElement); }
};

// A part of an HBM matrix outlined as touched by the step.
struct Highlight {
    MatrixId matrix = MatrixId::Q;
    QRect part;
};

HbmMatrix hbmMatrix(const Scene& scene, const StepInfo& info, MatrixId id);
// The colour a matrix is drawn in, everywhere.
QColor matrixColour(const Theme& theme, MatrixId id);
// The scene's image of a matrix as HBM holds it (S and P: standard attention's or the debug
// copy of S; the backward's dO and gradients; a null image for the columns m, ℓ, L and D).
const QImage& hbmImage(const Scene& scene, MatrixId id);

// Where the element region `part` of a rows × cols matrix drawn in `rect` falls (the rectangle
// itself for the whole matrix).
QRectF elementRect(const QRectF& rect, int rows, int cols, const QRect& part);
// The same region in the matrix's image (a null rectangle, meaning all of it, for the whole).
QRectF imageRegion(const QImage& image, int rows, int cols, const QRect& part);

// A part of a matrix's image and where it is drawn.
struct ImagePart {
    QRectF target;
    QRectF source;
};
std::vector<ImagePart> placeParts(const QRectF& rect, const QImage& image, int rows, int cols,
                                  const std::vector<QRect>& parts);

} // namespace flashviz::gui
