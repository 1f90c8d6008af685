// AsyncJobs: jobs on the worker pool, the latest request of a tag winning, with progress, a
// cooperative cancel, and an owner that may go while its jobs still run.
#include "session/async_job.h"
#include "session/worker_pool.h"

#include <QSemaphore>
#include <QtTest>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace flashviz::gui;

namespace {

constexpr int kTag = 0;

// Holds a job until the test lets it go, so that what happens meanwhile is decided by the test.
struct Gate {
    QSemaphore entered;
    QSemaphore open;
    void pass() {
        entered.release();
        open.acquire();
    }
};

// Waits (a bounded time) for a job to see its cancel, as a long computation checks at its steps.
bool waitForCancel(const JobControl& control) {
    for (int i = 0; i < 5000 && !control.cancelled(); ++i)
        QThread::msleep(1);
    return control.cancelled();
}

} // namespace

class TestAsyncJob : public QObject {
    Q_OBJECT
  private slots:
    void deliversOnTheOwnersThread();
    void latestRequestWins();
    void progressArrivesBeforeTheResult();
    void cancelStillDeliversTheResult();
    void dropDeliversNothing();
    void afterADropTheNextJobStartsAtOnce();
    void aThrowingJobDeliversNothingAndFreesItsTag();
    void tagsRunSideBySide();
    void ownerDestroyedWhileAJobRuns();
};

void TestAsyncJob::deliversOnTheOwnersThread() {
    AsyncJobs jobs;
    QThread* worker = nullptr;
    QThread* deliveredOn = nullptr;
    jobs.run<int>(
        kTag,
        [&worker](JobControl&) {
            worker = QThread::currentThread();
            return 7;
        },
        [&deliveredOn](int) { deliveredOn = QThread::currentThread(); });
    QVERIFY(jobs.isRunning(kTag));
    QTRY_VERIFY(deliveredOn != nullptr);
    QCOMPARE(deliveredOn, QThread::currentThread());
    QVERIFY(worker != QThread::currentThread());
    QVERIFY(!jobs.isRunning(kTag));
}

// The older job is asked to stop and its result dropped; the newer one runs once it has ended.
void TestAsyncJob::latestRequestWins() {
    AsyncJobs jobs;
    Gate gate;
    std::atomic<bool> olderSawCancel = false;
    std::atomic<bool> olderEnded = false;
    std::atomic<bool> newerStartedEarly = false;
    std::vector<int> delivered;
    jobs.run<int>(
        kTag,
        [&](JobControl& control) {
            gate.pass();
            olderSawCancel = waitForCancel(control);
            olderEnded = true;
            return 1;
        },
        [&delivered](int value) { delivered.push_back(value); });
    gate.entered.acquire();
    jobs.run<int>(
        kTag,
        [&](JobControl&) {
            newerStartedEarly = !olderEnded;
            return 2;
        },
        [&delivered](int value) { delivered.push_back(value); });
    gate.open.release();
    QTRY_VERIFY(!jobs.isRunning(kTag));
    QVERIFY(olderSawCancel);
    QVERIFY(!newerStartedEarly);
    QCOMPARE(delivered, std::vector<int>{2});
}

void TestAsyncJob::progressArrivesBeforeTheResult() {
    AsyncJobs jobs;
    std::vector<int> values;
    QString lastText;
    bool done = false;
    bool progressAfterDone = false;
    jobs.run<int>(
        kTag,
        [](JobControl& control) {
            for (int i = 1; i <= 5; ++i)
                control.report(i, QStringLiteral("step %1").arg(i));
            return 0;
        },
        [&done](int) { done = true; },
        [&](int value, const QString& text) {
            progressAfterDone |= done;
            values.push_back(value);
            lastText = text;
        });
    QTRY_VERIFY(done);
    QVERIFY(!progressAfterDone);
    // Reports faster than the owner reads them merge, but the last one is always seen.
    QVERIFY(!values.empty());
    QVERIFY(std::is_sorted(values.begin(), values.end()));
    QCOMPARE(values.back(), 5);
    QCOMPARE(lastText, QStringLiteral("step 5"));
}

void TestAsyncJob::cancelStillDeliversTheResult() {
    AsyncJobs jobs;
    Gate gate;
    std::optional<bool> stopped;
    jobs.run<bool>(
        kTag,
        [&gate](JobControl& control) {
            gate.entered.release();
            return waitForCancel(control);
        },
        [&stopped](bool value) { stopped = value; });
    gate.entered.acquire();
    jobs.cancel(kTag);
    QVERIFY(jobs.isRunning(kTag));
    QTRY_VERIFY(stopped.has_value());
    QVERIFY(*stopped);
}

