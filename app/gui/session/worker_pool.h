#pragma once
// The threads that compute for the window: scenes, frames, the analysis and the GPU benchmark.
// Not QThreadPool::globalInstance(): Qt 6.4's raster paint engine splits large fills into tasks
// on the global pool and waits for them, so engine work queued there held painting, and the GUI
// thread with it, until that work was done (the monkey test found 5 s stalls this way).
#include <QCoreApplication>
#include <QThread>
#include <QThreadPool>

#include <algorithm>

namespace flashviz::gui {

// Deleted as the application ends, which waits for the running jobs, as it does for the global
// pool. No QObject parent: the first call may come from any thread.
inline QThreadPool& workerPool() {
    static QThreadPool* pool = nullptr;
    static const bool made = [] {
        pool = new QThreadPool;
        pool->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        if (QCoreApplication::instance()) qAddPostRoutine([] { delete pool; });
        return true;
    }();
    (void)made;
    return *pool;
}

} // namespace flashviz::gui
