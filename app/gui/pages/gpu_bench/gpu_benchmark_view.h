#pragma once
// The GPU benchmark page: standard attention against FlashAttention measured on this machine's
// GPU for a chosen range of n, drawn as time, throughput and device memory against n. The
// measurement runs on a worker thread with progress and a Cancel button; each finished run is
// saved (gpu_bench_results.h) and shown again the next time the page opens. Without a usable GPU
// the Run button is off, a line says why, and the last saved results are shown if there are any.
#include "pages/gpu_bench/gpu_bench_results.h"

#include "kernels/backend_registry.h"

#include <QWidget>

#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
QT_END_NAMESPACE

namespace flashviz::gui {

class GpuBenchmarkView : public QWidget {
    Q_OBJECT
  public:
    // The charts: median time, throughput, device memory.
    enum Chart { TimeChart = 0, ThroughputChart = 1, MemoryChart = 2, ChartCount = 3 };

    explicit GpuBenchmarkView(QWidget* parent = nullptr);
    ~GpuBenchmarkView() override;

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
    QString errorText() const;  // empty when the last action succeeded
    QString captionText() const;
    QChart* chart(int index) const;
    const std::optional<GpuBenchRecord>& shownRecord() const { return m_shown; }
    bool isBusy() const { return m_busy; }
    bool waitForIdle(int timeoutMs = 600000);

  public slots:
    void run();    // validates the controls' request and measures it on the worker thread
    void cancel(); // stops after the point being measured; the charts on screen stay

  signals:
    void busyChanged(bool busy);
    void resultsShown();
    void failed(const QString& message);

  protected:
    void changeEvent(QEvent* event) override;

  private:
    struct Run;
    struct Outcome;

    void finished(const Outcome& outcome);
    void rebuildCharts();
    void updateStatus();
    void setBusy(bool busy);
    void showMessage(const QString& text, bool error);
    void applyFonts();

    GpuBenchAvailability m_availability;
    QString m_resultsPath;
    std::optional<GpuBenchRecord> m_shown;
    std::unique_ptr<Run> m_run;
    bool m_busy = false;
    QString m_error;

    QLabel* m_status = nullptr;
    QLabel* m_message = nullptr;
    QComboBox* m_from = nullptr;
    QComboBox* m_to = nullptr;
    QComboBox* m_headDim = nullptr;
    QCheckBox* m_causal = nullptr;
    QList<QCheckBox*> m_variants;
    QSpinBox* m_repeats = nullptr;
    QPushButton* m_runButton = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QList<QChartView*> m_views;
    QLabel* m_caption = nullptr;
};

} // namespace flashviz::gui
