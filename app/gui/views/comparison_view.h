#pragma once
// Standard attention against FlashAttention on the current sizes: HBM traffic, the largest
// scratch buffer and FLOPs, as bars from the engine's counters.
#include "views/frame_view.h"

namespace flashviz::gui {

class ComparisonView : public FrameView {
    Q_OBJECT
  public:
    explicit ComparisonView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {600, 300}; }

  protected:
    void paintEvent(QPaintEvent* event) override;
};

} // namespace flashviz::gui
