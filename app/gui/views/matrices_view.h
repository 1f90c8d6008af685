#pragma once
// Q, K, V and O as heatmaps (images, one pixel per entry) with the active tiles outlined, and the
// n × n score matrix: "never stored" for FlashAttention, where only the current tile exists on
// chip; stored for standard attention (and for the debug copy), filled as it is written.
#include "views/frame_view.h"

namespace flashviz::gui {

class MatricesView : public FrameView {
    Q_OBJECT
  public:
    explicit MatricesView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {640, 360}; }
    QSize minimumSizeHint() const override { return {360, 180}; }

  protected:
    void paintEvent(QPaintEvent* event) override;
};

} // namespace flashviz::gui
