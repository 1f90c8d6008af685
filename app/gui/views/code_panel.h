#pragma once
// The pseudocode of the running algorithm (standard, flash in the explainer's loop order, the
// paper's, or FlashAttention-2's backward), the line of the current step highlighted. Lines a
// switch removes or changes are drawn in red. What it shows is its CodeModel
// (present/code_model.h); the row height and the font that fit every line are found when the
// size or the frame changes.
#include "present/code_model.h"
#include "views/frame_view.h"

#include <vector>

namespace flashviz::gui {

class CodePanel : public FrameView {
    Q_OBJECT
  public:
    explicit CodePanel(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {420, 360}; }
    QSize minimumSizeHint() const override { return {260, 200}; }
    int currentLine() const { return m_model.current; }
    // The listing's font, fitted to the panel (the current line is drawn in its bold).
    QFont codeFont() const { return m_layout.codeFont; }
    // The tooltip at a point: the line, its comment, the steps that run it and whether this step
    // does (empty off the listing).
    QString toolTipAt(const QPointF& pos) const override;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;
    void layOut() override;

  private:
    struct LineLayout {
        QRectF row;
        qreal textX = 0;
        qreal commentX = -1; // where the comment starts; -1 when it has no room
    };
    struct Layout {
        QRectF title;
        QFont codeFont, commentFont;
        std::vector<LineLayout> lines;
    };
    // The font that fits the listing and each line's width in it, plain and bold.
    struct Fit {
        QString key;
        qreal point = 0;
        qreal indentWidth = 0;
        std::vector<qreal> plainWidths, boldWidths;
        std::vector<qreal> commentWidths; // "# " and the comment, 0 for none
    };
    QString fitKey(qreal rowH, qreal width) const;
    const Fit& fitted(qreal rowH, qreal width);
    qreal fittingPointSize(qreal rowH, qreal width) const;
    QFont commentFont(qreal codePoint) const; // the comments' type beside code of that size
    void drawLine(QPainter& p, const CodeLine& line, const LineLayout& where, bool current) const;

    CodeModel m_model;
    Layout m_layout;
    Fit m_fit;
};

} // namespace flashviz::gui
