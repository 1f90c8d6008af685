#pragma once
// The check, always on screen: the output against ordinary attention, max and per-row
// difference, pass or fail. With a bug switched on it fails loudly: the error size, the wrong
// rows, and the first step at which the buggy run departs from the correct one, with a button
// to go there. What it shows is its CheckModel (present/check_model.h); where, its layout,
// found when the size or the frame changes.
#include "present/check_model.h"
#include "views/frame_view.h"

#include <optional>
#include <vector>

class QPushButton;

namespace flashviz::gui {

class CheckPanel : public FrameView {
    Q_OBJECT
  public:
    explicit CheckPanel(QWidget* parent = nullptr);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    // The verdict in words, for tests and the status bar.
    QString verdictText() const;
    bool failing() const;
    // The tooltip at a point: what the verdict or a row's bar means, with this run's numbers
    // (empty where there is nothing to explain).
    QString toolTipAt(const QPointF& pos) const override;
    QRectF barsRect() const { return m_layout.bars; } // the per-row |diff| chart

  signals:
    void jumpRequested(int step);

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;
    void themeChanged() override;
    void layOut() override;

  private:
    struct Bar {
        QRectF rect;
        QColor colour;
        bool current = false; // its whole column is highlighted behind it
    };
    struct Layout {
        QRectF frame, verdict;
        QRectF lines[3]; // the error, the rows, the progress at this step
        QRectF caption, bars;
        qreal toleranceY = 0;
        std::vector<Bar> rowBars; // empty when there is no room
        QRectF divergence[2];     // where the bug first bites: the step, the tile
    };
    void placeButton();
    void layOutBars();
    QString errorLine() const;
    QString rowsLine() const;
    QString progressLine() const;
    bool showsDivergence() const {
        return m_model && !m_model->passed && m_model->firstRescaleStep;
    }

    void drawFrame(QPainter& p) const;
    void drawVerdict(QPainter& p) const;
    void drawRowBars(QPainter& p) const;
    void drawDivergence(QPainter& p) const;

    QPushButton* m_jump = nullptr;
    std::optional<CheckModel> m_model;
    Layout m_layout;
};

} // namespace flashviz::gui
