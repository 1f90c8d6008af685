#pragma once
// The one way a painted view observes the controller (as RenderDoc's ICaptureViewer or Okular's
// DocumentObserver): every FrameView of the window, the step view's and the lecture's, is
// attached once to the window's FrameFeed, which hands it the controller's frame, the frame shown
// before it, the step's transition and the window's one set of view options. A view that is
// hidden (another page, another tab, a chapter that does not show it) is skipped, so that its
// work does not slow the step switch, and catches up when it is shown.
#include "session/view_options.h"

#include <QObject>

#include <memory>
#include <optional>
#include <vector>

class QVariantAnimation;

namespace flashviz::gui {

class Controller;
class FrameView;
struct Frame;

class FrameFeed : public QObject {
    Q_OBJECT
  public:
    explicit FrameFeed(Controller* controller, QObject* parent = nullptr);

    // From now on the view gets what the feed hands out; it gets the current state at once.
    void attach(FrameView* view);

    const ViewOptions& viewOptions() const { return m_options; }
    void setViewOptions(const ViewOptions& options);

    // Holds every transition at `t` in [0, 1] instead of animating (--transition, screenshots).
    void holdTransition(qreal t);

    // A change of page (lecture mode on or off): the frames shown so far belong to the other
    // page, so the views that the change shows do not catch up on them and the next frame is not
    // animated from them.
    void forgetShownFrames();
    // Hands the controller's frame to the visible views, also when the controller had no new one
    // to signal (a page just shown whose settings and step were already on screen).
    void showCurrentFrame();

  signals:
    void viewOptionsChanged(const flashviz::gui::ViewOptions& options);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void setTransition(qreal t);
    void startTransition();
    void catchUp(FrameView& view) const;
    std::vector<FrameView*> visibleViews() const;

    Controller* m_controller;
    std::vector<FrameView*> m_views;
    std::shared_ptr<const Frame> m_frame;
    std::shared_ptr<const Frame> m_previous;
    ViewOptions m_options;
    qreal m_transition = 1.0;
    std::optional<qreal> m_heldTransition;
    QVariantAnimation* m_animation;
};

} // namespace flashviz::gui
