#include "pages/analysis/analysis_charts.h"

#include "pages/analysis/analysis_data.h"
#include "pages/page_style.h"
#include "style/format.h"
#include "style/paint_util.h"

#include "core/check.h"
#include "core/units.h"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QFont>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

namespace flashviz::gui {

namespace {

// A palette that stays distinguishable for colour-blind viewers and on a washed-out projector
// (Okabe-Ito): standard attention warm, FlashAttention cool, the hardware in dark grey.
const QColor kStandard(0xD5, 0x5E, 0x00);
const QColor kFlash(0x00, 0x72, 0xB2);
const QColor kCorrect(0x00, 0x9E, 0x73);
const QColor kBroken(0xCC, 0x33, 0x11);
const QColor kAccent(0x88, 0x44, 0xAA);
const QColor kHardware(0x33, 0x33, 0x33);
const QColor kHardwareLight(0x88, 0x88, 0x88);
const QColor kSpill(0xE0, 0x40, 0x40, 0x38);

QString number(double value, int decimals) {
    return QString::number(value, 'f', decimals);
}
QString mb(std::uint64_t bytes) {
    return formatBytesIn(static_cast<double>(bytes), ByteUnit::MB, 2);
}
QString kb(std::uint64_t bytes) {
    return formatBytesIn(static_cast<double>(bytes), ByteUnit::KB, 1);
}
QString sci(double value, int decimals = 1) {
    return QString::number(value, 'e', decimals);
}
double toMB(std::uint64_t bytes) {
    return static_cast<double>(bytes) / kBytesPerMB;
}
double toGFlop(std::uint64_t flops) {
    return static_cast<double>(flops) / kFlopsPerGFlop;
}
QString hardwareName(const AnalysisResults& r) {
    return QString::fromStdString(r.inputs.hardware.name);
}

QLineSeries* makeLine(const QString& objectName, const QString& name, const QColor& color,
                      Qt::PenStyle style = Qt::SolidLine, qreal width = 3.0, bool points = true) {
    auto* series = new QLineSeries;
    series->setObjectName(objectName);
    series->setName(name);
    QPen pen(color);
    pen.setWidthF(width);
    pen.setStyle(style);
    pen.setCapStyle(Qt::RoundCap);
    series->setPen(pen);
    series->setPointsVisible(points);
    if (points) series->setMarkerSize(width * 2.6);
    return series;
}

QScatterSeries* makeScatter(const QString& objectName, const QString& name, const QColor& fill,
                            const QColor& border, qreal size,
                            QScatterSeries::MarkerShape shape = QScatterSeries::MarkerShapeCircle) {
    auto* series = new QScatterSeries;
    series->setObjectName(objectName);
    series->setName(name);
    series->setMarkerShape(shape);
    series->setMarkerSize(size);
    series->setColor(fill);
    QPen pen(border);
    pen.setWidthF(2.5);
    series->setPen(pen);
    return series;
}

QBarSet* makeBarSet(const QString& objectName, const QString& label, const QColor& color) {
    auto* set = new QBarSet(label);
    set->setObjectName(objectName);
    set->setColor(color);
    set->setBorderColor(color.darker(130));
    set->setLabelColor(Qt::black);
    return set;
}

// Powers of `base` that enclose [lo, hi], for log axes that end on a labelled tick.
std::pair<double, double> decadeRange(double lo, double hi, double base = 10.0) {
    const double b = std::log(base);
    return {std::pow(base, std::floor(std::log(lo) / b)),
            std::pow(base, std::ceil(std::log(hi) / b))};
}

// A log range with some room around [lo, hi], widened to whole decades only when it would
// otherwise show no labelled tick.
std::pair<double, double> paddedLogRange(double lo, double hi) {
    const auto [dlo, dhi] = decadeRange(lo, hi);
    const double plo = std::max(dlo, lo / 2), phi = std::min(dhi, hi * 2);
    const double firstTick = std::pow(10.0, std::ceil(std::log10(plo)));
    return firstTick <= phi ? std::pair{plo, phi} : std::pair{dlo, dhi};
}

QLogValueAxis* logAxis(const QString& title, double base, const QString& format, double lo,
                       double hi) {
    auto* axis = new QLogValueAxis;
    axis->setTitleText(title);
    axis->setBase(base);
    axis->setLabelFormat(format);
    setLogAxisRange(axis, lo, hi);
    axis->setMinorTickCount(base == 10.0 ? 8 : 0);
    QPen minor(QColor(0xE4, 0xE4, 0xE4));
    minor.setWidthF(1);
    axis->setMinorGridLinePen(minor);
    return axis;
}

// A base-2 axis for sizes (n, block): ticks at the powers of two, a little room either side.
QLogValueAxis* sizeAxis(const QString& title, double lo, double hi) {
    return logAxis(title, 2.0, QStringLiteral("%.0f"), lo / 1.25, hi * 1.25);
}

QValueAxis* valueAxis(const QString& title, double lo, double hi, const QString& format) {
    auto* axis = new QValueAxis;
    axis->setTitleText(title);
    axis->setRange(lo, hi);
    axis->setLabelFormat(format);
    return axis;
}

// A band between two heights across the whole x range, e.g. a region of the plot to shade.
QAreaSeries* band(const QString& objectName, const QString& name, const QColor& color, double x0,
                  double x1, double yLow, double yHigh) {
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    upper->append(x0, yHigh);
    upper->append(x1, yHigh);
    lower->append(x0, yLow);
    lower->append(x1, yLow);
    auto* area = new QAreaSeries(upper, lower);
    // QAreaSeries does not take its edges: without a parent they were never freed.
    upper->setParent(area);
    lower->setParent(area);
    area->setObjectName(objectName);
    area->setName(name);
    area->setBrush(color);
    area->setPen(Qt::NoPen);
    return area;
}

void attach(QChart* chart, QAbstractSeries* series, QAbstractAxis* x, QAbstractAxis* y) {
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
}

void hideFromLegend(QChart* chart, QAbstractSeries* series) {
    for (QLegendMarker* marker : chart->legend()->markers(series))
        marker->setVisible(false);
}

QLineSeries* horizontal(const QString& objectName, const QString& name, const QColor& color,
                        Qt::PenStyle style, double y, double x0, double x1) {
    QLineSeries* series = makeLine(objectName, name, color, style, 2.5, false);
    series->append(x0, y);
    series->append(x1, y);
    return series;
}

// The headline, and under it in smaller type the settings the chart was computed for.
QChart* newChart(const QString& headline, const QString& settings) {
    auto* chart = new QChart;
    chart->setTitle(QStringLiteral("<div align=\"center\"><b>%1</b><br><small>%2</small></div>")
                        .arg(headline.toHtmlEscaped(), settings.toHtmlEscaped()));
    chart->setTheme(QChart::ChartThemeLight);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(8, 8, 8, 8));
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setShowToolTips(true);
    chart->setAnimationOptions(QChart::NoAnimation);
    return chart;
}

// Texts pinned to data positions of a series; they follow the plot area when it resizes.
enum class Anchor { Centre, Left, Right }; // where the text sits against its point, above it

void pinTexts(QChart* chart, QAbstractSeries* series,
              const std::vector<std::pair<QPointF, QString>>& texts, const QColor& color,
              Anchor anchor = Anchor::Centre, bool boxed = false) {
    struct Pinned {
        QPointF at;
        QGraphicsSimpleTextItem* text;
        QGraphicsRectItem* box; // a tinted card behind the text, or null
    };
    std::vector<Pinned> items;
    for (const auto& [at, text] : texts) {
        auto* item = new QGraphicsSimpleTextItem(text, chart);
        item->setBrush(color);
        item->setData(kChartOverlayKey, true);
        item->setZValue(20);
        QGraphicsRectItem* box = nullptr;
        if (boxed) {
            box = new QGraphicsRectItem(chart);
            QColor tint = color;
            tint.setAlpha(0x22);
            box->setBrush(tint);
            box->setPen(QPen(color, 1.5));
            box->setZValue(19);
        }
        items.push_back({at, item, box});
    }
    auto place = [chart, series, items, anchor] {
        for (const Pinned& pinned : items) {
            const QPointF p = chart->mapToPosition(pinned.at, series);
            const QRectF bounds = pinned.text->boundingRect();
            const qreal pad = pinned.box ? bounds.height() * 0.15 : 0;
            const qreal x = anchor == Anchor::Left    ? p.x() + 6
                            : anchor == Anchor::Right ? p.x() - 6 - bounds.width()
                                                      : p.x() - bounds.width() / 2;
            pinned.text->setPos(x, p.y() - bounds.height() - pad);
            if (pinned.box)
                pinned.box->setRect(QRectF(x - pad, p.y() - bounds.height() - 2 * pad,
                                           bounds.width() + 2 * pad, bounds.height() + 2 * pad));
        }
    };
    QObject::connect(chart, &QChart::plotAreaChanged, chart, place);
    place();
}

// The box a detached legend needs to stack its entries in one column. Its size hint is that of
// one entry, so the room is measured here from the labels.
QSizeF stackedLegendSize(QLegend* legend) {
    const QFontMetricsF metrics(legend->font());
    qreal width = 0;
    int entries = 0;
    for (QLegendMarker* marker : legend->markers()) {
        if (marker->label().isEmpty()) continue;
        width = std::max(width, metrics.horizontalAdvance(marker->label()));
        ++entries;
    }
    const qreal line = metrics.height() * 1.75; // an entry with its marker and spacing
    return {width + line * 2.2, entries * line + line * 0.6};
}

// Sets a log axis to the data's decades [dataLo, dataHi] plus `share` of the plot's height on
// the `below` or upper side; false when it already is.
bool reserveShare(QLogValueAxis* axis, double dataLo, double dataHi, double share, bool below) {
    const double span = (dataHi - dataLo) / (1 - share);
    const double lo = below ? dataHi - span : dataLo;
    const double hi = below ? dataHi : dataLo + span;
    // Compared with the range the axis can take, so that a clamped one is not set again and
    // again.
    const auto [safeLo, safeHi] =
        safeLogRange(std::pow(10.0, lo), std::pow(10.0, hi), axis->base());
    if (std::abs(std::log10(axis->min()) - std::log10(safeLo)) <= 0.01 &&
        std::abs(std::log10(axis->max()) - std::log10(safeHi)) <= 0.01)
        return false;
    setLogAxisRange(axis, safeLo, safeHi); // already safe: set as it is
    return true;
}

constexpr double kMaxLegendShare = 0.75; // of the plot's height, when making room for a legend

// A legend with many entries goes inside the plot, in a corner the data leaves empty, stacked
// so that no entry is cut off; it follows the plot area when the chart resizes. With
// `makeRoomOn`, a log axis whose range is the data's, that axis is extended on the legend's
// side (up for a top corner, down for a bottom one) by as many decades as the box needs at the
// current size and font, so the box sits beside the data rather than on it; however tall the
// box, the data keeps the lower (upper) quarter of the plot at least.
void legendInside(QChart* chart, Qt::Alignment corner, QLogValueAxis* makeRoomOn = nullptr) {
    QLegend* legend = chart->legend();
    legend->setAlignment(Qt::AlignLeft);
    legend->detachFromChart();
    legend->setBackgroundVisible(true);
    legend->setBrush(QColor(255, 255, 255, 230));
    legend->setPen(QPen(QColor(0xBB, 0xBB, 0xBB)));
    legend->setZValue(30);
    const double dataLo = makeRoomOn ? std::log10(makeRoomOn->min()) : 0;
    const double dataHi = makeRoomOn ? std::log10(makeRoomOn->max()) : 0;
    // Changing the axis range lays the chart out again, which would call this from inside
    // setRange(); the flag stops that, and the box is placed again once the layout has settled.
    auto placing = std::make_shared<bool>(false);
    auto place = std::make_shared<std::function<void()>>();
    *place = [chart, legend, corner, axis = makeRoomOn, dataLo, dataHi, placing,
              again = std::weak_ptr<std::function<void()>>(place)] {
        if (*placing) return;
        *placing = true;
        const QRectF plot = chart->plotArea();
        const QSizeF size = stackedLegendSize(legend).boundedTo(plot.size());
        const qreal margin = 10;
        const qreal x =
            corner & Qt::AlignRight ? plot.right() - size.width() - margin : plot.left() + margin;
        const qreal y = corner & Qt::AlignBottom    ? plot.bottom() - size.height() - margin
                        : corner & Qt::AlignVCenter ? plot.center().y() - size.height() / 2
                                                    : plot.top() + margin;
        legend->setGeometry(QRectF(QPointF(x, y), size));
        legend->update();
        bool relaid = false;
        // A chart not yet laid out (a hidden page) has a token plot area: no room to make yet.
        const bool laidOut = plot.height() > 4 * QFontMetricsF(legend->font()).height();
        if (axis && dataHi > dataLo && laidOut) {
            const double share =
                std::min(kMaxLegendShare, (size.height() + 2 * margin) / plot.height());
            relaid = reserveShare(axis, dataLo, dataHi, share, corner & Qt::AlignBottom);
        }
        *placing = false;
        if (relaid)
            QMetaObject::invokeMethod(
                legend,
                [again] {
                    if (auto p = again.lock()) (*p)();
                },
                Qt::QueuedConnection);
    };
    QObject::connect(chart, &QChart::plotAreaChanged, legend, [place] { (*place)(); });
    // The page sets its fonts after building the chart; without this the box kept the old
    // font's height and the last entry wrapped into a cut-off second column.
    QObject::connect(legend, &QLegend::fontChanged, legend, [place] { (*place)(); });
}

// ---- 1. memory-bound ------------------------------------------------------------------------
QString arithmeticLabel(Arithmetic arithmetic) {
    return QString::fromStdString(arithmeticName(arithmetic));
}

// Short names for legends: "fp32 cores", "tensor cores"; "fp32", "fp16".
QString unitsLabel(Arithmetic arithmetic) {
    return arithmetic == Arithmetic::Fp32CudaCores ? QStringLiteral("fp32 cores")
                                                   : QStringLiteral("tensor cores");
}
QString valuesLabel(Arithmetic arithmetic) {
    return arithmetic == Arithmetic::Fp32CudaCores ? QStringLiteral("fp32")
                                                   : QStringLiteral("fp16");
}

// Bytes per FLOP with three significant digits: 0.063, 0.0797, 0.00498.
QString bytesPerFlop(double value) {
    return QString::number(value, 'g', 3);
}

// The names of a roofline's standard kernels on one side of the ridge: "softmax", "QKᵀ and PV".
QString kernelNames(const Roofline& roof, bool memoryBound) {
    QStringList names;
    for (const RooflinePoint& p : roof.standard)
        if (p.memoryBound == memoryBound) names << QString::fromStdString(p.work.name);
    return names.join(QStringLiteral(" and "));
}

// For one arithmetic: standard attention's bytes per FLOP in that value width against what the
// memory feeds, and which kernels wait on it.
QString balanceSentence(const Roofline& roof, double bytesPerFlopNeeded) {
    const double fed = 1.0 / roof.ridgeFlopsPerByte;
    const QString bound = kernelNames(roof, true);
    const QString free = kernelNames(roof, false);
    const QString feeds = QStringLiteral("%1 are fed %2 B/FLOP")
                              .arg(arithmeticLabel(roof.arithmetic), bytesPerFlop(fed));
    if (free.isEmpty())
        return QStringLiteral("%1, less than the %2 needed: every kernel waits on memory.")
            .arg(feeds, bytesPerFlop(bytesPerFlopNeeded));
    if (bound.isEmpty())
        return QStringLiteral("%1, enough for the %2 needed: every kernel is compute-bound.")
            .arg(feeds, bytesPerFlop(bytesPerFlopNeeded));
    return QStringLiteral("%1 (%2 the %3 needed), but %4 %5 on memory, %6 of the time.")
        .arg(feeds,
             bytesPerFlopNeeded <= fed ? QStringLiteral("enough on average for")
                                       : QStringLiteral("less than"),
             bytesPerFlop(bytesPerFlopNeeded), bound,
             bound.contains(QLatin1Char(' ')) ? QStringLiteral("wait") : QStringLiteral("waits"),
             number(100 * roof.standardMemoryBoundShare(), 0) + QLatin1Char('%'));
}

ChartPage memoryBoundChart(const AnalysisResults& r) {
    QChart* chart = newChart(QStringLiteral("Is attention memory-bound?"),
                             QStringLiteral("standard attention, d = %1, against the %2")
                                 .arg(r.headDim)
                                 .arg(hardwareName(r)));
    const auto& rows = r.memoryBound;
    // The counting model moves fp32 values; tensor cores take fp16/bf16, half as many bytes.
    auto inWidth = [](double fp32BytesPerFlop, Arithmetic arithmetic) {
        return fp32BytesPerFlop * valueBytes(arithmetic) / double(kBytesPerElement);
    };
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (const Roofline& roof : r.memoryBoundRooflines)
        for (const TrafficRow& row : rows)
            for (double v :
                 {inWidth(row.bytesPerFlop, roof.arithmetic), 1.0 / roof.ridgeFlopsPerByte}) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    const auto [ylo, yhi] = paddedLogRange(lo, hi);
    auto* x = sizeAxis(QStringLiteral("sequence length n (tokens)"), rows.front().n, rows.back().n);
    auto* y = logAxis(QStringLiteral("bytes moved per FLOP (log scale)"), 10, QStringLiteral("%g"),
                      ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    // Above a balance line the memory cannot deliver bytes as fast as that unit uses them.
    std::vector<std::pair<QPointF, QString>> labels;
    QLineSeries* firstBalance = nullptr;
    for (const Roofline& roof : r.memoryBoundRooflines) {
        const bool fp32 = roof.arithmetic == Arithmetic::Fp32CudaCores;
        const double fed = 1.0 / roof.ridgeFlopsPerByte;
        QLineSeries* balance = horizontal(
            fp32 ? QStringLiteral("balance-fp32") : QStringLiteral("balance-tensor"),
            QStringLiteral("%1 fed %2 B/FLOP").arg(unitsLabel(roof.arithmetic), bytesPerFlop(fed)),
            fp32 ? kHardware : kHardwareLight, fp32 ? Qt::DashLine : Qt::DashDotLine, fed, x->min(),
            x->max());
        attach(chart, balance, x, y);
        if (!firstBalance) firstBalance = balance;
        labels.emplace_back(QPointF(x->max(), fed),
                            QStringLiteral("above this line %1 wait on memory")
                                .arg(arithmeticLabel(roof.arithmetic)));
        QLineSeries* attention = makeLine(
            fp32 ? QStringLiteral("standard-bytes-per-flop")
                 : QStringLiteral("standard-bytes-per-flop-fp16"),
            QStringLiteral("standard, %1 values").arg(valuesLabel(roof.arithmetic)),
            fp32 ? kStandard : kStandard.lighter(140), fp32 ? Qt::SolidLine : Qt::DashLine);
        for (const TrafficRow& row : rows)
            attention->append(row.n, inWidth(row.bytesPerFlop, roof.arithmetic));
        attach(chart, attention, x, y);
    }
    if (firstBalance) pinTexts(chart, firstBalance, labels, kHardware, Anchor::Right);

    // The n x n share at the first size past 2048 (the script's talking point), or the largest.
    const TrafficRow* shareRow = &rows.back();
    for (const TrafficRow& row : rows)
        if (row.n >= 2048) {
            shareRow = &row;
            break;
        }
    const TrafficRow& last = rows.back();
    const QString share =
        shareRow == &last
            ? QStringLiteral("%1% of its bytes are n × n scores")
                  .arg(number(100.0 * last.squareShare, 1))
            : QStringLiteral("from n = %1 on, %2% or more of its bytes are n × n scores")
                  .arg(shareRow->n)
                  .arg(number(100.0 * shareRow->squareShare, 1));
    QStringList caption{
        QStringLiteral("At n = %1 standard attention needs %2 B/FLOP with fp32 values; %3.")
            .arg(last.n)
            .arg(bytesPerFlop(last.bytesPerFlop), share)};
    for (const Roofline& roof : r.memoryBoundRooflines)
        caption << balanceSentence(roof, inWidth(last.bytesPerFlop, roof.arithmetic));
    return {chart, caption.join(QLatin1Char(' '))};
}

// ---- 2. online softmax ------------------------------------------------------------------------
// The smallest and largest broken / correct ratio over the weights both versions give.
std::pair<double, double> brokenFactors(const OnlineSoftmaxDemo& s) {
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (int j = 0; j < static_cast<int>(s.scores.size()); ++j)
        if (s.reference[j] > 0 && std::isfinite(s.broken[j])) {
            lo = std::min(lo, s.broken[j] / s.reference[j]);
            hi = std::max(hi, s.broken[j] / s.reference[j]);
        }
    return {lo, hi};
}

// Without the rescale the final weights are exp(s - m) over a sum gathered against older
// maxima; the caption says what the points show: one factor for every weight, or a range.
QString onlineSoftmaxCaption(const OnlineSoftmaxDemo& s) {
    if (!(s.brokenMaxDiff > 0))
        return QStringLiteral("With blocks of %1 the row arrives in one block, so the missing "
                              "rescale never matters; make Bc smaller to see it bite.")
            .arg(s.block);
    const auto [lo, hi] = brokenFactors(s);
    const QString exact = QStringLiteral("The circles sit on the green line: streaming is exact. ");
    if (hi > 0 && number(lo, 3) == number(hi, 3))
        return exact + QStringLiteral("Without the rescale ℓ adds terms against stale maxima, so "
                                      "every weight is off by the same factor, ×%1 (the weights "
                                      "sum to %2; error up to %3).")
                           .arg(number(lo, 3), number(s.brokenSum, 3), number(s.brokenMaxDiff, 3));
    return exact + QStringLiteral("Without the rescale the weights are off by factors from ×%1 to "
                                  "×%2 (they sum to %3; error up to %4).")
                       .arg(number(lo, 3), number(hi, 3), number(s.brokenSum, 3),
                            number(s.brokenMaxDiff, 3));
}

ChartPage onlineSoftmaxChart(const AnalysisResults& r) {
    const OnlineSoftmaxDemo& s = r.softmax;
    const auto count = static_cast<int>(s.scores.size());
    QChart* chart = newChart(QStringLiteral("Online softmax with and without the rescale"),
                             QStringLiteral("one row of %1 scores, streamed in blocks of Bc = %2")
                                 .arg(count)
                                 .arg(s.block));
    // Log scale: the broken weights sit a factor below the right ones, a constant gap on a log
    // axis; on a linear scale the small weights would all sit on the floor.
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (int j = 0; j < count; ++j)
        for (double v : {s.reference[j], s.online[j], s.broken[j]})
            if (v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    const auto [ylo, yhi] = decadeRange(lo, hi);
    auto* x =
        valueAxis(QStringLiteral("position j in the row (blocks of %1, edges dotted)").arg(s.block),
                  -0.5, count - 0.5, QStringLiteral("%.0f"));
    x->setTickType(QValueAxis::TicksDynamic);
    x->setTickAnchor(0);
    x->setTickInterval(std::max(1, std::min(s.block, count)));
    auto* y =
        logAxis(QStringLiteral("softmax weight (log scale)"), 10, QStringLiteral("%.0e"), ylo, yhi);
    y->setMinorTickCount(0);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    for (int edge = s.block; s.block > 0 && edge < count; edge += s.block) {
        QLineSeries* line = makeLine(QStringLiteral("block-edge"), QString(), kHardwareLight,
                                     Qt::DotLine, 1.5, false);
        line->append(edge - 0.5, y->min());
        line->append(edge - 0.5, y->max());
        attach(chart, line, x, y);
        hideFromLegend(chart, line);
    }
    QLineSeries* reference =
        makeLine(QStringLiteral("reference"), QStringLiteral("ordinary softmax"), kCorrect,
                 Qt::SolidLine, 2.5);
    QScatterSeries* online =
        makeScatter(QStringLiteral("online"),
                    QStringLiteral("online, with rescale (max diff %1)").arg(sci(s.onlineMaxDiff)),
                    Qt::transparent, kFlash, 16);
    QLineSeries* broken =
        makeLine(QStringLiteral("broken"),
                 QStringLiteral("online, no rescale (sums to %1)").arg(number(s.brokenSum, 3)),
                 kBroken, Qt::SolidLine, 2.5);
    for (int j = 0; j < count; ++j) {
        reference->append(j, s.reference[j]);
        online->append(j, s.online[j]);
        broken->append(j, s.broken[j]);
    }
    attach(chart, reference, x, y);
    attach(chart, broken, x, y);
    attach(chart, online, x, y);

    return {chart, onlineSoftmaxCaption(s)};
}

// ---- 3. tiled vs standard: traffic and memory against n ---------------------------------------
// Flash's figure against standard's at each n, in words for a title: "less traffic", "more
// traffic", "less traffic from n = 1024 on", "less traffic up to n = 512", "the same traffic".
struct ByN {
    int n;
    double standard, flash;
};
QString comparedWords(const std::vector<ByN>& rows, const QString& what) {
    auto less = [](const ByN& r) { return r.flash < r.standard; };
    auto more = [](const ByN& r) { return r.flash > r.standard; };
    if (std::all_of(rows.begin(), rows.end(), less)) return QStringLiteral("less ") + what;
    if (std::all_of(rows.begin(), rows.end(), more)) return QStringLiteral("more ") + what;
    if (std::none_of(rows.begin(), rows.end(), less) &&
        std::none_of(rows.begin(), rows.end(), more))
        return QStringLiteral("the same ") + what;
    // Sorted by n: less from some n on (the usual crossing), or less only up to some n.
    const auto firstLess = std::find_if(rows.begin(), rows.end(), less);
    if (std::all_of(firstLess, rows.end(), less))
        return QStringLiteral("less %1 from n = %2 on").arg(what).arg(firstLess->n);
    const auto firstNotLess = std::find_if_not(rows.begin(), rows.end(), less);
    if (firstNotLess != rows.begin() && std::none_of(firstNotLess, rows.end(), less))
        return QStringLiteral("less %1 up to n = %2").arg(what).arg(std::prev(firstNotLess)->n);
    return QStringLiteral("now less, now more ") + what;
}

ChartPage tiledChart(const AnalysisResults& r) {
    const auto& rows = r.tiled;
    std::vector<ByN> traffic, scratch;
    double worstDiff = 0;
    for (const TiledRow& row : rows) {
        traffic.push_back({row.n, double(row.standard.hbmBytes()), double(row.flash.hbmBytes())});
        scratch.push_back(
            {row.n, double(row.standard.peakScratchBytes()), double(row.flash.peakScratchBytes())});
        worstDiff = std::max(worstDiff, row.maxAbsDiff);
    }
    const TiledRow& first = rows.front();
    const TiledRow& last = rows.back();
    const bool sameAnswer = worstDiff <= defaultTolerance(Precision::Double);
    const bool flatMemory = last.flash.peakScratchBytes() == first.flash.peakScratchBytes();
    const QString trafficWords = comparedWords(traffic, QStringLiteral("traffic"));
    QChart* chart = newChart(
        QStringLiteral("%1, %2, %3")
            .arg(sameAnswer ? QStringLiteral("Same answer") : QStringLiteral("Different answers"),
                 trafficWords,
                 flatMemory ? QStringLiteral("flat memory")
                            : comparedWords(scratch, QStringLiteral("memory"))),
        QStringLiteral("standard vs FlashAttention, d = %1, %2 × %2 tiles")
            .arg(r.headDim)
            .arg(r.block));
    double lo = std::numeric_limits<double>::max(), hi = 0;
    auto see = [&](double v) {
        if (v > 0) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    };
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (const Counters* c : {&rows[i].standard, &rows[i].flash}) {
            see(toMB(c->hbmBytes()));
            see(toMB(c->peakScratchBytes()));
        }
        see(r.paperModel[i].standardAccesses * kBytesPerElement / kBytesPerMB);
        see(r.paperModel[i].flashAccesses * kBytesPerElement / kBytesPerMB);
    }
    const auto [ylo, yhi] = paddedLogRange(lo, hi); // legendInside adds room for the legend
    auto* x = sizeAxis(QStringLiteral("sequence length n (tokens)"), rows.front().n, rows.back().n);
    auto* y = logAxis(QStringLiteral("MB (log scale)"), 10, QStringLiteral("%g"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    QLineSeries* stdTraffic = makeLine(QStringLiteral("standard-traffic"),
                                       QStringLiteral("standard: HBM traffic"), kStandard);
    QLineSeries* flashTraffic =
        makeLine(QStringLiteral("flash-traffic"), QStringLiteral("flash: HBM traffic"), kFlash);
    QLineSeries* stdPeak =
        makeLine(QStringLiteral("standard-peak"), QStringLiteral("standard: scratch memory"),
                 kStandard, Qt::DashLine);
    QLineSeries* flashPeak =
        makeLine(QStringLiteral("flash-peak"), QStringLiteral("flash: scratch memory"), kFlash,
                 Qt::DashLine);
    QLineSeries* paperStd = makeLine(QStringLiteral("paper-standard"),
                                     QStringLiteral("paper's model, standard: Θ(Nd + N²)"),
                                     kStandard.lighter(140), Qt::DotLine, 2.0, false);
    QLineSeries* paperFlash =
        makeLine(QStringLiteral("paper-flash"),
                 QStringLiteral("paper's model, flash: Θ(N²d²/M), M = %1 K floats")
                     .arg(number(r.sramElements / 1024.0, 0)),
                 kFlash.lighter(150), Qt::DotLine, 2.0, false);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const TiledRow& row = rows[i];
        stdTraffic->append(row.n, toMB(row.standard.hbmBytes()));
        flashTraffic->append(row.n, toMB(row.flash.hbmBytes()));
        stdPeak->append(row.n, toMB(row.standard.peakScratchBytes()));
        flashPeak->append(row.n, toMB(row.flash.peakScratchBytes()));
        paperStd->append(row.n, r.paperModel[i].standardAccesses * kBytesPerElement / kBytesPerMB);
        paperFlash->append(row.n, r.paperModel[i].flashAccesses * kBytesPerElement / kBytesPerMB);
    }
    for (QLineSeries* s : {stdTraffic, flashTraffic, stdPeak, flashPeak, paperStd, paperFlash})
        attach(chart, s, x, y);
    legendInside(chart, Qt::AlignTop | Qt::AlignLeft, y);

    QString memory =
        flatMemory
            ? QStringLiteral("flash's stays at %1").arg(kb(last.flash.peakScratchBytes()))
            : QStringLiteral("flash's goes from %1 to %2")
                  .arg(kb(first.flash.peakScratchBytes()), kb(last.flash.peakScratchBytes()));
    return {chart,
            QStringLiteral("%1 (largest difference %2). Flash moves %3: %4 at n = %5 against "
                           "standard's %6. Standard's scratch grows with n², %7; dotted: the "
                           "paper's IO model, constants left out.")
                .arg(sameAnswer ? QStringLiteral("Same output") : QStringLiteral("Outputs differ"),
                     sci(worstDiff), trafficWords, mb(last.flash.hbmBytes()))
                .arg(last.n)
                .arg(mb(last.standard.hbmBytes()), memory)};
}

// ---- 4. block size against the SRAM budget ---------------------------------------------------
ChartPage blockSizeChart(const AnalysisResults& r) {
    const BlockSweep& sweep = r.sweep;
    const auto fitting = std::count_if(sweep.rows.begin(), sweep.rows.end(),
                                       [](const BlockRow& row) { return row.fits; });
    const QString headline = fitting == 0 ? QStringLiteral("Block size: no tile fits the SRAM")
                             : fitting == static_cast<std::ptrdiff_t>(sweep.rows.size())
                                 ? QStringLiteral("Block size: every tile fits the SRAM")
                                 : QStringLiteral("Who picks the block size: SRAM");
    QChart* chart = newChart(headline, QStringLiteral("FlashAttention, n = %1, d = %2, %3")
                                           .arg(sweep.n)
                                           .arg(sweep.headDim)
                                           .arg(hardwareName(r)));
    double lo = std::numeric_limits<double>::max(), hi = 0;
    auto see = [&](double v) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    };
    see(toMB(sweep.standard.hbmBytes()));
    see(static_cast<double>(sweep.sramBudgetBytes) / kBytesPerMB);
    for (const BlockRow& row : sweep.rows) {
        see(toMB(row.flash.hbmBytes()));
        see(toMB(row.flash.peakScratchBytes()));
    }
    // Room below the lines for the legend, under the SRAM line where nothing is drawn.
    const auto [ylo, yhi] = paddedLogRange(lo / 40, hi);
    auto* x = sizeAxis(QStringLiteral("block size B (Br = Bc = B)"), sweep.rows.front().block,
                       sweep.rows.back().block);
    auto* y = logAxis(QStringLiteral("MB (log scale)"), 10, QStringLiteral("%g"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    // The region where the working set no longer fits: from halfway (on the log axis) between
    // the last block that fits and the first that does not, to the right edge.
    const BlockRow* lastFit = nullptr;
    const BlockRow* firstSpill = nullptr;
    for (const BlockRow& row : sweep.rows) {
        if (row.fits)
            lastFit = &row;
        else if (!firstSpill)
            firstSpill = &row;
    }
    if (firstSpill) {
        const double from =
            lastFit ? std::sqrt(static_cast<double>(lastFit->block) * firstSpill->block) : x->min();
        QAreaSeries* area =
            band(QStringLiteral("spills"), QStringLiteral("tile spills out of SRAM"), kSpill, from,
                 x->max(), y->min(), y->max());
        area->setPen(QPen(kSpill.darker(200), 1));
        attach(chart, area, x, y);
    }

    QLineSeries* budget = horizontal(
        QStringLiteral("sram-budget"),
        QStringLiteral("SRAM budget: %1 per SM").arg(kb(sweep.sramBudgetBytes)), kHardware,
        Qt::DashLine, static_cast<double>(sweep.sramBudgetBytes) / kBytesPerMB, x->min(), x->max());
    attach(chart, budget, x, y);
    attach(chart,
           horizontal(
               QStringLiteral("standard-traffic"),
               QStringLiteral("standard attention traffic: %1").arg(mb(sweep.standard.hbmBytes())),
               kStandard, Qt::DashLine, toMB(sweep.standard.hbmBytes()), x->min(), x->max()),
           x, y);
    pinTexts(chart, budget,
             {{QPointF(x->min(), static_cast<double>(sweep.sramBudgetBytes) / kBytesPerMB),
               QStringLiteral("shared memory of one SM: %1").arg(kb(sweep.sramBudgetBytes))}},
             kHardware, Anchor::Left);
    QLineSeries* traffic =
        makeLine(QStringLiteral("flash-traffic"), QStringLiteral("flash: HBM traffic"), kFlash);
    QLineSeries* workingSet =
        makeLine(QStringLiteral("working-set"), QStringLiteral("flash: tile working set"), kAccent);
    for (const BlockRow& row : sweep.rows) {
        traffic->append(row.block, toMB(row.flash.hbmBytes()));
        workingSet->append(row.block, toMB(row.flash.peakScratchBytes()));
    }
    attach(chart, traffic, x, y);
    attach(chart, workingSet, x, y);
    legendInside(chart, Qt::AlignBottom | Qt::AlignRight);

    QString caption;
    if (lastFit && firstSpill)
        caption = QStringLiteral("Bigger tiles mean fewer passes over K and V (%1 → %2), but past "
                                 "B = %3 the tile no longer fits the %4 one SM has.")
                      .arg(mb(sweep.rows.front().flash.hbmBytes()), mb(lastFit->flash.hbmBytes()))
                      .arg(lastFit->block)
                      .arg(kb(sweep.sramBudgetBytes));
    else if (!lastFit)
        caption = QStringLiteral("Not even a %1 × %1 tile fits the %2 one SM has at d = %3.")
                      .arg(sweep.rows.front().block)
                      .arg(kb(sweep.sramBudgetBytes))
                      .arg(sweep.headDim);
    else
        caption =
            QStringLiteral(
                "Every block size fits the %1 one SM has; the largest moves the fewest bytes (%2).")
                .arg(kb(sweep.sramBudgetBytes), mb(sweep.rows.back().flash.hbmBytes()));
    return {chart, caption};
}

// ---- 5. backward pass ------------------------------------------------------------------------
// Two panels of paired bars, standard against flash, each on its own log axis; `more` adds sets
// beside the pair (the backward's figures as the engine counts them beside the script's model).
struct ExtraBars {
    QString object, label;
    QColor color;
    std::vector<double> values;
};
struct BarPanel {
    QString headline, settings, yTitle;
    QStringList categories;
    QString stdObject, flashObject;
    std::vector<double> stdValues, flashValues;
    QString stdLabel = QStringLiteral("standard attention");
    QString flashLabel = QStringLiteral("FlashAttention");
    std::vector<ExtraBars> more;
};

// Bar labels with three significant digits, or all of the largest value's whole digits: Qt
// Charts prints them as 'g' does, so 1024 at three would read "1.02e+03" beside "512".
int barLabelPrecision(double largest) {
    const double whole = std::round(largest); // 999.6 prints as 1000: four digits
    return whole >= 1000 ? int(std::floor(std::log10(whole))) + 1 : 3;
}

QChart* pairedBars(const BarPanel& panel) {
    QChart* chart = newChart(panel.headline, panel.settings);
    auto* bars = new QBarSeries;
    bars->setObjectName(panel.stdObject + QStringLiteral("-bars"));
    QBarSet* standard = makeBarSet(panel.stdObject, panel.stdLabel, kStandard);
    QBarSet* flash = makeBarSet(panel.flashObject, panel.flashLabel, kFlash);
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (std::size_t i = 0; i < panel.stdValues.size(); ++i) {
        *standard << panel.stdValues[i];
        *flash << panel.flashValues[i];
        lo = std::min({lo, panel.stdValues[i], panel.flashValues[i]});
        hi = std::max({hi, panel.stdValues[i], panel.flashValues[i]});
    }
    bars->append(standard);
    bars->append(flash);
    for (const ExtraBars& extra : panel.more) {
        QBarSet* set = makeBarSet(extra.object, extra.label, extra.color);
        for (double v : extra.values) {
            *set << v;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        bars->append(set);
    }
    bars->setBarWidth(0.75);
    bars->setLabelsVisible(true);
    bars->setLabelsFormat(QStringLiteral("@value"));
    bars->setLabelsPrecision(barLabelPrecision(hi));
    bars->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    auto* x = new QBarCategoryAxis;
    x->append(panel.categories);
    x->setTitleText(QStringLiteral("sequence length n (tokens)"));
    // Bars grow from the axis floor: start a decade below the smallest so it still shows.
    auto* y = logAxis(panel.yTitle, 10, QStringLiteral("%g"),
                      std::pow(10.0, std::floor(std::log10(lo))), hi * 3);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    attach(chart, bars, x, y);
    // More than a pair is cut off below a narrow panel, or squeezes its bars beside it: the
    // legend goes inside, top left, where the shortest bars (the smallest n) leave it empty.
    if (bars->count() > 2) legendInside(chart, Qt::AlignTop | Qt::AlignLeft, y);
    // Equal pairs (the forward pass's FLOPs) would print the same number twice, side by side and
    // run together at small sizes: the flash bars then go unlabelled (after attach, which
    // applies the theme's label colour).
    if (panel.stdValues == panel.flashValues) {
        flash->setLabelColor(Qt::transparent);
    } else {
        // Close neighbours (the backward pass's FLOPs, 20% apart) put their labels side by side
        // at one height, where they run together on a laptop: stand them upright.
        bool close = false;
        const QList<QBarSet*> sets = bars->barSets();
        for (qsizetype k = 1; k < sets.size(); ++k)
            for (qsizetype i = 0; i < sets[k]->count(); ++i) {
                const double a = sets[k - 1]->at(i), b = sets[k]->at(i);
                close = close || std::max(a, b) < 2 * std::min(a, b);
            }
        if (close) bars->setLabelsAngle(-90);
    }
    return chart;
}

ChartPage backwardChart(const AnalysisResults& r) {
    const auto& rows = r.backward;
    const auto& counted = r.countedBackward;
    // The engine's bars: FlashAttention-2's backward as FlashViz counts it, in deeper shades.
    const QColor countedStandard = kStandard.darker(150), countedFlash = kFlash.darker(150);
    BarPanel flops{QStringLiteral("Pay %1% more FLOPs…")
                       .arg(number(100.0 * rows.back().extraFlopsFraction, 0)),
                   QStringLiteral("backward pass, d = %1: flash recomputes S").arg(r.headDim),
                   QStringLiteral("GFLOP (log scale)"),
                   {},
                   QStringLiteral("standard-flops"),
                   QStringLiteral("flash-flops"),
                   {},
                   {},
                   QStringLiteral("std, script"),
                   QStringLiteral("flash, script"),
                   {{QStringLiteral("counted-standard-flops"),
                     QStringLiteral("std, counted"),
                     countedStandard,
                     {}},
                    {QStringLiteral("counted-flash-flops"),
                     QStringLiteral("flash, counted"),
                     countedFlash,
                     {}}}};
    double keptLo = std::numeric_limits<double>::max(), keptHi = 0; // standard ÷ flash kept
    for (const BackwardRow& row : rows) {
        const double ratio =
            double(row.costs.standard.storedElements) / double(row.costs.flash.storedElements);
        keptLo = std::min(keptLo, ratio);
        keptHi = std::max(keptHi, ratio);
    }
    auto times = [](double v) { return number(v, v >= 10 ? 0 : 1); }; // "3.6", "585"
    BarPanel memory{QStringLiteral("…to keep %1× less memory")
                        .arg(times(keptLo) == times(keptHi)
                                 ? times(keptLo)
                                 : times(keptLo) + QStringLiteral("–") + times(keptHi)),
                    QStringLiteral("standard keeps P; flash m, ℓ (counted: O, L)"),
                    QStringLiteral("MB kept for the backward pass (log scale)"),
                    {},
                    QStringLiteral("standard-stored"),
                    QStringLiteral("flash-stored"),
                    {},
                    {},
                    QStringLiteral("std, script"),
                    QStringLiteral("flash, script"),
                    {{QStringLiteral("counted-flash-stored"),
                      QStringLiteral("flash, counted"),
                      countedFlash,
                      {}}}};
    for (const BackwardRow& row : rows) {
        const QString category = QString::number(row.n);
        flops.categories << category;
        memory.categories << category;
        flops.stdValues.push_back(toGFlop(row.costs.standard.flops));
        flops.flashValues.push_back(toGFlop(row.costs.flash.flops));
        memory.stdValues.push_back(toMB(row.costs.standard.storedElements * kBytesPerElement));
        memory.flashValues.push_back(toMB(row.costs.flash.storedElements * kBytesPerElement));
    }
    for (const CountedBackwardRow& row : counted) {
        flops.more[0].values.push_back(toGFlop(row.standard.flops));
        flops.more[1].values.push_back(toGFlop(row.flash.flops));
        memory.more[0].values.push_back(toMB(row.flashStoredElements * kBytesPerElement));
    }
    const BackwardRow& last = rows.back();
    const CountedBackwardRow& engine = counted.back();
    ChartPage page;
    page.chart = pairedBars(flops);
    page.second = pairedBars(memory);
    page.caption =
        QStringLiteral(
            "Recomputing S costs %1% more FLOPs; not storing P keeps %2 instead of %3 at n = %4. "
            "Counted by FlashViz (%5 × %6 tiles): %7 more FLOPs than standard's 4 matmuls, %8 "
            "kept (O and L, not m and ℓ), %9 of HBM traffic, %10 with P stored (its write and read included).")
            .arg(number(100.0 * last.extraFlopsFraction, 0),
                 mb(last.costs.flash.storedElements * kBytesPerElement),
                 mb(last.costs.standard.storedElements * kBytesPerElement))
            .arg(last.n)
            .arg(r.countedBackwardOptions.blockRows)
            .arg(r.countedBackwardOptions.blockCols)
            .arg(
                QStringLiteral("%1%").arg(number(
                    100.0 * (double(engine.flash.flops) / double(engine.standard.flops) - 1.0), 0)),
                mb(engine.flashStoredElements * kBytesPerElement), mb(engine.flash.hbmBytes()),
                mb(engine.storedWeights.hbmBytes()));
    return page;
}

// ---- 6. exact vs local window ----------------------------------------------------------------
ChartPage exactnessChart(const AnalysisResults& r) {
    const auto& runs = r.exactness;
    const ExactnessDemo& first = runs.front();
    QChart* chart =
        newChart(QStringLiteral("Exact, not an approximation"),
                 QStringLiteral("largest difference from standard attention, n = %1, d = %2")
                     .arg(first.n)
                     .arg(first.headDim));
    // A difference of exactly zero has no place on a log axis; such points sit on the floor.
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (const ExactnessDemo& run : runs)
        for (double v : {run.flashMaxDiff, run.windowMaxDiff})
            if (v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    if (hi == 0) {
        lo = std::numeric_limits<double>::epsilon();
        hi = 1;
    }
    auto [ylo, yhi] = decadeRange(lo, hi);
    ylo /= 10;
    auto onAxis = [floor = ylo](double v) { return v > 0 ? v : floor; };
    auto* x = sizeAxis(QStringLiteral("window half-width w: each query sees keys within ±w"),
                       runs.front().halfWidth, runs.back().halfWidth);
    // Labels every third decade: sixteen decades of labels would be unreadable from the back.
    auto* y = logAxis(QStringLiteral("max |output − standard| (log scale)"), 1000,
                      QStringLiteral("%.0e"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    QLineSeries* window = makeLine(QStringLiteral("window-diff"),
                                   QStringLiteral("local-window approximation"), kStandard);
    QLineSeries* flash =
        makeLine(QStringLiteral("flash-diff"),
                 QStringLiteral("FlashAttention (%1 × %1 tiles)").arg(r.block), kFlash);
    const ExactnessDemo* picked = nullptr;
    for (const ExactnessDemo& run : runs) {
        window->append(run.halfWidth, onAxis(run.windowMaxDiff));
        flash->append(run.halfWidth, onAxis(run.flashMaxDiff));
        if (run.halfWidth == r.plan.scriptHalfWidth) picked = &run;
    }
    attach(chart, window, x, y);
    attach(chart, flash, x, y);
    std::vector<std::pair<QPointF, QString>> zeros;
    for (const ExactnessDemo& run : runs)
        if (run.windowMaxDiff == 0)
            zeros.emplace_back(QPointF(run.halfWidth, ylo), QStringLiteral("identical"));
    if (!zeros.empty()) pinTexts(chart, window, zeros, kStandard.darker(130), Anchor::Right);
    QString caption;
    if (picked) {
        QScatterSeries* mark = makeScatter(
            QStringLiteral("script-window"),
            QStringLiteral("±%1 (the explainer's), allclose: %2")
                .arg(picked->halfWidth)
                .arg(picked->windowAllClose ? QStringLiteral("yes") : QStringLiteral("no")),
            Qt::transparent, kBroken, 26);
        mark->append(picked->halfWidth, onAxis(picked->windowMaxDiff));
        attach(chart, mark, x, y);
        caption = QStringLiteral("Flash stays at rounding noise (%1, allclose %2); the window at "
                                 "±%3 is off by %4 and is exact only once it covers every key.")
                      .arg(sci(picked->flashMaxDiff),
                           picked->flashAllClose ? QStringLiteral("yes") : QStringLiteral("no"))
                      .arg(picked->halfWidth)
                      .arg(number(picked->windowMaxDiff, 2));
    } else {
        caption = QStringLiteral(
            "Flash stays at rounding noise; the window is exact only once it covers every key.");
    }
    return {chart, caption};
}

// ---- 7. same FLOPs, less traffic -------------------------------------------------------------
ChartPage flopsChart(const AnalysisResults& r) {
    const auto& rows = r.flops;
    BarPanel flops{
        QStringLiteral("Same FLOPs…"),
        QStringLiteral("forward pass, d = %1, %2 × %2 tiles").arg(r.headDim).arg(r.block),
        QStringLiteral("GFLOP (log scale)"),
        {},
        QStringLiteral("standard-flops"),
        QStringLiteral("flash-flops"),
        {},
        {},
        QStringLiteral("standard attention"),
        QStringLiteral("FlashAttention"),
        {}};
    std::vector<ByN> byN;
    for (const FlopsRow& row : rows)
        byN.push_back({row.n, double(row.standard.hbmBytes()), double(row.flash.hbmBytes())});
    const QString trafficWords = comparedWords(byN, QStringLiteral("traffic"));
    BarPanel traffic{QStringLiteral("…") + trafficWords,
                     QStringLiteral("bytes moved between HBM and the chip"),
                     QStringLiteral("HBM traffic, MB (log scale)"),
                     {},
                     QStringLiteral("standard-traffic"),
                     QStringLiteral("flash-traffic"),
                     {},
                     {},
                     QStringLiteral("standard attention"),
                     QStringLiteral("FlashAttention"),
                     {}};
    bool sameFlops = true;
    double flopsApart = 0; // the largest |flash - standard| / standard
    double cutLo = std::numeric_limits<double>::max(), cutHi = 0;
    for (const FlopsRow& row : rows) {
        const QString category = QString::number(row.n);
        flops.categories << category;
        traffic.categories << category;
        flops.stdValues.push_back(toGFlop(row.standard.flops));
        flops.flashValues.push_back(toGFlop(row.flash.flops));
        traffic.stdValues.push_back(toMB(row.standard.hbmBytes()));
        traffic.flashValues.push_back(toMB(row.flash.hbmBytes()));
        sameFlops = sameFlops && row.standard.flops == row.flash.flops;
        flopsApart =
            std::max(flopsApart, std::abs(double(row.flash.flops) - double(row.standard.flops)) /
                                     double(row.standard.flops));
        cutLo = std::min(cutLo, row.trafficCut);
        cutHi = std::max(cutHi, row.trafficCut);
    }
    // A factor range, "2.0×" or "7.2–7.9×".
    auto factors = [](double lo, double hi) {
        return number(lo, 1) == number(hi, 1)
                   ? number(lo, 1) + QStringLiteral("×")
                   : number(lo, 1) + QStringLiteral("–") + number(hi, 1) + QStringLiteral("×");
    };
    const QString flopWords =
        sameFlops
            ? QStringLiteral("Every multiply is still done (identical FLOPs)")
            : QStringLiteral("The FLOPs differ by up to %1%").arg(number(100 * flopsApart, 1));
    if (!sameFlops) flops.headline = QStringLiteral("FLOPs…");
    ChartPage page;
    page.chart = pairedBars(flops);
    page.second = pairedBars(traffic);
    if (cutLo > 1)
        page.caption = QStringLiteral("%1; only the traffic falls, %2 less. The gain is in bytes, "
                                      "not arithmetic.")
                           .arg(flopWords, factors(cutLo, cutHi));
    else if (cutHi < 1)
        page.caption = QStringLiteral("%1, and with %2 × %2 tiles flash moves %3 the bytes of "
                                      "standard attention: bigger query tiles read K and V fewer "
                                      "times.")
                           .arg(flopWords)
                           .arg(r.block)
                           .arg(factors(1 / cutHi, 1 / cutLo));
    else
        page.caption = QStringLiteral("%1; with %2 × %2 tiles flash moves %3 (standard ÷ flash = "
                                      "%4): bigger query tiles read K and V fewer times.")
                           .arg(flopWords)
                           .arg(r.block)
                           .arg(trafficWords, factors(cutLo, cutHi));
    return page;
}

// ---- 8. debug copy of S ----------------------------------------------------------------------
ChartPage debugCopyChart(const AnalysisResults& r) {
    const DebugCopyDemo& demo = r.debugCopy;
    const bool undoes = number(demo.peakRatio, 0) != QStringLiteral("1");
    QChart* chart = newChart(undoes ? QStringLiteral("A debug copy of S undoes the tiling")
                                    : QStringLiteral("A debug copy of S costs traffic"),
                             QStringLiteral("FlashAttention, n = %1, d = %2, %3 × %3 tiles")
                                 .arg(demo.n)
                                 .arg(demo.headDim)
                                 .arg(demo.block));
    auto* bars = new QBarSeries;
    bars->setObjectName(QStringLiteral("debug-copy"));
    QBarSet* clean =
        makeBarSet(QStringLiteral("clean"), QStringLiteral("score tiles discarded"), kFlash);
    QBarSet* kept =
        makeBarSet(QStringLiteral("kept"),
                   QStringLiteral("every score tile also written to an n × n S"), kBroken);
    *clean << toMB(demo.clean.peakScratchBytes()) << toMB(demo.clean.hbmBytes());
    *kept << toMB(demo.withCopy.peakScratchBytes()) << toMB(demo.withCopy.hbmBytes());
    bars->append(clean);
    bars->append(kept);
    bars->setLabelsVisible(true);
    bars->setLabelsFormat(QStringLiteral("@value MB"));
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (const QBarSet* set : {clean, kept})
        for (int i = 0; i < set->count(); ++i) {
            lo = std::min(lo, set->at(i));
            hi = std::max(hi, set->at(i));
        }
    bars->setLabelsPrecision(barLabelPrecision(hi));
    bars->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    auto* x = new QBarCategoryAxis;
    x->append({QStringLiteral("peak scratch memory"), QStringLiteral("HBM traffic")});
    x->setTitleText(QStringLiteral("what one forward pass costs"));
    const auto [ylo, yhi] = decadeRange(lo, hi * 3);
    auto* y = logAxis(QStringLiteral("MB (log scale)"), 10, QStringLiteral("%g"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    attach(chart, bars, x, y);
    // With tiles as large as S, the clean run already holds the whole score matrix.
    if (!undoes)
        return {chart,
                QStringLiteral("With %1 × %1 tiles one tile already holds all of S, so the copy "
                               "adds no peak memory (%2 → %3); traffic goes from %4 to %5.")
                    .arg(demo.block)
                    .arg(kb(demo.clean.peakScratchBytes()), kb(demo.withCopy.peakScratchBytes()),
                         mb(demo.clean.hbmBytes()), mb(demo.withCopy.hbmBytes()))};
    return {chart, QStringLiteral("One debugging line undoes the tiling: the peak goes from %1 to "
                                  "%2 (%3× worse) and traffic from %4 to %5.")
                       .arg(kb(demo.clean.peakScratchBytes()), kb(demo.withCopy.peakScratchBytes()))
                       .arg(number(demo.peakRatio, 0))
                       .arg(mb(demo.clean.hbmBytes()), mb(demo.withCopy.hbmBytes()))};
}

// ---- 9. overflow without the running maximum -------------------------------------------------
QString finiteOrName(double v, int decimals) {
    if (std::isnan(v)) return QStringLiteral("NaN");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', decimals);
}

ChartPage overflowChart(const AnalysisResults& r) {
    const OverflowDemo& demo = r.overflow;
    const auto count = static_cast<int>(demo.scores.size());
    QChart* chart = newChart(
        QStringLiteral("Without the maximum, exp() overflows"),
        QStringLiteral("softmax of four large scores, with and without subtracting the maximum"));
    auto* bars = new QBarSeries;
    bars->setObjectName(QStringLiteral("overflow"));
    QBarSet* safe = makeBarSet(QStringLiteral("safe"),
                               QStringLiteral("with the max subtracted: weight"), kCorrect);
    QBarSet* naive = makeBarSet(
        QStringLiteral("naive"),
        QStringLiteral("without it: exp(s) → inf, weight → NaN (no bar can be drawn)"), kBroken);
    QStringList categories;
    double top = 0;
    for (int i = 0; i < count; ++i) {
        categories << QStringLiteral("s = %1").arg(demo.scores[i]);
        *safe << demo.safeWeights[i];
        // A NaN has no height; the bar stays empty and the value is written in its place.
        *naive << (std::isfinite(demo.naiveWeights[i]) ? demo.naiveWeights[i] : 0.0);
        top = std::max(top, demo.safeWeights[i]);
    }
    bars->append(safe);
    bars->append(naive);
    bars->setLabelsVisible(true);
    bars->setLabelsFormat(QStringLiteral("@value"));
    bars->setLabelsPrecision(3);
    bars->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    x->setTitleText(QStringLiteral("score s"));
    bars->setBarWidth(0.7);
    // Room above the bars for what the version without the maximum produced.
    auto* y = valueAxis(QStringLiteral("softmax weight"), 0, std::max(top, 1.0) * 1.4,
                        QStringLiteral("%.1f"));
    y->setTickType(QValueAxis::TicksDynamic);
    y->setTickAnchor(0);
    y->setTickInterval(0.2);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    attach(chart, bars, x, y);

    // Above each score, what the version without the maximum produced for it.
    std::vector<std::pair<QPointF, QString>> texts;
    for (int i = 0; i < count; ++i) {
        const QString text =
            QStringLiteral("exp(%1) = %2\nweight = %3")
                .arg(demo.scores[i])
                .arg(finiteOrName(demo.rawExp[i], 3), finiteOrName(demo.naiveWeights[i], 3));
        texts.emplace_back(QPointF(i, std::max(top, 1.0) * 1.1), text);
    }
    pinTexts(chart, bars, texts, kBroken, Anchor::Centre, true);
    const QString caption =
        demo.nonFiniteNaive == count
            ? QStringLiteral("Even exp(%1) is past the largest double: every weight of the plain "
                             "softmax is NaN. Subtracting the maximum keeps it finite.")
                  .arg(demo.scores.minCoeff())
            : QStringLiteral("%1 of the %2 weights of the plain softmax are not finite; "
                             "subtracting the maximum keeps them all finite.")
                  .arg(demo.nonFiniteNaive)
                  .arg(count);
    return {chart, caption};
}

// ---- 10. roofline -----------------------------------------------------------------------------
// The roof of one arithmetic: rising with the bandwidth up to the ridge, flat at the peak.
QLineSeries* roofSeries(const Roofline& roof, double x0, double x1, const QColor& color,
                        Qt::PenStyle style) {
    const bool fp32 = roof.arithmetic == Arithmetic::Fp32CudaCores;
    QLineSeries* line =
        makeLine(fp32 ? QStringLiteral("roof-fp32") : QStringLiteral("roof-tensor"),
                 QStringLiteral("%1: %2").arg(unitsLabel(roof.arithmetic),
                                              formatFlopRate(roof.peakFlopsPerSecond)),
                 color, style, 2.5, false);
    const double tera = 1e12;
    line->append(x0, x0 * roof.bandwidthBytesPerSecond / tera);
    line->append(roof.ridgeFlopsPerByte, roof.peakFlopsPerSecond / tera);
    line->append(x1, roof.peakFlopsPerSecond / tera);
    return line;
}

// The kernels' points, with one label for points that would sit on top of each other.
void addKernelPoints(QChart* chart, const Roofline& roof, QAbstractAxis* x, QAbstractAxis* y) {
    const bool fp32 = roof.arithmetic == Arithmetic::Fp32CudaCores;
    const QString width = valuesLabel(roof.arithmetic);
    const auto shape =
        fp32 ? QScatterSeries::MarkerShapeCircle : QScatterSeries::MarkerShapeRectangle;
    QScatterSeries* standard = makeScatter(
        fp32 ? QStringLiteral("standard-kernels-fp32") : QStringLiteral("standard-kernels-tensor"),
        QStringLiteral("standard, %1").arg(width), fp32 ? kStandard : kStandard.lighter(140),
        kStandard.darker(140), 14, shape);
    QScatterSeries* flash = makeScatter(
        fp32 ? QStringLiteral("flash-kernel-fp32") : QStringLiteral("flash-kernel-tensor"),
        QStringLiteral("flash, %1").arg(width), fp32 ? kFlash : kFlash.lighter(150),
        kFlash.darker(140), 14, shape);
    std::vector<std::pair<QPointF, QString>> labels;
    auto add = [&](QScatterSeries* series, const RooflinePoint& p) {
        const QPointF at(p.intensity, p.attainableFlopsPerSecond / 1e12);
        series->append(at);
        const QString name = QString::fromStdString(p.work.name);
        // Within a quarter of each other on both log axes the labels would overlap.
        for (auto& [where, text] : labels)
            if (std::abs(std::log10(where.x() / at.x())) < 0.25 &&
                std::abs(std::log10(where.y() / at.y())) < 0.25) {
                if (!text.contains(name)) text += QStringLiteral(", ") + name;
                return;
            }
        labels.emplace_back(at, name);
    };
    for (const RooflinePoint& p : roof.standard)
        add(standard, p);
    add(flash, roof.flash);
    attach(chart, standard, x, y);
    attach(chart, flash, x, y);
    // fp32's labels to the right of their points, fp16's to the left: the two sets sit a factor
    // of two apart on both axes, close enough for their labels to collide on one side.
    pinTexts(chart, standard, labels, fp32 ? kHardware : kHardwareLight.darker(130),
             fp32 ? Anchor::Left : Anchor::Right);
}

// Which side of the ridge the flash kernel is on, for each arithmetic.
QString flashSentence(const std::vector<Roofline>& rooflines) {
    QStringList parts;
    for (const Roofline& roof : rooflines)
        parts << QStringLiteral("%1 FLOP/byte on %2 (%3)")
                     .arg(QString::number(roof.flash.intensity, 'g', 3),
                          arithmeticLabel(roof.arithmetic),
                          roof.flash.memoryBound ? QStringLiteral("memory-bound")
                                                 : QStringLiteral("compute-bound"));
    return QStringLiteral("The flash kernel does %1.").arg(parts.join(QStringLiteral(", ")));
}

ChartPage rooflineChart(const AnalysisResults& r) {
    const auto& rooflines = r.rooflines;
    const Roofline& any = rooflines.front();
    QChart* chart = newChart(QStringLiteral("Roofline: which kernels wait on memory"),
                             QStringLiteral("n = %1, d = %2, %3 × %4 tiles, %5")
                                 .arg(any.n)
                                 .arg(any.headDim)
                                 .arg(r.inputs.options.blockRows)
                                 .arg(r.inputs.options.blockCols)
                                 .arg(hardwareName(r)));
    double lo = std::numeric_limits<double>::max(), hi = 0, top = 0;
    double bottom = std::numeric_limits<double>::max();
    for (const Roofline& roof : rooflines) {
        for (const RooflinePoint* p :
             {&roof.standard[0], &roof.standard[1], &roof.standard[2], &roof.flash}) {
            lo = std::min(lo, p->intensity);
            hi = std::max(hi, p->intensity);
            bottom = std::min(bottom, p->attainableFlopsPerSecond / 1e12);
        }
        lo = std::min(lo, roof.ridgeFlopsPerByte);
        hi = std::max(hi, roof.ridgeFlopsPerByte);
        top = std::max(top, roof.peakFlopsPerSecond / 1e12);
    }
    const auto [xlo, xhi] = decadeRange(lo / 2, hi * 4);
    const auto [ylo, yhi] = decadeRange(bottom / 2, top * 3);
    auto* x = logAxis(QStringLiteral("FLOPs per HBM byte (log scale)"), 10, QStringLiteral("%g"),
                      xlo, xhi);
    auto* y = logAxis(QStringLiteral("attainable TFLOP/s (log scale)"), 10, QStringLiteral("%g"),
                      ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (const Roofline& roof : rooflines) {
        const bool fp32 = roof.arithmetic == Arithmetic::Fp32CudaCores;
        QLineSeries* line = roofSeries(roof, xlo, xhi, fp32 ? kHardware : kHardwareLight,
                                       fp32 ? Qt::SolidLine : Qt::DashLine);
        attach(chart, line, x, y);
        pinTexts(
            chart, line,
            {{QPointF(roof.ridgeFlopsPerByte, roof.peakFlopsPerSecond / 1e12),
              QStringLiteral("ridge %1").arg(QString::number(roof.ridgeFlopsPerByte, 'g', 3))}},
            fp32 ? kHardware : kHardwareLight.darker(130), Anchor::Right);
    }
    for (const Roofline& roof : rooflines)
        addKernelPoints(chart, roof, x, y);
    // The same sentences as the CLI's demo 1 and the lecture.
    return {chart, QString::fromStdString(memoryBoundVerdict(r.inputs.hardware, any.n, any.headDim,
                                                             r.inputs.options)) +
                       QLatin1Char(' ') + flashSentence(rooflines)};
}

// Long legends go to the right, where they can stack instead of being cut off.
// ---- 11. what FlashAttention-2 changed -------------------------------------------------------
ChartPage versionsChart(const AnalysisResults& r) {
    if (r.versions.empty()) {
        ChartPage page;
        page.chart = newChart(QStringLiteral("What FlashAttention-2 changed"),
                              QStringLiteral("d = %1, %2 × %2 tiles").arg(r.headDim).arg(r.block));
        page.caption = QString::fromStdString(r.versionsError);
        return page;
    }
    const FlashOptions& options = r.inputs.options;
    BarPanel work{QStringLiteral("Less non-matmul work…"),
                  QStringLiteral("d = %1, %2 × %3 tiles%4")
                      .arg(r.headDim)
                      .arg(options.blockRows)
                      .arg(options.blockCols)
                      .arg(r.inputs.spec.causal ? QStringLiteral(", causal") : QString()),
                  QStringLiteral("non-matmul ops, millions (log scale)"),
                  {},
                  QStringLiteral("fa1-nonmatmul"),
                  QStringLiteral("fa2-nonmatmul"),
                  {},
                  {},
                  QStringLiteral("FlashAttention-1"),
                  QStringLiteral("FlashAttention-2"),
                  {}};
    BarPanel grid{QStringLiteral("…and a fuller grid"),
                  QStringLiteral("batch %1 × %2 heads")
                      .arg(kDefaultGridBatch)
                      .arg(kDefaultGridHeads),
                  QStringLiteral("time, in query blocks' work (log scale)"),
                  {},
                  QStringLiteral("fa1-grid-time"),
                  QStringLiteral("fa2-grid-time"),
                  {},
                  {},
                  QStringLiteral("FlashAttention-1"),
                  QStringLiteral("FlashAttention-2"),
                  {}};
    double shareOneLo = 1e300, shareOneHi = 0, shareTwoLo = 1e300, shareTwoHi = 0;
    double speedLo = 1e300, speedHi = 0;
    std::string gridError;
    for (std::size_t i = 0; i < r.versions.size(); ++i) {
        const VersionsReport& v = r.versions[i];
        const QString n = QString::number(r.plan.versionsNs[i]);
        work.categories << n;
        grid.categories << n;
        work.stdValues.push_back(double(v.one.total()) / 1e6);
        work.flashValues.push_back(double(v.two.total()) / 1e6);
        grid.stdValues.push_back(double(v.gridOne.timeUnits()));
        grid.flashValues.push_back(double(v.gridTwo.timeUnits()));
        shareOneLo = std::min(shareOneLo, v.timeOne.nonMatmulPerMatmul());
        shareOneHi = std::max(shareOneHi, v.timeOne.nonMatmulPerMatmul());
        shareTwoLo = std::min(shareTwoLo, v.timeTwo.nonMatmulPerMatmul());
        shareTwoHi = std::max(shareTwoHi, v.timeTwo.nonMatmulPerMatmul());
        speedLo = std::min(speedLo, v.gridSpeedup());
        speedHi = std::max(speedHi, v.gridSpeedup());
        if (gridError.empty()) gridError = v.gridError;
    }
    const auto range = [](const QString& lo, const QString& hi) {
        return lo == hi ? lo : lo + QStringLiteral("–") + hi;
    };
    const VersionsReport& last = r.versions.back();
    ChartPage page;
    page.chart = pairedBars(work);
    const QString workWords =
        QStringLiteral("FlashAttention-1 does %1× the non-matmul work of -2, costing at least %2 "
                       "of the matmuls' time at the %3's rates against %4")
            .arg(formatRatio(last.nonMatmulRatio()),
                 range(formatShare(shareOneLo), formatShare(shareOneHi)), hardwareName(r),
                 range(formatShare(shareTwoLo), formatShare(shareTwoHi)));
    if (!gridError.empty()) { // the kernel of these tiles fits no SM of this GPU: no grid
        page.caption = workWords + QStringLiteral(". No grid: ") + QString::fromStdString(gridError);
        return page;
    }
    page.second = pairedBars(grid);
    page.caption = workWords + QStringLiteral("; a block per query block (-2) instead of per head "
                                         "(-1) finishes %1× sooner if every query block costs "
                                         "the same.")
                              .arg(range(formatRatio(speedLo), formatRatio(speedHi)));
    return page;
}

// ---- 12. through L2 ---------------------------------------------------------------------------
using measured::ThroughL2;
using measured::ThroughL2Point;

// Model lines and measured markers of one method and level against n.
struct L2Series {
    QString id, who, label; // "flash", "flash, L2-aware model"
    QColor colour;
    Qt::PenStyle style;
    std::function<double(const ThroughL2Point&)> model;
    std::function<std::optional<double>(const ThroughL2Point&)> measured; // none: no markers
};

QChart* throughL2Panel(const ThroughL2& t, const QString& headline, const QString& settings,
                       const QString& yTitle, const std::vector<L2Series>& lines) {
    QChart* chart = newChart(headline, settings);
    double lo = std::numeric_limits<double>::max(), hi = 0;
    const auto widen = [&](double bytes) {
        if (!(bytes > 0)) return;
        lo = std::min(lo, bytes / kBytesPerGB);
        hi = std::max(hi, bytes / kBytesPerGB);
    };
    for (const L2Series& l : lines)
        for (const ThroughL2Point& p : t.points) {
            widen(l.model(p));
            if (l.measured)
                if (const auto m = l.measured(p)) widen(*m);
        }
    const auto [ylo, yhi] = paddedLogRange(lo, hi);
    auto* x = sizeAxis(QStringLiteral("n (batch × n = %1)").arg(t.tokens),
                       t.points.front().n, t.points.back().n);
    auto* y = logAxis(yTitle, 10, QStringLiteral("%g"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (const L2Series& l : lines) {
        QLineSeries* line = makeLine(l.id + QStringLiteral("-model"), l.label, l.colour, l.style);
        for (const ThroughL2Point& p : t.points) line->append(p.n, l.model(p) / kBytesPerGB);
        attach(chart, line, x, y);
        if (!l.measured) continue;
        QScatterSeries* dots =
            makeScatter(l.id + QStringLiteral("-measured"), l.who + QStringLiteral(", measured"),
                        l.colour.lighter(150), l.colour.darker(120), 13,
                        QScatterSeries::MarkerShapeRectangle);
        for (const ThroughL2Point& p : t.points)
            if (const auto m = l.measured(p)) dots->append(p.n, *m / kBytesPerGB);
        if (dots->count() == 0) {
            delete dots;
            continue;
        }
        attach(chart, dots, x, y);
    }
    legendInside(chart, Qt::AlignTop | Qt::AlignLeft, y);
    return chart;
}

std::optional<double> dramMeasured(const std::optional<MeasuredTraffic>& m) {
    if (!m) return std::nullopt;
    return m->dramReadBytes + m->dramWriteBytes;
}
std::optional<double> l2Measured(const std::optional<MeasuredTraffic>& m) {
    if (!m) return std::nullopt;
    return m->l2Bytes;
}

// "10 of 12": how many checks of one kind hold the 10 %.
QString withinCount(const ThroughL2& t, bool (*within)(const TrafficCheck&)) {
    int checked = 0, held = 0;
    for (const ThroughL2Point& p : t.points)
        for (const auto* c : {&p.flashCheck, &p.standardCheck})
            if (*c) {
                ++checked;
                held += within(**c);
            }
    return QStringLiteral("%1 of %2").arg(held).arg(checked);
}

QString throughL2Caption(const AnalysisResults& r) {
    const ThroughL2& t = r.throughL2;
    const ThroughL2Point& last = t.points.back();
    const QString counted = QString::fromStdString(formatByteAmount(last.flash.counting.total()));
    if (t.measuredOn.empty())
        return QStringLiteral("At n = %1 FlashAttention moves %2 through L2 but, by the model, only "
                              "%3 to and from DRAM: K and V's re-reads hit the %4 L2. FlashViz "
                              "has no hardware-counter measurement of the %5 "
                              "(kernels/bench/traffic_gpu_run.sh makes one).")
            .arg(last.n)
            .arg(counted,
                 QString::fromStdString(formatByteAmount(last.flash.dram.total())),
                 QString::fromStdString(formatMemoryCapacity(r.inputs.hardware.l2Bytes.value)),
                 hardwareName(r));
    QString text =
        QStringLiteral("Measured on the %1: at n = %2 FlashAttention moved %3 through L2 (counted: "
                       "%4) and %5 to and from DRAM (model: %6). Within 10 %: the L2-aware model "
                       "of DRAM at %7 points, the counting model of L2 at %8.")
            .arg(QString::fromStdString(t.measuredOn))
            .arg(last.n)
            .arg(last.flashMeasured ? QString::fromStdString(formatByteAmount(last.flashMeasured->l2Bytes))
                                    : QStringLiteral("(not measured)"),
                 counted,
                 last.flashMeasured ? QString::fromStdString(formatByteAmount(*dramMeasured(last.flashMeasured)))
                                    : QStringLiteral("(not measured)"),
                 QString::fromStdString(formatByteAmount(last.flash.dram.total())),
                 withinCount(t, [](const TrafficCheck& c) { return c.dramWithin; }),
                 withinCount(t, [](const TrafficCheck& c) { return c.countingWithin; }));
    // The first miss, in the model's own words.
    for (const ThroughL2Point& p : t.points)
        for (const auto& [check, method] :
             {std::pair{&p.flashCheck, "flash"}, std::pair{&p.standardCheck, "standard"}})
            if (*check && (!(*check)->dramWithin || !(*check)->countingWithin) &&
                !(*check)->why.empty())
                return text + QStringLiteral(" First miss, %1 at n = %2: %3")
                                  .arg(QLatin1String(method))
                                  .arg(p.n)
                                  .arg(QString::fromStdString((*check)->why));
    return text;
}

ChartPage throughL2Chart(const AnalysisResults& r) {
    const ThroughL2& t = r.throughL2;
    if (!t.error.empty() || t.points.empty()) {
        ChartPage page{newChart(QStringLiteral("Through L2"), hardwareName(r)),
                       QString::fromStdString(t.error)};
        return page;
    }
    const QString settings = QStringLiteral("d = %1, heads × d = %2 · fp16 flash %3 × %4 · %5")
                                 .arg(t.headDim)
                                 .arg(t.width)
                                 .arg(t.blockRows)
                                 .arg(t.blockCols)
                                 .arg(hardwareName(r));
    const bool measured = !t.measuredOn.empty();
    using P = const ThroughL2Point&;
    ChartPage page;
    page.chart = throughL2Panel(
        t, QStringLiteral("What DRAM sees"), settings,
        QStringLiteral("bytes between L2 and DRAM (GB, log)"),
        {{QStringLiteral("l2-standard-dram"), QStringLiteral("standard"), QStringLiteral("standard, L2-aware model"), kStandard,
          Qt::SolidLine, [](P p) { return p.standard.dram.total(); },
          measured ? std::function([](P p) { return dramMeasured(p.standardMeasured); })
                   : nullptr},
         {QStringLiteral("l2-flash-dram"), QStringLiteral("flash"), QStringLiteral("flash, L2-aware model"), kFlash,
          Qt::SolidLine, [](P p) { return p.flash.dram.total(); },
          measured ? std::function([](P p) { return dramMeasured(p.flashMeasured); }) : nullptr},
         {QStringLiteral("l2-flash-counted"), QStringLiteral("flash"), QStringLiteral("flash, counting model"),
          kFlash.darker(160), Qt::DashLine, [](P p) { return p.flash.counting.total(); },
          nullptr}});
    page.second = throughL2Panel(
        t, QStringLiteral("What passes through L2"), settings,
        QStringLiteral("bytes between the SMs and L2 (GB, log)"),
        {{QStringLiteral("l2-standard-l2"), QStringLiteral("standard"), QStringLiteral("standard, L2 model"), kStandard,
          Qt::SolidLine, [](P p) { return p.standard.l2.total(); },
          measured ? std::function([](P p) { return l2Measured(p.standardMeasured); }) : nullptr},
         {QStringLiteral("l2-standard-counted"), QStringLiteral("standard"), QStringLiteral("standard, counting model"),
          kStandard.darker(160), Qt::DashLine, [](P p) { return p.standard.counting.total(); },
          nullptr},
         {QStringLiteral("l2-flash-l2"), QStringLiteral("flash"), QStringLiteral("flash, counting model"), kFlash.darker(160),
          Qt::DashLine, [](P p) { return p.flash.counting.total(); },
          measured ? std::function([](P p) { return l2Measured(p.flashMeasured); }) : nullptr}});
    page.caption = throughL2Caption(r);
    if (t.headDim != r.headDim)
        page.caption = QStringLiteral("Measured at d = %1, not the settings' d = %2. ")
                           .arg(t.headDim)
                           .arg(r.headDim) +
                       page.caption;
    // What the model assumes, in its own words, at the largest n (the caption's tooltip).
    const ThroughL2Point& last = t.points.back();
    QStringList notes{QStringLiteral("The L2-aware model's assumptions (core/l2_traffic.h), at n = %1:")
                          .arg(last.n)};
    for (const auto& [name, estimate] :
         {std::pair{QStringLiteral("FlashAttention"), &last.flash},
          std::pair{QStringLiteral("standard attention"), &last.standard}}) {
        notes << name + QLatin1Char(':');
        for (const std::string& a : estimate->assumptions)
            notes << QStringLiteral("• ") + QString::fromStdString(a);
    }
    page.notes = notes.join(QLatin1Char('\n'));
    return page;
}

void placeLegend(QChart* chart) {
    if (!chart->legend()->isAttachedToChart()) return;
    int entries = 0;
    for (QAbstractSeries* series : chart->series()) {
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(series))
            entries += static_cast<int>(bars->count());
        else
            entries += !series->name().isEmpty();
    }
    chart->legend()->setAlignment(entries > 3 ? Qt::AlignRight : Qt::AlignBottom);
}

} // namespace

QStringList analysisChartTitles() {
    return {
        QStringLiteral("1 · Memory-bound"),         QStringLiteral("2 · Online softmax"),
        QStringLiteral("3 · Traffic and memory"),   QStringLiteral("4 · Block size vs SRAM"),
        QStringLiteral("5 · Backward pass"),        QStringLiteral("6 · Exact, not approximate"),
        QStringLiteral("7 · Same FLOPs"),           QStringLiteral("8 · Debug copy of S"),
        QStringLiteral("9 · Overflow without max"), QStringLiteral("10 · Roofline"),
        QStringLiteral("11 · FlashAttention-2"),    QStringLiteral("12 · Through L2")};
}

ChartPage buildAnalysisChart(const AnalysisResults& results, int index) {
    using Builder = ChartPage (*)(const AnalysisResults&);
    static constexpr Builder builders[AnalysisChartCount] = {
        memoryBoundChart, onlineSoftmaxChart, tiledChart,     blockSizeChart, backwardChart,
        exactnessChart,   flopsChart,         debugCopyChart, overflowChart,  rooflineChart,
        versionsChart,    throughL2Chart};
    if (index < 0 || index >= AnalysisChartCount) return {};
    ChartPage page = builders[index](results);
    placeLegend(page.chart);
    if (page.second) placeLegend(page.second);
    return page;
}

std::vector<ChartPage> buildAnalysisCharts(const AnalysisResults& results) {
    std::vector<ChartPage> pages;
    pages.reserve(AnalysisChartCount);
    for (int i = 0; i < AnalysisChartCount; ++i)
        pages.push_back(buildAnalysisChart(results, i));
    return pages;
}

} // namespace flashviz::gui
