#include "pages/gpu_bench/gpu_benchmark_view.h"

#include "style/format.h"
#include "style/paint_util.h"

#include "core/errors.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace flashviz::gui {

struct GpuBenchmarkView::Outcome {
    std::vector<GpuBenchPoint> points;
    GpuBenchRequest request;
    bool cancelled = false;
    std::string error;
};

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
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

// "forward", "backward", "forward + backward": the files' names (gpuBenchPassName), spaced for
// reading.
QString passText(GpuBenchPass pass) {
    return QString::fromStdString(gpuBenchPassName(pass))
        .replace(QLatin1Char('+'), QStringLiteral(" + "));
}

// A pass's work in multiples of the forward's, read from gpuBenchFlops so that the words on
// screen count as the numbers do.
double forwardMultiple(GpuBenchPass pass) {
    GpuBenchRequest forward, asked;
    asked.pass = pass;
    const int n = forward.sizes.front();
    return gpuBenchFlops(asked, n) / gpuBenchFlops(forward, n);
}

// What the throughput divides by the time: "4·n²·d·B·H", "2.5 × 4·n²·d·B·H".
QString flopsFormula(GpuBenchPass pass) {
    const QString forward = QStringLiteral("4·n²·d·B·H");
    return pass == GpuBenchPass::Forward
               ? forward
               : QStringLiteral("%1 × %2").arg(QString::number(forwardMultiple(pass)), forward);
}

// Which pass was timed and how its TFLOP/s count the work (FlashAttention's convention).
QString passSentence(const GpuBenchRequest& r) {
    const QString halved = r.causal ? QObject::tr(", halved for the causal mask") : QString();
    const QString formula = flopsFormula(r.pass);
    switch (r.pass) {
    case GpuBenchPass::Backward:
        return QObject::tr("Backward pass alone: dQ, dK and dV from the forward's O and "
                           "log-sum-exp, computed once beforehand and not timed. TFLOP/s counts "
                           "%1 (its five matrix products), as FlashAttention reports%2.")
            .arg(formula, halved);
    case GpuBenchPass::ForwardBackward:
        return QObject::tr("Forward and backward in turn, as a training step runs them. TFLOP/s "
                           "counts %1 (the forward's 1 and the backward's %2), as FlashAttention "
                           "reports%3.")
            .arg(formula, QString::number(forwardMultiple(GpuBenchPass::Backward)), halved);
    case GpuBenchPass::Forward: break;
    }
    return QObject::tr("Forward pass: TFLOP/s counts its two matrix products, %1%2.")
        .arg(formula, halved);
}

QString shapeText(const GpuBenchRequest& r) {
    return QObject::tr("%6 pass, d = %1, %2, batch × n = %3 tokens, heads × d = %4, median of %5")
        .arg(r.headDim)
        .arg(r.causal ? QObject::tr("causal") : QObject::tr("non-causal"))
        .arg(r.tokens)
        .arg(r.headsTimesDim)
        .arg(r.repeats)
        .arg(passText(r.pass));
}

const GpuBenchPoint* findPoint(const GpuBenchRecord& record, const std::string& variant, int n) {
    for (const GpuBenchPoint& p : record.points)
        if (p.variant == variant && p.n == n && p.measured()) return &p;
    return nullptr;
}

const char* const kFlashOrder[] = {kGpuBenchFlashFp16, kGpuBenchFlashBf16, kGpuBenchFlashFp32};

std::vector<int> largestFirst(const GpuBenchRequest& request) {
    std::vector<int> sizes = request.sizes;
    std::sort(sizes.begin(), sizes.end(), std::greater<>());
    return sizes;
}

