#pragma once
// The tile detail: the score tile and its unnormalised weights with values and colour, and per
// query row m and ℓ before → after, the correction factor, the O accumulator and the final
// O = acc/ℓ. What this step changed is highlighted; with a bug switch on, the correct run's values
// of the same step are shown under the buggy ones; with another backend, the values it recorded.
// What it shows is its TileModel (present/tile_model.h); where, its layout, found when the size
// or the frame changes.
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

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;
    void layOut() override;

  private:
    // A grid's rectangles: its title line, the cells (or the whole matrix's square), and the
    // room left of and above them for the row and column labels.
    struct GridLayout {
        QRectF title, area, grid;
        qreal left = 0, labelW = 0, labelH = 0, cell = 0;
        bool values = false, labels = false; // values printed in the cells; row/column numbers
        int digits = 2;
        QFont valueFont;
    };
    struct TableLayout {
        QRectF rect;
        int shownRows = 0;
        qreal lineH = 0, smallH = 0, rowH = 0, headH = 0, noteH = 0;
        TableHeader header;
        std::vector<QRectF> columns; // the header's cells
        QString note;
    };
    struct Layout {
        QRectF heading, stepName;
        GridLayout scores, weights;
        TableLayout table;
    };
    // A cell of the table: the value, the line under it, and the correct run's in green.
    struct Cell {
        QString now, was, correct;
        bool changed = false, wrong = false;
    };

    void layOutTableRows(const QRectF& area, qreal headH, bool wide);
    QRectF layOutRegions(const QRectF& area, qreal headH, bool wide);
    void layOutTableHeader();
    GridLayout valueGridLayout(const QRectF& box, const TileGrid& grid) const;
    GridLayout wholeMatrixLayout(const QRectF& box) const;
    TableHeader fitHeader(qreal width) const;

    void drawHeading(QPainter& p) const;
    void drawGrid(QPainter& p, const TileGrid& grid, const GridLayout& g) const;
    void drawEmptyGrid(QPainter& p, const TileGrid& grid, const GridLayout& g) const;
    void drawGridCells(QPainter& p, const TileGrid& grid, const GridLayout& g) const;
    void drawGridLabels(QPainter& p, const TileGrid& grid, const GridLayout& g) const;
    void drawWholeMatrix(QPainter& p, const TileGrid& grid, const GridLayout& g,
                         const QColor& outline) const;
    void drawTableHeader(QPainter& p) const;
    void drawTableRow(QPainter& p, int index) const;
    void drawCell(QPainter& p, const QRectF& column, qreal y, const Cell& cell) const;
    void drawTableNote(QPainter& p) const;
    Cell cellOf(TileColumn column, const TileRow& row) const;

    std::optional<TileModel> m_model;
    Layout m_layout;
    int m_maxRows = kTileRowsListed;
};

} // namespace flashviz::gui
