#pragma once
// The check, always on screen: the output against ordinary attention (the backward: dQ, dK and
// dV against their closed form, per query row and per key row), max and per-row difference,
// pass or fail. With a bug switched on it fails loudly: the error size, the wrong
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
    QRectF barsRect() const { return m_layout.bars; }       // the per-row |diff| chart
    // Line 0, 1 or 2 in the words painted: the whole sentence, or its brief form where it would
    // not fit (for tests).
    QString lineText(int line) const { return m_layout.lineTexts[line]; }
    QRectF keyBarsRect() const { return m_layout.keyBars; } // the backward's per key row

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
        QRectF lines[3];      // the error, the rows, the progress at this step
        QString lineTexts[3]; // their words: the whole sentence, or its brief form where
                              // the whole one would shrink past reading
        QRectF caption, bars;
        QRectF keyCaption, keyBars; // the backward's key rows, beside the query rows
        qreal toleranceY = 0;
        std::vector<Bar> rowBars;    // empty when there is no room
        std::vector<Bar> keyRowBars; // the backward's
        QRectF divergence[2];        // where the bug first bites: the step, the tile
    };
    void placeButton();
    std::vector<Bar> layOutBars(const QRectF& bars, const std::vector<CheckBar>& columns) const;
    QString errorLine() const;
    QString rowsLine(bool brief = false) const;
    QString progressLine(bool brief = false) const;
    QString lowPrecisionLine(bool brief) const;
    QString lowPrecisionToolTip() const;
    QString fittingLine(int line, const QString& whole, const QString& brief, qreal point,
                        bool bold) const;
    QString captionText() const;
    QString keyCaptionText() const;
    QString divergenceText() const;
    QString divergenceTileText() const;
    QString backwardBugText(bool brief = false) const;
    QString barToolTip(const QPointF& pos) const;
    bool showsDivergence() const {
        return m_model && !m_model->passed && m_model->divergenceStep();
    }
    void drawBars(QPainter& p, const QRectF& bars, const std::vector<Bar>& rowBars) const;

    void drawFrame(QPainter& p) const;
    void drawVerdict(QPainter& p) const;
    void drawRowBars(QPainter& p) const;
    void drawDivergence(QPainter& p) const;

    QPushButton* m_jump = nullptr;
    std::optional<CheckModel> m_model;
    Layout m_layout;
};

} // namespace flashviz::gui