// The speed-up at the largest n standard attention ran at, against the first of the flash
// kinds measured there (fp16, bf16, fp32), and fp32's beside a half-precision one. Returns
// whether there was one.
bool addSpeedUp(QStringList& parts, const GpuBenchRecord& record) {
    for (const int n : largestFirst(record.request)) {
        const GpuBenchPoint* standard = findPoint(record, kGpuBenchStandardFp32, n);
        if (!standard) continue;
        for (const char* variant : kFlashOrder) {
            const GpuBenchPoint* flash = findPoint(record, variant, n);
            if (!flash) continue;
            parts << QObject::tr("At n = %1, %2 takes %3 where standard attention takes %4: "
                                 "%5× faster (%6 against %7 TFLOP/s).")
                         .arg(n)
                         .arg(variantLabel(variant))
                         .arg(formatMilliseconds(flash->medianMs))
                         .arg(formatMilliseconds(standard->medianMs))
                         .arg(QString::number(standard->medianMs / flash->medianMs, 'f', 1))
                         .arg(QString::number(flash->tflops, 'f', 0))
                         .arg(QString::number(standard->tflops, 'f', 1));
            if (variant != std::string(kGpuBenchFlashFp32))
                if (const GpuBenchPoint* fp32 = findPoint(record, kGpuBenchFlashFp32, n))
                    parts << QObject::tr("In fp32 too, flash is %1× faster.")
                                 .arg(QString::number(standard->medianMs / fp32->medianMs, 'f', 2));
            return true;
        }
        return false;
    }
    return false;
}

// Without standard attention beside it (as in a backward run: it has no backward kernel), the
// first flash kind's time and throughput at the largest n it ran at.
void addFastest(QStringList& parts, const GpuBenchRecord& record) {
    for (const int n : largestFirst(record.request))
        for (const char* variant : kFlashOrder)
            if (const GpuBenchPoint* flash = findPoint(record, variant, n)) {
                parts << QObject::tr("At n = %1, %2 takes %3 (%4 TFLOP/s).")
                             .arg(n)
                             .arg(variantLabel(variant))
                             .arg(formatMilliseconds(flash->medianMs))
                             .arg(QString::number(flash->tflops, 'f', 0));
                return;
            }
}

// What a tensor-core kernel is, from its name: the Hopper backward ("wgmma_bwd_..."), the Hopper
// forward ("wgmma_..."), the mma.sync backward ("tc_bwd_...") or the mma.sync forward. `whose`
// says which of the record's passes it ran.
QString halfKernelSentence(const QString& kernel, const QString& whose) {
    if (kernel.startsWith(QLatin1String("wgmma_bwd_")))
        return QObject::tr("flash fp16 and bf16%1 ran %2: the Hopper backward (a producer warpgroup "
                           "copying query blocks with TMA, two consumers keeping dK and dV on chip "
                           "and multiplying with wgmma, adding their part of dQ in HBM).")
            .arg(whose, kernel);
    if (kernel.startsWith(QLatin1String("tc_bwd_")))
        return QObject::tr("flash fp16 and bf16%1 ran %2: the mma.sync tensor-core backward "
                           "(FlashAttention-2's: each block keeps a tile of K and V, sums dK and dV "
                           "on chip and adds its part of dQ in HBM).")
            .arg(whose, kernel);
    if (kernel.startsWith(QLatin1String("wgmma_")))
        return QObject::tr("flash fp16 and bf16%1 ran %2: the Hopper kernel (a producer warpgroup "
                           "copying with TMA, consumers multiplying with wgmma; the "
                           "FlashAttention-3 (Hopper) tab shows how it runs).")
            .arg(whose, kernel);
    return QObject::tr("flash fp16 and bf16%1 ran %2: the mma.sync tensor-core kernel "
                       "(FlashAttention-2's split).")
        .arg(whose, kernel);
}

// A forward-and-backward point names both kernels, "forward + backward".
void addHalfKernels(QStringList& parts, const QString& kernel, GpuBenchPass pass) {
    const QStringList kernels = kernel.split(QStringLiteral(" + "));
    for (qsizetype i = 0; i < kernels.size(); ++i) {
        const bool both = pass == GpuBenchPass::ForwardBackward && kernels.size() == 2;
        const QString whose = !both ? QString() : i == 0 ? QObject::tr("'s forward")
                                                         : QObject::tr("'s backward");
        parts << halfKernelSentence(kernels[i], whose);
    }
}

