#pragma once
// Work for the window that runs on workerPool() and hands its result back on the thread of the
// object that asked for it, the latest request winning, as RenderDoc's
// ReplayManager::AsyncInvoke(tag, ...): under one tag one job runs at a time; a newer request asks
// the running job to stop and replaces the one waiting, and only the latest request's result
// arrives. Jobs hold copies of what they read and never a pointer to their owner: when the
// AsyncJobs object goes, its jobs are told to stop and whatever they deliver is dropped.
#include <QObject>
#include <QString>

#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace flashviz::gui {

namespace detail {
struct JobLink;  // the owner's address, cleared when the owner goes
struct JobState; // one job's cancel flag and progress, shared with the thread it runs on
} // namespace detail

// A job's side of its run: whether to stop, and where to say how far it got.
class JobControl {
  public:
    explicit JobControl(std::shared_ptr<detail::JobState> state) : m_state(std::move(state)) {}
    // True once the job was cancelled, replaced by a newer request, or its owner destroyed.
    bool cancelled() const;
    // Reports made faster than the owner's thread takes them merge: it sees the latest.
    void report(int value, const QString& text = {});

  private:
    std::shared_ptr<detail::JobState> m_state;
};

class AsyncJobs : public QObject {
    Q_OBJECT
  public:
    using Progress = std::function<void(int value, const QString& text)>;

    explicit AsyncJobs(QObject* parent = nullptr);
    ~AsyncJobs() override; // cancels every job; nothing arrives after it

    // Runs `work` on workerPool() under `tag` once the tag's running job (if any) has ended.
    // `done` gets its result, and `progress` its reports, on this object's thread, as long as
    // no newer request of the tag, drop(tag) or this object's destruction came first. A job
    // that throws delivers nothing: the exception's message goes to the log, and the tag's next
    // job runs (an exception must not end the program from a pool thread).
    template <typename Result>
    void run(int tag, std::function<Result(JobControl&)> work, std::function<void(Result)> done,
             Progress progress = {}) {
        auto result = std::make_shared<std::optional<Result>>();
        submit(
            tag, [work = std::move(work), result](JobControl& control) { *result = work(control); },
            [done = std::move(done), result] {
                if (*result) done(std::move(**result));
            },
            std::move(progress));
    }

    void cancel(int tag); // asks the tag's latest job to stop; its result still arrives
    // Cancels the tag's latest job and forgets it: nothing arrives, and the tag's next request
    // starts at once instead of waiting for the forgotten job to reach its next checkpoint.
    void drop(int tag);
    bool isRunning(int tag) const; // a result of this tag is still to come

  private:
    // The latest request of a tag: the one whose result counts.
    struct Request {
        std::shared_ptr<detail::JobState> state;
        std::function<void(JobControl&)> work; // empty once started
        std::function<void()> done;
        Progress progress;
    };
    struct Lane {
        std::optional<Request> latest;
        quint64 running = 0; // the id of the job of this tag on the pool that the lane waits for
    };
    friend class JobControl;

    void submit(int tag, std::function<void(JobControl&)> work, std::function<void()> done,
                Progress progress);
    void start(Lane& lane);
    void finished(int tag, quint64 id);
    void progressed(int tag, quint64 id);
    // Queues `call` on the owner's thread unless the owner is gone.
    static void post(const detail::JobState& state, void (AsyncJobs::*call)(int, quint64));
    Request* latest(int tag, quint64 id);

    std::shared_ptr<detail::JobLink> m_link; // what jobs reach this object through
    std::map<int, Lane> m_lanes;
    quint64 m_nextId = 1;
};

} // namespace flashviz::gui
