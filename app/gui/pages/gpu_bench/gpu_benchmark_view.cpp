#include "pages/gpu_bench/gpu_benchmark_view.h"
#include "session/worker_pool.h"

#include "pages/page_style.h"
#include "style/paint_util.h"

#include "core/errors.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QEventLoop>
#include <QFile>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace flashviz::gui {

struct GpuBenchmarkView::Outcome {
    std::vector<GpuBenchPoint> points;
    GpuBenchRequest request;
    bool cancelled = false;
    std::string error;
};

struct GpuBenchmarkView::Run {
    std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<int>> done = std::make_shared<std::atomic<int>>(0);
    QFutureWatcher<Outcome>* watcher = nullptr;
    QTimer* poll = nullptr;
};

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kSmallestN = 128;
constexpr int kLargestN = 16384;

struct VariantStyle {
    const char* id;
    const char* label;      // the check box's
    const char* shortLabel; // the legend's
    QColor color;
    Qt::PenStyle pen;
};

const std::vector<VariantStyle>& variantStyles() {
    static const std::vector<VariantStyle> styles{
        {kGpuBenchStandardFp32, "standard fp32 (cuBLAS, softmax, cuBLAS)", "standard fp32",
         QColor(0xc0, 0x39, 0x2b), Qt::SolidLine},
        {kGpuBenchFlashFp32, "flash fp32", "flash fp32", QColor(0x21, 0x6f, 0xb5), Qt::SolidLine},
        {kGpuBenchFlashFp16, "flash fp16 (tensor cores)", "flash fp16", QColor(0x1e, 0x84, 0x49),
         Qt::SolidLine},
        {kGpuBenchFlashBf16, "flash bf16 (tensor cores)", "flash bf16", QColor(0x8e, 0x44, 0xad),
         Qt::DashLine},
    };
    return styles;
}

QString variantLabel(const std::string& id) {
    for (const VariantStyle& style : variantStyles())
        if (id == style.id) return QString::fromUtf8(style.label);
    return QString::fromStdString(id);
}

QString formatMs(double ms) {
    return ms >= 10 ? QString::number(ms, 'f', 1) : QString::number(ms, 'f', 2);
}

QString formatGiB(double bytes) {
    if (bytes < 1024.0 * 1024.0 * 1024.0)
        return QString::number(bytes / (1024.0 * 1024.0), 'f', 0) + QStringLiteral(" MiB");
    return QString::number(bytes / kGiB, 'f', 1) + QStringLiteral(" GiB");
}

QString shapeText(const GpuBenchRequest& r) {
    return QObject::tr("d = %1, %2, batch × n = %3 tokens, heads × d = %4, median of %5")
        .arg(r.headDim)
        .arg(r.causal ? QObject::tr("causal") : QObject::tr("non-causal"))
        .arg(r.tokens)
        .arg(r.headsTimesDim)
        .arg(r.repeats);
}

const GpuBenchPoint* findPoint(const GpuBenchRecord& record, const std::string& variant, int n) {
    for (const GpuBenchPoint& p : record.points)
        if (p.variant == variant && p.n == n && p.measured()) return &p;
    return nullptr;
}