// Which kernels ran: the arithmetic of "flash fp32" and the tensor-core family of fp16 / bf16,
// as their names say (kernels/cuda_backend.h: "tf32x3_...", "wgmma_..." for the Hopper kernel).
void addKernels(QStringList& parts, const GpuBenchRecord& record) {
    bool fp32Said = false, halfSaid = false;
    for (const GpuBenchPoint& p : record.points) {
        if (p.kernel.empty()) continue;
        const QString kernel = QString::fromStdString(p.kernel);
        if (p.variant == kGpuBenchFlashFp32 && !fp32Said) {
            fp32Said = true;
            parts << (kernel.startsWith(QLatin1String("tf32x3_"))
                          ? QObject::tr("flash fp32 ran %1: tensor cores, each fp32 product as "
                                        "three TF32 products, which keeps fp32's accuracy.")
                          : QObject::tr("flash fp32 ran %1: fp32 multiply-adds on the CUDA "
                                        "cores."))
                         .arg(kernel);
        } else if ((p.variant == kGpuBenchFlashFp16 || p.variant == kGpuBenchFlashBf16) && !halfSaid) {
            halfSaid = true;
            addHalfKernels(parts, kernel, record.request.pass);
        }
    }
}

// Memory: the standard method's n x n scores against flash's none.
void addMemory(QStringList& parts, const GpuBenchRecord& record) {
    std::vector<const GpuBenchPoint*> standards, flashes;
    for (const GpuBenchPoint& p : record.points)
        if (p.measured()) (p.variant == kGpuBenchStandardFp32 ? standards : flashes).push_back(&p);
    auto byN = [](const GpuBenchPoint* a, const GpuBenchPoint* b) { return a->n < b->n; };
    if (standards.size() >= 2) {
        const auto [lo, hi] = std::minmax_element(standards.begin(), standards.end(), byN);
        parts << QObject::tr("Standard attention's n × n scores grow from %1 at n = %2 to %3 at "
                             "n = %4;")
                     .arg(formatDeviceMemory((*lo)->scratchBytes))
                     .arg((*lo)->n)
                     .arg(formatDeviceMemory((*hi)->scratchBytes))
                     .arg((*hi)->n);
    }
    if (!flashes.empty()) {
        double lo = std::numeric_limits<double>::max(), hi = 0;
        for (const GpuBenchPoint* p : flashes) {
            lo = std::min(lo, gpuBenchWorkingBytes(record.request, *p));
            hi = std::max(hi, gpuBenchWorkingBytes(record.request, *p));
        }
        parts << (standards.size() >= 2
                      ? QObject::tr("flash never stores them, so its memory stays flat (%1) at "
                                    "every n.")
                      : QObject::tr("flash never stores the n × n scores, so its memory stays flat "
                                    "(%1) at every n."))
                     .arg(lo == hi ? formatDeviceMemory(lo)
                                   : formatDeviceMemory(lo) + QStringLiteral("–") +
                                         formatDeviceMemory(hi));
    }
}

void addUnmeasured(QStringList& parts, const GpuBenchRecord& record) {
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
}

// What to notice, read from the measured numbers: the speed-up at the largest n both ran at,
// and the memory of standard attention growing with n^2 while flash's stays flat.
QString captionFor(const GpuBenchRecord& record) {
    QStringList parts{passSentence(record.request)};
    if (!addSpeedUp(parts, record)) addFastest(parts, record);
    addKernels(parts, record);
    addMemory(parts, record);
    addUnmeasured(parts, record);
    return parts.join(QLatin1Char(' '));
}

// The memory chart's unit: MiB while every measured point stays under 1 GiB, else GiB, the rule
// the caption's figures follow (formatDeviceMemory), so that a record under 1 GiB reads in one
// unit on the axis and in the sentence below it.
double memoryUnitBytes(const GpuBenchRecord& record) {
    double largest = 0;
    for (const GpuBenchPoint& p : record.points) {
        const double bytes = p.measured() ? gpuBenchWorkingBytes(record.request, p) : 0;
        if (std::isfinite(bytes)) largest = std::max(largest, bytes);
    }
    return largest < kGiB ? kMiB : kGiB;
}

