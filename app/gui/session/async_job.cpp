#include "session/async_job.h"
#include "session/worker_pool.h"

#include <QMutexLocker>

#include <atomic>
#include <exception>

namespace flashviz::gui::detail {

struct JobLink {
    QMutex mutex;
    AsyncJobs* owner = nullptr;
};

struct JobState {
    JobState(std::shared_ptr<JobLink> ownerLink, int jobTag, quint64 jobId)
        : link(std::move(ownerLink)), tag(jobTag), id(jobId) {}
    const std::shared_ptr<JobLink> link;
    const int tag;
    const quint64 id;
    std::atomic<bool> cancelled = false;
    QMutex progressMutex;
    int progressValue = 0;
    QString progressText;
    bool progressQueued = false; // a report is on its way to the owner's thread
};

} // namespace flashviz::gui::detail

namespace flashviz::gui {

bool JobControl::cancelled() const {
    return m_state->cancelled.load();
}

void JobControl::report(int value, const QString& text) {
    QMutexLocker lock(&m_state->progressMutex);
    m_state->progressValue = value;
    m_state->progressText = text;
    if (m_state->progressQueued) return;
    m_state->progressQueued = true;
    lock.unlock();
    AsyncJobs::post(*m_state, &AsyncJobs::progressed);
}

AsyncJobs::AsyncJobs(QObject* parent)
    : QObject(parent), m_link(std::make_shared<detail::JobLink>()) {
    m_link->owner = this;
}

AsyncJobs::~AsyncJobs() {
    {
        // Under the lock: once it is released no job can queue a call here, and the calls
        // already queued are discarded with this object.
        QMutexLocker lock(&m_link->mutex);
        m_link->owner = nullptr;
    }
    for (auto& [tag, lane] : m_lanes)
        if (lane.latest) lane.latest->state->cancelled = true;
}

void AsyncJobs::post(const detail::JobState& state, void (AsyncJobs::*call)(int, quint64)) {
    QMutexLocker lock(&state.link->mutex);
    AsyncJobs* owner = state.link->owner;
    if (!owner) return;
    const int tag = state.tag;
    const quint64 id = state.id;
    QMetaObject::invokeMethod(
        owner, [owner, call, tag, id] { (owner->*call)(tag, id); }, Qt::QueuedConnection);
}

void AsyncJobs::submit(int tag, std::function<void(JobControl&)> work, std::function<void()> done,
                       Progress progress) {
    Lane& lane = m_lanes[tag];
    if (lane.latest) lane.latest->state->cancelled = true;
    lane.latest = Request{std::make_shared<detail::JobState>(m_link, tag, m_nextId++),
                          std::move(work), std::move(done), std::move(progress)};
    if (lane.running == 0) start(lane);
}

void AsyncJobs::start(Lane& lane) {
    auto state = lane.latest->state;
    lane.running = state->id;
    workerPool().start([work = std::move(lane.latest->work), state] {
        JobControl control(state);
        try {
            work(control);
        } catch (const std::exception& e) {
            qWarning("flashviz: a background job failed: %s", e.what());
        } catch (...) {
            qWarning("flashviz: a background job failed");
        }
        post(*state, &AsyncJobs::finished);
    });
    lane.latest->work = nullptr;
}

AsyncJobs::Request* AsyncJobs::latest(int tag, quint64 id) {
    const auto lane = m_lanes.find(tag);
    if (lane == m_lanes.end() || !lane->second.latest) return nullptr;
    return lane->second.latest->state->id == id ? &*lane->second.latest : nullptr;
}

void AsyncJobs::progressed(int tag, quint64 id) {
    Request* request = latest(tag, id);
    if (!request) return;
    detail::JobState& state = *request->state;
    QMutexLocker lock(&state.progressMutex);
    state.progressQueued = false;
    const int value = state.progressValue;
    const QString text = state.progressText;
    lock.unlock();
    // A copy: the call may replace the request that holds it.
    if (const Progress progress = request->progress) progress(value, text);
}

void AsyncJobs::finished(int tag, quint64 id) {
    Lane& lane = m_lanes[tag];
    if (lane.running == id) lane.running = 0; // else a dropped job: the lane had moved on
    if (Request* request = latest(tag, id)) {
        // Forgotten before the call, which may ask for the next job of this tag.
        const auto done = std::move(request->done);
        lane.latest.reset();
        done();
    } else if (lane.latest && lane.latest->work && lane.running == 0) {
        start(lane); // the request that replaced the one just ended
    }
}

void AsyncJobs::cancel(int tag) {
    const auto lane = m_lanes.find(tag);
    if (lane != m_lanes.end() && lane->second.latest) lane->second.latest->state->cancelled = true;
}

void AsyncJobs::drop(int tag) {
    cancel(tag);
    const auto lane = m_lanes.find(tag);
    if (lane == m_lanes.end()) return;
    lane->second.latest.reset();
    lane->second.running = 0;
}

bool AsyncJobs::isRunning(int tag) const {
    const auto lane = m_lanes.find(tag);
    return lane != m_lanes.end() && lane->second.latest.has_value();
}

} // namespace flashviz::gui
