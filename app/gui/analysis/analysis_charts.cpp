#include "analysis/analysis_charts.h"

#include "analysis/analysis_data.h"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QFont>
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
#include <limits>

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

// Marks the overlay texts so applyChartFonts can size them with the rest.
constexpr int kOverlayKey = 0x464c56; // "FLV"

QString number(double value, int decimals) { return QString::number(value, 'f', decimals); }
QString mb(std::uint64_t bytes) { return number(static_cast<double>(bytes) / kBytesPerMB, 2) + " MB"; }
QString kb(std::uint64_t bytes) { return number(static_cast<double>(bytes) / kBytesPerKB, 1) + " KB"; }
QString sci(double value, int decimals = 1) { return QString::number(value, 'e', decimals); }
double toMB(std::uint64_t bytes) { return static_cast<double>(bytes) / kBytesPerMB; }
double toGFlop(std::uint64_t flops) { return static_cast<double>(flops) / kFlopsPerGFlop; }
QString hardwareName(const AnalysisResults& r) { return QString::fromStdString(r.inputs.hardware.name); }

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
    if (points) series->setMarkerSize(width * 3.0);
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
    return {std::pow(base, std::floor(std::log(lo) / b)), std::pow(base, std::ceil(std::log(hi) / b))};
}

QLogValueAxis* logAxis(const QString& title, double base, const QString& format, double lo, double hi) {
    auto* axis = new QLogValueAxis;
    axis->setTitleText(title);
    axis->setBase(base);
    axis->setLabelFormat(format);
    axis->setRange(lo, hi);
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

void attach(QChart* chart, QAbstractSeries* series, QAbstractAxis* x, QAbstractAxis* y) {
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
}

void hideFromLegend(QChart* chart, QAbstractSeries* series) {
    for (QLegendMarker* marker : chart->legend()->markers(series)) marker->setVisible(false);
}

QLineSeries* horizontal(const QString& objectName, const QString& name, const QColor& color,
                        Qt::PenStyle style, double y, double x0, double x1) {
    QLineSeries* series = makeLine(objectName, name, color, style, 2.5, false);
    series->append(x0, y);
    series->append(x1, y);
    return series;
}

QChart* newChart(const QString& title) {
    auto* chart = new QChart;
    chart->setTitle(title);
    chart->setTheme(QChart::ChartThemeLight);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(8, 8, 8, 8));
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setShowToolTips(true);
    chart->setAnimationOptions(QChart::NoAnimation);
    return chart;
}

// Texts pinned to data positions of a series; they follow the plot area when it resizes.
void pinTexts(QChart* chart, QAbstractSeries* series,
              const std::vector<std::pair<QPointF, QString>>& texts, const QColor& color) {
    std::vector<std::pair<QPointF, QGraphicsSimpleTextItem*>> items;
    for (const auto& [at, text] : texts) {
        auto* item = new QGraphicsSimpleTextItem(text, chart);
        item->setBrush(color);
        item->setData(kOverlayKey, true);
        item->setZValue(20);
        items.emplace_back(at, item);
    }
    auto place = [chart, series, items] {
        for (const auto& [at, item] : items) {
            const QPointF p = chart->mapToPosition(at, series);
            const QRectF box = item->boundingRect();
            item->setPos(p.x() - box.width() / 2, p.y() - box.height());
        }
    };
    QObject::connect(chart, &QChart::plotAreaChanged, chart, place);
    place();
}