// What one chart draws of a point: its median time, its throughput or its memory in the record's
// unit (memoryUnitBytes).
double chartValue(GpuBenchmarkView::Chart chart, const GpuBenchRecord& record,
                  const GpuBenchPoint& p) {
    if (chart == GpuBenchmarkView::TimeChart) return p.medianMs;
    if (chart == GpuBenchmarkView::ThroughputChart) return p.tflops;
    return gpuBenchWorkingBytes(record.request, p) / memoryUnitBytes(record);
}

// Only points a chart can draw: a measured time, finite values (a record shown directly has not
// been through the file's checks). The axes are made from what is drawn, so that no value can
// give them an infinite or empty range.
bool drawable(GpuBenchmarkView::Chart chart, const GpuBenchRecord& record, const GpuBenchPoint& p) {
    const double y = chartValue(chart, record, p);
    return p.measured() && std::isfinite(p.medianMs) && p.n > 0 && std::isfinite(y) &&
           (chart == GpuBenchmarkView::TimeChart ? y > 0 : y >= 0);
}

QLogValueAxis* sizeAxis(GpuBenchmarkView::Chart chart, const GpuBenchRecord& record) {
    double xMin = std::numeric_limits<double>::max(), xMax = 0;
    for (const int n : record.request.sizes)
        if (n > 0) xMin = std::min(xMin, double(n)), xMax = std::max(xMax, double(n));
    for (const GpuBenchPoint& p : record.points)
        if (drawable(chart, record, p))
            xMin = std::min(xMin, double(p.n)), xMax = std::max(xMax, double(p.n));
    if (xMax <= 0) xMin = xMax = 1;
    auto* axis = new QLogValueAxis;
    axis->setBase(2);
    axis->setLabelFormat(QStringLiteral("%g"));
    setLogAxisRange(axis, xMin / 1.25, xMax * 1.25);
    axis->setMinorTickCount(0);
    axis->setTitleText(QObject::tr("n (log scale)"));
    return axis;
}

// One line per method with drawable points; returns the range of the values drawn.
std::pair<double, double> addSeries(QChart* chart, GpuBenchmarkView::Chart which,
                                    const GpuBenchRecord& record) {
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
            if (p.variant != style.id || !drawable(which, record, p)) continue;
            const double y = chartValue(which, record, p);
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
    return {yMin, yMax};
}

QAbstractAxis* timeAxis(double yMin, double yMax) {
    auto* axis = new QLogValueAxis;
    axis->setBase(10);
    axis->setLabelFormat(QStringLiteral("%g"));
    axis->setMinorTickCount(8);
    // Whole decades around the times; 10^ceil(log10(1e308 * 1.2)) was +inf, and a log axis given
    // +inf recursed until the stack overflowed (SIGSEGV).
    if (yMax > 0)
        setLogAxisRange(axis, std::pow(10.0, std::floor(std::log10(yMin) - std::log10(1.5))),
                        std::pow(10.0, std::ceil(std::log10(yMax) + std::log10(1.2))));
    else
        setLogAxisRange(axis, 0.1, 10);
    axis->setTitleText(QObject::tr("median ms (log scale)"));
    return axis;
}

