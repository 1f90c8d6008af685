#include "pages/analysis/analysis_view.h"
#include "session/worker_pool.h"

#include "pages/analysis/analysis_charts.h"
#include "pages/analysis/analysis_data.h"
#include "pages/page_style.h"

#include "core/errors.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QEventLoop>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace flashviz::gui {

struct AnalysisView::Run {
    quint64 generation = 0;
    std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<int>> done = std::make_shared<std::atomic<int>>(0);
    QFutureWatcher<AnalysisOutcome>* watcher = nullptr;
};

AnalysisView::AnalysisView(QWidget* parent) : QWidget(parent) {
    m_list = new QListWidget(this);
    m_list->addItems(analysisChartTitles());
    m_list->setObjectName(QStringLiteral("analysisChartList"));
    m_list->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_list->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("analysisMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setText(tr("The charts appear once the settings are known."));

    m_stack = new QStackedWidget(this);
    for (int i = 0; i < AnalysisChartCount; ++i) {
        auto* page = new QWidget(m_stack);
        auto* row = new QHBoxLayout(page);
        row->setContentsMargins(0, 0, 0, 0);
        row->setSpacing(0);
        for (auto* list : {&m_views, &m_secondViews}) {
            auto* view = new QChartView(new QChart, page);
            view->setRenderHint(QPainter::Antialiasing);
            view->setMinimumSize(240, 240);
            row->addWidget(view, 1);
            list->append(view);
        }
        m_secondViews.back()->hide();
        m_stack->addWidget(page);
        m_captions.append(QString());
        m_stale.append(false);
    }

    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("analysisCaption"));
    m_caption->setWordWrap(true);

    m_progress = new QProgressBar(this);
    m_progress->setRange(0, analysisStepCount(AnalysisPlan{}));
    m_progress->setFormat(tr("Computing the analysis: step %v of %m"));
    m_progress->setTextVisible(true);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setToolTip(tr("Stop this computation and keep the charts shown"));
    connect(m_cancel, &QPushButton::clicked, this, &AnalysisView::cancel);
    auto* busyRow = new QHBoxLayout;
    busyRow->addWidget(m_progress, 1);
    busyRow->addWidget(m_cancel);
    m_progress->hide();
    m_cancel->hide();

    auto* right = new QVBoxLayout;
    right->addWidget(m_message);
    right->addWidget(m_stack, 1);
    right->addWidget(m_caption);
    right->addLayout(busyRow);
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

AnalysisView::~AnalysisView() {
    // A worker holds only copies and shared flags, never this widget: tell it to stop and let
    // it wind down on its own instead of making the window wait for it to close.
    for (auto& run : m_runs) {
        run->cancelled->store(true);
        run->watcher->disconnect(this);
    }
}

void AnalysisView::setSettings(const ProblemSpec& spec, const FlashOptions& options,
                               const HardwareProfile& hardware) {
    AnalysisInputs inputs{spec, options, hardware};
    QString refusal;
    try {
        validateAnalysisInputs(inputs);
    } catch (const EngineError& error) {
        refusal = QString::fromUtf8(error.what());
    }
    if (refusal.isEmpty() && m_error.isEmpty() && m_requested && sameAnalysis(*m_requested, inputs))
        return;
    // A newer request makes every running one stale.
    ++m_generation;
    for (auto& run : m_runs)
        run->cancelled->store(true);
    m_startTimer->stop();
    m_requested = std::make_unique<AnalysisInputs>(std::move(inputs));
    if (!refusal.isEmpty()) {
        setBusy(false);
        refuse(refusal);
        return;
    }
    if (m_shown && sameAnalysis(m_shown->inputs, *m_requested)) {
        m_error.clear();
        m_message->hide();
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
    m_error.clear();
    m_message->hide();
    std::erase(m_recent, results);
    m_recent.push_back(results);
    constexpr std::size_t kKeep = 4;
    if (m_recent.size() > kKeep) m_recent.erase(m_recent.begin());
    m_shown = std::move(results);
    rebuildCharts();
    emit chartsUpdated();
}

void AnalysisView::refuse(const QString& message) {
    m_error = message;
    showMessage(
        m_shown ? tr("These settings were refused: %1 The charts still show the earlier settings.")
                      .arg(m_error)
                : tr("These settings were refused: %1").arg(m_error),
        true);
    emit failed(m_error);
}

void AnalysisView::startPending() {
    if (!m_requested) return;
    auto run = std::make_unique<Run>();
    run->generation = m_generation;
    auto* watcher = new QFutureWatcher<AnalysisOutcome>(this);
    run->watcher = watcher;
    const AnalysisInputs inputs = *m_requested;
    // Runs of the algorithms are taken over from a recent result computed the same way.
    std::shared_ptr<const AnalysisResults> previous = m_shown;
    for (const auto& recent : m_recent)
        if (sharesRuns(*recent, inputs, AnalysisPlan{})) previous = recent;
    const quint64 generation = run->generation;
    const auto cancelled = run->cancelled;
    const auto done = run->done;
    // The watcher and its poll outlive the Run (the Run goes when the computation ends, the
    // watcher on a later turn of the event loop): what they call holds copies of the generation
    // and the shared atomics, never the Run. The poll stops when the run ends.
    auto* poll = new QTimer(watcher);
    connect(poll, &QTimer::timeout, this, [this, generation, done] {
        if (generation == m_generation) m_progress->setValue(done->load());
    });
    // Called by the watcher itself, so the watcher and its child poll are alive here.
    connect(watcher, &QFutureWatcher<AnalysisOutcome>::finished, this,
            [this, watcher, poll, generation] {
                poll->stop();
                const AnalysisOutcome outcome = watcher->result();
                watcher->deleteLater();
                std::erase_if(m_runs, [watcher](const auto& r) { return r->watcher == watcher; });
                finished(generation, outcome);
            });
    m_runs.push_back(std::move(run));
    m_progress->setValue(0);
    // The worker only touches atomics it shares with this run; the GUI thread polls them.
    watcher->setFuture(QtConcurrent::run(&workerPool(), [inputs, previous, cancelled, done] {
        return computeAnalysis(
            inputs,
            [cancelled, done](int step, int) {
                done->store(step);
                return !cancelled->load();
            },
            AnalysisPlan{}, previous.get());
    }));
    poll->start(50);
}

void AnalysisView::finished(quint64 generation, const AnalysisOutcome& outcome) {
    if (generation != m_generation) return; // stale: newer settings were asked for since
    setBusy(false);
    if (outcome.cancelled) {
        m_requested.reset(); // asking for the same settings again computes them
        showMessage(tr("Stopped. The charts still show the earlier settings."), false);
        return;
    }
    if (!outcome.results) {
        refuse(QString::fromStdString(outcome.error));
        return;
    }
    present(std::make_shared<const AnalysisResults>(*outcome.results));
}

void AnalysisView::cancel() {
    if (!m_busy) return;
    m_startTimer->stop();
    for (auto& run : m_runs)
        run->cancelled->store(true);
    ++m_generation;
    m_requested.reset();
    setBusy(false);
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
    auto replace = [this](QChartView* view, QChart* chart) {
        QChart* old = view->chart();
        applyChartFonts(chart, font(), kAnalysisChartFonts);
        view->setChart(chart);
        delete old;
    };
    replace(m_views[index], page.chart);
    replace(m_secondViews[index], page.second ? page.second : new QChart);
    m_secondViews[index]->setVisible(page.second != nullptr);
    m_captions[index] = page.caption;
}

void AnalysisView::updateCaption() {
    const int index = currentChart();
    m_caption->setText(index >= 0 && index < m_captions.size() ? m_captions[index] : QString());
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

QString AnalysisView::errorText() const {
    return m_error;
}

bool AnalysisView::isBusy() const {
    return m_busy;
}

bool AnalysisView::waitForIdle(int timeoutMs) {
    if (!m_busy) return true;
    QEventLoop loop;
    connect(this, &AnalysisView::busyChanged, &loop, [&loop](bool busy) {
        if (!busy) loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    return !m_busy;
}

const AnalysisResults* AnalysisView::results() const {
    return m_shown.get();
}

void AnalysisView::setBusy(bool busy) {
    if (busy == m_busy) return;
    m_busy = busy;
    m_progress->setVisible(busy);
    m_cancel->setVisible(busy);
    if (busy) m_progress->setValue(0);
    emit busyChanged(busy);
}

void AnalysisView::showMessage(const QString& text, bool error) {
    showPageMessage(m_message, text, error);
}

void AnalysisView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) applyFonts();
}

void AnalysisView::applyFonts() {
    const QFont base = font();
    m_list->setFont(scaledFont(base, 1.05));
    m_caption->setFont(scaledFont(base, 1.15));
    m_message->setFont(base);
    for (QChartView* view : m_views)
        applyChartFonts(view->chart(), base, kAnalysisChartFonts);
    for (QChartView* view : m_secondViews)
        applyChartFonts(view->chart(), base, kAnalysisChartFonts);
    m_list->updateGeometry();
}

} // namespace flashviz::gui
