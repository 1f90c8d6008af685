#pragma once
// The tile detail: the score tile and its unnormalised weights with values and colour, and per
// query row m and ℓ before → after, the correction factor, the O accumulator and the final
// O = acc/ℓ. What this step changed is highlighted; with a bug switch on, the correct run's values
// of the same step are shown under the buggy ones; with another backend, the values it recorded.
#include "views/frame_view.h"
#include "style/paint_util.h"

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
    int listedRows() const;
    QRectF tableRect() const;
    // The table's column titles as drawn at the current size: symbol and explanation lines, or
    // the symbols alone where those do not fit side by side.
    QStringList tableTitles() const;

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    // Where the grids and the table go at the current size, and how many rows the table lists.
    struct TileGeometry {
        QRectF area; // inside the margins
        qreal headH = 0;
        bool hasRows = false, bug = false, backend = false;
        int tileRows = 0, shownRows = 0;
        qreal lineH = 0, smallH = 0, rowH = 0, tableHeadH = 0, noteH = 0;
        QRectF gridArea, tableArea;
    };
    TileGeometry tileGeometry() const;
    // The table's columns for the current step (which one this step changes is `active`), and
    // their header at a width.
    struct Column {
        QString title;   // symbol line, explanation line
        QString compact; // the symbols alone, for a narrow table
        qreal weight;
        bool active;
        QString sample; // as wide as its widest usual value
    };
    std::vector<Column> tableColumns(bool withBackend) const;
    TableHeader fitHeader(const std::vector<Column>& columns, qreal width) const;

    int m_maxRows = 8;
};

} // namespace flashviz::gui
