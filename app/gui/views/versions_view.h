#pragma once
// The FlashAttention-2 page: what -2 changed from -1, for the scene's sizes and the step on screen
// (present/versions_model.h). Three panels: the non-matmul work of the step's tile and of the
// whole pass with its time at the GPU's rates and both versions' check; the step's tile split
// across warps by keys and by rows; the grid of thread blocks on the GPU's SMs. Laid out on a
// change of size or frame, painted in small pieces.
#include "present/versions_model.h"
#include "views/frame_view.h"

#include <optional>
#include <vector>

namespace flashviz::gui {

class VersionsView : public FrameView {
    Q_OBJECT
  public:
    explicit VersionsView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {1100, 700}; }
    QSize minimumSizeHint() const override { return {480, 320}; }
    const VersionsModel* model() const { return m_model ? &*m_model : nullptr; }
    QString toolTipAt(const QPointF& pos) const override;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;
    void layOut() override;

  private:
    struct SplitLayout {
        QRectF heading, tile, accumulator, tileLabel, accLabel;
        std::vector<QRectF> lines;
    };
    struct GridRowLayout {
        QRectF label, sms, text, timeBar, timeLabel;
    };
    struct Layout {
        QRectF title;
        QRectF arithmetic, warps, grid; // the three panels
        // 1
        QRectF table;
        std::vector<qreal> columns;
        qreal rowHeight = 0;
        std::array<QRectF, 2> timeNames, timeBars, timeLabels;
        QRectF arithmeticFinding, check;
        // 2
        std::array<SplitLayout, 2> splits;
        QRectF legend, warpFinding;
        // 3
        std::array<GridRowLayout, 2> gridRows;
        QRectF kernelLine, gridFinding;
    };

    void layOutArithmetic(const QRectF& content);
    void layOutWarps(const QRectF& content);
    void layOutGrid(const QRectF& content);
    void drawArithmetic(QPainter& p) const;
    void drawWarps(QPainter& p) const;
    void drawSplit(QPainter& p, const WarpSplit& split, const SplitLayout& where) const;
    void drawGrid(QPainter& p) const;
    void drawSms(QPainter& p, const std::vector<int>& perSm, int blocksPerSm, const QRectF& area,
                 const QColor& colour) const;
    QColor warpColour(int warp) const;

    std::optional<VersionsModel> m_model;
    Layout m_layout;
};

} // namespace flashviz::gui
