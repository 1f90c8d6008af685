#pragma once
// Q, K, V and O as heatmaps (images, one pixel per entry) with the active tiles outlined, and the
// n × n score matrix: "never stored" for FlashAttention, where only the current tile exists on
// chip; stored for standard attention (and for the debug copy), filled as it is written. The
// backward: Q, K, V, O, dO and the gradients dQ, dK, dV, faded until they are final. What is
// shown and where it goes come from its model (present/matrices_model.h).
#include "present/matrices_model.h"
#include "views/frame_view.h"

#include <optional>

namespace flashviz::gui {

class MatricesView : public FrameView {
    Q_OBJECT
  public:
    explicit MatricesView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {640, 360}; }
    QSize minimumSizeHint() const override { return {360, 180}; }

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;
    void layOut() override;

  private:
    void drawPanel(QPainter& p, const MatrixPanel& panel, const PanelPlace& place) const;
    void drawNeverStored(QPainter& p, const QRectF& r) const;
    void drawWrongRows(QPainter& p) const;
    void drawHighlights(QPainter& p) const;
    void drawNote(QPainter& p) const;

    std::optional<MatricesModel> m_model; // none before the first frame
    MatricesLayout m_layout;
};

} // namespace flashviz::gui
