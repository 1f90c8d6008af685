// The Hopper page (issue 17): its model without a window (the variants, the block as each row of
// kHopperConfigs configures it, one block's lanes, tracks and bars, the time axis's zoom and pan,
// summarize()'s numbers passed through, which trace a variant shows, the words when there is
// none), the page (the trace shown per variant and mask, recording off with the reason on a
// machine without a Hopper GPU and through a stand-in recorder with progress and Cancel, trace
// files saved and opened, bad files refused with the trace on screen kept, the picture's bars,
// tooltips, zoom and pan) and the window (its tab, --hopper, --hopper-trace, sessions). Traces
// are simulated (hopper_trace_support.h) so that the suite runs anywhere; the traces FlashViz
// ships are checked where there are some. Set FLASHVIZ_HOPPER_SHOTS=<folder> to also render the
// window's page at the lecture sizes for every shipped or simulated variant.
#include "hopper_trace_support.h"
#include "window_support.h"

#include "pages/hopper/hopper_model.h"
#include "pages/hopper/hopper_page.h"
#include "pages/hopper/hopper_view.h"
#include "session/session_file.h"
#include "shell/command_line.h"
#include "style/format.h"

#include "app/measured/shipped_measurements.h"
#include "core/errors.h"
#include "core/hardware.h"

#include <algorithm>
#include <iterator>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QWheelEvent>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

using namespace flashviz;
using namespace flashviz::gui;
using namespace flashviz::gui::test;
using kernels::HopperActivity;

namespace {

const kernels::HopperConfig& config(int row) {
    return kernels::kHopperConfigs[row];
}

// The bars of one warpgroup and activity for one tile.
const HopperBar* findBar(const HopperTimeline& t, int warpgroup, HopperActivity a, int tile) {
    for (const HopperBar& b : t.bars)
        if (b.warpgroup == warpgroup && b.activity == a && b.tile == tile) return &b;
    return nullptr;
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// What a page shows in words: the view's texts, joined.
QString shownWords(const HopperView& view) {
    QStringList words;
    for (const PlacedText& t : view.placedTexts())
        words << t.text;
    return words.join(QLatin1Char('\n'));
}

// Opens a trace file as Open trace… does and waits for it: true when it was read and shown.
bool openAndWait(HopperPage& page, const QString& file) {
    return page.openTrace(file) && page.waitForIdle(20000) && page.errorText().isEmpty();
}

GpuBenchAvailability available() {
    GpuBenchAvailability a;
    a.available = true;
    a.deviceName = "a stand-in H100";
    return a;
}

// The table's rows for head dimension d: the variant list's length.
int rowsOf(int d) {
    return int(std::count_if(std::begin(kernels::kHopperConfigs), std::end(kernels::kHopperConfigs),
                             [d](const kernels::HopperConfig& c) { return c.headDim == d; }));
}

} // namespace

class TestHopperPage : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    // the model
    void variantsMarkTheGpusDefault();
    void blockPictureIsTheConfiguration_data();
    void blockPictureIsTheConfiguration();
    void timelineHasALanePerWarpgroup_data();
    void timelineHasALanePerWarpgroup();
    void barsFollowTheKernelsOrder();
    void overlapAndPingPongAreVisible();
    void barGeometryFollowsTheWindow();
    void zoomAndPanStayInsideTheBlock();
    void ticksAreRoundAndInside();
    void findingsAreSummarizesNumbers();
    void ownTraceBeforeShippedBeforeNone();
    void noTraceSaysWhyAndHow();
    // the page
    void shipsAndShowsTheLongestBlock();
    void switchingVariantAndMask();
    void withoutAHopperGpuRecordIsOffAndSaysWhy();
    void recordsThroughTheRecorder();
    void cancelDropsTheRecording();
    void failedRecordingKeepsTheTrace();
    void saveAndOpenRoundTrip();
    void badFilesKeepTheTraceShown_data();
    void badFilesKeepTheTraceShown();
    void fileOfManyTracesFollowsTheControls();
    void tooltipsSayWhatABarWas();
    void wheelDragAndKeysZoomAndPan();
    void shippedTracesAreUsable();
    // the window
    void windowHasTheTab();
    void commandLineOpensThePage();
    void sessionKeepsTheTab();
    void screenshots();
};

void TestHopperPage::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName(QStringLiteral("FlashVizTest"));
    QApplication::setApplicationName(QStringLiteral("tst_hopper_page"));
}

// ---- the model ----

void TestHopperPage::variantsMarkTheGpusDefault() {
    for (const int d : {64, 128})
        for (const bool causal : {false, true}) {
            const std::vector<HopperVariant> variants = hopperVariants(d, causal);
            int defaults = 0, rows = 0;
            for (int row = 0; row < kernels::kHopperConfigCount; ++row)
                rows += config(row).headDim == d;
            QCOMPARE(int(variants.size()), rows);
            for (const HopperVariant& v : variants) {
                QCOMPARE(config(v.row).headDim, d);
                QCOMPARE(v.kernel,
                         QString::fromStdString(kernels::hopperConfigName(config(v.row))));
                QVERIFY(v.label.contains(QStringLiteral("Bc %1").arg(config(v.row).blockCols)));
                if (v.isDefault) {
                    ++defaults;
                    kernels::HopperTraceRequest r;
                    r.headDim = d;
                    r.causal = causal;
                    QCOMPARE(v.row, kernels::hopperTraceRow(r));
                }
            }
            QCOMPARE(defaults, 1);
        }
    // The H100's choices (kernel_configs.h): three consumers at d = 64 without the mask, two in
    // ping-pong with it.
    QCOMPARE(defaultHopperRow(64, false), 0);
    QCOMPARE(defaultHopperRow(64, true), 1);
    QCOMPARE(defaultHopperRow(128, false), 4);
}

void TestHopperPage::blockPictureIsTheConfiguration_data() {
    QTest::addColumn<int>("row");
    for (int row = 0; row < kernels::kHopperConfigCount; ++row)
        QTest::addRow("%s", kernels::hopperConfigName(config(row)).c_str()) << row;
}