// What to notice, read from the measured numbers: the speed-up at the largest n both ran at,
// and the memory of standard attention growing with n^2 while flash's stays flat.
QString captionFor(const GpuBenchRecord& record) {
    QStringList parts;
    std::vector<int> sizes = record.request.sizes;
    std::sort(sizes.begin(), sizes.end(), std::greater<>());
    const char* flashOrder[] = {kGpuBenchFlashFp16, kGpuBenchFlashBf16, kGpuBenchFlashFp32};
    for (const int n : sizes) {
        const GpuBenchPoint* standard = findPoint(record, kGpuBenchStandardFp32, n);
        if (!standard) continue;
        for (const char* variant : flashOrder) {
            const GpuBenchPoint* flash = findPoint(record, variant, n);
            if (!flash) continue;
            parts << QObject::tr("At n = %1, %2 takes %3 ms where standard attention takes %4 "
                                 "ms: %5× faster (%6 against %7 TFLOP/s).")
                         .arg(n)
                         .arg(variantLabel(variant))
                         .arg(formatMs(flash->medianMs))
                         .arg(formatMs(standard->medianMs))
                         .arg(QString::number(standard->medianMs / flash->medianMs, 'f', 1))
                         .arg(QString::number(flash->tflops, 'f', 0))
                         .arg(QString::number(standard->tflops, 'f', 1));
            if (variant != std::string(kGpuBenchFlashFp32))
                if (const GpuBenchPoint* fp32 = findPoint(record, kGpuBenchFlashFp32, n))
                    parts << QObject::tr("In fp32 too, flash is %1× faster.")
                                 .arg(QString::number(standard->medianMs / fp32->medianMs, 'f', 2));
            break;
        }
        break;
    }
    // Which arithmetic "flash fp32" was: its kernel's name says (kernels/cuda_backend.h).
    for (const GpuBenchPoint& p : record.points)
        if (p.variant == kGpuBenchFlashFp32 && !p.kernel.empty()) {
            const QString kernel = QString::fromStdString(p.kernel);
            parts << (kernel.startsWith(QLatin1String("tf32x3_"))
                          ? QObject::tr("flash fp32 ran %1: tensor cores, each fp32 product as "
                                        "three TF32 products, which keeps fp32's accuracy.")
                          : QObject::tr("flash fp32 ran %1: fp32 multiply-adds on the CUDA "
                                        "cores."))
                         .arg(kernel);
            break;
        }
    // Memory: the standard method's n x n scores against flash's none.
    std::vector<const GpuBenchPoint*> standards, flashes;
    for (const GpuBenchPoint& p : record.points)
        if (p.measured()) (p.variant == kGpuBenchStandardFp32 ? standards : flashes).push_back(&p);
    auto byN = [](const GpuBenchPoint* a, const GpuBenchPoint* b) { return a->n < b->n; };
    if (standards.size() >= 2) {
        const auto [lo, hi] = std::minmax_element(standards.begin(), standards.end(), byN);
        parts << QObject::tr("Standard attention's n × n scores grow from %1 at n = %2 to %3 at "
                             "n = %4;")
                     .arg(formatGiB((*lo)->scratchBytes))
                     .arg((*lo)->n)
                     .arg(formatGiB((*hi)->scratchBytes))
                     .arg((*hi)->n);
    }
    if (!flashes.empty()) {
        double lo = std::numeric_limits<double>::max(), hi = 0;
        for (const GpuBenchPoint* p : flashes) {
            lo = std::min(lo, gpuBenchWorkingBytes(record.request, *p));
            hi = std::max(hi, gpuBenchWorkingBytes(record.request, *p));
        }
        parts << QObject::tr("flash never stores them, so its memory stays flat (%1) at every n.")
                     .arg(lo == hi ? formatGiB(lo)
                                   : formatGiB(lo) + QStringLiteral("–") + formatGiB(hi));
    }
    int unmeasured = 0;
    QString firstNote;
    for (const GpuBenchPoint& p : record.points)
        if (!p.measured()) {
            if (unmeasured++ == 0)
                firstNote = QStringLiteral("%1 at n = %2: %3")
                                .arg(variantLabel(p.variant))
                                .arg(p.n)
                                .arg(QString::fromStdString(p.note));
        }
    if (unmeasured > 0)
        parts << QObject::tr("%n point(s) not measured (%1).", nullptr, unmeasured).arg(firstNote);
    return parts.join(QLatin1Char(' '));
}

} // namespace

