#include "pages/analysis/analysis_view.h"

#include "pages/analysis/analysis_charts.h"
#include "pages/analysis/analysis_data.h"
#include "style/format.h"

#include "core/errors.h"

#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace flashviz::gui {

AnalysisView::AnalysisView(QWidget* parent) : Page(kAnalysisChartFonts, parent) {
    m_list = new QListWidget(this);
    m_list->addItems(analysisChartTitles());
    m_list->setObjectName(QStringLiteral("analysisChartList"));
    m_list->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_list->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);

    messageLine()->setObjectName(QStringLiteral("analysisMessage"));
    messageLine()->setText(tr("The charts appear once the settings are known."));

    makeChartPages();

    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("analysisCaption"));
    m_caption->setWordWrap(true);

    auto* right = new QVBoxLayout;
    right->addWidget(messageLine());
    right->addWidget(m_stack, 1);
    right->addWidget(m_caption);
    right->addLayout(makeBusyRow());
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(m_list);
    layout->addLayout(right, 1);

    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row < 0) return;
        ensurePage(row);
        m_stack->setCurrentIndex(row);
        updateCaption();
    });
    m_list->setCurrentRow(0);

    m_startTimer = new QTimer(this);
    m_startTimer->setSingleShot(true);
    m_startTimer->setInterval(0);
    connect(m_startTimer, &QTimer::timeout, this, &AnalysisView::startPending);

    applyFonts();
}

// One page of the stack per chart, each with a second panel hidden until a chart needs it.
void AnalysisView::makeChartPages() {
    m_stack = new QStackedWidget(this);
    for (int i = 0; i < AnalysisChartCount; ++i) {
        auto* page = new QWidget(m_stack);
        auto* row = new QHBoxLayout(page);
        row->setContentsMargins(0, 0, 0, 0);
        row->setSpacing(0);
        for (auto* list : {&m_views, &m_secondViews}) {
            QChartView* view = makeChartView(page);
            view->setMinimumSize(240, 240);
            row->addWidget(view, 1);
            list->append(view);
        }
        m_secondViews.back()->hide();
        m_stack->addWidget(page);
        m_captions.append(QString());
        m_notes.append(QString());
        m_stale.append(false);
    }
}

QLayout* AnalysisView::makeBusyRow() {
    progressBar()->setRange(0, analysisStepCount(AnalysisPlan{}));
    progressBar()->setFormat(tr("Computing the analysis: step %v of %m"));
    cancelButton()->setToolTip(tr("Stop this computation and keep the charts shown"));
    cancelButton()->hide();
    setTabOrder(m_secondViews.back(), cancelButton()); // last, where it was before the page base
    auto* busyRow = new QHBoxLayout;
    busyRow->addWidget(progressBar(), 1);
    busyRow->addWidget(cancelButton());
    return busyRow;
}

// The running job, if any, holds only copies: AsyncJobs tells it to stop, and it winds down alone
// instead of making the window wait for it to close.
AnalysisView::~AnalysisView() = default;

void AnalysisView::setSettings(const ProblemSpec& spec, const FlashOptions& options,
                               const HardwareProfile& hardware) {
    AnalysisInputs inputs{spec, options, hardware};
    QString refusal;
    try {
        validateAnalysisInputs(inputs);
    } catch (const EngineError& error) {
        refusal = QString::fromUtf8(error.what());
    }
    if (refusal.isEmpty() && errorText().isEmpty() && m_requested &&
        sameAnalysis(*m_requested, inputs))
        return;
    // A newer request makes the running one stale.
    dropJob();
    m_startTimer->stop();
    m_requested = std::make_unique<AnalysisInputs>(std::move(inputs));
    if (!refusal.isEmpty()) {
        setBusy(false);
        refuse(refusal);
        return;
    }
    if (m_shown && sameAnalysis(m_shown->inputs, *m_requested)) {
        clearMessage();
        setBusy(false);
        return;
    }
    for (const auto& recent : m_recent)
        if (sameAnalysis(recent->inputs, *m_requested)) {
            setBusy(false);
            present(recent);
            return;
        }
    setBusy(true);
    m_startTimer->start();
}

void AnalysisView::present(std::shared_ptr<const AnalysisResults> results) {
    clearMessage();
    std::erase(m_recent, results);
    m_recent.push_back(results);
    constexpr std::size_t kKeep = 4;
    if (m_recent.size() > kKeep) m_recent.erase(m_recent.begin());
    m_shown = std::move(results);
    rebuildCharts();
    emit chartsUpdated();
}