// Every number of panel A is the configuration's: the warpgroups, their threads, registers and
// rows, shared memory part by part summing to sharedBytes(), the budget; the sentence names the
// variant's schedule.
void TestHopperPage::blockPictureIsTheConfiguration() {
    QFETCH(int, row);
    const kernels::HopperConfig& c = config(row);
    const HopperBlockPicture p = hopperBlockPicture(row);
    QCOMPARE(int(p.warpgroups.size()), c.consumers + 1);
    int threads = 0, registers = 0;
    for (std::size_t i = 0; i < p.warpgroups.size(); ++i) {
        const HopperWarpgroupBox& w = p.warpgroups[i];
        QCOMPARE(w.warpgroup, int(i));
        threads += w.threads;
        registers += w.threads * w.registers;
        QCOMPARE(w.registers, i == 0 ? c.producerRegisters() : c.consumerRegisters());
        if (i == 0) {
            QCOMPARE(w.firstRow, -1);
        } else {
            QCOMPARE(w.firstRow, 64 * int(i - 1));
            QCOMPARE(w.lastRow, 64 * int(i) - 1);
        }
    }
    QCOMPARE(threads, c.threads());
    QCOMPARE(p.warpgroups.back().lastRow, c.blockRows() - 1);
    QVERIFY(registers <= 65536);
    QVERIFY(p.registersLine.contains(formatCount(std::uint64_t(registers))));
    double sum = 0;
    int ks = 0, vs = 0;
    for (const HopperSharedPart& part : p.shared) {
        sum += part.bytes;
        ks += part.buffer == HopperBuffer::K;
        vs += part.buffer == HopperBuffer::V;
        if (part.buffer == HopperBuffer::Q)
            QCOMPARE(part.bytes, double(c.blockRows() * c.headDim * 2));
        if (part.buffer == HopperBuffer::K || part.buffer == HopperBuffer::V)
            QCOMPARE(part.bytes, double(c.blockCols * c.headDim * 2));
    }
    QCOMPARE(ks, c.stages);
    QCOMPARE(vs, c.stages);
    QCOMPARE(sum, double(c.sharedBytes()));
    QCOMPARE(p.sharedBytes, double(c.sharedBytes()));
    QCOMPARE(p.budgetBytes, findHardwareProfile("h100-sxm").sharedMemoryPerBlockBytes.value);
    QVERIFY(p.sharedBytes <= p.budgetBytes);
    QVERIFY2(p.sharedLine.contains(formatBytes(p.sharedBytes)) &&
                 p.sharedLine.contains(formatBytes(p.budgetBytes)),
             qPrintable(p.sharedLine));
    QCOMPARE(p.schedule.startsWith(QStringLiteral("No overlap")), !c.overlap);
    QCOMPARE(p.schedule.contains(QStringLiteral("ping-pong")), c.pingPong);
    QVERIFY(p.pipeline.contains(QStringLiteral("mod %1").arg(c.stages)));
}

void TestHopperPage::timelineHasALanePerWarpgroup_data() {
    blockPictureIsTheConfiguration_data();
}

// A lane per warpgroup; the producer's Q, K buffers, V buffers and thread; each consumer's S,
// P·V and threads. Every span of the block is a bar on the track of its kind, K_j and V_j on
// buffer j mod stages, at its time from the block's first mark.
void TestHopperPage::timelineHasALanePerWarpgroup() {
    QFETCH(int, row);
    const kernels::HopperConfig& c = config(row);
    const kernels::HopperTrace trace = syntheticHopperTrace(row, false);
    const kernels::HopperBlockTrace& block = trace.blocks[1];
    const HopperTimeline t = hopperTimeline(block, c);
    QCOMPARE(int(t.lanes.size()), c.consumers + 1);
    QCOMPARE(int(t.tracks.size()), 2 + 2 * c.stages + 3 * c.consumers);
    QCOMPARE(t.lanes[0].trackCount, 2 + 2 * c.stages);
    QCOMPARE(t.bars.size(), block.spans.size());
    QCOMPARE(t.tiles, 8);
    QCOMPARE(t.originNs, block.startNs());
    QCOMPARE(t.durationNs, block.endNs() - block.startNs());
    double latest = 0;
    for (const HopperBar& bar : t.bars) {
        const HopperTrack& track = t.tracks[std::size_t(bar.track)];
        const HopperLane& lane = t.lanes[std::size_t(bar.warpgroup)];
        QCOMPARE(track.warpgroup, bar.warpgroup);
        QVERIFY(bar.track >= lane.firstTrack && bar.track < lane.firstTrack + lane.trackCount);
        const kernels::HopperSpan& span = block.spans[bar.span];
        QCOMPARE(bar.activity, span.activity);
        QCOMPARE(bar.startNs, span.startNs - t.originNs);
        QCOMPARE(bar.endNs, span.endNs - t.originNs);
        QVERIFY(bar.startNs >= 0);
        latest = std::max(latest, bar.endNs);
        switch (bar.activity) {
        case HopperActivity::LoadQ:
            QCOMPARE(bar.track, 0);
            break;
        case HopperActivity::LoadK:
            QCOMPARE(track.kind, HopperTrackKind::Copies);
            QCOMPARE(bar.track, 1 + bar.tile % c.stages);
            QCOMPARE(track.buffer, bar.tile % c.stages);
            break;
        case HopperActivity::LoadV:
            QCOMPARE(bar.track, 1 + c.stages + bar.tile % c.stages);
            break;
        case HopperActivity::Scores:
            QCOMPARE(track.kind, HopperTrackKind::Scores);
            break;
        case HopperActivity::Values:
            QCOMPARE(track.kind, HopperTrackKind::Values);
            break;
        case HopperActivity::WaitForBuffer:
            QCOMPARE(track.kind, HopperTrackKind::ProducerThread);
            break;
        default:
            QCOMPARE(track.kind, HopperTrackKind::ConsumerThread);
        }
    }
    QCOMPARE(latest, t.durationNs);
    for (std::size_t i = 1; i < t.bars.size(); ++i)
        QVERIFY(std::pair(t.bars[i - 1].track, t.bars[i - 1].startNs) <=
                std::pair(t.bars[i].track, t.bars[i].startNs));
    // Within one track nothing overlaps: a buffer holds one tile, a thread does one thing.
    for (std::size_t i = 1; i < t.bars.size(); ++i)
        if (t.bars[i].track == t.bars[i - 1].track)
            QVERIFY(t.bars[i].startNs >= t.bars[i - 1].endNs - 1e-6);
    // Labels: the tile's number where it has one.
    QCOMPARE(findBar(t, 1, HopperActivity::Scores, 3)->labels.front(), QStringLiteral("S3"));
    QCOMPARE(findBar(t, 0, HopperActivity::LoadV, 2)->labels.front(), QStringLiteral("V2"));
}

// A consumer's tile j: S_j, then its softmax, then P_j·V_j; K_j arrives before S_j is issued.
void TestHopperPage::barsFollowTheKernelsOrder() {
    for (const int row : {4, 6}) {
        const kernels::HopperTrace trace = syntheticHopperTrace(row, false);
        const HopperTimeline t = hopperTimeline(trace.blocks[0], config(row));
        for (int j = 0; j < t.tiles; ++j) {
            const HopperBar* s = findBar(t, 1, HopperActivity::Scores, j);
            const HopperBar* sm = findBar(t, 1, HopperActivity::Softmax, j);
            const HopperBar* pv = findBar(t, 1, HopperActivity::Values, j);
            const HopperBar* k = findBar(t, 0, HopperActivity::LoadK, j);
            QVERIFY(s && sm && pv && k);
            QVERIFY(s->endNs <= sm->startNs + 1e-6);
            QVERIFY(sm->endNs <= pv->startNs + 1e-6);
            QVERIFY(k->endNs <= s->startNs + 1e-6);
        }
        QVERIFY(findBar(t, 1, HopperActivity::StoreO, -1));
    }
}