QAbstractAxis* linearAxis(GpuBenchmarkView::Chart chart, double yMax, const GpuBenchRecord& record) {
    auto* axis = new QValueAxis;
    // A little room above the data, kept finite (1.7e308 * 1.08 is not) and large enough for Qt
    // Charts to tell from 0 (1e-300 is not).
    const double top = yMax > 0 ? std::clamp(yMax * 1.08, 1e-6, std::max(yMax, 1e300)) : 1;
    axis->setRange(0, top);
    // Below 10 (a few GiB) whole numbers would repeat: "0, 0, 1, 1".
    axis->setLabelFormat(top < 10    ? QStringLiteral("%.1f")
                         : top < 1e6 ? QStringLiteral("%.0f")
                                     : QStringLiteral("%.3g"));
    if (top < 1e6) axis->applyNiceNumbers();
    // The unit and what is counted; how TFLOP/s counts the work is the caption's first sentence
    // (passSentence): beside a short chart it cut the title. Page wraps a title that is too long.
    const QString unit = memoryUnitBytes(record) == kMiB ? QStringLiteral("MiB") : QStringLiteral("GiB");
    axis->setTitleText(chart == GpuBenchmarkView::ThroughputChart ? QObject::tr("TFLOP/s")
                       : record.request.pass == GpuBenchPass::Forward
                           ? QObject::tr("%1 (Q, K, V, O, scratch)").arg(unit)
                           : QObject::tr("%1 (Q, K, V, O, dO, dQ, dK, dV, scratch)").arg(unit));
    return axis;
}

// One legend for the three charts, above them: wrapped by the label instead of cut short in
// each chart at a laptop's width. It names the pass measured; only the methods the record drew
// are listed.
QString legendText(const GpuBenchRecord& record) {
    QString pass = passText(record.request.pass);
    pass[0] = pass[0].toUpper();
    QStringList entries{QStringLiteral("<b>%1</b>").arg(QObject::tr("%1 pass:").arg(pass))};
    for (const VariantStyle& style : variantStyles()) {
        const bool drawn =
            std::any_of(record.points.begin(), record.points.end(), [&](const GpuBenchPoint& p) {
                return p.variant == style.id && p.measured();
            });
        if (!drawn) continue;
        entries << QStringLiteral("<span style=\"color:%1\">%2</span>&nbsp;%3")
                       .arg(style.color.name(),
                            style.pen == Qt::DashLine ? QStringLiteral("╍╍") : QStringLiteral("━━"),
                            QString::fromUtf8(style.shortLabel).toHtmlEscaped());
    }
    return entries.join(QStringLiteral(" &nbsp;&nbsp; "));
}

// The record's points on one chart, with axes made from what is drawn.
void plotRecord(QChart* chart, const GpuBenchRecord& record, GpuBenchmarkView::Chart which) {
    QLogValueAxis* xAxis = sizeAxis(which, record);
    chart->addAxis(xAxis, Qt::AlignBottom);
    const auto [yMin, yMax] = addSeries(chart, which, record);
    QAbstractAxis* yAxis =
        which == GpuBenchmarkView::TimeChart ? timeAxis(yMin, yMax)
                                             : linearAxis(which, yMax, record);
    chart->addAxis(yAxis, Qt::AlignLeft);
    for (QAbstractSeries* series : chart->series()) {
        series->attachAxis(xAxis);
        series->attachAxis(yAxis);
    }
}

} // namespace

GpuBenchmarkView::GpuBenchmarkView(QWidget* parent)
    : Page(kGpuBenchChartFonts, parent), m_availability(gpuBenchmarkAvailability()),
      m_resultsPath(gpuBenchResultsPath()) {
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("gpuBenchStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setStyleSheet(QStringLiteral("QLabel { background: #f4f6f9; color: #1f2d3d; "
                                           "padding: 0.35em; border-left: 4px solid #216fb5; }"));
    messageLine()->setObjectName(QStringLiteral("gpuBenchMessage"));
    messageLine()->hide();
    QLayout* controls = makeRequestControls();
    QLayout* runRow = makeRunRow();
    QLayout* charts = makeCharts();
    m_legend = new QLabel(this);
    m_legend->setObjectName(QStringLiteral("gpuBenchLegend"));
    m_legend->setWordWrap(true);
    m_legend->setTextFormat(Qt::RichText);
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("gpuBenchCaption"));
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_status);
    layout->addWidget(messageLine());
    layout->addLayout(controls);
    layout->addLayout(runRow);
    layout->addWidget(m_legend);
    layout->addLayout(charts, 1);
    layout->addWidget(m_caption);

    setRequest(GpuBenchRequest{});
    if (!QFile::exists(m_resultsPath) || !loadResults(m_resultsPath)) showShippedRecord();
    setBusy(false);
    rebuildCharts();
    updateStatus();
    applyFonts();
}