GpuBenchmarkView::GpuBenchmarkView(QWidget* parent)
    : QWidget(parent), m_availability(gpuBenchmarkAvailability()),
      m_resultsPath(gpuBenchResultsPath()) {
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("gpuBenchStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setStyleSheet(QStringLiteral("QLabel { background: #f4f6f9; color: #1f2d3d; "
                                           "padding: 0.35em; border-left: 4px solid #216fb5; }"));

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("gpuBenchMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->hide();

    m_from = new QComboBox(this);
    m_to = new QComboBox(this);
    for (int n = kSmallestN; n <= kLargestN; n *= 2) {
        m_from->addItem(QString::number(n), n);
        m_to->addItem(QString::number(n), n);
    }
    m_from->setObjectName(QStringLiteral("gpuBenchFrom"));
    m_to->setObjectName(QStringLiteral("gpuBenchTo"));
    m_headDim = new QComboBox(this);
    m_headDim->setObjectName(QStringLiteral("gpuBenchHeadDim"));
    m_headDim->addItem(QStringLiteral("64"), 64);
    m_headDim->addItem(QStringLiteral("128"), 128);
    m_causal = new QCheckBox(tr("causal"), this);
    m_causal->setObjectName(QStringLiteral("gpuBenchCausal"));
    m_repeats = new QSpinBox(this);
    m_repeats->setObjectName(QStringLiteral("gpuBenchRepeats"));
    m_repeats->setRange(1, 100);
    m_repeats->setToolTip(tr("Timed runs per point after one warm-up; the median is drawn"));
    for (const VariantStyle& style : variantStyles()) {
        auto* box = new QCheckBox(QString::fromUtf8(style.label), this);
        box->setObjectName(QStringLiteral("gpuBenchVariant-%1").arg(QString::fromUtf8(style.id)));
        box->setProperty("variant", QString::fromUtf8(style.id));
        m_variants.append(box);
    }

    m_runButton = new QPushButton(tr("Run"), this);
    m_runButton->setObjectName(QStringLiteral("gpuBenchRun"));
    m_runButton->setToolTip(tr("Measure every chosen method at every n of the range on this GPU"));
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_cancelButton->setObjectName(QStringLiteral("gpuBenchCancel"));
    m_cancelButton->setToolTip(tr("Stop after the point being measured; the charts stay"));
    m_cancelButton->setEnabled(false);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("gpuBenchProgress"));
    m_progress->setFormat(tr("measured %v of %m points"));
    m_progress->setTextVisible(true);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    connect(m_runButton, &QPushButton::clicked, this, &GpuBenchmarkView::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &GpuBenchmarkView::cancel);

    auto* controls = new QGridLayout;
    controls->addWidget(new QLabel(tr("n from"), this), 0, 0);
    controls->addWidget(m_from, 0, 1);
    controls->addWidget(new QLabel(tr("to"), this), 0, 2);
    controls->addWidget(m_to, 0, 3);
    controls->addWidget(new QLabel(tr("head dim d"), this), 0, 4);
    controls->addWidget(m_headDim, 0, 5);
    controls->addWidget(m_causal, 0, 6);
    controls->addWidget(new QLabel(tr("repeats"), this), 0, 7);
    controls->addWidget(m_repeats, 0, 8);
    auto* variantRow = new QHBoxLayout;
    for (QCheckBox* box : m_variants)
        variantRow->addWidget(box);
    variantRow->addStretch(1);
    controls->addLayout(variantRow, 1, 0, 1, 9);
    controls->setColumnStretch(9, 1);
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(m_runButton);
    runRow->addWidget(m_cancelButton);
    runRow->addWidget(m_progress, 1);
    runRow->addStretch(0); // keeps the buttons at the left while the bar is hidden

    auto* charts = new QHBoxLayout;
    for (int i = 0; i < ChartCount; ++i) {
        auto* view = new QChartView(new QChart, this);
        view->setObjectName(QStringLiteral("gpuBenchChart%1").arg(i));
        view->setRenderHint(QPainter::Antialiasing);
        view->setMinimumSize(280, 260);
        charts->addWidget(view, 1);
        m_views.append(view);
    }
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("gpuBenchCaption"));
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_status);
    layout->addWidget(m_message);
    layout->addLayout(controls);
    layout->addLayout(runRow);
    layout->addLayout(charts, 1);
    layout->addWidget(m_caption);

    setRequest(GpuBenchRequest{});
    if (QFile::exists(m_resultsPath)) loadResults(m_resultsPath);
    setBusy(false);
    rebuildCharts();
    updateStatus();
    applyFonts();
}

GpuBenchmarkView::~GpuBenchmarkView() {
    // The worker holds only copies and shared flags: tell it to stop and let it finish alone.
    if (m_run) {
        m_run->cancelled->store(true);
        m_run->watcher->disconnect(this);
    }
}

GpuBenchRequest GpuBenchmarkView::request() const {
    GpuBenchRequest r;
    r.sizes.clear();
    for (int n = m_from->currentData().toInt(); n > 0 && n <= m_to->currentData().toInt(); n *= 2)
        r.sizes.push_back(n);
    r.headDim = m_headDim->currentData().toInt();
    r.causal = m_causal->isChecked();
    r.variants.clear();
    for (const QCheckBox* box : m_variants)
        if (box->isChecked())
            r.variants.push_back(box->property("variant").toString().toStdString());
    r.repeats = m_repeats->value();
    return r;
}

