#include "views/frame_feed.h"

#include "session/controller.h"
#include "views/frame_view.h"

#include <QEvent>
#include <QVariantAnimation>

#include <algorithm>
#include <utility>

namespace flashviz::gui {

FrameFeed::FrameFeed(Controller* controller, QObject* parent)
    : QObject(parent), m_controller(controller), m_animation(new QVariantAnimation(this)) {
    m_animation->setStartValue(0.0);
    m_animation->setEndValue(1.0);
    connect(m_animation, &QVariantAnimation::valueChanged, this,
            [this](const QVariant& t) { setTransition(t.toReal()); });
    connect(controller, &Controller::frameChanged, this, &FrameFeed::showCurrentFrame);
}

void FrameFeed::attach(FrameView* view) {
    m_views.push_back(view);
    view->installEventFilter(this);
    connect(view, &QObject::destroyed, this, [this, view] {
        m_views.erase(std::remove(m_views.begin(), m_views.end(), view), m_views.end());
    });
    catchUp(*view);
}

void FrameFeed::setViewOptions(const ViewOptions& options) {
    if (options == m_options) return;
    m_options = options;
    if (m_frame)
        for (FrameView* view : visibleViews())
            view->setInputs(m_frame, m_previous, m_options);
    emit viewOptionsChanged(options);
}

void FrameFeed::holdTransition(qreal t) {
    m_heldTransition = t;
    m_animation->stop();
    setTransition(t);
}

void FrameFeed::forgetShownFrames() {
    m_animation->stop();
    m_frame.reset();
    m_previous.reset();
}

void FrameFeed::showCurrentFrame() {
    auto frame = m_controller->frame();
    if (!frame) return;
    m_previous = std::exchange(m_frame, std::move(frame));
    m_animation->stop();
    for (FrameView* view : visibleViews())
        view->setInputs(m_frame, m_previous, m_options);
    startTransition();
}

// One step forward is animated, over most of the time until the next step while playing; a jump,
// or steps too fast for an animation to be seen, are shown at once.
void FrameFeed::startTransition() {
    const bool forwardByOne =
        m_previous && m_previous->scene == m_frame->scene && m_frame->step == m_previous->step + 1;
    const double interval = m_controller->isPlaying() ? 1000.0 / m_controller->speed() : 600.0;
    const int duration = int(std::min(450.0, interval * 0.8));
    if (m_heldTransition) {
        setTransition(*m_heldTransition);
    } else if (forwardByOne && duration >= 40) {
        setTransition(0.0);
        m_animation->setDuration(duration);
        m_animation->start();
    } else {
        setTransition(1.0);
    }
}

void FrameFeed::setTransition(qreal t) {
    m_transition = t;
    for (FrameView* view : visibleViews())
        view->setTransition(t);
}

// Qt sends Show as a hidden view appears (its page or tab chosen, its window shown), and
// ShowToParent as it is shown inside a window that is not on screen yet.
bool FrameFeed::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Show || event->type() == QEvent::ShowToParent)
        catchUp(*static_cast<FrameView*>(watched));
    return QObject::eventFilter(watched, event);
}

void FrameFeed::catchUp(FrameView& view) const {
    if (!m_frame) return; // nothing shown yet on this page: the next frame comes to every view
    view.setInputs(m_frame, m_previous, m_options);
    view.setTransition(m_transition);
}

std::vector<FrameView*> FrameFeed::visibleViews() const {
    std::vector<FrameView*> visible;
    for (FrameView* view : m_views)
        if (view->isVisibleTo(view->window())) visible.push_back(view);
    return visible;
}

} // namespace flashviz::gui