QLayout* GpuBenchmarkView::makeRequestControls() {
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
    auto* variantRow = new QHBoxLayout;
    for (const VariantStyle& style : variantStyles()) {
        auto* box = new QCheckBox(QString::fromUtf8(style.label), this);
        box->setObjectName(QStringLiteral("gpuBenchVariant-%1").arg(QString::fromUtf8(style.id)));
        box->setProperty("variant", QString::fromUtf8(style.id));
        m_variants.append(box);
        variantRow->addWidget(box);
    }
    variantRow->addStretch(1);
    makePassControl();

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
    controls->addWidget(new QLabel(tr("pass"), this), 0, 9);
    controls->addWidget(m_pass, 0, 10);
    controls->addLayout(variantRow, 1, 0, 1, 11);
    controls->setColumnStretch(11, 1);
    return controls;
}

void GpuBenchmarkView::makePassControl() {
    m_pass = new QComboBox(this);
    m_pass->setObjectName(QStringLiteral("gpuBenchPass"));
    for (const GpuBenchPass pass : kGpuBenchPasses) {
        QString label = passText(pass);
        label[0] = label[0].toUpper();
        m_pass->addItem(label, int(pass));
    }
    m_pass->setToolTip(tr("What each point times: the forward; the backward alone (dQ, dK, dV); "
                          "or both in turn, as a training step runs them. Only flash fp16 and "
                          "bf16 have a backward kernel."));
    connect(m_pass, &QComboBox::currentIndexChanged, this,
            &GpuBenchmarkView::markVariantsForPass);
}

GpuBenchPass GpuBenchmarkView::chosenPass() const {
    return GpuBenchPass(m_pass->currentData().toInt());
}

// A method without a kernel for the pass is switched off (its check kept for the next forward
// run) and left out of the request; its tooltip says why.
void GpuBenchmarkView::markVariantsForPass() {
    const GpuBenchPass pass = chosenPass();
    for (QCheckBox* box : m_variants) {
        const bool runs = gpuBenchVariantRuns(box->property("variant").toString().toStdString(), pass);
        box->setEnabled(runs && !isBusy());
        box->setToolTip(runs ? QString()
                             : tr("No %1 kernel: FlashViz's fast backward is fp16 / bf16 only, so a "
                                  "%1 run leaves this method out (in a saved run its points are "
                                  "not measured, with that note).")
                                   .arg(passText(pass)));
    }
}

QLayout* GpuBenchmarkView::makeRunRow() {
    m_runButton = new QPushButton(tr("Run"), this);
    m_runButton->setObjectName(QStringLiteral("gpuBenchRun"));
    m_runButton->setToolTip(tr("Measure every chosen method at every n of the range on this GPU"));
    connect(m_runButton, &QPushButton::clicked, this, &GpuBenchmarkView::run);
    cancelButton()->setObjectName(QStringLiteral("gpuBenchCancel"));
    cancelButton()->setToolTip(tr("Stop after the point being measured; the charts stay"));
    setTabOrder(m_runButton, cancelButton()); // where it was before the page base
    progressBar()->setObjectName(QStringLiteral("gpuBenchProgress"));
    progressBar()->setFormat(tr("measured %v of %m points"));
    progressBar()->setRange(0, 1);
    progressBar()->setValue(0);

    auto* runRow = new QHBoxLayout;
    runRow->addWidget(m_runButton);
    runRow->addWidget(cancelButton());
    runRow->addWidget(progressBar(), 1);
    runRow->addStretch(0); // keeps the buttons at the left while the bar is hidden
    return runRow;
}

