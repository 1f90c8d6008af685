#pragma once
// The check, always on screen: the output against ordinary attention, max and per-row
// difference, pass or fail. With a bug switched on it fails loudly: the error size, the wrong
// rows, and the first step at which the buggy run departs from the correct one, with a button
// to go there.
#include "views/frame_view.h"

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

  signals:
    void jumpRequested(int step);

  protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void frameChanged() override;
    void themeChanged() override;

  private:
    void placeButton();
    QPushButton* m_jump = nullptr;
};

} // namespace flashviz::gui
