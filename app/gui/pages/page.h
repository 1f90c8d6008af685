#pragma once
// What the analysis page and the GPU benchmark page share: their work on the worker pool, one
// job at a time, the latest winning (AsyncJobs); the progress bar and the Cancel button that go
// with it; the message line and the last error; charts whose fonts follow the page's font at the
// page's own scales (page_style.h).
#include "pages/page_style.h"
#include "session/async_job.h"

#include <QList>
#include <QWidget>

#include <functional>

QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QFont;
class QChart;
class QChartView;
class QLabel;
class QProgressBar;
class QPushButton;
QT_END_NAMESPACE

namespace flashviz::gui {

// An axis's title as its chart wrote it. A page's charts wrap a title too long for its axis into
// lines (HTML "<br>") instead of letting Qt Charts cut it; titleText() is then the lines shown.
QString writtenAxisTitle(const QAbstractAxis* axis);
// `text` as a chart's axis `length` pixels long shows it in `font`: whole where it fits, else in
// as few lines as fit (joined by "<br>", each HTML-escaped), else as written.
QString wrappedAxisTitle(const QString& text, const QFont& font, qreal length);

class Page : public QWidget {
    Q_OBJECT
  public:
    bool isBusy() const { return m_busy; }
    QString errorText() const { return m_error; } // empty when the last action succeeded
    bool waitForIdle(int timeoutMs = 600000);     // processes events until the page is not busy

  public slots:
    virtual void cancel() = 0; // what the Cancel button does

  signals:
    void busyChanged(bool busy);
    void failed(const QString& message);

  protected:
    Page(const ChartFontScales& chartFonts, QWidget* parent);

    // Runs the page's job; its progress moves the bar, and only the latest job's result arrives.
    template <typename Result>
    void runJob(std::function<Result(JobControl&)> work, std::function<void(Result)> done) {
        m_jobs.run<Result>(kPageJob, std::move(work), std::move(done), restartProgress());
    }
    void cancelJob() { m_jobs.cancel(kPageJob); } // the result still arrives
    void dropJob() { m_jobs.drop(kPageJob); }     // nothing arrives

    // Shows the bar and enables Cancel while busy; showBusy adds what a page does besides.
    void setBusy(bool busy);
    virtual void showBusy(bool /*busy*/) {}

    void showMessage(const QString& text, bool error);
    // Records the error, shows `shown` (the error itself when empty) and emits failed.
    void fail(const QString& error, const QString& shown = {});
    void clearMessage(); // forgets the last error and hides the message line

    // A chart view with an empty chart, its fonts kept with the page's.
    QChartView* makeChartView(QWidget* parent);
    void setChart(QChartView* view, QChart* chart) const; // styles it, deletes the one replaced
    // The page's fonts: applyLabelFonts for its own texts, then every chart.
    void applyFonts();
    virtual void applyLabelFonts() = 0;
    void changeEvent(QEvent* event) override;

    QLabel* messageLine() const { return m_message; }
    QProgressBar* progressBar() const { return m_progress; }
    QPushButton* cancelButton() const { return m_cancel; }

  private:
    static constexpr int kPageJob = 0;

    AsyncJobs::Progress restartProgress(); // sets the bar to 0; what it returns moves it

    const ChartFontScales m_chartFonts;
    AsyncJobs m_jobs;
    QLabel* m_message = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QList<QChartView*> m_chartViews;
    bool m_busy = false;
    QString m_error;
};

} // namespace flashviz::gui
