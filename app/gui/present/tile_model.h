#pragma once
// The tile detail's model: what it shows at one frame. The score tile S and its weights P with
// their values; per query row m and ℓ before → after, the correction e^(m_old − m_new), the O
// accumulator and O = acc/ℓ; with a bug switched on, the correct run's value wherever the buggy
// one differs; with the view option on and a trace, what the backend recorded. Numbers stay
// numbers (the view formats them); titles and notes are the words shown.
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
};

// A number of the table as this step shows it.
struct TileValue {
    std::optional<double> now;     // empty before the tile has it
    std::optional<double> before;  // the value before this tile's update, where it differs
    std::optional<double> correct; // the correct run's, where this one differs (a bug on)
    bool changed = false;          // this step changed it
};

// A row of the accumulator or of O (all d values; the table lists the first few).
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

struct TileRow {
    int row = 0;        // the query row
    bool wrong = false; // the check finds this row of O wrong
    TileValue m, l, correction;
    CorrectionNote correctionNote = CorrectionNote::None;
    TileRowValues accumulator, output;
    std::optional<BackendRecord> backend; // with the backend's column, once it has recorded
};

enum class TileColumn { Row, Max, Sum, Correction, Accumulator, Output, Backend };

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

    // The per-row table: FlashAttention's steps that concern a query block.
    bool hasTable = false;
    int tileRows = 0; // the tile's rows; `rows` holds the first kTileRowsListed
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
