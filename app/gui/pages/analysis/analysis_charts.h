#pragma once
// Turns computed analysis results into Qt Charts: one chart and one caption per demonstration.
// Every plotted number is read from AnalysisResults; nothing is recomputed here. Series carry
// object names (e.g. "standard-traffic") so tests can find them.
#include <QString>
#include <QStringList>

#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QFont;
QT_END_NAMESPACE

namespace flashviz::gui {

struct AnalysisResults;

struct ChartPage {
    QChart* chart = nullptr;  // owned by the caller
    QString caption;          // one line: what to notice
    QChart* second = nullptr; // a right-hand panel where two quantities need two axes
    QString notes = {};       // the caption's tooltip: what the model assumes, where a page has it
};

// Short names, in the order of the explainer's demonstrations, then the roofline.
QStringList analysisChartTitles();

// Index of each chart in analysisChartTitles() and buildAnalysisCharts().
enum AnalysisChart : int {
    MemoryBoundChart,
    OnlineSoftmaxChart,
    TiledChart,
    BlockSizeChart,
    BackwardChart,
    ExactnessChart,
    FlopsChart,
    DebugCopyChart,
    OverflowChart,
    RooflineChart,
    VersionsChart,
    ThroughL2Chart,
    AnalysisChartCount
};

// One chart page, or all of them. Building is GUI-thread work (a few milliseconds a page).
ChartPage buildAnalysisChart(const AnalysisResults& results, int index);
std::vector<ChartPage> buildAnalysisCharts(const AnalysisResults& results);


// Units the charts use, the same as the explainer's tables.
inline constexpr double kBytesPerMB = 1024.0 * 1024.0;
inline constexpr double kBytesPerGB = 1024.0 * kBytesPerMB;
inline constexpr double kBytesPerKB = 1024.0;
inline constexpr double kFlopsPerGFlop = 1e9;

} // namespace flashviz::gui
