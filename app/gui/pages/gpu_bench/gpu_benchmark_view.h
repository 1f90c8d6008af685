#pragma once
// The GPU benchmark page: standard attention against FlashAttention measured on this machine's
// GPU for a chosen range of n, drawn as time, throughput and device memory against n. The
// measurement runs on a worker thread with progress and a Cancel button; each finished run is
// saved (gpu_bench_results.h) and shown again the next time the page opens. Without a usable GPU
// the Run button is off and a line says why. Until the user's own results exist (or when their
// file cannot be read) the page shows the H200 measurement FlashViz ships, labelled as such.
#include "pages/gpu_bench/gpu_bench_results.h"
#include "pages/page.h"

#include "kernels/backend_registry.h"

#include <optional>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLayout;
class QPushButton;
class QSpinBox;
QT_END_NAMESPACE

namespace flashviz::gui {

class GpuBenchmarkView : public Page {
    Q_OBJECT
  public:
    // The charts: median time, throughput, device memory.
    enum Chart { TimeChart = 0, ThroughputChart = 1, MemoryChart = 2, ChartCount = 3 };

    explicit GpuBenchmarkView(QWidget* parent = nullptr);

    // What the controls ask for now.
    GpuBenchRequest request() const;
    // Sets the controls (sizes become the from/to range of powers of two they span).
    void setRequest(const GpuBenchRequest& request);

    // Where results are saved and loaded from; gpuBenchResultsPath() unless changed.
    QString resultsPath() const;
    void setResultsPath(const QString& path);
    // Loads and shows a saved file; on failure keeps the charts and shows the message.
    bool loadResults(const QString& path);
    void showRecord(const GpuBenchRecord& record);

    const GpuBenchAvailability& availability() const { return m_availability; }
    bool canRun() const;
    QString statusText() const; // the line about the GPU and the results shown
    QString captionText() const;
    QChart* chart(int index) const;
    const std::optional<GpuBenchRecord>& shownRecord() const { return m_shown; }
    bool showsShippedResults() const { return m_shown && m_shownIsShipped; }

  public slots:
    void run();             // validates the controls' request and measures it on the worker thread
    void cancel() override; // stops after the point being measured; the charts on screen stay

  signals:
    void resultsShown();

  protected:
    void showBusy(bool busy) override;
    void applyLabelFonts() override;

  private:
    struct Outcome;

    QLayout* makeRequestControls(); // the range of n, d, causal, repeats, the pass and the methods
    void makePassControl();
    GpuBenchPass chosenPass() const;
    void markVariantsForPass(); // the methods without a kernel for the chosen pass are off
    QLayout* makeRunRow();          // Run, Cancel and the progress bar
    QLayout* makeCharts();
    void finished(const Outcome& outcome);
    void showShippedRecord(); // keeps any message on screen (why the user's file was not shown)
    void present(const GpuBenchRecord& record, bool shipped);
    void rebuildCharts();
    void updateStatus();
    QString shownText() const;

    GpuBenchAvailability m_availability;
    QString m_resultsPath;
    std::optional<GpuBenchRecord> m_shown;
    bool m_shownIsShipped = false;

    QLabel* m_status = nullptr;
    QComboBox* m_from = nullptr;
    QComboBox* m_to = nullptr;
    QComboBox* m_headDim = nullptr;
    QCheckBox* m_causal = nullptr;
    QList<QCheckBox*> m_variants;
    QSpinBox* m_repeats = nullptr;
    QComboBox* m_pass = nullptr;
    QPushButton* m_runButton = nullptr;
    QList<QChartView*> m_views;
    QLabel* m_legend = nullptr; // the methods' colours, for the three charts
    QLabel* m_caption = nullptr;
};

} // namespace flashviz::gui
