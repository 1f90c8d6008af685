#pragma once
// The Hopper page's picture (pages/hopper/hopper_model.h): three panels painted in one widget.
//   A  the block as the kernel configures it: the producer and the consumer warpgroups (threads,
//      registers, rows), shared memory to scale against what a Hopper block may use, the copy
//      engine's and the tensor cores' paths, the variant's schedule in a sentence;
//   C  what the trace says: summarize()'s numbers, where and how the trace was recorded;
//   B  one block's timeline: a lane per warpgroup, a track per unit, a bar per span, coloured by
//      activity with a legend; hovering a bar says what it was. The wheel zooms about the
//      pointer, a drag pans, Shift + drag zooms to a range, + / − / 0 and a double click too.
// Without a trace, A is drawn, B's lanes stay empty under the page's message and C says so.
// Texts are placed when the widget is laid out (PlacedText) and drawn as placed, so a test can
// check that each fits its rectangle.
#include "pages/hopper/hopper_model.h"

#include "style/paint_util.h"
#include "style/theme.h"

#include <QWidget>

QT_BEGIN_NAMESPACE
class QToolButton;
QT_END_NAMESPACE

#include <optional>
#include <vector>

namespace flashviz::gui {

struct HopperViewContent {
    HopperBlockPicture picture;
    HopperTimeline timeline; // the configuration's lanes, with no bars when there is no trace
    std::optional<HopperFindings> findings; // set with a trace
    QString origin;                         // whose trace it is: C's subtitle
    QString noTrace;                        // without a trace: why, and how to record one
};

class HopperView : public QWidget {
    Q_OBJECT
  public:
    explicit HopperView(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {1100, 640}; }
    QSize minimumSizeHint() const override { return {480, 320}; }

    // Shows the content, the whole block in view.
    void setContent(HopperViewContent content);
    const HopperViewContent& content() const { return m_content; }
    bool hasTrace() const { return m_content.findings.has_value(); }

    HopperTimeWindow timeWindow() const { return m_window; }
    void setTimeWindow(const HopperTimeWindow& window); // kept inside the block

    // What the part at `pos` means, with its numbers; empty where nothing is said.
    QString toolTipAt(const QPointF& pos) const;
    // Every text as laid out (all three panels, the legend, the axis), for the tests.
    std::vector<PlacedText> placedTexts() const;
    QRectF chartRect() const { return m_layout.chart; }
    // The three panels' boxes: A, C, B.
    std::vector<QRectF> panelRects() const {
        return {m_layout.config, m_layout.findings, m_layout.timeline};
    }
    QRectF trackRect(int track) const;
    QRectF barRect(std::size_t bar) const; // empty when outside the window
    QRectF sharedPartRect(std::size_t part) const;
    // The label a bar shows at this zoom ("" when none fits).
    QString barLabel(std::size_t bar) const;
    // "0 – 5.62 µs of 5.62 µs": the part of the block in view.
    QString windowText() const;

  signals:
    void timeWindowChanged(); // by the user or by new content

  public slots:
    void zoomIn();
    void zoomOut();
    void showWholeBlock();

  protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;

  private:
    struct LegendEntry {
        kernels::HopperActivity activity;
        QRectF swatch;
    };
    struct Layout {
        QRectF title, config, findings, timeline; // the panels A, C and B
        // A
        std::vector<QRectF> warpgroups;
        QRectF sharedBar;
        std::vector<QRectF> sharedParts;
        QRectF copyArrow, wgmmaArrow; // their lines' extents
        // C
        QRectF table;
        // B
        std::vector<LegendEntry> legend;
        QRectF labels, chart, axis, message;
        QRectF windowLabel; // left of the zoom buttons
        std::vector<QRectF> tracks;
        qreal barFontPt = 8;
        std::vector<PlacedText> texts; // all the fixed texts, every panel
    };

    void layOut();
    struct Placer; // collects a panel's texts and whether any overflows its rectangle
    qreal layOutConfig(const QRectF& content, qreal pt, Placer& out);
    qreal layOutFindings(const QRectF& content, qreal pt, Placer& out);
    void layOutTimeline(const QRectF& content);
    qreal layOutLegend(const QRectF& area, const QFont& font);
    void layOutLabels(const QFont& bold, const QFont& small);
    std::vector<PlacedText>
    axisTexts() const; // the ticks' labels and the window, at the zoom shown
    void placeZoomButtons();

    void drawConfig(QPainter& p) const;
    void drawFindings(QPainter& p) const;
    void drawShared(QPainter& p) const;
    void drawArrows(QPainter& p) const;
    void drawTimeline(QPainter& p) const;
    void drawLegend(QPainter& p) const;
    void drawTracks(QPainter& p) const;
    void drawBars(QPainter& p) const;
    void drawBar(QPainter& p, std::size_t index, const std::vector<int>& forms) const;
    std::vector<int> labelForms() const;
    QString barLabel(std::size_t index, const std::vector<int>& forms) const;
    void drawAxis(QPainter& p) const;
    void drawHover(QPainter& p) const;

    QColor colourOf(kernels::HopperActivity activity) const;
    QBrush brushOf(kernels::HopperActivity activity) const;
    QColor partColour(HopperBuffer buffer) const;
    int barAt(const QPointF& pos) const;
    void zoomAbout(double factor, qreal x);

    Theme m_theme = Theme::desktop();
    HopperViewContent m_content;
    HopperTimeWindow m_window;
    Layout m_layout;
    QToolButton* m_zoomOut = nullptr;
    QToolButton* m_zoomIn = nullptr;
    QToolButton* m_whole = nullptr;
    int m_hovered = -1;
    // A drag: panning from where it started, or (Shift) choosing a range to zoom to.
    bool m_dragging = false, m_choosingRange = false;
    qreal m_dragFrom = 0, m_dragTo = 0;
    HopperTimeWindow m_dragWindow;
};

} // namespace flashviz::gui
