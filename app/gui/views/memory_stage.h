#pragma once
// The memory stage: HBM beside the chip, drawn with the chosen GPU's figures; the matrices in
// HBM to scale; the tiles resident in SRAM; tiles travelling between them; the traffic counters
// and the SRAM fill against its budget. What is shown and where it goes come from its model
// (present/stage_model.h), made when the frame, the theme or the size changes.
#include "present/stage_model.h"
#include "views/frame_view.h"

#include <optional>

namespace flashviz::gui {

class MemoryStageView : public FrameView {
    Q_OBJECT
  public:
    explicit MemoryStageView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {860, 420}; }
    // Small enough that the window fits a 1366 x 768 laptop screen (tst_window).
    QSize minimumSizeHint() const override { return {480, 240}; }
    // The tooltip at a point: what a matrix in HBM, the HBM or SRAM panel or a counter means,
    // with this run's numbers (empty elsewhere).
    QString toolTipAt(const QPointF& pos) const override;
    const StageLayout& stageLayout() const { return m_layout; }

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;
    void layOut() override;

  private:
    QColor colourOf(ChipSlot slot) const;
    QString backwardMatrixTip(const StageMatrix& matrix) const;
    void drawHbm(QPainter& p, qreal t, bool moving) const;
    void drawMatrix(QPainter& p, const StageMatrix& m, const MatrixPlace& place, qreal t,
                    bool moving) const;
    void drawMatrixLabel(QPainter& p, const StageMatrix& m, const MatrixPlace& place) const;
    void drawHighlights(QPainter& p) const;
    void drawChip(QPainter& p, qreal t, bool moving) const;
    void drawTiles(QPainter& p, qreal t, bool moving) const;
    void drawKernels(QPainter& p) const;
    void drawSramFill(QPainter& p) const;
    void drawBus(QPainter& p, qreal t) const;
    void drawL2(QPainter& p) const;
    void drawArrow(QPainter& p, const BusLane& lane, bool rightwards, bool active,
                   const QString& label, const QString& amount, qreal t) const;
    void drawTilesInFlight(QPainter& p, qreal t) const;
    void drawCounters(QPainter& p, qreal progress) const;
    void drawCounter(QPainter& p, const CounterCell& cell, const CounterPlace& place) const;

    std::optional<StageModel> m_model; // none before the first frame
    StageLayout m_layout;
};

} // namespace flashviz::gui
