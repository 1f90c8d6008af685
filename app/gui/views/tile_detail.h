#pragma once
// The tile detail: the score tile and its unnormalised weights with values and colour, and per
// query row m and ℓ before → after, the correction factor, the O accumulator and the final
// O = acc/ℓ. The backward: S, P, dP and dS in a row where all four print their values (else the
// pair this step is about), per query row L_i, D_i, dQ_i and per key row dK_j, dV_j. What this step
// changed is highlighted; with a bug switch on, the correct run's values of the same step are shown
// under the buggy ones; with another backend, the values it recorded. What it shows is its
// TileModel (present/tile_model.h); where, its layout, found when the size or the frame changes.
#include "present/tile_model.h"
#include "style/paint_util.h"
#include "views/frame_view.h"

#include <optional>
#include <vector>

namespace flashviz::gui {

class TileDetailView : public FrameView {
    Q_OBJECT
  public:
    explicit TileDetailView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {640, 400}; }
    QSize minimumSizeHint() const override { return {360, 180}; }

    // The most query rows listed in the table.
    void setMaxRows(int rows);
    // What the current size lists (fewer rows than setMaxRows when the view is short) and where.
    int listedRows() const { return m_layout.table.shownRows; }
    QRectF tableRect() const { return m_layout.table.rect; }
    // The table's column titles as drawn at the current size: symbol and explanation lines, or
    // the symbols alone where those do not fit side by side.
    QStringList tableTitles() const { return m_layout.table.header.titles; }
    // Every number and word of the grids and the table as laid out: each is drawn at its font
    // into its rectangle (tst_text_fits measures them).
    std::vector<PlacedText> placedTexts() const;
    // Whether every grid computed at this step prints its values at the current size.
    bool gridsShowValues() const;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;
    void layOut() override;

  private:
    // A grid's rectangles: its title line, the cells (or the whole matrix's square), and the
    // room left of and above them for the row and column labels.
    struct GridLayout {
        QRectF title, area, grid;
        qreal left = 0, labelW = 0, labelH = 0;
        qreal cellW = 0, cellH = 0; // square where there is room; flatter in a short view
        bool values = false, labels = false; // values printed in the cells; row/column numbers
        std::vector<PlacedText> valueTexts;  // the cells' values, where printed
    };
    // A cell of the table: the value, the line under it, and the correct run's in green.
    struct Cell {
        QString now, was, correct;
        bool changed = false, wrong = false;
    };
    // The table's number sizes (points, before the theme's scale) and values listed per row of
    // acc and O, chosen so that every column's widest text fits.
    struct TableFit {
        qreal point = 8.5;
        int valuesShown = 0;
        TableHeader header;
    };
    struct TableLayout {
        QRectF rect;
        int shownRows = 0;
        qreal lineH = 0, smallH = 0, rowH = 0, headH = 0, noteH = 0;
        bool wasLine = false, correctLine = false; // some listed cell has that line
        bool linesBeside = false; // "was …" and "correct …" on the value's line
        bool wasDropped = false;  // no room for "was …" at all
        qreal point = 8.5;
        int valuesShown = 0;
        TableHeader header;
        std::vector<QRectF> columns;    // the header's cells
        std::vector<QRectF> highlights; // the cells this step changed
        std::vector<PlacedText> texts;  // every cell's lines
        QString note;
    };
    struct Layout {
        QRectF heading, stepName;
        std::vector<const TileGrid*> shown; // the model's grids drawn, left to right
        std::vector<GridLayout> grids;      // where each of them goes
        TableLayout table;
    };
    void layOutGrids(const QRectF& gridArea, const std::vector<const TileGrid*>& shown);
    bool shownGridsPrintValues() const;
    QString titleOf(const TileGrid& grid, qreal width) const;
    bool cellsOutlined(const GridLayout& g) const; // a wrong cell gets its own outline
    qreal backwardTableWidth(qreal width) const;
    void layOutTableRows(const QRectF& area, qreal headH, bool wide);
    QRectF layOutRegions(const QRectF& area, qreal headH, bool wide);
    void layOutTableCells();
    GridLayout valueGridLayout(const QRectF& box, const TileGrid& grid) const;
    GridLayout wholeMatrixLayout(const QRectF& box) const;
    TableFit fitTable(qreal width, bool compactTitles, bool linesBeside) const;
    std::vector<qreal> columnContents(int valuesShown, qreal point, bool linesBeside) const;
    qreal wasGap() const; // between a value and its "was" or "correct" beside it
    TableHeader fitHeader(const std::vector<qreal>& contents, qreal width,
                          bool compactTitles) const;
    qreal gridNeed(qreal cell) const;
    qreal smallestValueCell() const;

    void drawHeading(QPainter& p) const;
    void drawGrid(QPainter& p, const TileGrid& grid, const GridLayout& g) const;
    void drawEmptyGrid(QPainter& p, const TileGrid& grid, const GridLayout& g) const;
    void drawGridCells(QPainter& p, const TileGrid& grid, const GridLayout& g) const;
    void drawGridLabels(QPainter& p, const TileGrid& grid, const GridLayout& g) const;
    void drawWholeMatrix(QPainter& p, const TileGrid& grid, const GridLayout& g,
                         const QColor& outline) const;
    void drawTableHeader(QPainter& p) const;
    void drawTableRows(QPainter& p) const;
    void drawTableNote(QPainter& p) const;
    Cell cellOf(TileColumn column, const TileRow& row, int valuesShown) const;

    std::optional<TileModel> m_model;
    Layout m_layout;
    int m_maxRows = kTileRowsListed;
};

} // namespace flashviz::gui