// With overlap, the softmax of S_j+1 runs while P_j·V_j is in flight; with ping-pong one
// consumer's products run while the other waits for its turn; without overlap neither.
void TestHopperPage::overlapAndPingPongAreVisible() {
    const auto softmaxUnderValues = [](const HopperTimeline& t) {
        int under = 0;
        for (int j = 0; j + 1 < t.tiles; ++j) {
            const HopperBar* sm = findBar(t, 1, HopperActivity::Softmax, j + 1);
            const HopperBar* pv = findBar(t, 1, HopperActivity::Values, j);
            under += pv->startNs < sm->endNs && sm->startNs < pv->endNs;
        }
        return under;
    };
    const HopperTimeline overlap =
        hopperTimeline(syntheticHopperTrace(5, false).blocks[0], config(5));
    const HopperTimeline plain =
        hopperTimeline(syntheticHopperTrace(6, false).blocks[0], config(6));
    const HopperTimeline pingPong =
        hopperTimeline(syntheticHopperTrace(4, false).blocks[0], config(4));
    QCOMPARE(softmaxUnderValues(overlap), overlap.tiles - 1);
    QCOMPARE(softmaxUnderValues(plain), 0);
    int turns = 0;
    for (const HopperBar& b : pingPong.bars)
        turns += b.activity == HopperActivity::WaitForTurn;
    QVERIFY(turns >= 2 * pingPong.tiles);
    for (const HopperBar& b : overlap.bars)
        QVERIFY(b.activity != HopperActivity::WaitForTurn);
}

void TestHopperPage::barGeometryFollowsTheWindow() {
    const kernels::HopperTrace trace = syntheticHopperTrace(4, false);
    const HopperTimeline t = hopperTimeline(trace.blocks[0], config(4));
    const QRectF chart(100, 50, 800, 400);
    const std::vector<QRectF> tracks = hopperTrackRects(t, chart, 5);
    QCOMPARE(tracks.size(), t.tracks.size());
    for (std::size_t i = 1; i < tracks.size(); ++i) {
        QVERIFY(tracks[i].top() >= tracks[i - 1].bottom() - 1e-9);
        QCOMPARE(tracks[i].left(), chart.left());
    }
    QVERIFY(std::abs(tracks.back().bottom() - chart.bottom()) < 1e-6);
    QVERIFY(tracks[0].height() < tracks.back().height()); // a copy's track is thinner
    const HopperTimeWindow whole = hopperWholeBlock(t);
    QCOMPARE(hopperX(0, whole, chart), chart.left());
    QCOMPARE(hopperX(t.durationNs, whole, chart), chart.right());
    QVERIFY(std::abs(hopperNsAt(hopperX(1234, whole, chart), whole, chart) - 1234) < 1e-6);
    // Bars in the order of their starts, each at least a pixel wide.
    const HopperBar* s1 = findBar(t, 1, HopperActivity::Scores, 1);
    const HopperBar* s2 = findBar(t, 1, HopperActivity::Scores, 2);
    const QRectF r1 = hopperBarRect(*s1, tracks[std::size_t(s1->track)], whole, chart);
    const QRectF r2 = hopperBarRect(*s2, tracks[std::size_t(s2->track)], whole, chart);
    QVERIFY(r1.right() <= r2.left() + 1e-6);
    QVERIFY(r1.width() >= 1 && r1.top() > tracks[std::size_t(s1->track)].top() &&
            r1.bottom() < tracks[std::size_t(s1->track)].bottom());
    QVERIFY(std::abs(r1.left() - hopperX(s1->startNs, whole, chart)) < 1e-6);
    // Zoomed onto S_2: S_1 is out of view, S_2 fills more of the chart and is clipped to it.
    const HopperTimeWindow onS2{s2->startNs + 1, s2->endNs + 50};
    QVERIFY(hopperBarRect(*s1, tracks[std::size_t(s1->track)], onS2, chart).isEmpty());
    const QRectF zoomed = hopperBarRect(*s2, tracks[std::size_t(s2->track)], onS2, chart);
    QCOMPARE(zoomed.left(), chart.left());
    QVERIFY(zoomed.width() > r2.width() * 2);
}

void TestHopperPage::zoomAndPanStayInsideTheBlock() {
    const HopperTimeline t = hopperTimeline(syntheticHopperTrace(4, false).blocks[0], config(4));
    const HopperTimeWindow whole = hopperWholeBlock(t);
    QCOMPARE(whole.startNs, 0.0);
    QCOMPARE(whole.endNs, t.durationNs);
    // About a point: it stays where it was across the chart.
    const double at = t.durationNs * 0.3;
    const HopperTimeWindow in = hopperZoomed(whole, 4, at, t);
    QVERIFY(std::abs(in.spanNs() - whole.spanNs() / 4) < 1e-6);
    QVERIFY(std::abs((at - in.startNs) / in.spanNs() - 0.3) < 1e-9);
    // Never past the ends, never narrower than the least span, never wider than the block.
    const HopperTimeWindow deep = hopperZoomed(in, 1e9, at, t);
    QCOMPARE(deep.spanNs(), hopperMinimumSpanNs(t));
    QCOMPARE(hopperZoomed(in, 1e-9, at, t), whole);
    const HopperTimeWindow right = hopperPanned(in, 1e12, t);
    QCOMPARE(right.endNs, t.durationNs);
    QVERIFY(std::abs(right.spanNs() - in.spanNs()) < 1e-6);
    QCOMPARE(hopperPanned(in, -1e12, t).startNs, 0.0);
    QCOMPARE(hopperZoomed(in, 0, at, t), in); // no such zoom
    QCOMPARE(hopperZoomed(in, std::nan(""), at, t), in);
}

void TestHopperPage::ticksAreRoundAndInside() {
    const HopperTimeWindow w{1234, 20210};
    const std::vector<double> ticks = hopperTicks(w, 8);
    QVERIFY(ticks.size() >= 4 && ticks.size() <= 9);
    const double step = ticks[1] - ticks[0];
    const double mantissa = step / std::pow(10, std::floor(std::log10(step)));
    QVERIFY(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 ||
            std::abs(mantissa - 5) < 1e-9);
    for (const double x : ticks)
        QVERIFY(x >= w.startNs && x <= w.endNs + 1e-6);
    QVERIFY(hopperTicks(w, 0).empty());
    QCOMPARE(hopperTicks({0, 1000}, 5).front(), 0.0);
}

