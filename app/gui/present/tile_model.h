#pragma once
// The tile detail's model: what it shows at one frame. The score tile S and its weights P with
// their values; per query row m and ℓ before → after, the correction e^(m_old − m_new), the O
// accumulator and O = acc/ℓ; with a bug switched on, the correct run's value wherever the buggy
// one differs; with the view option on and a trace, what the backend recorded. The backward adds
// the recomputed tile's dP and dS grids, and lists per query row L_i, D_i and dQ_i, per key row
// of the tile dK_j and dV_j (a line of the table holds one of each). Numbers stay numbers (the
// view formats them); titles and notes are the words shown.
#include "session/scene.h"
#include "session/view_options.h"
#include "style/heatmap.h"

#include <QImage>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace flashviz::gui {

// The most query rows the table lists; a shorter view lists fewer.
inline constexpr int kTileRowsListed = 8;

// The score tile or its weights: a grid of values, or standard attention's whole stored matrix
// when it has too many values to print.
struct TileGrid {
    QString title;
    QString shortTitle;       // where the title does not fit (empty: the title is short)
    QString emptyText;        // in its place until it is computed
    bool wholeMatrix = false; // `image` is the whole n × n matrix as stored in HBM
    bool computed = false;    // false: `emptyText` instead
    Matrix values;            // a grid's values, once computed
    QImage image;             // a whole matrix, once computed
    Colouring colouring = Colouring::Diverging;
    double scaleMax = 1;            // the colour scale's end
    int firstRow = 0, firstCol = 0; // the row and key the labels start at
    bool active = false;            // this step computes it
    // Per row, the column of its largest value, on the step that takes the row maximum (-1 where
    // none is finite); empty on other steps.
    std::vector<int> rowMaxColumn;
    // The backward with a bug on: per cell (row-major), whether the correct run's value at this
    // same step differs (empty when none does).
    std::vector<char> wrongCells;
};

// A number of the table as this step shows it.
struct TileValue {
    std::optional<double> now;     // empty before the tile has it
    std::optional<double> before;  // the value before this tile's update, where it differs
    std::optional<double> correct; // the correct run's, where this one differs (a bug on)
    bool changed = false;          // this step changed it
};

// A row of a d-wide matrix (acc, O, dO, dQ_i, dK_j, dV_j): all d values; the table lists the
// first few, as many as its width holds, so that a student can follow each entry as it adds up.
struct TileRowValues {
    Vector now, before, correct; // as TileValue's; empty where none
    bool changed = false;
};

// What the correction factor's note says.
enum class CorrectionNote { None, FirstBlock, Rescaled, Unchanged, Skipped };

// What the backend recorded for a row once the tile is updated.
struct BackendRecord {
    double m = 0, l = 0;
    // Its largest |difference| from the CPU's m, ℓ and acc, once this tile's update is done.
    std::optional<double> difference;
};

// What the backend recorded for a line of the backward's table once the tile is done.
struct BackwardRecord {
    Vector dq; // its dQ_i row (empty on a line with no query row)
    // Its largest |difference| from the CPU's dQ_i, dK_j and dV_j rows of the line.
    std::optional<double> difference;
};

struct TileRow {
    int row = 0;        // the query row (-1: the line lists a key row only)
    bool wrong = false; // the check finds this row of O (backward: of dQ) wrong
    TileValue m, l, correction;
    CorrectionNote correctionNote = CorrectionNote::None;
    TileRowValues accumulator, output;
    std::optional<BackendRecord> backend; // with the backend's column, once it has recorded
    // The backward: the query row's dO, L, D and dQ_i; the key row's dK_j and dV_j.
    int key = -1;          // the key row listed on this line (-1: none)
    bool keyWrong = false; // the check finds this key row of dK or dV wrong
    TileValue lse, delta;
    TileRowValues dO, dq, dk, dv;
    std::optional<BackwardRecord> backwardBackend;
};

enum class TileColumn {
    Row,
    Max,
    Sum,
    Correction,
    Accumulator,
    Output,
    Backend,
    // the backward's
    UpstreamGradient,
    ForwardOutput,
    LogSumExp,
    RowDot,
    QueryGradient,
    Key,
    KeyGradient,
    ValueGradient
};

struct TileTableColumn {
    TileColumn column = TileColumn::Row;
    bool active = false; // this step updates what it lists
};

struct TileModel {
    QString heading;  // which tile, rows and keys
    QString stepName; // the step's kind
    StepKind stepKind = StepKind::LoadQuery;
    TileGrid scores, weights;
    int gridRows = 4; // rows the grids have, or will have once computed
    // The backward: the recomputed tile's gradients beside S and P, and which pair this step
    // is about (0: S and P, 1: dP and dS), for a view with room for two grids only.
    bool backward = false;
    bool backwardTile = false; // the step concerns a tile (the others have no grids)
    TileGrid dWeights, dScores;
    int focusPair = 0;
    // The grids in the order they are drawn: S, P (and dP, dS for the backward; none at a
    // backward step without a tile).
    std::vector<const TileGrid*> grids() const;

    // The per-row table: FlashAttention's steps that concern a query block.
    bool hasTable = false;
    int tileRows = 0; // the tile's rows (backward: the larger of its rows and keys); `rows`
                      // holds the first kTileRowsListed
    std::vector<TileRow> rows;
    std::vector<TileTableColumn> columns; // the backend's last, when it is shown
    int valuesListed = 0;                 // values listed per row of acc and O
    bool bug = false;                     // the correct run's values are listed under wrong ones
    bool backendShown = false;            // the backend's column
    QString backendName;                  // in full ("CUDA (NVIDIA H200)"), for the note
    QString backendShortName;             // "CUDA", for the column
    QStringList notes;                    // under the table
};

TileModel tileModel(const Frame& frame, const ViewOptions& options);

} // namespace flashviz::gui