void AnalysisView::refuse(const QString& message) {
    fail(message,
         m_shown ? tr("These settings were refused: %1 The charts still show the earlier settings.")
                       .arg(message)
                 : tr("These settings were refused: %1").arg(message));
}

void AnalysisView::startPending() {
    if (!m_requested) return;
    const AnalysisInputs inputs = *m_requested;
    // Runs of the algorithms are taken over from a recent result computed the same way.
    std::shared_ptr<const AnalysisResults> previous = m_shown;
    for (const auto& recent : m_recent)
        if (sharesRuns(*recent, inputs, AnalysisPlan{})) previous = recent;
    runJob<AnalysisOutcome>(
        [inputs, previous](JobControl& control) {
            return computeAnalysis(
                inputs,
                [&control](int step, int) {
                    control.report(step);
                    return !control.cancelled();
                },
                AnalysisPlan{}, previous.get());
        },
        [this](const AnalysisOutcome& outcome) { finished(outcome); });
}

void AnalysisView::finished(const AnalysisOutcome& outcome) {
    setBusy(false);
    if (outcome.cancelled) {
        stopped();
        return;
    }
    if (!outcome.results) {
        refuse(QString::fromStdString(outcome.error));
        return;
    }
    present(std::make_shared<const AnalysisResults>(*outcome.results));
}

void AnalysisView::cancel() {
    if (!isBusy()) return;
    m_startTimer->stop();
    dropJob();
    setBusy(false);
    stopped();
}

void AnalysisView::stopped() {
    m_requested.reset(); // asking for the same settings again computes them
    showMessage(tr("Stopped. The charts still show the earlier settings."), false);
}

void AnalysisView::rebuildCharts() {
    // Only the page on screen is built now; the others when first shown or asked for, so that
    // new results never hold the GUI thread for long.
    for (int i = 0; i < m_stale.size(); ++i)
        m_stale[i] = true;
    ensurePage(currentChart());
    updateCaption();
}

void AnalysisView::ensurePage(int index) const {
    if (!m_shown || index < 0 || index >= m_stale.size() || !m_stale[index]) return;
    m_stale[index] = false;
    const ChartPage page = buildAnalysisChart(*m_shown, index);
    setChart(m_views[index], page.chart);
    setChart(m_secondViews[index], page.second ? page.second : new QChart);
    m_secondViews[index]->setVisible(page.second != nullptr);
    m_captions[index] = page.caption;
    m_notes[index] = page.notes;
}

void AnalysisView::updateCaption() {
    const int index = currentChart();
    const bool known = index >= 0 && index < m_captions.size();
    m_caption->setText(known ? unbroken(m_captions[index]) : QString());
    m_caption->setToolTip(known ? m_notes[index] : QString());
}

QString AnalysisView::notes(int index) const {
    ensurePage(index);
    return index >= 0 && index < m_notes.size() ? m_notes[index] : QString();
}

QStringList AnalysisView::chartTitles() const {
    return analysisChartTitles();
}

void AnalysisView::showChart(int index) {
    if (index < 0 || index >= m_views.size()) return;
    m_list->setCurrentRow(index);
}

int AnalysisView::currentChart() const {
    return m_stack->currentIndex();
}

void AnalysisView::setNavigationVisible(bool visible) {
    m_list->setVisible(visible);
}

QChart* AnalysisView::chart(int index, int panel) const {
    ensurePage(index);
    if (index < 0 || index >= m_views.size() || panel < 0 || panel >= panelCount(index))
        return nullptr;
    return (panel == 0 ? m_views : m_secondViews)[index]->chart();
}

int AnalysisView::panelCount(int index) const {
    if (index < 0 || index >= m_views.size()) return 0;
    ensurePage(index);
    return m_secondViews[index]->isVisibleTo(m_stack->widget(index)) ? 2 : 1;
}

QString AnalysisView::caption(int index) const {
    ensurePage(index);
    return index >= 0 && index < m_captions.size() ? m_captions[index] : QString();
}

const AnalysisResults* AnalysisView::results() const {
    return m_shown.get();
}

void AnalysisView::showBusy(bool busy) {
    cancelButton()->setVisible(busy);
}

void AnalysisView::applyLabelFonts() {
    const QFont base = font();
    m_list->setFont(scaledFont(base, 1.05));
    m_caption->setFont(scaledFont(base, 1.15));
    messageLine()->setFont(base);
    m_list->updateGeometry();
}

} // namespace flashviz::gui