// Panel C's numbers are summarize()'s, as it returned them, written by style/format.
void TestHopperPage::findingsAreSummarizesNumbers() {
    const kernels::HopperTrace trace = syntheticHopperTrace(4, true);
    for (int block = 0; block < int(trace.blocks.size()); ++block) {
        const HopperFindings f = hopperFindings(trace, block);
        const kernels::HopperBlockSummary s =
            kernels::summarize(trace.blocks[std::size_t(block)], 3);
        QCOMPARE(f.summary.durationNs, s.durationNs);
        QCOMPARE(f.summary.outstandingNs, s.outstandingNs);
        QCOMPARE(f.summary.tensorWorkNs, s.tensorWorkNs);
        QCOMPARE(f.summary.softmaxNs, s.softmaxNs);
        QCOMPARE(f.summary.softmaxBesideProductsNs, s.softmaxBesideProductsNs);
        QCOMPARE(f.summary.warpgroups.size(), s.warpgroups.size());
        QVERIFY(f.headline.contains(formatNanoseconds(s.durationNs)));
        QVERIFY(f.headline.contains(formatShare(s.outstandingFraction())));
        QVERIFY(f.headline.contains(formatShare(s.tensorWorkFraction())));
        QVERIFY(f.headline.contains(formatShare(s.softmaxBesideProductsFraction())));
        QCOMPARE(f.rows.size(), s.warpgroups.size());
        QCOMPARE(f.rows[0].copies, formatNanoseconds(s.warpgroups[0].copyNs));
        QCOMPARE(f.rows[0].outstanding, QStringLiteral("–"));
        QCOMPARE(f.rows[0].waiting, formatNanoseconds(s.warpgroups[0].waitingNs));
        for (std::size_t wg = 1; wg < s.warpgroups.size(); ++wg) {
            QCOMPARE(f.rows[wg].outstanding, formatNanoseconds(s.warpgroups[wg].outstandingNs));
            QCOMPARE(f.rows[wg].cudaCores, formatNanoseconds(s.warpgroups[wg].cudaCoresNs));
            QCOMPARE(f.rows[wg].waiting, formatNanoseconds(s.warpgroups[wg].waitingNs));
            QCOMPARE(f.rows[wg].copies, QStringLiteral("–"));
        }
        QVERIFY(f.blockLine.startsWith(
            QStringLiteral("Block %1 of %2").arg(block + 1).arg(trace.blocks.size())));
        QCOMPARE(f.blockLine.contains(QStringLiteral("the longest")),
                 block == kernels::longestBlock(trace));
        QVERIFY(
            f.blockLine.contains(QStringLiteral("SM %1").arg(trace.blocks[std::size_t(block)].sm)));
    }
    // Under the mask the last block sees every key tile, the first the fewest.
    QCOMPARE(kernels::longestBlock(trace), 3);
    QCOMPARE(trace.timerStepNs, 32.0); // the simulated timer, measured as a real one is
    const HopperFindings f = hopperFindings(trace, 0);
    QVERIFY2(f.recordedLine.contains(QStringLiteral("a simulated GPU (tests)")) &&
                 f.recordedLine.contains(QStringLiteral("2026-12-06")) &&
                 f.recordedLine.contains(QStringLiteral("causal")),
             qPrintable(f.recordedLine));
    QVERIFY2(f.timingLine.contains(formatNanoseconds(20000)) &&
                 f.timingLine.contains(formatNanoseconds(23000)) &&
                 f.timingLine.contains(formatShare(0.15)) &&
                 f.timingLine.contains(formatNanoseconds(trace.timerStepNs)),
             qPrintable(f.timingLine));
    QVERIFY(f.note.contains(QStringLiteral("upper bounds")));
}

void TestHopperPage::ownTraceBeforeShippedBeforeNone() {
    const std::vector<kernels::HopperTrace> shipped{syntheticHopperTrace(4, false),
                                                    syntheticHopperTrace(5, true)};
    std::vector<kernels::HopperTrace> own{syntheticHopperTrace(4, false, 2)};
    HopperTraceChoice c = chooseHopperTrace(own, shipped, 4, false);
    QCOMPARE(c.trace, &own[0]);
    QVERIFY(c.own);
    c = chooseHopperTrace({}, shipped, 4, false);
    QCOMPARE(c.trace, &shipped[0]);
    QVERIFY(!c.own);
    QCOMPARE(chooseHopperTrace(own, shipped, 5, true).trace, &shipped[1]);
    QVERIFY(!chooseHopperTrace(own, shipped, 5, false).trace); // another mask
    QVERIFY(!chooseHopperTrace(own, shipped, 6, false).trace);
    own[0].blocks.clear(); // a trace with no block is never shown
    QCOMPARE(chooseHopperTrace(own, shipped, 4, false).trace, &shipped[0]);
}

void TestHopperPage::noTraceSaysWhyAndHow() {
    const QString kernel = QString::fromStdString(kernels::hopperConfigName(config(1)));
    const QString cannot = hopperNoTraceText(1, true, false, QStringLiteral("no GPU here"));
    QVERIFY2(cannot.contains(kernel) && cannot.contains(QStringLiteral("causal mask")) &&
                 cannot.contains(QStringLiteral("no GPU here")) &&
                 cannot.contains(hopperRecordCommand(1, true)) &&
                 cannot.contains(QStringLiteral("Open trace")),
             qPrintable(cannot));
    QCOMPARE(
        hopperRecordCommand(1, true),
        QStringLiteral("flashviz-cli hopper-trace --variant %1 --d 64 --causal --out trace.json")
            .arg(kernel));
    QVERIFY(!hopperRecordCommand(4, false).contains(QStringLiteral("--causal")));
    const QString can = hopperNoTraceText(4, false, true, {});
    QVERIFY2(can.contains(QStringLiteral("without a mask")) &&
                 can.contains(QStringLiteral("Record on this GPU")),
             qPrintable(can));
}

// ---- the page ----

void TestHopperPage::shipsAndShowsTheLongestBlock() {
    HopperPage page;
    page.resize(1100, 700);
    page.setShippedTraces({syntheticHopperTrace(4, true), syntheticHopperTrace(4, false)});
    page.choose(4, true);
    QVERIFY(page.shownTrace());
    QVERIFY(!page.showsOwnTrace());
    QVERIFY(page.shownTrace()->causal);
    QCOMPARE(page.block(), kernels::longestBlock(*page.shownTrace()));
    const HopperView* view = page.view();
    QVERIFY(view->hasTrace());
    QCOMPARE(view->content().picture.row, 4);
    QCOMPARE(view->content().origin, QStringLiteral("the trace FlashViz ships"));
    QCOMPARE(
        view->content().timeline.durationNs,
        hopperTimeline(page.shownTrace()->blocks[std::size_t(page.block())], config(4)).durationNs);
    // Another block: its own timeline and numbers, the whole block in view.
    page.setBlock(0);
    QCOMPARE(view->content().findings->summary.durationNs,
             kernels::summarize(page.shownTrace()->blocks[0], 3).durationNs);
    QCOMPARE(view->timeWindow(), hopperWholeBlock(view->content().timeline));
    QVERIFY(shownWords(*view).contains(view->content().findings->headline));
}

