// Styling the analysis page and the GPU benchmark page share, so that the two look alike.
#pragma once

#include <QAbstractAxis>
#include <QAbstractBarSeries>
#include <QBarSet>
#include <QChart>
#include <QFont>
#include <QGraphicsItem>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QString>
#include <QXYSeries>

#include <cmath>

namespace flashviz::gui {

// base enlarged by factor: in points where the font has a point size, else in whole pixels.
inline QFont scaledFont(const QFont& base, double factor, bool bold = false) {
    QFont font = base;
    if (base.pointSizeF() > 0)
        font.setPointSizeF(base.pointSizeF() * factor);
    else
        font.setPixelSize(static_cast<int>(std::lround(base.pixelSize() * factor)));
    font.setBold(bold);
    return font;
}

// A chart's fonts as factors of one base font (see applyChartFonts).
struct ChartFontScales {
    double title;
    double legend;
    double axisTitle;
    double axisLabels;
    double seriesLabels; // bar-set and point labels; 0: left as they are
    double overlays;     // texts marked with kChartOverlayKey; 0: left as they are
};

// Both scales are kept, each as its page has always drawn: the analysis page's title and legend
// grew with its two-panel pages and overlays, the GPU benchmark page kept the first sizes and has
// no labels or overlays to size. Whether the difference was meant is not written anywhere; making
// the pages alike would change their pictures, so it is left for a change of its own.
inline constexpr ChartFontScales kAnalysisChartFonts{1.35, 1.05, 1.05, 1.0, 0.95, 1.15};
inline constexpr ChartFontScales kGpuBenchChartFonts{1.3, 1.0, 1.05, 1.0, 0.0, 0.0};

// Marks a chart's overlay texts (QGraphicsItem::setData(kChartOverlayKey, true)) so that
// applyChartFonts sizes them with the rest.
inline constexpr int kChartOverlayKey = 0x464c56; // "FLV"

// Title, axes, legend and labels sized from one base font, so a larger widget font (lecture
// mode) enlarges every chart.
inline void applyChartFonts(QChart* chart, const QFont& base, const ChartFontScales& scales) {
    chart->setTitleFont(scaledFont(base, scales.title, true));
    chart->legend()->setFont(scaledFont(base, scales.legend));
    for (QAbstractAxis* axis : chart->axes()) {
        axis->setTitleFont(scaledFont(base, scales.axisTitle, true));
        axis->setLabelsFont(scaledFont(base, scales.axisLabels));
    }
    if (scales.seriesLabels > 0)
        for (QAbstractSeries* series : chart->series()) {
            if (auto* bars = qobject_cast<QAbstractBarSeries*>(series))
                for (QBarSet* set : bars->barSets())
                    set->setLabelFont(scaledFont(base, scales.seriesLabels));
            if (auto* line = qobject_cast<QXYSeries*>(series))
                line->setPointLabelsFont(scaledFont(base, scales.seriesLabels, true));
        }
    if (scales.overlays > 0) {
        for (QGraphicsItem* item : chart->childItems())
            if (item->data(kChartOverlayKey).toBool())
                if (auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(item))
                    text->setFont(scaledFont(base, scales.overlays, true));
        // Overlays are placed by their size; a new font changes it.
        emit chart->plotAreaChanged(chart->plotArea());
    }
}

} // namespace flashviz::gui
