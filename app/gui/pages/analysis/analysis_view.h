#pragma once
// The analysis page: the explainer's nine demonstrations as charts, one at a time, computed by
// the engine for the current settings. Work runs on a worker thread; the charts on screen are
// replaced only by a finished computation for the latest settings, and a refused setting leaves
// them in place with the engine's message above them.
#include "core/hardware.h"
#include "core/options.h"
#include "core/problem.h"

#include <QStringList>
#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTimer;
QT_END_NAMESPACE

namespace flashviz::gui {

struct AnalysisInputs;
struct AnalysisOutcome;
struct AnalysisResults;

class AnalysisView : public QWidget {
    Q_OBJECT
  public:
    explicit AnalysisView(QWidget* parent = nullptr);
    ~AnalysisView() override;

    // Stores the settings and starts a computation for them (unless they are the ones shown).
    void setSettings(const flashviz::ProblemSpec& spec, const flashviz::FlashOptions& options,
                     const flashviz::HardwareProfile& hardware);

    QStringList chartTitles() const;
    void showChart(int index);
    int currentChart() const;

    // The list of charts on the left; lecture mode may hide it and page with showChart().
    void setNavigationVisible(bool visible);

    // For tests and screenshots. A page may hold a second, right-hand panel (panel 1).
    QChart* chart(int index, int panel = 0) const;
    int panelCount(int index) const;
    QString caption(int index) const;
    QString errorText() const; // empty when the last request succeeded
    bool isBusy() const;
    bool waitForIdle(int timeoutMs = 60000); // processes events until no computation runs
    const AnalysisResults* results() const;  // what the charts on screen were drawn from

  public slots:
    void cancel(); // stops the running computation; the charts on screen stay

  signals:
    void busyChanged(bool busy);
    void chartsUpdated();
    void failed(const QString& message);

  protected:
    void changeEvent(QEvent* event) override;

  private:
    struct Run; // one computation on the worker thread

    void startPending();
    void finished(quint64 generation, const AnalysisOutcome& outcome);
    void rebuildCharts();
    void ensurePage(int index) const; // builds a page from m_shown the first time it is needed
    void applyFonts();
    void setBusy(bool busy);
    void showMessage(const QString& text, bool error);
    void refuse(const QString& message);
    void present(std::shared_ptr<const AnalysisResults> results);
    void updateCaption();

    QListWidget* m_list = nullptr;
    QStackedWidget* m_stack = nullptr;
    QLabel* m_caption = nullptr;
    QLabel* m_message = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QList<QChartView*> m_views;       // one per page
    QList<QChartView*> m_secondViews; // the right-hand panels, hidden where a page has none
    mutable QStringList m_captions;
    mutable QList<bool> m_stale; // pages still showing older results than m_shown

    QTimer* m_startTimer = nullptr; // coalesces settings changes made in one event-loop turn
    std::unique_ptr<AnalysisInputs> m_requested;    // the latest settings asked for
    std::shared_ptr<const AnalysisResults> m_shown; // the results the charts are drawn from
    std::vector<std::shared_ptr<const AnalysisResults>>
        m_recent;                             // newest last: going back is instant
    std::vector<std::unique_ptr<Run>> m_runs; // running, the newest last; older ones cancelled
    quint64 m_generation = 0;
    bool m_busy = false;
    QString m_error;
};

} // namespace flashviz::gui