void TestHopperPage::switchingVariantAndMask() {
    HopperPage page;
    page.resize(1100, 700);
    page.setShippedTraces({syntheticHopperTrace(4, false), syntheticHopperTrace(5, false, 2)});
    auto* d = page.findChild<QComboBox*>(QStringLiteral("hopperHeadDim"));
    auto* causal = page.findChild<QCheckBox*>(QStringLiteral("hopperCausal"));
    auto* variant = page.findChild<QComboBox*>(QStringLiteral("hopperVariant"));
    QVERIFY(d && causal && variant);
    QCOMPARE(page.headDim(), 128);
    QCOMPARE(page.variantRow(), 4); // the default, marked
    QVERIFY(variant->currentText().endsWith(QStringLiteral("(default)")));
    QCOMPARE(variant->count(), rowsOf(128));
    QVERIFY(page.shownTrace() && page.shownTrace()->configRow == 4);
    QSignalSpy shown(&page, &HopperPage::traceShown);
    variant->setCurrentIndex(variant->findData(5));
    QCOMPARE(shown.count(), 1);
    QVERIFY(page.shownTrace() && page.shownTrace()->configRow == 5);
    QCOMPARE(int(page.shownTrace()->blocks.size()), 2);
    QCOMPARE(page.findChild<QSpinBox*>(QStringLiteral("hopperBlock"))->maximum(), 2);
    // A variant with no trace: none, the picture of that variant, the words why.
    variant->setCurrentIndex(variant->findData(6));
    QVERIFY(!page.shownTrace());
    QVERIFY(!page.view()->hasTrace());
    QCOMPARE(page.view()->content().picture.row, 6);
    QVERIFY(page.view()->content().timeline.bars.empty());
    QVERIFY(shownWords(*page.view())
                .contains(QStringLiteral("No trace of wgmma_d128_br128_bc128_wg2_s2 ")));
    QVERIFY(!page.findChild<QPushButton*>(QStringLiteral("hopperSave"))->isEnabled());
    // The mask: variant 6 stays chosen (not a default), and has no causal trace either.
    causal->setChecked(true);
    QCOMPARE(page.variantRow(), 6);
    QVERIFY(!page.shownTrace());
    // d = 64: its rows, the default for the mask chosen.
    d->setCurrentIndex(d->findData(64));
    QCOMPARE(page.variantRow(), defaultHopperRow(64, true));
    QCOMPARE(variant->count(), rowsOf(64));
    for (int i = 0; i < variant->count(); ++i)
        QCOMPARE(config(variant->itemData(i).toInt()).headDim, 64);
    // The default for one mask becomes the default for the other.
    causal->setChecked(false);
    QCOMPARE(page.variantRow(), defaultHopperRow(64, false));
    page.choose(4, false);
    QCOMPARE(page.headDim(), 128);
    QVERIFY(page.shownTrace() && page.shownTrace()->configRow == 4);
}

void TestHopperPage::withoutAHopperGpuRecordIsOffAndSaysWhy() {
    const GpuBenchAvailability here = hopperTraceAvailability();
    if (here.available) QSKIP("this machine records Hopper traces");
    QVERIFY(!here.reason.empty());
    HopperPage page;
    page.setShippedTraces({});
    QVERIFY(!page.canRecord());
    QPushButton* record = page.recordButton();
    QVERIFY(!record->isEnabled());
    QCOMPARE(record->toolTip(), QString::fromStdString(here.reason));
    auto* note = page.findChild<QLabel*>(QStringLiteral("hopperRecordNote"));
    QVERIFY(note->toolTip().contains(QString::fromStdString(here.reason)));
    QVERIFY(page.view()->content().noTrace.contains(QString::fromStdString(here.reason)));
    // Asking anyway is a message, not a job.
    page.record();
    QVERIFY(!page.isBusy());
    QVERIFY2(page.errorText().contains(QString::fromStdString(here.reason)),
             qPrintable(page.errorText()));
    try {
        (void)recordHopperTrace(kernels::HopperTraceRequest{});
        QFAIL("recordHopperTrace ran without a Hopper GPU");
    } catch (const EngineError& error) {
        QCOMPARE(error.kind(), ErrorKind::Unsupported);
    }
}

// Through a stand-in for the GPU: the controls' request reaches it on a worker thread, the bar
// moves while it runs, and what it returns is shown as the user's own, with the controls set
// to its variant.
void TestHopperPage::recordsThroughTheRecorder() {
    HopperPage page;
    page.setShippedTraces({syntheticHopperTrace(4, false)});
    std::atomic<bool> onGuiThread{true};
    kernels::HopperTraceRequest asked;
    page.setRecorder(
        [&](const kernels::HopperTraceRequest& r) {
            onGuiThread = QThread::currentThread() == qApp->thread();
            asked = r;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            return syntheticHopperTrace(r.configRow, r.causal, 3);
        },
        available());
    QVERIFY(page.recordButton()->isEnabled());
    page.findChild<QComboBox*>(QStringLiteral("hopperElement"))
        ->setCurrentText(QStringLiteral("bf16"));
    page.findChild<QSpinBox*>(QStringLiteral("hopperQueries"))->setValue(2048);
    page.findChild<QSpinBox*>(QStringLiteral("hopperKeys"))->setValue(512);
    page.choose(5, true);
    QTest::mouseClick(page.recordButton(), Qt::LeftButton);
    QVERIFY(page.isBusy());
    QVERIFY(!page.recordButton()->isEnabled());
    QVERIFY(page.findChild<QPushButton*>(QStringLiteral("hopperCancel"))->isEnabled());
    QVERIFY(!page.findChild<QPushButton*>(QStringLiteral("hopperOpen"))->isEnabled());
    // Opening a file meanwhile would drop the recording: refused, said so.
    QVERIFY(!page.openTrace(QStringLiteral("/nowhere.json")));
    QVERIFY(page.errorText().contains(QStringLiteral("recording is under way")));
    QVERIFY(page.waitForIdle(20000));
    QVERIFY(!onGuiThread);
    QCOMPARE(asked.configRow, 5);
    QVERIFY(asked.causal);
    QCOMPARE(asked.headDim, 128);
    QCOMPARE(asked.element, std::string("bf16"));
    QCOMPARE(asked.queries, 2048);
    QCOMPARE(asked.keys, 512);
    QVERIFY(page.shownTrace() && page.showsOwnTrace());
    QCOMPARE(page.shownTrace()->configRow, 5);
    QCOMPARE(int(page.shownTrace()->blocks.size()), 3);
    QVERIFY(page.view()->content().origin.startsWith(QStringLiteral("recorded on this GPU")));
    QVERIFY(page.errorText().isEmpty());
    // The shipped trace of another variant is still there; the recorded one stays with its own.
    page.choose(4, false);
    QVERIFY(page.shownTrace() && !page.showsOwnTrace());
    page.choose(5, true);
    QVERIFY(page.showsOwnTrace());
}