// ---- 1. memory-bound ------------------------------------------------------------------------
ChartPage memoryBoundChart(const AnalysisResults& r) {
    QChart* chart = newChart(QStringLiteral("Standard attention: bytes moved per FLOP, against what %1 can feed (d = %2)")
                                 .arg(hardwareName(r))
                                 .arg(r.headDim));
    const auto& rows = r.memoryBound;
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (const TrafficRow& row : rows) {
        lo = std::min(lo, row.bytesPerFlop);
        hi = std::max(hi, row.bytesPerFlop);
    }
    for (double balance : {r.balanceFp32BytesPerFlop, r.balanceTensorBytesPerFlop}) {
        if (balance > 0) {
            lo = std::min(lo, balance);
            hi = std::max(hi, balance);
        }
    }
    const auto [ylo, yhi] = decadeRange(lo, hi);
    auto* x = sizeAxis(QStringLiteral("sequence length n (tokens)"), rows.front().n, rows.back().n);
    auto* y = logAxis(QStringLiteral("bytes per FLOP"), 10, QStringLiteral("%g"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    QLineSeries* attention = makeLine(QStringLiteral("standard-bytes-per-flop"),
                                      QStringLiteral("standard attention (fp32 traffic)"), kStandard);
    for (const TrafficRow& row : rows) attention->append(row.n, row.bytesPerFlop);
    attach(chart, attention, x, y);

    attach(chart,
           horizontal(QStringLiteral("balance-fp32"),
                      QStringLiteral("balance, fp32 cores: %1 B/FLOP").arg(number(r.balanceFp32BytesPerFlop, 3)),
                      kHardware, Qt::DashLine, r.balanceFp32BytesPerFlop, x->min(), x->max()),
           x, y);
    if (r.balanceTensorBytesPerFlop > 0)
        attach(chart,
               horizontal(QStringLiteral("balance-tensor"),
                          QStringLiteral("balance, fp16 tensor cores: %1 B/FLOP")
                              .arg(number(r.balanceTensorBytesPerFlop, 4)),
                          kHardwareLight, Qt::DotLine, r.balanceTensorBytesPerFlop, x->min(), x->max()),
               x, y);

    // The n x n share at the first size past 2048 (the script's talking point), or the largest.
    const TrafficRow* shareRow = &rows.back();
    for (const TrafficRow& row : rows)
        if (row.n >= 2048) {
            shareRow = &row;
            break;
        }
    const TrafficRow& last = rows.back();
    const bool fp32Waits = last.bytesPerFlop > r.balanceFp32BytesPerFlop;
    const bool tensorWaits = r.balanceTensorBytesPerFlop > 0 && last.bytesPerFlop > r.balanceTensorBytesPerFlop;
    QString verdict;
    if (fp32Waits)
        verdict = QStringLiteral("above both lines, so even fp32 cores wait on memory");
    else if (tensorWaits)
        verdict = QStringLiteral("above the tensor-core line: fp32 cores keep up, tensor cores wait on memory");
    else
        verdict = QStringLiteral("below both lines on this hardware");
    return {chart, QStringLiteral("Attention needs %1 B/FLOP whatever n is, %2; by n = %3, %4% of the bytes are the n × n matrices.")
                       .arg(number(last.bytesPerFlop, 3), verdict)
                       .arg(shareRow->n)
                       .arg(number(100.0 * shareRow->squareShare, 0))};
}

// ---- 2. online softmax ------------------------------------------------------------------------
ChartPage onlineSoftmaxChart(const AnalysisResults& r) {
    const OnlineSoftmaxDemo& s = r.softmax;
    const auto count = static_cast<int>(s.scores.size());
    QChart* chart = newChart(QStringLiteral("One row of %1 scores streamed in blocks of %2: softmax weights with and without the rescale")
                                 .arg(count)
                                 .arg(s.block));
    double top = 0;
    for (int j = 0; j < count; ++j)
        top = std::max({top, s.reference[j], s.online[j], s.broken[j]});
    auto* x = valueAxis(QStringLiteral("position j in the row (block edges dotted)"), -0.5, count - 0.5, QStringLiteral("%.0f"));
    x->setTickType(QValueAxis::TicksDynamic);
    x->setTickAnchor(0);
    x->setTickInterval(std::max(1, s.block));
    auto* y = valueAxis(QStringLiteral("weight"), 0, top * 1.12, QStringLiteral("%.2f"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    for (int edge = s.block; s.block > 0 && edge < count; edge += s.block) {
        QLineSeries* line = makeLine(QStringLiteral("block-edge"), QString(), kHardwareLight, Qt::DotLine, 1.5, false);
        line->append(edge - 0.5, 0);
        line->append(edge - 0.5, y->max());
        attach(chart, line, x, y);
        hideFromLegend(chart, line);
    }
    QLineSeries* reference = makeLine(QStringLiteral("reference"), QStringLiteral("ordinary softmax"), kCorrect, Qt::SolidLine, 2.5);
    QScatterSeries* online = makeScatter(QStringLiteral("online"),
                                         QStringLiteral("online, with rescale (max diff %1)").arg(sci(s.onlineMaxDiff)),
                                         Qt::transparent, kFlash, 15);
    QLineSeries* broken = makeLine(QStringLiteral("broken"),
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

    QString caption;
    if (s.brokenMaxDiff > 0)
        caption = QStringLiteral("The circles sit on the green line: streaming is exact. Drop the rescale and the weights shrink (sum %1, off by up to %2).")
                      .arg(number(s.brokenSum, 3), number(s.brokenMaxDiff, 3));
    else
        caption = QStringLiteral("With blocks of %1 the row arrives in one block, so the missing rescale never matters; make Bc smaller to see it bite.")
                      .arg(s.block);
    return {chart, caption};
}

// ---- 3. tiled vs standard: traffic and memory against n ---------------------------------------
ChartPage tiledChart(const AnalysisResults& r) {
    QChart* chart = newChart(QStringLiteral("HBM traffic and scratch memory against n: standard vs FlashAttention (d = %1, %2 × %2 tiles)")
                                 .arg(r.headDim)
                                 .arg(r.block));
    const auto& rows = r.tiled;
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
    const auto [ylo, yhi] = decadeRange(lo, hi);
    auto* x = sizeAxis(QStringLiteral("sequence length n (tokens)"), rows.front().n, rows.back().n);
    auto* y = logAxis(QStringLiteral("MB (log scale)"), 10, QStringLiteral("%g"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    QLineSeries* stdTraffic = makeLine(QStringLiteral("standard-traffic"), QStringLiteral("standard: HBM traffic"), kStandard);
    QLineSeries* flashTraffic = makeLine(QStringLiteral("flash-traffic"), QStringLiteral("flash: HBM traffic"), kFlash);
    QLineSeries* stdPeak = makeLine(QStringLiteral("standard-peak"), QStringLiteral("standard: scratch memory"), kStandard, Qt::DashLine);
    QLineSeries* flashPeak = makeLine(QStringLiteral("flash-peak"), QStringLiteral("flash: scratch memory"), kFlash, Qt::DashLine);
    QLineSeries* paperStd = makeLine(QStringLiteral("paper-standard"), QStringLiteral("paper's model Θ(Nd + N²), standard"),
                                     kStandard.lighter(140), Qt::DotLine, 2.0, false);
    QLineSeries* paperFlash = makeLine(QStringLiteral("paper-flash"),
                                       QStringLiteral("paper's model Θ(N²d²/M), flash, M = %1 K elements")
                                           .arg(number(r.sramElements / 1024.0, 0)),
                                       kFlash.lighter(150), Qt::DotLine, 2.0, false);
    double worstDiff = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const TiledRow& row = rows[i];
        stdTraffic->append(row.n, toMB(row.standard.hbmBytes()));
        flashTraffic->append(row.n, toMB(row.flash.hbmBytes()));
        stdPeak->append(row.n, toMB(row.standard.peakScratchBytes()));
        flashPeak->append(row.n, toMB(row.flash.peakScratchBytes()));
        paperStd->append(row.n, r.paperModel[i].standardAccesses * kBytesPerElement / kBytesPerMB);
        paperFlash->append(row.n, r.paperModel[i].flashAccesses * kBytesPerElement / kBytesPerMB);
        worstDiff = std::max(worstDiff, row.maxAbsDiff);
    }
    for (QLineSeries* s : {paperStd, paperFlash, stdTraffic, flashTraffic, stdPeak, flashPeak}) attach(chart, s, x, y);

    const TiledRow& first = rows.front();
    const TiledRow& last = rows.back();
    QString memory = last.flash.peakScratchBytes() == first.flash.peakScratchBytes()
                         ? QStringLiteral("flash's stays at %1").arg(kb(last.flash.peakScratchBytes()))
                         : QStringLiteral("flash's goes from %1 to %2").arg(kb(first.flash.peakScratchBytes()), kb(last.flash.peakScratchBytes()));
    return {chart, QStringLiteral("Same output (largest difference %1). Standard's scratch grows with n², %2; dotted: the paper's IO model, constants left out.")
                       .arg(sci(worstDiff), memory)};
}

// ---- 4. block size against the SRAM budget ---------------------------------------------------
ChartPage blockSizeChart(const AnalysisResults& r) {
    const BlockSweep& sweep = r.sweep;
    QChart* chart = newChart(QStringLiteral("Block size against HBM traffic and the tile's working set (n = %1, d = %2, %3)")
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
    const auto [ylo, yhi] = decadeRange(lo, hi);
    auto* x = sizeAxis(QStringLiteral("block size B (Br = Bc = B)"), sweep.rows.front().block, sweep.rows.back().block);
    auto* y = logAxis(QStringLiteral("MB (log scale)"), 10, QStringLiteral("%g"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    // The region where the working set no longer fits: from halfway (on the log axis) between
    // the last block that fits and the first that does not, to the right edge.
    const BlockRow* lastFit = nullptr;
    const BlockRow* firstSpill = nullptr;
    for (const BlockRow& row : sweep.rows) {
        if (row.fits) lastFit = &row;
        else if (!firstSpill) firstSpill = &row;
    }
    if (firstSpill) {
        const double from = lastFit ? std::sqrt(static_cast<double>(lastFit->block) * firstSpill->block) : x->min();
        auto* upper = new QLineSeries;
        auto* lower = new QLineSeries;
        upper->append(from, y->max());
        upper->append(x->max(), y->max());
        lower->append(from, y->min());
        lower->append(x->max(), y->min());
        auto* area = new QAreaSeries(upper, lower);
        area->setObjectName(QStringLiteral("spills"));
        area->setName(QStringLiteral("tile spills out of SRAM"));
        area->setBrush(kSpill);
        area->setPen(QPen(kSpill.darker(200), 1));
        attach(chart, area, x, y);
    }

    attach(chart,
           horizontal(QStringLiteral("sram-budget"),
                      QStringLiteral("SRAM budget: %1 per SM").arg(kb(sweep.sramBudgetBytes)), kHardware,
                      Qt::DashLine, static_cast<double>(sweep.sramBudgetBytes) / kBytesPerMB, x->min(), x->max()),
           x, y);
    attach(chart,
           horizontal(QStringLiteral("standard-traffic"),
                      QStringLiteral("standard attention traffic: %1").arg(mb(sweep.standard.hbmBytes())), kStandard,
                      Qt::DashLine, toMB(sweep.standard.hbmBytes()), x->min(), x->max()),
           x, y);
    QLineSeries* traffic = makeLine(QStringLiteral("flash-traffic"), QStringLiteral("flash: HBM traffic"), kFlash);
    QLineSeries* workingSet = makeLine(QStringLiteral("working-set"), QStringLiteral("flash: tile working set"), kAccent);
    for (const BlockRow& row : sweep.rows) {
        traffic->append(row.block, toMB(row.flash.hbmBytes()));
        workingSet->append(row.block, toMB(row.flash.peakScratchBytes()));
    }
    attach(chart, traffic, x, y);
    attach(chart, workingSet, x, y);

    QString caption;
    if (lastFit && firstSpill)
        caption = QStringLiteral("Bigger tiles mean fewer passes over K and V (%1 → %2), but past B = %3 the tile no longer fits the %4 one SM has.")
                      .arg(mb(sweep.rows.front().flash.hbmBytes()), mb(lastFit->flash.hbmBytes()))
                      .arg(lastFit->block)
                      .arg(kb(sweep.sramBudgetBytes));
    else if (!lastFit)
        caption = QStringLiteral("Not even a %1 × %1 tile fits the %2 one SM has at d = %3.")
                      .arg(sweep.rows.front().block)
                      .arg(kb(sweep.sramBudgetBytes))
                      .arg(sweep.headDim);
    else
        caption = QStringLiteral("Every block size fits the %1 one SM has; the largest moves the fewest bytes (%2).")
                      .arg(kb(sweep.sramBudgetBytes), mb(sweep.rows.back().flash.hbmBytes()));
    return {chart, caption};
}

// ---- 5. backward pass ------------------------------------------------------------------------
ChartPage backwardChart(const AnalysisResults& r) {
    QChart* chart = newChart(QStringLiteral("Backward pass: memory kept for it (bars) and its FLOPs (lines), d = %1").arg(r.headDim));
    const auto& rows = r.backward;
    QStringList categories;
    auto* bars = new QBarSeries;
    bars->setObjectName(QStringLiteral("stored"));
    QBarSet* stdStored = makeBarSet(QStringLiteral("standard-stored"), QStringLiteral("standard keeps P (n × n): MB"), kStandard);
    QBarSet* flashStored = makeBarSet(QStringLiteral("flash-stored"), QStringLiteral("flash keeps m and ℓ: MB"), kFlash);
    QLineSeries* stdFlops = makeLine(QStringLiteral("standard-flops"), QStringLiteral("standard: GFLOP"), kStandard.darker(140), Qt::DashLine);
    QLineSeries* flashFlops = makeLine(QStringLiteral("flash-flops"), QStringLiteral("flash, recomputing S: GFLOP"), kFlash.darker(140), Qt::DashLine);
    double lo = std::numeric_limits<double>::max(), hi = 0, flopHi = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const BackwardRow& row = rows[i];
        categories << QStringLiteral("n = %1").arg(row.n);
        const double s = static_cast<double>(row.costs.standard.storedElements * kBytesPerElement) / kBytesPerMB;
        const double f = static_cast<double>(row.costs.flash.storedElements * kBytesPerElement) / kBytesPerMB;
        *stdStored << s;
        *flashStored << f;
        lo = std::min({lo, s, f});
        hi = std::max({hi, s, f});
        stdFlops->append(static_cast<double>(i), toGFlop(row.costs.standard.flops));
        flashFlops->append(static_cast<double>(i), toGFlop(row.costs.flash.flops));
        flopHi = std::max({flopHi, toGFlop(row.costs.standard.flops), toGFlop(row.costs.flash.flops)});
    }
    bars->append(stdStored);
    bars->append(flashStored);
    bars->setLabelsVisible(true);
    bars->setLabelsFormat(QStringLiteral("@value"));
    bars->setLabelsPrecision(3);
    bars->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);

    auto* x = new QBarCategoryAxis;
    x->append(categories);
    x->setTitleText(QStringLiteral("sequence length"));
    const auto [ylo, yhi] = decadeRange(lo, hi * 3);
    auto* y = logAxis(QStringLiteral("memory kept for the backward pass (MB, log)"), 10, QStringLiteral("%g"), ylo, yhi);
    auto* y2 = valueAxis(QStringLiteral("backward GFLOP"), 0, flopHi * 1.15, QStringLiteral("%.0f"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(y2, Qt::AlignRight);
    attach(chart, bars, x, y);
    attach(chart, stdFlops, x, y2);
    attach(chart, flashFlops, x, y2);

    const BackwardRow& last = rows.back();
    return {chart, QStringLiteral("Flash keeps two numbers per row, not P: %1 instead of %2 at n = %3, paid for with %4% more FLOPs to recompute S.")
                       .arg(mb(last.costs.flash.storedElements * kBytesPerElement),
                            mb(last.costs.standard.storedElements * kBytesPerElement))
                       .arg(last.n)
                       .arg(number(100.0 * last.extraFlopsFraction, 0))};
}

// ---- 6. exact vs local window ----------------------------------------------------------------
ChartPage exactnessChart(const AnalysisResults& r) {
    const auto& runs = r.exactness;
    const ExactnessDemo& first = runs.front();
    QChart* chart = newChart(QStringLiteral("Largest error against standard attention: FlashAttention vs a local window (n = %1, d = %2)")
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
    auto* x = sizeAxis(QStringLiteral("window half-width w: each query sees keys within ±w"), runs.front().halfWidth,
                       runs.back().halfWidth);
    auto* y = logAxis(QStringLiteral("max |output − standard| (log scale)"), 10, QStringLiteral("%.0e"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);

    QLineSeries* window = makeLine(QStringLiteral("window-diff"), QStringLiteral("local-window approximation"), kStandard);
    QLineSeries* flash = makeLine(QStringLiteral("flash-diff"), QStringLiteral("FlashAttention (%1 × %1 tiles)").arg(r.block), kFlash);
    const ExactnessDemo* picked = nullptr;
    for (const ExactnessDemo& run : runs) {
        window->append(run.halfWidth, onAxis(run.windowMaxDiff));
        flash->append(run.halfWidth, onAxis(run.flashMaxDiff));
        if (run.halfWidth == r.plan.scriptHalfWidth) picked = &run;
    }
    attach(chart, window, x, y);
    attach(chart, flash, x, y);
    QString caption;
    if (picked) {
        QScatterSeries* mark = makeScatter(QStringLiteral("script-window"),
                                           QStringLiteral("±%1 (the explainer's window): off by %2, allclose %3")
                                               .arg(picked->halfWidth)
                                               .arg(sci(picked->windowMaxDiff))
                                               .arg(picked->windowAllClose ? QStringLiteral("yes") : QStringLiteral("no")),
                                           Qt::transparent, kBroken, 26);
        mark->append(picked->halfWidth, onAxis(picked->windowMaxDiff));
        attach(chart, mark, x, y);
        caption = QStringLiteral("Flash stays at rounding noise (%1, allclose %2); the window at ±%3 is off by %4 and is exact only once it covers every key.")
                      .arg(sci(picked->flashMaxDiff), picked->flashAllClose ? QStringLiteral("yes") : QStringLiteral("no"))
                      .arg(picked->halfWidth)
                      .arg(number(picked->windowMaxDiff, 2));
    } else {
        caption = QStringLiteral("Flash stays at rounding noise; the window is exact only once it covers every key.");
    }
    return {chart, caption};
}

// ---- 7. same FLOPs, less traffic -------------------------------------------------------------
ChartPage flopsChart(const AnalysisResults& r) {
    QChart* chart = newChart(QStringLiteral("Forward pass: FLOPs (bars) and HBM traffic (lines), standard vs FlashAttention (d = %1, %2 × %2 tiles)")
                                 .arg(r.headDim)
                                 .arg(r.block));
    const auto& rows = r.flops;
    QStringList categories;
    auto* bars = new QBarSeries;
    bars->setObjectName(QStringLiteral("flops"));
    QBarSet* stdFlops = makeBarSet(QStringLiteral("standard-flops"), QStringLiteral("standard: GFLOP"), kStandard.lighter(150));
    QBarSet* flashFlops = makeBarSet(QStringLiteral("flash-flops"), QStringLiteral("flash: GFLOP"), kFlash.lighter(170));
    QLineSeries* stdTraffic = makeLine(QStringLiteral("standard-traffic"), QStringLiteral("standard: HBM MB"), kStandard, Qt::SolidLine, 3.5);
    QLineSeries* flashTraffic = makeLine(QStringLiteral("flash-traffic"), QStringLiteral("flash: HBM MB"), kFlash, Qt::SolidLine, 3.5);
    double flopLo = std::numeric_limits<double>::max(), flopHi = 0;
    double mbLo = std::numeric_limits<double>::max(), mbHi = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const FlopsRow& row = rows[i];
        categories << QStringLiteral("n = %1").arg(row.n);
        *stdFlops << toGFlop(row.standard.flops);
        *flashFlops << toGFlop(row.flash.flops);
        stdTraffic->append(static_cast<double>(i), toMB(row.standard.hbmBytes()));
        flashTraffic->append(static_cast<double>(i), toMB(row.flash.hbmBytes()));
        flopLo = std::min({flopLo, toGFlop(row.standard.flops), toGFlop(row.flash.flops)});
        flopHi = std::max({flopHi, toGFlop(row.standard.flops), toGFlop(row.flash.flops)});
        mbLo = std::min({mbLo, toMB(row.standard.hbmBytes()), toMB(row.flash.hbmBytes())});
        mbHi = std::max({mbHi, toMB(row.standard.hbmBytes()), toMB(row.flash.hbmBytes())});
    }
    bars->append(stdFlops);
    bars->append(flashFlops);
    bars->setLabelsVisible(true);
    bars->setLabelsFormat(QStringLiteral("@value"));
    bars->setLabelsPrecision(3);
    bars->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);

    auto* x = new QBarCategoryAxis;
    x->append(categories);
    x->setTitleText(QStringLiteral("sequence length"));
    const auto [flo, fhi] = decadeRange(flopLo, flopHi * 3);
    const auto [mlo, mhi] = decadeRange(mbLo, mbHi);
    auto* yFlops = logAxis(QStringLiteral("GFLOP (bars, log)"), 10, QStringLiteral("%g"), flo, fhi);
    auto* yMB = logAxis(QStringLiteral("HBM traffic, MB (lines, log)"), 10, QStringLiteral("%g"), mlo, mhi);
    yMB->setGridLineVisible(false);
    yMB->setMinorGridLineVisible(false);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(yFlops, Qt::AlignLeft);
    chart->addAxis(yMB, Qt::AlignRight);
    attach(chart, bars, x, yFlops);
    attach(chart, stdTraffic, x, yMB);
    attach(chart, flashTraffic, x, yMB);

    bool sameFlops = true;
    double cutLo = std::numeric_limits<double>::max(), cutHi = 0;
    for (const FlopsRow& row : rows) {
        sameFlops = sameFlops && row.standard.flops == row.flash.flops;
        cutLo = std::min(cutLo, row.trafficCut);
        cutHi = std::max(cutHi, row.trafficCut);
    }
    const QString cut = number(cutLo, 1) == number(cutHi, 1) ? number(cutLo, 1) + QStringLiteral("×")
                                                              : number(cutLo, 1) + QStringLiteral("–") + number(cutHi, 1) + QStringLiteral("×");
    QString caption;
    if (cutLo >= 1)
        caption = QStringLiteral("%1; only the traffic moves, cut %2. The speed-up is about bytes, not arithmetic.")
                      .arg(sameFlops ? QStringLiteral("Each pair of bars is identical: flash does every multiply standard does")
                                     : QStringLiteral("The FLOPs barely differ"),
                           cut);
    else
        caption = QStringLiteral("%1, but with %2 × %2 tiles flash moves more bytes than standard (%3 of its traffic): make the tiles bigger.")
                      .arg(sameFlops ? QStringLiteral("The FLOPs are identical") : QStringLiteral("The FLOPs barely differ"))
                      .arg(r.block)
                      .arg(cut);
    return {chart, caption};
}

// ---- 8. debug copy of S ----------------------------------------------------------------------
ChartPage debugCopyChart(const AnalysisResults& r) {
    const DebugCopyDemo& demo = r.debugCopy;
    QChart* chart = newChart(QStringLiteral("Keeping the n × n scores \"for debugging\" (flash, n = %1, d = %2, %3 × %3 tiles)")
                                 .arg(demo.n)
                                 .arg(demo.headDim)
                                 .arg(demo.block));
    auto* bars = new QBarSeries;
    bars->setObjectName(QStringLiteral("debug-copy"));
    QBarSet* clean = makeBarSet(QStringLiteral("clean"), QStringLiteral("score tiles discarded"), kFlash);
    QBarSet* kept = makeBarSet(QStringLiteral("kept"), QStringLiteral("every score tile also written to an n × n S"), kBroken);
    *clean << toMB(demo.clean.peakScratchBytes()) << toMB(demo.clean.hbmBytes());
    *kept << toMB(demo.withCopy.peakScratchBytes()) << toMB(demo.withCopy.hbmBytes());
    bars->append(clean);
    bars->append(kept);
    bars->setLabelsVisible(true);
    bars->setLabelsFormat(QStringLiteral("@value MB"));
    bars->setLabelsPrecision(3);
    bars->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    auto* x = new QBarCategoryAxis;
    x->append({QStringLiteral("peak scratch memory"), QStringLiteral("HBM traffic")});
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (const QBarSet* set : {clean, kept})
        for (int i = 0; i < set->count(); ++i) {
            lo = std::min(lo, set->at(i));
            hi = std::max(hi, set->at(i));
        }
    const auto [ylo, yhi] = decadeRange(lo, hi * 3);
    auto* y = logAxis(QStringLiteral("MB (log scale)"), 10, QStringLiteral("%g"), ylo, yhi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    attach(chart, bars, x, y);
    return {chart, QStringLiteral("One debugging line undoes the tiling: the peak goes from %1 to %2 (%3× worse) and traffic from %4 to %5.")
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
    QChart* chart = newChart(QStringLiteral("Softmax of large scores: exp(s) without the maximum vs exp(s − max)"));
    auto* bars = new QBarSeries;
    bars->setObjectName(QStringLiteral("overflow"));
    QBarSet* safe = makeBarSet(QStringLiteral("safe"), QStringLiteral("with the max subtracted: weight"), kCorrect);
    QBarSet* naive = makeBarSet(QStringLiteral("naive"), QStringLiteral("without it: exp(s) → inf, weight → NaN (no bar can be drawn)"), kBroken);
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
    auto* y = valueAxis(QStringLiteral("softmax weight"), 0, std::max(top, 1.0) * 1.25, QStringLiteral("%.1f"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    attach(chart, bars, x, y);

    // The bar positions of the second set: category i, shifted right by a quarter of a slot.
    std::vector<std::pair<QPointF, QString>> texts;
    for (int i = 0; i < count; ++i) {
        const QString text = QStringLiteral("exp = %1\nweight = %2")
                                 .arg(finiteOrName(demo.rawExp[i], 3), finiteOrName(demo.naiveWeights[i], 3));
        texts.emplace_back(QPointF(i + 0.2, y->max() * 0.55), text);
    }
    pinTexts(chart, bars, texts, kBroken);
    return {chart, QStringLiteral("exp(%1) is already past the largest double, so all %2 weights come out NaN; subtracting the running max keeps every step finite.")
                       .arg(demo.scores.minCoeff())
                       .arg(demo.nonFiniteNaive)};
}

} // namespace

QStringList analysisChartTitles() {
    return {QStringLiteral("1 · Memory-bound"),        QStringLiteral("2 · Online softmax"),
            QStringLiteral("3 · Traffic and memory"),  QStringLiteral("4 · Block size vs SRAM"),
            QStringLiteral("5 · Backward pass"),       QStringLiteral("6 · Exact, not approximate"),
            QStringLiteral("7 · Same FLOPs"),          QStringLiteral("8 · Debug copy of S"),
            QStringLiteral("9 · Overflow without max")};
}

std::vector<ChartPage> buildAnalysisCharts(const AnalysisResults& results) {
    std::vector<ChartPage> pages;
    pages.reserve(AnalysisChartCount);
    pages.push_back(memoryBoundChart(results));
    pages.push_back(onlineSoftmaxChart(results));
    pages.push_back(tiledChart(results));
    pages.push_back(blockSizeChart(results));
    pages.push_back(backwardChart(results));
    pages.push_back(exactnessChart(results));
    pages.push_back(flopsChart(results));
    pages.push_back(debugCopyChart(results));
    pages.push_back(overflowChart(results));
    return pages;
}

void applyChartFonts(QChart* chart, const QFont& base) {
    auto scaled = [&base](double factor, bool bold) {
        QFont font = base;
        if (base.pointSizeF() > 0) font.setPointSizeF(base.pointSizeF() * factor);
        else font.setPixelSize(static_cast<int>(std::lround(base.pixelSize() * factor)));
        font.setBold(bold);
        return font;
    };
    chart->setTitleFont(scaled(1.25, true));
    chart->legend()->setFont(scaled(1.0, false));
    for (QAbstractAxis* axis : chart->axes()) {
        axis->setTitleFont(scaled(1.0, true));
        axis->setLabelsFont(scaled(0.95, false));
    }
    for (QAbstractSeries* series : chart->series())
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(series))
            for (QBarSet* set : bars->barSets()) set->setLabelFont(scaled(0.9, false));
    for (QGraphicsItem* item : chart->childItems())
        if (item->data(kOverlayKey).toBool())
            if (auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(item)) text->setFont(scaled(1.05, true));
    // Overlays are placed by their size; a new font changes it.
    emit chart->plotAreaChanged(chart->plotArea());
}

} // namespace flashviz::gui
