#pragma once
// The base of the painted views: a theme and the frame to draw. Setters store and repaint;
// paintEvent draws what the engine computed (principle 5). The window's views get their frames,
// view options and transition from one FrameFeed (frame_feed.h), which they are attached to.
// Geometry is worked out in layOut(), after a change of frame, theme or size, never while
// painting (as RenderDoc's TimelineBar::layout()).
#include "session/scene.h"
#include "session/view_options.h"
#include "style/theme.h"

#include <QHelpEvent>
#include <QToolTip>
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
        layOut();
        updateGeometry();
        update();
    }
    const Theme& theme() const { return m_theme; }

    const Frame* frame() const { return m_frame.get(); }
    const ViewOptions& viewOptions() const { return m_options; }

    // What a view shows is a function of its inputs: the frame, the one shown before it (for
    // views that animate the change) and the view options. A FrameFeed hands them over, also to
    // a view catching up on what it missed while hidden; frameChanged() runs once, and not at all
    // when the view shows these already.
    void setInputs(std::shared_ptr<const Frame> frame, std::shared_ptr<const Frame> previous,
                   const ViewOptions& options) {
        if (frame == m_frame && previous == m_previous && options == m_options) return;
        m_previous = std::move(previous);
        m_frame = std::move(frame);
        m_options = options;
        frameChanged();
        layOut();
        update();
    }

    // 0 when a change has just happened, 1 when its animation has finished.
    void setTransition(qreal t) {
        if (t == m_transition) return;
        m_transition = t;
        update();
    }
    qreal transition() const { return m_transition; }
    // What the part of the view at `pos` means, with its numbers; empty where nothing is said.
    virtual QString toolTipAt(const QPointF&) const { return {}; }

  protected:
    virtual void frameChanged() {} // the inputs changed: rebuild the view's model
    virtual void themeChanged() {}
    virtual void layOut() {} // then this: the rectangles paintEvent draws into
    void resizeEvent(QResizeEvent*) override { layOut(); }
    // Tooltips come from toolTipAt(), so each view only says what its parts mean.
    bool event(QEvent* event) override {
        if (event->type() != QEvent::ToolTip) return QWidget::event(event);
        const auto* help = static_cast<QHelpEvent*>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty()) {
            QToolTip::hideText(); // the last part's, left behind
            return QWidget::event(event);
        }
        QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    const Scene* scene() const { return m_frame ? m_frame->scene.get() : nullptr; }

    Theme m_theme = Theme::desktop();
    std::shared_ptr<const Frame> m_frame;
    std::shared_ptr<const Frame> m_previous;
    ViewOptions m_options;
    qreal m_transition = 1.0;
};

} // namespace flashviz::gui