void TestHopperPage::cancelDropsTheRecording() {
    HopperPage page;
    page.setShippedTraces({syntheticHopperTrace(4, false)});
    page.setRecorder(
        [](const kernels::HopperTraceRequest& r) {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            return syntheticHopperTrace(r.configRow, r.causal);
        },
        available());
    const kernels::HopperTrace* before = page.shownTrace();
    page.record();
    QVERIFY(page.isBusy());
    QTest::mouseClick(page.findChild<QPushButton*>(QStringLiteral("hopperCancel")), Qt::LeftButton);
    QVERIFY(page.waitForIdle(20000));
    QCOMPARE(page.shownTrace(), before);
    QVERIFY(!page.showsOwnTrace());
    QVERIFY2(page.findChild<QLabel*>(QStringLiteral("hopperMessage"))
                 ->text()
                 .contains(QStringLiteral("cancelled")),
             qPrintable(page.findChild<QLabel*>(QStringLiteral("hopperMessage"))->text()));
    QVERIFY(page.recordButton()->isEnabled());
}

void TestHopperPage::failedRecordingKeepsTheTrace() {
    HopperPage page;
    page.setShippedTraces({syntheticHopperTrace(4, false)});
    page.setRecorder(
        [](const kernels::HopperTraceRequest&) -> kernels::HopperTrace {
            throw EngineError(ErrorKind::BackendFailure, "the device ran out of marks");
        },
        available());
    const kernels::HopperTrace* before = page.shownTrace();
    QSignalSpy failed(&page, &Page::failed);
    page.record();
    QVERIFY(page.waitForIdle(20000));
    QCOMPARE(failed.count(), 1);
    QVERIFY(page.errorText().contains(QStringLiteral("the device ran out of marks")));
    QCOMPARE(page.shownTrace(), before);
    // A request the kernel cannot take is refused before any job.
    page.findChild<QSpinBox*>(QStringLiteral("hopperQueries"))->setMaximum(100000);
    page.findChild<QSpinBox*>(QStringLiteral("hopperQueries"))->setValue(99999);
    page.record();
    QVERIFY(!page.isBusy());
    QVERIFY2(page.errorText().contains(QStringLiteral("n_q")), qPrintable(page.errorText()));
}

void TestHopperPage::saveAndOpenRoundTrip() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("trace.json"));
    HopperPage page;
    page.resize(1000, 700);
    const kernels::HopperTrace original = syntheticHopperTrace(1, true);
    page.setShippedTraces({original});
    page.choose(1, true);
    QVERIFY(page.saveTrace(file));
    QVERIFY(QFile::exists(file));
    QVERIFY(page.errorText().isEmpty());
    page.setShippedTraces({});
    QVERIFY(!page.shownTrace());
    page.choose(4, false); // elsewhere: opening goes to the file's variant
    QVERIFY(openAndWait(page, file));
    QVERIFY(page.showsOwnTrace());
    QCOMPARE(page.variantRow(), 1);
    QVERIFY(page.causal());
    QCOMPARE(page.headDim(), 64);
    const kernels::HopperTrace& back = *page.shownTrace();
    QCOMPARE(back.kernel, original.kernel);
    QCOMPARE(back.blocks.size(), original.blocks.size());
    for (std::size_t b = 0; b < back.blocks.size(); ++b) {
        QCOMPARE(back.blocks[b].spans.size(), original.blocks[b].spans.size());
        // The file keeps a tenth of a nanosecond.
        QVERIFY(std::abs(kernels::summarize(back.blocks[b], 3).durationNs -
                         kernels::summarize(original.blocks[b], 3).durationNs) < 0.2);
    }
    QCOMPARE(page.view()->content().origin, QStringLiteral("opened from trace.json"));
    // Saving the opened trace: it says where it went.
    QVERIFY(page.saveTrace(dir.filePath(QStringLiteral("again.json"))));
    QCOMPARE(page.view()->content().origin, QStringLiteral("saved to again.json"));
    // Nothing on screen: nothing to save, said so.
    page.choose(6, false);
    QVERIFY(!page.saveTrace(dir.filePath(QStringLiteral("none.json"))));
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("none.json"))));
    QVERIFY(!page.errorText().isEmpty());
    // A place that cannot be written: the message, the trace kept.
    page.choose(1, true);
    QVERIFY(!page.saveTrace(dir.filePath(QStringLiteral("missing/folder/trace.json"))));
    QVERIFY(page.errorText().contains(QStringLiteral("Could not write")));
    QVERIFY(page.showsOwnTrace());
}

void TestHopperPage::badFilesKeepTheTraceShown_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("says");
    const QByteArray good =
        QByteArray::fromStdString(kernels::hopperTracesJson({syntheticHopperTrace(4, false, 2)}));
    QByteArray unknownKernel = good;
    unknownKernel.replace("wgmma_d128_br128_bc128_wg2_s2_overlap_pingpong", "wgmma_d96_made_up");
    QByteArray badSpan = good;
    badSpan.replace("\"scores\"", "\"sleeping\"");
    QByteArray backwards = good;
    backwards.replace("\"version\":1", "\"version\":9");
    QTest::addRow("not JSON") << QByteArray("{ this is not json") << QStringLiteral("is not JSON");
    QTest::addRow("another format") << QByteArray(R"({"format": "flashviz-session", "version": 1})")
                                    << QStringLiteral("is not a flashviz-hopper-trace file");
    QTest::addRow("another version") << backwards << QStringLiteral("version");
    QTest::addRow("unknown kernel") << unknownKernel << QStringLiteral("wgmma_d96_made_up");
    QTest::addRow("unknown activity") << badSpan << QStringLiteral("sleeping");
    QTest::addRow("empty") << QByteArray() << QStringLiteral("is not JSON");
}

void TestHopperPage::badFilesKeepTheTraceShown() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, says);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("bad.json"));
    writeFile(file, bytes);
    HopperPage page;
    page.setShippedTraces({syntheticHopperTrace(4, false)});
    const kernels::HopperTrace* before = page.shownTrace();
    const double duration = page.view()->content().timeline.durationNs;
    QSignalSpy failed(&page, &Page::failed);
    QVERIFY(!openAndWait(page, file));
    QCOMPARE(failed.count(), 1);
    QVERIFY2(page.errorText().contains(says), qPrintable(page.errorText()));
    QVERIFY(page.errorText().contains(QStringLiteral("bad.json")));
    const QString shown = page.findChild<QLabel*>(QStringLiteral("hopperMessage"))->text();
    QVERIFY2(shown.contains(QStringLiteral("still shows")), qPrintable(shown));
    QCOMPARE(page.shownTrace(), before);
    QCOMPARE(page.view()->content().timeline.durationNs, duration);
    QCOMPARE(page.variantRow(), 4);
    // A file that is not there either.
    QVERIFY(!openAndWait(page, dir.filePath(QStringLiteral("nowhere.json"))));
    QVERIFY(page.errorText().contains(QStringLiteral("Could not open")));
    QCOMPARE(page.shownTrace(), before);
}

