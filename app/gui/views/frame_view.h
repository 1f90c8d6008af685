#pragma once
// The base of the painted views: a theme and the frame to draw. Setters store and repaint;
// paintEvent draws what the engine computed (principle 5).
#include "session/scene.h"
#include "session/view_options.h"
#include "style/theme.h"

#include <QWidget>

#include <memory>

namespace flashviz::gui {

class FrameView : public QWidget {
    Q_OBJECT
  public:
    explicit FrameView(QWidget* parent = nullptr) : QWidget(parent) {}

    void setTheme(const Theme& theme) {
        m_theme = theme;
        themeChanged();
        updateGeometry();
        update();
    }
    const Theme& theme() const { return m_theme; }

    // `previous` is the frame shown before, for views that animate the change.
    void setFrame(std::shared_ptr<const Frame> frame, std::shared_ptr<const Frame> previous = {}) {
        m_previous = std::move(previous);
        m_frame = std::move(frame);
        frameChanged();
        update();
    }
    const Frame* frame() const { return m_frame.get(); }

    // The view options are an input of what a view shows, like the frame: a change re-runs
    // frameChanged().
    void setViewOptions(const ViewOptions& options) {
        if (options == m_options) return;
        m_options = options;
        frameChanged();
        update();
    }
    const ViewOptions& viewOptions() const { return m_options; }

    // 0 when a change has just happened, 1 when its animation has finished.
    void setTransition(qreal t) {
        if (t == m_transition) return;
        m_transition = t;
        update();
    }
    qreal transition() const { return m_transition; }

  protected:
    virtual void frameChanged() {}
    virtual void themeChanged() {}
    const Scene* scene() const { return m_frame ? m_frame->scene.get() : nullptr; }

    Theme m_theme = Theme::desktop();
    std::shared_ptr<const Frame> m_frame;
    std::shared_ptr<const Frame> m_previous;
    ViewOptions m_options;
    qreal m_transition = 1.0;
};

} // namespace flashviz::gui
