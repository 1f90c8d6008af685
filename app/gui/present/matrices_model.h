#pragma once
// The matrices view's model: Q, K, V and O as HBM holds them at one frame, the n × n score
// matrix (never stored by FlashAttention, whose current tile alone exists, on chip; stored by
// standard attention and by the debug copy), the active tiles, the rows the check finds wrong,
// and where each goes in a given rectangle. The backward: Q, K, V, O, dO and the final
// gradients dQ, dK, dV, faded where they are not final yet at the frame's step. Plain values:
// the view paints them.
#include "present/hbm_contents.h"
#include "style/heatmap.h"
#include "style/theme.h"

#include <QPolygonF>
#include <QString>

#include <optional>
#include <vector>

namespace flashviz::gui {

struct MatrixPanel {
    HbmMatrix hbm;
    QString title, titleWithShape; // "Q", "Q  8×4"
    QImage image;                  // the scene's, as HBM holds it
    // The numbers written into the cells of the parts held, when the cells are large enough to
    // read them; owned by the scene (nullptr: none).
    const Matrix* values = nullptr;
    Colouring colouring = Colouring::Diverging;
    double valueScale = 0;
    // The backward's gradients are drawn final everywhere: faded in these parts, which are not
    // final in HBM yet (the held parts are).
    std::vector<QRect> faded;
};

// FlashAttention's current tile of S, on chip (where it would sit in S).
struct ScoreTile {
    QRect part;
    QImage image;
    Matrix values;
    double scale = 0;
};

// The rows of one matrix the check finds wrong, marked beside it.
struct WrongRows {
    MatrixId beside = MatrixId::O;
    std::vector<int> rows;
    std::vector<Range> runs; // the same, as runs
};

struct MatricesModel {
    std::vector<MatrixPanel> panels; // left to right
    std::optional<ScoreTile> scoreTile;
    std::vector<Highlight> highlights; // the active tiles
    // O's (the forward, and the backward's forward), dQ's, dK's and dV's: only those with rows
    // to mark.
    std::vector<WrongRows> wrongRows;
    QString note;

    const MatrixPanel* panel(MatrixId id) const;
};

MatricesModel makeMatricesModel(const Frame& frame);

struct PanelPlace {
    QRectF rect, titleRect;
    bool titleFits = false; // room for the title with the shape
    std::vector<ImagePart> held;
};

struct MatricesLayout {
    std::vector<PanelPlace> panels; // as MatricesModel::panels
    QRectF scoreTile;
    std::vector<QRectF> highlights; // as MatricesModel::highlights
    // Beside O (the backward's dQ, dK, dV): a mark for each wrong row, or where rows are too
    // thin for one, a strip per run.
    std::vector<QPolygonF> wrongRowMarks;
    std::vector<QRectF> wrongRowStrips;
    QRectF note;
};

MatricesLayout layOutMatrices(const MatricesModel& model, const QRectF& bounds, const Theme& theme);

} // namespace flashviz::gui