// A file of several traces (flashviz-cli hopper-trace --all-variants): each variant and mask shows
// its own from it, the file's before the shipped.
void TestHopperPage::fileOfManyTracesFollowsTheControls() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("all.json"));
    writeFile(file, QByteArray::fromStdString(kernels::hopperTracesJson(
                        {syntheticHopperTrace(0, false, 3), syntheticHopperTrace(4, false, 2),
                         syntheticHopperTrace(4, true, 2)})));
    HopperPage page;
    page.setShippedTraces({syntheticHopperTrace(4, false, 4), syntheticHopperTrace(6, false, 4)});
    QCOMPARE(int(page.shownTrace()->blocks.size()), 4);
    QVERIFY(openAndWait(page, file));
    QCOMPARE(page.variantRow(), 4); // the file has the variant on screen
    QVERIFY(page.showsOwnTrace());
    QCOMPARE(int(page.shownTrace()->blocks.size()), 2);
    page.choose(4, true);
    QVERIFY(page.showsOwnTrace());
    page.choose(0, false);
    QVERIFY(page.showsOwnTrace());
    QCOMPARE(int(page.shownTrace()->blocks.size()), 3);
    page.choose(6, false);
    QVERIFY(page.shownTrace() && !page.showsOwnTrace());
}

void TestHopperPage::tooltipsSayWhatABarWas() {
    HopperPage page;
    page.resize(1400, 900);
    page.setShippedTraces({syntheticHopperTrace(4, false)});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const HopperView& view = *page.view();
    const HopperTimeline& t = view.content().timeline;
    int checked = 0;
    std::set<HopperActivity> seen;
    for (std::size_t i = 0; i < t.bars.size(); ++i) {
        const QRectF r = view.barRect(i);
        QVERIFY(!r.isEmpty());
        QVERIFY(view.chartRect().adjusted(-1, -1, 1, 1).contains(r));
        if (seen.count(t.bars[i].activity) || r.width() < 3) continue;
        seen.insert(t.bars[i].activity);
        const QString tip = view.toolTipAt(r.center());
        const HopperBar& bar = t.bars[i];
        QVERIFY2(tip.contains(QString::fromUtf8(kernels::describe(bar.activity))), qPrintable(tip));
        QVERIFY2(tip.contains(formatNanoseconds(bar.startNs)) &&
                     tip.contains(formatNanoseconds(bar.endNs)) &&
                     tip.contains(formatNanoseconds(bar.endNs - bar.startNs)),
                 qPrintable(tip));
        if (bar.tile >= 0)
            QVERIFY2(tip.contains(QStringLiteral("key tile %1").arg(bar.tile)), qPrintable(tip));
        ++checked;
    }
    QVERIFY(checked >= 8);
    // A product's bar wide enough shows its tile; neighbours read alike.
    bool labelled = false;
    for (std::size_t i = 0; i < t.bars.size(); ++i)
        if (t.bars[i].activity == HopperActivity::Values && !view.barLabel(i).isEmpty()) {
            QCOMPARE(view.barLabel(i), t.bars[i].labels.front());
            labelled = true;
        }
    QVERIFY(labelled);
    // Shared memory and the warpgroups explain themselves.
    QVERIFY(view.toolTipAt(view.sharedPartRect(1).center()).contains(QStringLiteral("K0")));
}

void TestHopperPage::wheelDragAndKeysZoomAndPan() {
    HopperPage page;
    page.resize(1400, 900);
    page.setShippedTraces({syntheticHopperTrace(4, false)});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    HopperView* view = page.view();
    const HopperTimeWindow whole = view->timeWindow();
    const QRectF chart = view->chartRect();
    const QPointF at(chart.left() + chart.width() * 0.25, chart.center().y());
    const double nsAt = hopperNsAt(at.x(), whole, chart);
    QWheelEvent in(at, view->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton,
                   Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(view, &in);
    const HopperTimeWindow zoomed = view->timeWindow();
    QVERIFY(zoomed.spanNs() < whole.spanNs() * 0.7);
    QVERIFY(std::abs(hopperNsAt(at.x(), zoomed, chart) - nsAt) < 1); // the pointer's time stays put
    // A drag to the left moves later times into view.
    QTest::mousePress(view, Qt::LeftButton, {}, chart.center().toPoint());
    QTest::mouseMove(view, (chart.center() - QPointF(100, 0)).toPoint());
    QTest::mouseRelease(view, Qt::LeftButton, {}, (chart.center() - QPointF(100, 0)).toPoint());
    QVERIFY(view->timeWindow().startNs > zoomed.startNs);
    QVERIFY(std::abs(view->timeWindow().spanNs() - zoomed.spanNs()) < 1e-6);
    // Keys: 0 the whole block, + in, − out.
    view->setFocus();
    QTest::keyClick(view, Qt::Key_0);
    QCOMPARE(view->timeWindow(), whole);
    QTest::keyClick(view, Qt::Key_Plus);
    QVERIFY(view->timeWindow().spanNs() < whole.spanNs());
    QTest::keyClick(view, Qt::Key_Minus);
    QVERIFY(std::abs(view->timeWindow().spanNs() - whole.spanNs()) < 1e-6);
    // Shift + drag zooms to the range.
    const QPoint from(int(chart.left() + chart.width() * 0.5), int(chart.center().y()));
    const QPoint to(int(chart.left() + chart.width() * 0.75), int(chart.center().y()));
    const double nsFrom = hopperNsAt(from.x(), whole, chart),
                 nsTo = hopperNsAt(to.x(), whole, chart);
    QTest::mousePress(view, Qt::LeftButton, Qt::ShiftModifier, from);
    QTest::mouseMove(view, to);
    QTest::mouseRelease(view, Qt::LeftButton, Qt::ShiftModifier, to);
    QVERIFY(std::abs(view->timeWindow().startNs - nsFrom) < 1);
    QVERIFY(std::abs(view->timeWindow().endNs - nsTo) < 1);
    // The buttons beside the timeline's title, and the window in words.
    auto* whole_ = view->findChild<QToolButton*>(QStringLiteral("hopperWholeBlock"));
    QVERIFY(whole_ && whole_->isVisible());
    QVERIFY(view->windowText().endsWith(formatNanoseconds(whole.endNs)));
    QTest::mouseClick(whole_, Qt::LeftButton);
    QCOMPARE(view->timeWindow(), whole);
    // Without a trace nothing zooms, and the buttons go.
    page.choose(6, false);
    QVERIFY(!view->hasTrace());
    QVERIFY(!whole_->isVisible());
    QTest::keyClick(view, Qt::Key_Plus);
    QCOMPARE(view->timeWindow(), hopperWholeBlock(view->content().timeline));
}

// The traces FlashViz ships parse, each is of a variant it has and of the mask its row is built
// for, and every span lands on a track.
void TestHopperPage::shippedTracesAreUsable() {
    const std::vector<kernels::HopperTrace>& shipped = measured::shippedHopperTraces();
    if (shipped.empty()) QSKIP("this build ships no Hopper trace (resources/traces/ is empty)");
    std::set<std::pair<int, bool>> seen;
    for (const kernels::HopperTrace& t : shipped) {
        QVERIFY(seen.insert({t.configRow, t.causal}).second); // one per variant and mask
        QVERIFY(!t.blocks.empty());
        QVERIFY(!t.device.empty() && !t.recorded.empty());
        QVERIFY(t.plainKernelNs > 0 && t.tracedKernelNs > 0);
        for (const kernels::HopperBlockTrace& b : t.blocks) {
            const HopperTimeline line = hopperTimeline(b, t.config());
            QCOMPARE(line.bars.size(), b.spans.size());
            QVERIFY(line.durationNs > 0);
        }
        QCOMPARE(measured::shippedHopperTrace(t.configRow, t.causal), &t);
    }
    // Each variant's default mask has one.
    for (int row = 0; row < kernels::kHopperConfigCount; ++row) {
        const kernels::MaskPreference m = config(row).masks;
        QVERIFY2(seen.count({row, m == kernels::MaskPreference::Causal}),
                 kernels::hopperConfigName(config(row)).c_str());
    }
}

// ---- the window ----

void TestHopperPage::windowHasTheTab() {
    const auto window = freshWindow({1366, 768});
    QTabWidget* tabs = window->tabs();
    int index = -1;
    for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i) == QStringLiteral("FlashAttention-3 (Hopper)")) index = i;
    QVERIFY(index >= 0);
    QCOMPARE(tabs->tabText(index - 1), QStringLiteral("FlashAttention-2"));
    QVERIFY(!window->findChild<HopperPage*>()); // made when first opened
    tabs->setCurrentIndex(index);
    QVERIFY(window->hopper());
    QCOMPARE(window->findChild<HopperPage*>(), window->hopper());
    QTRY_VERIFY(window->hopper()->isVisible());
    QCOMPARE(window->exportedView(), tabs->currentWidget());
    // It never widens the window.
    QCOMPARE(window->size(), QSize(1366, 768));
}