void GpuBenchmarkView::setRequest(const GpuBenchRequest& r) {
    if (!r.sizes.empty()) {
        const auto [lo, hi] = std::minmax_element(r.sizes.begin(), r.sizes.end());
        if (const int i = m_from->findData(*lo); i >= 0) m_from->setCurrentIndex(i);
        if (const int i = m_to->findData(*hi); i >= 0) m_to->setCurrentIndex(i);
    }
    if (const int i = m_headDim->findData(r.headDim); i >= 0) m_headDim->setCurrentIndex(i);
    m_causal->setChecked(r.causal);
    m_repeats->setValue(r.repeats);
    for (QCheckBox* box : m_variants) {
        const std::string id = box->property("variant").toString().toStdString();
        box->setChecked(std::find(r.variants.begin(), r.variants.end(), id) != r.variants.end());
    }
}

QString GpuBenchmarkView::resultsPath() const {
    return m_resultsPath;
}

void GpuBenchmarkView::setResultsPath(const QString& path) {
    m_resultsPath = path;
    updateStatus();
}

bool GpuBenchmarkView::loadResults(const QString& path) {
    try {
        showRecord(loadGpuBenchRecord(path));
        return true;
    } catch (const EngineError& error) {
        m_error = QString::fromUtf8(error.what());
        showMessage(m_shown ? tr("%1 The charts still show the earlier results.").arg(m_error)
                            : m_error,
                    true);
        emit failed(m_error);
        return false;
    }
}

void GpuBenchmarkView::showRecord(const GpuBenchRecord& record) {
    m_shown = record;
    m_error.clear();
    m_message->hide();
    rebuildCharts();
    updateStatus();
    emit resultsShown();
}

bool GpuBenchmarkView::canRun() const {
    return m_availability.available;
}

QString GpuBenchmarkView::statusText() const {
    return m_status->text();
}

QString GpuBenchmarkView::errorText() const {
    return m_error;
}

QString GpuBenchmarkView::captionText() const {
    return m_caption->text();
}

QChart* GpuBenchmarkView::chart(int index) const {
    return index >= 0 && index < m_views.size() ? m_views[index]->chart() : nullptr;
}