void TestAsyncJob::dropDeliversNothing() {
    AsyncJobs jobs;
    Gate gate;
    std::atomic<bool> sawCancel = false;
    bool delivered = false;
    bool progressed = false;
    jobs.run<int>(
        kTag,
        [&](JobControl& control) {
            gate.pass();
            control.report(1);
            sawCancel = control.cancelled();
            return 1;
        },
        [&delivered](int) { delivered = true; },
        [&progressed](int, const QString&) { progressed = true; });
    gate.entered.acquire();
    jobs.drop(kTag);
    QVERIFY(!jobs.isRunning(kTag));
    gate.open.release();
    workerPool().waitForDone();
    QCoreApplication::processEvents();
    QVERIFY(sawCancel);
    QVERIFY(!delivered);
    QVERIFY(!progressed);
}

// A dropped build may take seconds to reach its next checkpoint; the one that replaces it must
// not wait for that.
void TestAsyncJob::afterADropTheNextJobStartsAtOnce() {
    AsyncJobs jobs;
    Gate dropped;
    jobs.run<int>(
        kTag,
        [&dropped](JobControl&) {
            dropped.pass(); // held until the end of the test, as a stage that cannot be cut
            return 1;
        },
        [](int) { QFAIL("a dropped job delivered"); });
    dropped.entered.acquire();
    jobs.drop(kTag);
    int delivered = 0;
    jobs.run<int>(
        kTag, [](JobControl&) { return 2; }, [&delivered](int v) { delivered = v; });
    QTRY_COMPARE(delivered, 2); // while the dropped job is still held
    dropped.open.release();
    workerPool().waitForDone();
    QCoreApplication::processEvents();
    QVERIFY(!jobs.isRunning(kTag));
}

void TestAsyncJob::aThrowingJobDeliversNothingAndFreesItsTag() {
    AsyncJobs jobs;
    bool deliveredFromThrow = false;
    QTest::ignoreMessage(QtWarningMsg, "flashviz: a background job failed: out of frames");
    jobs.run<int>(
        kTag, [](JobControl&) -> int { throw std::runtime_error("out of frames"); },
        [&deliveredFromThrow](int) { deliveredFromThrow = true; });
    int delivered = 0;
    jobs.run<int>(
        kTag, [](JobControl&) { return 3; }, [&delivered](int v) { delivered = v; });
    QTRY_COMPARE(delivered, 3);
    QVERIFY(!deliveredFromThrow);
}

void TestAsyncJob::tagsRunSideBySide() {
    AsyncJobs jobs;
    Gate gate;
    int first = 0, second = 0;
    jobs.run<int>(
        0,
        [&gate](JobControl&) {
            gate.pass();
            return 1;
        },
        [&first](int value) { first = value; });
    gate.entered.acquire();
    // Another tag neither waits for nor replaces the first.
    jobs.run<int>(
        1, [](JobControl&) { return 2; }, [&second](int value) { second = value; });
    QTRY_COMPARE(second, 2);
    QCOMPARE(first, 0);
    gate.open.release();
    QTRY_COMPARE(first, 1);
}

// The job outlives its owner: it is told to stop, and what it reports and returns goes nowhere
// (under ASan, any use of the destroyed owner fails the test).
void TestAsyncJob::ownerDestroyedWhileAJobRuns() {
    auto jobs = std::make_unique<AsyncJobs>();
    auto gate = std::make_shared<Gate>();
    auto sawCancel = std::make_shared<std::atomic<bool>>(false);
    bool delivered = false;
    bool progressed = false;
    jobs->run<std::vector<int>>(
        kTag,
        [gate, sawCancel](JobControl& control) {
            gate->pass();
            *sawCancel = control.cancelled();
            control.report(1, QStringLiteral("after the owner went"));
            return std::vector<int>(1000, 1);
        },
        [&delivered](std::vector<int>) { delivered = true; },
        [&progressed](int, const QString&) { progressed = true; });
    gate->entered.acquire();
    jobs->run<std::vector<int>>(
        kTag, [](JobControl&) { return std::vector<int>{}; },
        [&delivered](std::vector<int>) { delivered = true; });
    jobs.reset();
    gate->open.release();
    workerPool().waitForDone();
    QCoreApplication::processEvents();
    QVERIFY(*sawCancel);
    QVERIFY(!delivered);
    QVERIFY(!progressed);
}

QTEST_GUILESS_MAIN(TestAsyncJob)
#include "tst_async_job.moc"
