#pragma once
// The memory stage: HBM beside the chip, drawn with the chosen GPU's figures; the matrices in
// HBM to scale; the tiles resident in SRAM; tiles travelling between them; the traffic counters
// and the SRAM fill against its budget. Everything drawn comes from the frame.
#include "views/frame_view.h"

#include <QImage>

namespace flashviz::gui {

class MemoryStageView : public FrameView {
    Q_OBJECT
  public:
    explicit MemoryStageView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {860, 420}; }
    // Small enough that the window fits a 1366 x 768 laptop screen (tst_window).
    QSize minimumSizeHint() const override { return {480, 240}; }

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;

  private:
    struct TileImages {
        QImage q, k, v, s, p, m, l, acc;
    };
    TileImages m_tiles;
};

} // namespace flashviz::gui