void TestHopperPage::commandLineOpensThePage() {
    const CommandLine plain =
        parseCommandLine({QStringLiteral("flashviz"), QStringLiteral("--hopper")});
    QVERIFY2(plain.error.isEmpty(), qPrintable(plain.error));
    QVERIFY(plain.start.hopperPage);
    const CommandLine withFile =
        parseCommandLine({QStringLiteral("flashviz"), QStringLiteral("--hopper-trace"),
                          QStringLiteral("/tmp/t.json")});
    QCOMPARE(withFile.start.hopperTrace, QStringLiteral("/tmp/t.json"));
    // The window opens on the page, with the file's trace.
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("mine.json"));
    writeFile(file, QByteArray::fromStdString(
                        kernels::hopperTracesJson({syntheticHopperTrace(2, true, 3)})));
    StartOptions options = freshOptions();
    options.hopperTrace = file;
    const auto window = freshWindow({1600, 1000}, options);
    QCOMPARE(window->tabs()->currentWidget()->findChild<HopperPage*>(), window->hopper());
    QVERIFY(window->hopper()->showsOwnTrace());
    QCOMPARE(window->hopper()->variantRow(), 2);
    QVERIFY(window->hopper()->causal());
    // A bad file: the page says so.
    writeFile(file, "nonsense");
    const auto second = freshWindow({1600, 1000}, options);
    QVERIFY(second->hopper()->errorText().contains(QStringLiteral("is not JSON")));
}

void TestHopperPage::sessionKeepsTheTab() {
    const auto window = freshWindow({1366, 768});
    window->tabs()->setCurrentWidget(window->hopper()->parentWidget());
    Session s = window->currentSession();
    QCOMPARE(s.tab, SessionTab::Hopper);
    const SessionRead back =
        parseSession(sessionToJson(s), QStringLiteral("test"), SessionLimits{100, {}});
    QVERIFY2(back.session, qPrintable(back.error));
    QCOMPARE(back.session->tab, SessionTab::Hopper);
    QVERIFY(sessionToJson(s).contains("\"flashattention-3-hopper\""));
    window->tabs()->setCurrentIndex(0);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.flashviz"));
    QVERIFY(window->saveSession(file).isEmpty());
    window->tabs()->setCurrentWidget(window->hopper()->parentWidget());
    QVERIFY(window->saveSession(file).isEmpty());
    window->tabs()->setCurrentIndex(0);
    QVERIFY(window->openSession(file).isEmpty());
    QVERIFY(window->waitUntilIdle());
    QCOMPARE(window->tabs()->currentWidget(), window->hopper()->parentWidget());
}

// FLASHVIZ_HOPPER_SHOTS=<folder>: the window's page at each size for every variant and mask it
// has a trace of (the shipped ones, else simulated), and one without.
void TestHopperPage::screenshots() {
    const QString folder = qEnvironmentVariable("FLASHVIZ_HOPPER_SHOTS");
    if (folder.isEmpty()) QSKIP("set FLASHVIZ_HOPPER_SHOTS=<folder> to write the pictures");
    QDir().mkpath(folder);
    std::vector<kernels::HopperTrace> traces = measured::shippedHopperTraces();
    const bool simulated = traces.empty();
    if (simulated)
        for (int row = 0; row < kernels::kHopperConfigCount; ++row)
            traces.push_back(
                syntheticHopperTrace(row, config(row).masks == kernels::MaskPreference::Causal));
    for (const QSize size :
         {QSize(1920, 1080), QSize(1600, 1000), QSize(1366, 768), QSize(1280, 800)}) {
        StartOptions options = freshOptions();
        options.hopperPage = true;
        const auto window = freshWindow(size, options);
        HopperPage* page = window->hopper();
        if (simulated) page->setShippedTraces(traces);
        for (const kernels::HopperTrace& t : traces) {
            page->choose(t.configRow, t.causal);
            QApplication::processEvents();
            const QString name = QStringLiteral("%1/%2x%3-%4%5.png")
                                     .arg(folder)
                                     .arg(size.width())
                                     .arg(size.height())
                                     .arg(QString::fromStdString(t.kernel),
                                          t.causal ? QStringLiteral("-causal") : QString());
            QVERIFY(window->grab().save(name));
        }
        // Zoomed in on the fourth tile, a softmax bar under the pointer.
        page->choose(4, false);
        HopperView* view = page->view();
        view->zoomIn();
        view->zoomIn();
        view->zoomIn();
        for (std::size_t i = 0; i < view->content().timeline.bars.size(); ++i) {
            const HopperBar& bar = view->content().timeline.bars[i];
            if (bar.activity != HopperActivity::Softmax || bar.tile != 3 || bar.warpgroup != 1)
                continue;
            view->setTimeWindow({bar.startNs - 1500, bar.startNs + 2500});
            QTest::mouseMove(view, view->barRect(i).center().toPoint());
        }
        QApplication::processEvents();
        QVERIFY(window->grab().save(QStringLiteral("%1/%2x%3-zoomed.png")
                                        .arg(folder)
                                        .arg(size.width())
                                        .arg(size.height())));
        page->choose(0, true); // no trace of it: the row is built for the full mask
        QApplication::processEvents();
        QVERIFY(window->grab().save(
            QStringLiteral("%1/%2x%3-none.png").arg(folder).arg(size.width()).arg(size.height())));
    }
}

QTEST_MAIN(TestHopperPage)
#include "tst_hopper_page.moc"