QLayout* GpuBenchmarkView::makeCharts() {
    auto* charts = new QHBoxLayout;
    for (int i = 0; i < ChartCount; ++i) {
        QChartView* view = makeChartView(this);
        view->setObjectName(QStringLiteral("gpuBenchChart%1").arg(i));
        // Short enough for 768-pixel screens with a long caption; three narrow enough for the
        // window to keep 1280 pixels beside the settings (280 made it 1294).
        view->setMinimumSize(250, 200);
        charts->addWidget(view, 1);
        m_views.append(view);
    }
    return charts;
}

GpuBenchRequest GpuBenchmarkView::request() const {
    GpuBenchRequest r;
    r.sizes.clear();
    for (int n = m_from->currentData().toInt(); n > 0 && n <= m_to->currentData().toInt(); n *= 2)
        r.sizes.push_back(n);
    r.headDim = m_headDim->currentData().toInt();
    r.causal = m_causal->isChecked();
    r.pass = chosenPass();
    r.variants.clear();
    for (const QCheckBox* box : m_variants) {
        const std::string id = box->property("variant").toString().toStdString();
        if (box->isChecked() && gpuBenchVariantRuns(id, r.pass)) r.variants.push_back(id);
    }
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
    m_pass->setCurrentIndex(m_pass->findData(int(r.pass)));
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
        const QString message = QString::fromUtf8(error.what());
        fail(message,
             m_shown ? tr("%1 The charts still show the earlier results.").arg(message) : message);
        return false;
    }
}

void GpuBenchmarkView::showRecord(const GpuBenchRecord& record) {
    clearMessage();
    present(record, false);
}

void GpuBenchmarkView::showShippedRecord() {
    try {
        present(shippedGpuBenchRecord(), true);
    } catch (const EngineError& error) {
        fail(QString::fromUtf8(error.what()));
    }
}

