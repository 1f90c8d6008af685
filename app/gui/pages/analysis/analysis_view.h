#pragma once
// The analysis page: the explainer's nine demonstrations as charts, one at a time, computed by
// the engine for the current settings. Work runs on a worker thread; the charts on screen are
// replaced only by a finished computation for the latest settings, and a refused setting leaves
// them in place with the engine's message above them.
#include "pages/page.h"

#include "core/hardware.h"
#include "core/options.h"
#include "core/problem.h"

#include <QStringList>

#include <memory>
#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QLabel;
class QLayout;
class QListWidget;
class QStackedWidget;
class QTimer;
QT_END_NAMESPACE

namespace flashviz::gui {

struct AnalysisInputs;
struct AnalysisOutcome;
struct AnalysisResults;

class AnalysisView : public Page {
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
    QString notes(int index) const; // the caption's tooltip (the model's assumptions)
    const AnalysisResults* results() const; // what the charts on screen were drawn from

  public slots:
    void cancel() override; // stops the running computation; the charts on screen stay

  signals:
    void chartsUpdated();

  protected:
    void showBusy(bool busy) override;
    void applyLabelFonts() override;

  private:
    void makeChartPages();
    QLayout* makeBusyRow(); // the progress bar and Cancel
    void startPending();
    void finished(const AnalysisOutcome& outcome);
    void stopped();
    void rebuildCharts();
    void ensurePage(int index) const; // builds a page from m_shown the first time it is needed
    void refuse(const QString& message);
    void present(std::shared_ptr<const AnalysisResults> results);
    void updateCaption();

    QListWidget* m_list = nullptr;
    QStackedWidget* m_stack = nullptr;
    QLabel* m_caption = nullptr;
    QList<QChartView*> m_views;       // one per page
    QList<QChartView*> m_secondViews; // the right-hand panels, hidden where a page has none
    mutable QStringList m_captions;
    mutable QStringList m_notes;
    mutable QList<bool> m_stale; // pages still showing older results than m_shown

    QTimer* m_startTimer = nullptr; // coalesces settings changes made in one event-loop turn
    std::unique_ptr<AnalysisInputs> m_requested;    // the latest settings asked for
    std::shared_ptr<const AnalysisResults> m_shown; // the results the charts are drawn from
    std::vector<std::shared_ptr<const AnalysisResults>>
        m_recent; // newest last: going back is instant
};

} // namespace flashviz::gui
