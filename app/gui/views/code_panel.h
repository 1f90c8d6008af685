#pragma once
// The pseudocode of the running algorithm (standard, flash in the explainer's loop order, or the
// paper's), the line of the current step highlighted. Switched-off lines are shown struck out.
#include "views/frame_view.h"

#include <QStringList>

namespace flashviz::gui {

struct CodeLine {
    QString text;
    int indent = 0;
    std::vector<StepKind> kinds; // steps that execute this line
    QString comment;
    bool removed = false; // struck out by a switch
};

// The listing for a run's settings (pure: the tests read it).
std::vector<CodeLine> pseudocode(const VizSettings& settings);
// The line executing a step, or -1.
int lineOf(const std::vector<CodeLine>& code, StepKind kind);

class CodePanel : public FrameView {
    Q_OBJECT
  public:
    explicit CodePanel(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {420, 360}; }
    QSize minimumSizeHint() const override { return {260, 200}; }
    int currentLine() const { return m_current; }

  protected:
    void paintEvent(QPaintEvent* event) override;
    void frameChanged() override;

  private:
    std::vector<CodeLine> m_code;
    int m_current = -1;
};

} // namespace flashviz::gui