void GpuBenchmarkView::present(const GpuBenchRecord& record, bool shipped) {
    m_shown = record;
    m_shownIsShipped = shipped;
    // The controls describe the results on screen (a saved run's pass, d, sizes and methods)
    // until they are changed: Run then repeats what is shown.
    setRequest(record.request);
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

QString GpuBenchmarkView::captionText() const {
    return m_caption->text();
}

QChart* GpuBenchmarkView::chart(int index) const {
    return index >= 0 && index < m_views.size() ? m_views[index]->chart() : nullptr;
}

void GpuBenchmarkView::run() {
    if (isBusy()) return;
    const GpuBenchRequest r = request();
    if (r.variants.empty() && r.pass != GpuBenchPass::Forward) {
        fail(tr("This run was refused: of the methods, only flash fp16 and bf16 have a %1 kernel; "
                "choose one of them.")
                 .arg(passText(r.pass)));
        return;
    }
    try {
        validateGpuBenchRequest(r);
    } catch (const EngineError& error) {
        const QString message = QString::fromUtf8(error.what());
        fail(message, tr("This run was refused: %1").arg(message));
        return;
    }
    if (!canRun()) {
        fail(tr("The GPU benchmark cannot run here: %1")
                 .arg(QString::fromStdString(m_availability.reason)));
        return;
    }
    clearMessage();
    progressBar()->setRange(0, gpuBenchPointCount(r));
    runJob<Outcome>(
        [r](JobControl& control) {
            Outcome outcome;
            outcome.request = r;
            try {
                outcome.points = runGpuBenchmark(r, [&control](int count, int) {
                    control.report(count);
                    return !control.cancelled();
                });
            } catch (const std::exception& error) {
                outcome.error = error.what();
            }
            outcome.cancelled = control.cancelled();
            return outcome;
        },
        [this](const Outcome& outcome) { finished(outcome); });
    setBusy(true);
}

void GpuBenchmarkView::cancel() {
    if (!isBusy()) return;
    cancelJob();
    cancelButton()->setEnabled(false);
    showMessage(tr("Stopping after the point being measured…"), false);
}

void GpuBenchmarkView::finished(const Outcome& outcome) {
    setBusy(false);
    if (!outcome.error.empty()) {
        const QString message = QString::fromStdString(outcome.error);
        fail(message, m_shown ? tr("The benchmark failed: %1 The charts still show the earlier "
                                   "results.")
                                    .arg(message)
                              : tr("The benchmark failed: %1").arg(message));
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
    record.program = gpuBenchProgramName();
    record.request = outcome.request;
    record.points = outcome.points;
    showRecord(record);
    try {
        saveGpuBenchRecord(record, m_resultsPath);
    } catch (const EngineError& error) {
        fail(QString::fromUtf8(error.what()));
    }
}

void GpuBenchmarkView::rebuildCharts() {
    // The pass is named on the legend above the charts: "forward + backward" cut their titles
    // short at a laptop's width.
    const QStringList titles{tr("Time per pass"), tr("Throughput"), tr("Device memory")};
    for (int i = 0; i < ChartCount; ++i) {
        auto* chart = new QChart;
        chart->setTitle(titles[i]);
        chart->legend()->hide(); // one legend for all three: m_legend
        chart->setMargins(QMargins(4, 4, 4, 4));
        if (m_shown) plotRecord(chart, *m_shown, Chart(i));
        setChart(m_views[i], chart);
    }
    m_caption->setText(m_shown ? unbroken(captionFor(*m_shown)) : QString());
    m_legend->setText(m_shown ? legendText(*m_shown) : QString());
    m_legend->setVisible(m_shown.has_value());
}

// Which results are on screen: the GPU, the date, the program that measured them and the shape,
// and whether they are the user's own or the ones FlashViz ships.
QString GpuBenchmarkView::shownText() const {
    const GpuBenchRecord& r = *m_shown;
    const QString device = r.device.isEmpty() ? tr("an unnamed GPU")
                           // A long name (a file allows 200 characters) is cut: a 10 MB one held
                           // the window for 33 s while the label wrapped it.
                           : r.device.size() > 200 ? r.device.left(200) + QChar(0x2026)
                                                   : r.device;
    const QString when = r.measured.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
    const QString by = r.program.isEmpty() ? QString() : tr(" by %1").arg(r.program);
    if (m_shownIsShipped)
        return tr("Showing the results FlashViz ships, measured on %1 on %2%3 (%4), until a run "
                  "of your own is saved to %5.")
            .arg(device, when, by, shapeText(r.request), m_resultsPath);
    return tr("Showing the results measured on %1 on %2%3 (%4).")
        .arg(device, when, by, shapeText(r.request));
}

void GpuBenchmarkView::updateStatus() {
    const QString shown = m_shown ? shownText() : QString();
    QString text;
    if (canRun()) {
        const QString gpu = tr("GPU: %1.").arg(QString::fromStdString(m_availability.deviceName));
        text = m_shown
                   ? gpu + QLatin1Char(' ') + shown
                   : gpu + QLatin1Char(' ') + tr("Choose a range of n and the methods, then Run.");
    } else {
        const QString why = tr("No GPU benchmark on this machine: %1.")
                                .arg(QString::fromStdString(m_availability.reason));
        text = m_shown ? why + QLatin1Char(' ') + shown
                       : why + QLatin1Char(' ') +
                             tr("No saved results to show (a run on a machine with an NVIDIA GPU "
                                "saves them to %1).")
                                 .arg(m_resultsPath);
    }
    m_status->setText(text);
}

void GpuBenchmarkView::showBusy(bool busy) {
    m_runButton->setEnabled(!busy && canRun());
    m_runButton->setToolTip(canRun() ? tr("Measure every chosen method at every n of the range")
                                     : QString::fromStdString(m_availability.reason));
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_from, m_to, m_headDim, m_causal, m_repeats, m_pass})
        w->setEnabled(!busy);
    markVariantsForPass();
}

void GpuBenchmarkView::applyLabelFonts() {
    const QFont base = font();
    m_status->setFont(scaledFont(base, 1.1));
    m_caption->setFont(scaledFont(base, 1.1));
    m_legend->setFont(scaledFont(base, 1.1));
}

} // namespace flashviz::gui