bool GpuBenchmarkView::waitForIdle(int timeoutMs) {
    if (!m_busy) return true;
    QEventLoop loop;
    connect(this, &GpuBenchmarkView::busyChanged, &loop, [&loop](bool busy) {
        if (!busy) loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    return !m_busy;
}

void GpuBenchmarkView::run() {
    if (m_busy) return;
    const GpuBenchRequest r = request();
    try {
        validateGpuBenchRequest(r);
    } catch (const EngineError& error) {
        m_error = QString::fromUtf8(error.what());
        showMessage(tr("This run was refused: %1").arg(m_error), true);
        emit failed(m_error);
        return;
    }
    if (!canRun()) {
        m_error = tr("The GPU benchmark cannot run here: %1")
                      .arg(QString::fromStdString(m_availability.reason));
        showMessage(m_error, true);
        emit failed(m_error);
        return;
    }
    m_error.clear();
    m_message->hide();
    m_run = std::make_unique<Run>();
    m_run->watcher = new QFutureWatcher<Outcome>(this);
    const auto cancelled = m_run->cancelled;
    const auto done = m_run->done;
    connect(m_run->watcher, &QFutureWatcher<Outcome>::finished, this, [this] {
        const Outcome outcome = m_run->watcher->result();
        m_run->watcher->deleteLater();
        m_run.reset();
        finished(outcome);
    });
    m_progress->setRange(0, gpuBenchPointCount(r));
    m_progress->setValue(0);
    // The worker touches only the atomics it shares with this run; the GUI thread polls them.
    m_run->watcher->setFuture(QtConcurrent::run(&workerPool(), [r, cancelled, done] {
        Outcome outcome;
        outcome.request = r;
        try {
            outcome.points = runGpuBenchmark(r, [cancelled, done](int count, int) {
                done->store(count);
                return !cancelled->load();
            });
        } catch (const std::exception& error) {
            outcome.error = error.what();
        }
        outcome.cancelled = cancelled->load();
        return outcome;
    }));
    m_run->poll = new QTimer(m_run->watcher);
    connect(m_run->poll, &QTimer::timeout, this, [this] {
        if (m_run) m_progress->setValue(m_run->done->load());
    });
    m_run->poll->start(100);
    setBusy(true);
}

void GpuBenchmarkView::cancel() {
    if (!m_run) return;
    m_run->cancelled->store(true);
    m_cancelButton->setEnabled(false);
    showMessage(tr("Stopping after the point being measured…"), false);
}

void GpuBenchmarkView::finished(const Outcome& outcome) {
    setBusy(false);
    if (!outcome.error.empty()) {
        m_error = QString::fromStdString(outcome.error);
        showMessage(m_shown ? tr("The benchmark failed: %1 The charts still show the earlier "
                                 "results.")
                                  .arg(m_error)
                            : tr("The benchmark failed: %1").arg(m_error),
                    true);
        emit failed(m_error);
        return;
    }
    if (outcome.cancelled) {
        showMessage(tr("Stopped after %1 of %2 points; nothing was saved, and the charts still "
                       "show the earlier results.")
                        .arg(outcome.points.size())
                        .arg(gpuBenchPointCount(outcome.request)),
                    false);
        return;
    }
    GpuBenchRecord record;
    record.device = QString::fromStdString(m_availability.deviceName);
    record.measured = QDateTime::currentDateTimeUtc();
    record.request = outcome.request;
    record.points = outcome.points;
    showRecord(record);
    try {
        saveGpuBenchRecord(record, m_resultsPath);
    } catch (const EngineError& error) {
        m_error = QString::fromUtf8(error.what());
        showMessage(m_error, true);
        emit failed(m_error);
    }
}

void GpuBenchmarkView::rebuildCharts() {
    const QStringList titles{tr("Median time per forward pass"), tr("Throughput"),
                             tr("Device memory")};
    for (int i = 0; i < ChartCount; ++i) {
        auto* chart = new QChart;
        chart->setTitle(titles[i]);
        chart->legend()->setAlignment(Qt::AlignBottom);
        chart->setMargins(QMargins(4, 4, 4, 4));
        if (m_shown) {
            const GpuBenchRecord& record = *m_shown;
            // Only points a chart can draw: a measured time, finite values (a record shown
            // directly has not been through the file's checks). The axes are made from what is
            // drawn, so that no value can give them an infinite or empty range.
            const auto valueOf = [&](const GpuBenchPoint& p) {
                return i == TimeChart         ? p.medianMs
                       : i == ThroughputChart ? p.tflops
                                              : gpuBenchWorkingBytes(record.request, p) / kGiB;
            };
            const auto drawn = [&](const GpuBenchPoint& p) {
                const double y = valueOf(p);
                return p.measured() && std::isfinite(p.medianMs) && p.n > 0 && std::isfinite(y) &&
                       (i == TimeChart ? y > 0 : y >= 0);
            };
            double xMin = std::numeric_limits<double>::max(), xMax = 0;
            for (const int n : record.request.sizes)
                if (n > 0) xMin = std::min(xMin, double(n)), xMax = std::max(xMax, double(n));
            for (const GpuBenchPoint& p : record.points)
                if (drawn(p))
                    xMin = std::min(xMin, double(p.n)), xMax = std::max(xMax, double(p.n));
            if (xMax <= 0) xMin = xMax = 1;
            auto* xAxis = new QLogValueAxis;
            xAxis->setBase(2);
            xAxis->setLabelFormat(QStringLiteral("%g"));
            setLogAxisRange(xAxis, xMin / 1.25, xMax * 1.25);
            xAxis->setMinorTickCount(0);
            xAxis->setTitleText(tr("sequence length n (log scale)"));
            chart->addAxis(xAxis, Qt::AlignBottom);
            QAbstractAxis* yAxis = nullptr;
            double yMin = std::numeric_limits<double>::max(), yMax = 0;
            for (const VariantStyle& style : variantStyles()) {
                auto* series = new QLineSeries;
                series->setName(QString::fromUtf8(style.shortLabel));
                series->setObjectName(QString::fromUtf8(style.id));
                QPen pen(style.color);
                pen.setWidthF(3.0);
                pen.setStyle(style.pen);
                series->setPen(pen);
                series->setPointsVisible(true);
                for (const GpuBenchPoint& p : record.points) {
                    if (p.variant != style.id || !drawn(p)) continue;
                    const double y = valueOf(p);
                    series->append(p.n, y);
                    yMin = std::min(yMin, y);
                    yMax = std::max(yMax, y);
                }
                if (series->count() == 0) {
                    delete series;
                    continue;
                }
                chart->addSeries(series);
            }
            if (i == TimeChart) {
                auto* axis = new QLogValueAxis;
                axis->setBase(10);
                axis->setLabelFormat(QStringLiteral("%g"));
                axis->setMinorTickCount(8);
                // Whole decades around the times; 10^ceil(log10(1e308 * 1.2)) was +inf, and a log
                // axis given +inf recursed until the stack overflowed (SIGSEGV).
                if (yMax > 0)
                    setLogAxisRange(axis,
                                    std::pow(10.0, std::floor(std::log10(yMin) - std::log10(1.5))),
                                    std::pow(10.0, std::ceil(std::log10(yMax) + std::log10(1.2))));
                else
                    setLogAxisRange(axis, 0.1, 10);
                axis->setTitleText(tr("median time (ms, log scale)"));
                yAxis = axis;
            } else {
                auto* axis = new QValueAxis;
                // A little room above the data, kept finite (1.7e308 * 1.08 is not) and large
                // enough for Qt Charts to tell from 0 (1e-300 is not).
                const double top =
                    yMax > 0 ? std::clamp(yMax * 1.08, 1e-6, std::max(yMax, 1e300)) : 1;
                axis->setRange(0, top);
                axis->setLabelFormat(top < 1e6 ? QStringLiteral("%.0f") : QStringLiteral("%.3g"));
                if (top < 1e6) axis->applyNiceNumbers();
                axis->setTitleText(i == ThroughputChart ? tr("TFLOP/s (4·n²·d·batch·heads / time)")
                                                        : tr("GiB in use: Q, K, V, O + scratch"));
                yAxis = axis;
            }
            chart->addAxis(yAxis, Qt::AlignLeft);
            for (QAbstractSeries* series : chart->series()) {
                series->attachAxis(xAxis);
                series->attachAxis(yAxis);
            }
        }
        QChart* old = m_views[i]->chart();
        applyChartFonts(chart, font(), kGpuBenchChartFonts);
        m_views[i]->setChart(chart);
        delete old;
    }
    m_caption->setText(m_shown ? captionFor(*m_shown) : QString());
}

void GpuBenchmarkView::updateStatus() {
    QString text;
    if (m_shown)
        text =
            tr("Showing the results measured on %1 on %2 (%3).")
                .arg(m_shown->device.isEmpty() ? tr("an unnamed GPU")
                     // A long name (a file allows 200 characters) is cut: a 10 MB one held the
                     // window for 33 s while the label wrapped it.
                     : m_shown->device.size() > 200 ? m_shown->device.left(200) + QChar(0x2026)
                                                    : m_shown->device)
                .arg(m_shown->measured.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'")))
                .arg(shapeText(m_shown->request));
    if (canRun()) {
        const QString gpu = tr("GPU: %1.").arg(QString::fromStdString(m_availability.deviceName));
        text = m_shown
                   ? gpu + QLatin1Char(' ') + text
                   : gpu + QLatin1Char(' ') + tr("Choose a range of n and the methods, then Run.");
    } else {
        const QString why = tr("No GPU benchmark on this machine: %1.")
                                .arg(QString::fromStdString(m_availability.reason));
        text = m_shown ? why + QLatin1Char(' ') + text
                       : why + QLatin1Char(' ') +
                             tr("No saved results to show (a run on a machine with an NVIDIA GPU "
                                "saves them to %1).")
                                 .arg(m_resultsPath);
    }
    m_status->setText(text);
}

void GpuBenchmarkView::setBusy(bool busy) {
    const bool changed = busy != m_busy;
    m_busy = busy;
    m_runButton->setEnabled(!busy && canRun());
    m_runButton->setToolTip(canRun() ? tr("Measure every chosen method at every n of the range")
                                     : QString::fromStdString(m_availability.reason));
    m_cancelButton->setEnabled(busy);
    m_progress->setVisible(busy);
    for (QWidget* w : std::initializer_list<QWidget*>{m_from, m_to, m_headDim, m_causal, m_repeats})
        w->setEnabled(!busy);
    for (QCheckBox* box : m_variants)
        box->setEnabled(!busy);
    if (changed) emit busyChanged(busy);
}

void GpuBenchmarkView::showMessage(const QString& text, bool error) {
    showPageMessage(m_message, text, error);
}

void GpuBenchmarkView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) applyFonts();
}

void GpuBenchmarkView::applyFonts() {
    const QFont base = font();
    m_status->setFont(scaledFont(base, 1.1));
    m_caption->setFont(scaledFont(base, 1.1));
    for (QChartView* view : m_views)
        applyChartFonts(view->chart(), base, kGpuBenchChartFonts);
}

} // namespace flashviz::gui
