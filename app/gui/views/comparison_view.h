#pragma once
// Standard attention against FlashAttention on the current sizes: HBM traffic, the largest
// scratch buffer and FLOPs (the backward: P stored against recomputed, with the floats left in
// HBM), as bars from the Scene's totals (present/comparison_model.h), laid out when the size or
// the frame changes.
#include "present/comparison_model.h"
#include "views/frame_view.h"

#include <array>
#include <optional>

namespace flashviz::gui {

class ComparisonView : public FrameView {
    Q_OBJECT
  public:
    explicit ComparisonView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {600, 300}; }

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;
    void layOut() override;

  private:
    struct RowLayout {
        QRectF label, note;
        std::array<QRectF, 2> bars, values; // standard, flash
    };
    struct Layout {
        QRectF title, footnote;
        std::array<RowLayout, 3> rows;
    };
    void drawRow(QPainter& p, const ComparisonRow& row, const RowLayout& where) const;

    std::optional<ComparisonModel> m_model;
    Layout m_layout;
};

} // namespace flashviz::gui
