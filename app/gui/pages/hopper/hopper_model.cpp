#include "pages/hopper/hopper_model.h"

#include "style/format.h"

#include "core/hardware.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

using kernels::HopperActivity;
using kernels::HopperConfig;
using kernels::HopperSpan;

namespace {

// HopperConfig::sharedBytes()'s terms past the tiles, drawn apart, and the register file.
constexpr double kRegistersPerSm = HopperConfig::kRegistersPerSm;
constexpr double kBarrierBytes = double(HopperConfig::kBarrierBytes);
constexpr double kAlignmentBytes = double(HopperConfig::kAlignmentBytes);

int threadsPerWarpgroup(const HopperConfig& c) {
    return c.threads() / (c.consumers + 1);
}

int rowsPerConsumer(const HopperConfig& c) {
    return c.blockRows() / c.consumers;
}

QString duration(double ns) {
    return formatNanoseconds(ns);
}

QString rowsText(int first, int last) {
    return QStringLiteral("%1–%2").arg(first).arg(last);
}

} // namespace

// ---- the variants ----

int defaultHopperRow(int headDim, bool causal) {
    kernels::HopperTraceRequest request;
    request.configRow = -1;
    request.headDim = headDim;
    request.causal = causal;
    return kernels::hopperTraceRow(request);
}

QString hopperScheduleName(const HopperConfig& c) {
    if (!c.overlap) return QObject::tr("no overlap");
    return c.pingPong ? QObject::tr("overlap, ping-pong") : QObject::tr("overlap");
}

std::vector<HopperVariant> hopperVariants(int headDim, bool causal) {
    std::vector<HopperVariant> out;
    const int chosen = defaultHopperRow(headDim, causal);
    for (int row = 0; row < kernels::kHopperConfigCount; ++row) {
        const HopperConfig& c = kernels::kHopperConfigs[row];
        if (c.headDim != headDim) continue;
        HopperVariant v;
        v.row = row;
        v.kernel = QString::fromStdString(kernels::hopperConfigName(c));
        v.isDefault = row == chosen;
        v.label = QObject::tr("BR %1 · Bc %2 · %3 consumers · %4 stages · %5")
                      .arg(c.blockRows())
                      .arg(c.blockCols)
                      .arg(c.consumers)
                      .arg(c.stages)
                      .arg(hopperScheduleName(c));
        out.push_back(v);
    }
    return out;
}

// ---- A: the block ----

namespace {

std::vector<HopperWarpgroupBox> warpgroupBoxes(const HopperConfig& c) {
    std::vector<HopperWarpgroupBox> boxes;
    HopperWarpgroupBox producer;
    producer.title = QObject::tr("Producer");
    producer.threads = threadsPerWarpgroup(c);
    producer.registers = c.producerRegisters();
    producer.role = QObject::tr("1 thread issues the TMA copies");
    boxes.push_back(producer);
    for (int i = 0; i < c.consumers; ++i) {
        HopperWarpgroupBox consumer;
        consumer.warpgroup = i + 1;
        consumer.title = QObject::tr("Consumer %1").arg(i + 1);
        consumer.threads = threadsPerWarpgroup(c);
        consumer.registers = c.consumerRegisters();
        consumer.firstRow = rowsPerConsumer(c) * i;
        consumer.lastRow = rowsPerConsumer(c) * (i + 1) - 1;
        consumer.role = QObject::tr("S, softmax, O += PV");
        boxes.push_back(consumer);
    }
    return boxes;
}

// Q, the K buffers, the V buffers, the mbarriers (Q; K and V full, K and V free per stage) and
// the alignment slack: HopperTile's layout (kernels/cuda/sm90/hopper_flash.cuh, SharedLayout).
std::vector<HopperSharedPart> sharedParts(const HopperConfig& c) {
    const double tile = double(c.blockCols) * c.headDim * 2;
    std::vector<HopperSharedPart> parts;
    parts.push_back(
        {HopperBuffer::Q, -1, double(c.blockRows()) * c.headDim * 2, QStringLiteral("Q")});
    for (int s = 0; s < c.stages; ++s)
        parts.push_back({HopperBuffer::K, s, tile, QStringLiteral("K%1").arg(s)});
    for (int s = 0; s < c.stages; ++s)
        parts.push_back({HopperBuffer::V, s, tile, QStringLiteral("V%1").arg(s)});
    parts.push_back(
        {HopperBuffer::Barriers, -1, kBarrierBytes * c.barriers(), QObject::tr("barriers")});
    parts.push_back({HopperBuffer::Alignment, -1, kAlignmentBytes, QObject::tr("alignment")});
    return parts;
}

QString sharedLineOf(const HopperBlockPicture& p) {
    const HopperConfig& c = p.config;
    return QObject::tr("Q %1 · K %2 × %3 · V %2 × %3 · barriers %4 · alignment %5: %6 of the %7 "
                       "a block may use")
        .arg(formatBytes(p.shared[0].bytes))
        .arg(c.stages)
        .arg(formatBytes(p.shared[1].bytes))
        .arg(formatBytes(kBarrierBytes * c.barriers()))
        .arg(formatBytes(kAlignmentBytes))
        .arg(formatBytes(p.sharedBytes))
        .arg(formatBytes(p.budgetBytes));
}

QString registersLineOf(const HopperConfig& c) {
    const int threads = threadsPerWarpgroup(c);
    const double used =
        threads * (c.producerRegisters() + double(c.consumers) * c.consumerRegisters());
    return QObject::tr("Registers: %1 × %2 for the producer + %3 × %1 × %4 for the consumers = "
                       "%5 of the SM's %6")
        .arg(threads)
        .arg(c.producerRegisters())
        .arg(c.consumers)
        .arg(c.consumerRegisters())
        .arg(formatCount(std::uint64_t(used)))
        .arg(formatCount(std::uint64_t(kRegistersPerSm)));
}

QString scheduleOf(const HopperConfig& c) {
    if (!c.overlap)
        return c.consumers == 1
                   ? QObject::tr(
                         "No overlap: the consumer computes S_j = Q·K_jᵀ, its softmax, then "
                         "O += P_j·V_j, in turn; the tensor cores idle during each softmax.")
                   : QObject::tr(
                         "No overlap: each consumer computes S_j = Q·K_jᵀ, its softmax, "
                         "then O += P_j·V_j, in turn; the tensor cores idle during a "
                         "softmax unless another consumer's products happen to fill the gap.");
    if (!c.pingPong)
        return QObject::tr("Overlap: each consumer issues S_j+1 = Q·K_j+1ᵀ beside O += P_j·V_j and "
                           "runs the softmax of S_j+1 while P_j·V_j is still on the tensor cores; "
                           "its %1 consumers take the tensor cores whenever they are ready.")
            .arg(c.consumers);
    return QObject::tr("Overlap and ping-pong: each consumer issues S_j+1 beside O += P_j·V_j and "
                       "runs its softmax under them, and the two consumers take turns at the "
                       "tensor cores, so one's softmax runs while the other's products keep them "
                       "busy.");
}

QString pipelineOf(const HopperConfig& c) {
    return QObject::tr("The producer keeps up to %1 K and %1 V tiles in flight: K_j and V_j go to "
                       "buffer j mod %1, refilled once every consumer has handed it back (K after "
                       "S_j, V after P_j·V_j).")
        .arg(c.stages);
}

} // namespace

HopperBlockPicture hopperBlockPicture(int row) {
    HopperBlockPicture p;
    p.row = std::clamp(row, 0, kernels::kHopperConfigCount - 1);
    p.config = kernels::kHopperConfigs[p.row];
    p.kernel = QString::fromStdString(kernels::hopperConfigName(p.config));
    p.warpgroups = warpgroupBoxes(p.config);
    p.shared = sharedParts(p.config);
    p.sharedBytes = double(p.config.sharedBytes());
    p.budgetBytes = findHardwareProfile("h100-sxm").sharedMemoryPerBlockBytes.value;
    p.sharedLine = sharedLineOf(p);
    p.registersLine = registersLineOf(p.config);
    p.schedule = scheduleOf(p.config);
    p.pipeline = pipelineOf(p.config);
    return p;
}

// ---- B: the timeline ----

namespace {

constexpr double kCopyWeight = 0.55;
constexpr double kThreadWeight = 0.8;

void addLane(HopperTimeline& t, int warpgroup, const QString& title, const QString& subtitle,
             const std::vector<HopperTrack>& tracks) {
    t.lanes.push_back({warpgroup, title, subtitle, int(t.tracks.size()), int(tracks.size())});
    t.tracks.insert(t.tracks.end(), tracks.begin(), tracks.end());
}

// The producer: Q, the K buffers, the V buffers (a track each: K_j and V_j land in buffer
// j mod stages) and its thread's waits; each consumer: its products S_j and P_j·V_j (in flight
// at once under overlap) and its threads (the softmax, the store and the waits, one at a time).
void addLanes(HopperTimeline& t, const HopperConfig& c) {
    const QString buffers =
        c.stages > 1 ? QStringLiteral(" 0–%1").arg(c.stages - 1) : QStringLiteral(" 0");
    std::vector<HopperTrack> producer;
    producer.push_back({0, HopperTrackKind::Copies, -1, QObject::tr("Q"), kCopyWeight});
    for (int s = 0; s < c.stages; ++s)
        producer.push_back(
            {0, HopperTrackKind::Copies, s, QObject::tr("K buffers") + buffers, kCopyWeight});
    for (int s = 0; s < c.stages; ++s)
        producer.push_back(
            {0, HopperTrackKind::Copies, s, QObject::tr("V buffers") + buffers, kCopyWeight});
    producer.push_back(
        {0, HopperTrackKind::ProducerThread, -1, QObject::tr("waits"), kThreadWeight});
    addLane(t, 0, QObject::tr("Producer"), QObject::tr("copies in flight"), producer);
    for (int i = 1; i <= c.consumers; ++i)
        addLane(t, i, QObject::tr("Consumer %1").arg(i),
                QObject::tr("rows %1").arg(
                    rowsText(rowsPerConsumer(c) * (i - 1), rowsPerConsumer(c) * i - 1)),
                {{i, HopperTrackKind::Scores, -1, QObject::tr("S = Q·Kᵀ"), 1},
                 {i, HopperTrackKind::Values, -1, QObject::tr("O += P·V"), 1},
                 {i, HopperTrackKind::ConsumerThread, -1, QObject::tr("softmax, waits"), 1}});
}

HopperTrackKind kindOf(const HopperSpan& s) {
    switch (s.activity) {
    case HopperActivity::LoadQ:
    case HopperActivity::LoadK:
    case HopperActivity::LoadV:
        return HopperTrackKind::Copies;
    case HopperActivity::Scores:
        return HopperTrackKind::Scores;
    case HopperActivity::Values:
        return HopperTrackKind::Values;
    default:
        return s.warpgroup == 0 ? HopperTrackKind::ProducerThread : HopperTrackKind::ConsumerThread;
    }
}

// The track a span is drawn on: the producer's Q, K buffers, V buffers and thread, a consumer's
// S, P·V and threads (addLanes' order); -1 for a span no track of its warpgroup holds.
int trackOf(const HopperTimeline& t, const HopperSpan& s, int stages) {
    for (const HopperLane& lane : t.lanes) {
        if (lane.warpgroup != s.warpgroup) continue;
        const int buffer = std::max(s.tile, 0) % stages;
        int offset = lane.trackCount - 1; // the thread's
        switch (s.activity) {
        case HopperActivity::LoadQ:
            offset = 0;
            break;
        case HopperActivity::LoadK:
            offset = 1 + buffer;
            break;
        case HopperActivity::LoadV:
            offset = 1 + stages + buffer;
            break;
        case HopperActivity::Scores:
            offset = 0;
            break;
        case HopperActivity::Values:
            offset = 1;
            break;
        default:
            break;
        }
        const int track = lane.firstTrack + offset;
        if (offset < lane.trackCount && t.tracks[std::size_t(track)].kind == kindOf(s))
            return track;
    }
    return -1;
}

QStringList labelsOf(const HopperSpan& s) {
    const QString j = QString::number(s.tile);
    switch (s.activity) {
    case HopperActivity::LoadQ:
        return {QStringLiteral("Q")};
    case HopperActivity::LoadK:
        return {QStringLiteral("K") + j};
    case HopperActivity::LoadV:
        return {QStringLiteral("V") + j};
    case HopperActivity::Scores:
        return {QStringLiteral("S") + j};
    case HopperActivity::Values:
        return {QStringLiteral("PV") + j, j};
    case HopperActivity::Softmax:
        return {QObject::tr("softmax %1").arg(j), QStringLiteral("sm") + j, j};
    case HopperActivity::StoreO:
        return {QObject::tr("store O"), QStringLiteral("O")};
    default:
        return {};
    }
}

} // namespace

HopperTimeline hopperTimeline(const kernels::HopperBlockTrace& block, const HopperConfig& config) {
    HopperTimeline t;
    addLanes(t, config);
    t.originNs = block.startNs();
    t.durationNs = block.endNs() - t.originNs;
    for (std::size_t i = 0; i < block.spans.size(); ++i) {
        const HopperSpan& s = block.spans[i];
        const int track = trackOf(t, s, std::max(config.stages, 1));
        if (track < 0) continue;
        t.tiles = std::max(t.tiles, s.tile + 1);
        t.bars.push_back({track, i, s.activity, s.warpgroup, s.tile, s.startNs - t.originNs,
                          s.endNs - t.originNs, labelsOf(s)});
    }
    std::stable_sort(t.bars.begin(), t.bars.end(), [](const HopperBar& a, const HopperBar& b) {
        return std::pair(a.track, a.startNs) < std::pair(b.track, b.startNs);
    });
    return t;
}

QString hopperActivityName(HopperActivity activity) {
    switch (activity) {
    case HopperActivity::LoadQ:
        return QObject::tr("Q copy");
    case HopperActivity::LoadK:
        return QObject::tr("K copy");
    case HopperActivity::LoadV:
        return QObject::tr("V copy");
    case HopperActivity::WaitForBuffer:
        return QObject::tr("wait: buffer");
    case HopperActivity::WaitForData:
        return QObject::tr("wait: data");
    case HopperActivity::WaitForTurn:
        return QObject::tr("wait: turn");
    case HopperActivity::Scores:
        return QObject::tr("S = Q·Kᵀ");
    case HopperActivity::Values:
        return QObject::tr("O += P·V");
    case HopperActivity::WaitForValues:
        return QObject::tr("wait: P·V");
    case HopperActivity::Softmax:
        return QObject::tr("softmax");
    case HopperActivity::StoreO:
        return QObject::tr("store O");
    case HopperActivity::Count:
        break;
    }
    return {};
}

QString hopperBarToolTip(const HopperBar& bar, const HopperTimeline& t) {
    QString who;
    for (const HopperLane& lane : t.lanes)
        if (lane.warpgroup == bar.warpgroup) who = lane.title;
    if (bar.tile >= 0) who += QObject::tr(", key tile %1").arg(bar.tile);
    return QObject::tr("%1\n%2\nfrom %3 to %4: %5")
        .arg(QString::fromUtf8(kernels::describe(bar.activity)), who, duration(bar.startNs),
             duration(bar.endNs), duration(bar.endNs - bar.startNs));
}

HopperTimeWindow hopperWholeBlock(const HopperTimeline& t) {
    return {0, std::max(t.durationNs, 1.0)};
}

double hopperMinimumSpanNs(const HopperTimeline& t) {
    return std::min(20.0, hopperWholeBlock(t).spanNs());
}

HopperTimeWindow hopperPanned(const HopperTimeWindow& w, double deltaNs, const HopperTimeline& t) {
    const HopperTimeWindow whole = hopperWholeBlock(t);
    const double span = std::min(w.spanNs(), whole.spanNs());
    const double start = std::clamp(w.startNs + deltaNs, whole.startNs, whole.endNs - span);
    return {start, start + span};
}

HopperTimeWindow hopperZoomed(const HopperTimeWindow& w, double factor, double aroundNs,
                              const HopperTimeline& t) {
    if (!(factor > 0) || !std::isfinite(factor)) return w;
    const HopperTimeWindow whole = hopperWholeBlock(t);
    const double span = std::clamp(w.spanNs() / factor, hopperMinimumSpanNs(t), whole.spanNs());
    const double at = std::clamp(aroundNs, w.startNs, w.endNs);
    const double share = w.spanNs() > 0 ? (at - w.startNs) / w.spanNs() : 0.5;
    const double start = at - share * span;
    return hopperPanned({start, start + span}, 0, t);
}

std::vector<QRectF> hopperTrackRects(const HopperTimeline& t, const QRectF& area, qreal laneGap) {
    double weights = 0;
    for (const HopperTrack& track : t.tracks)
        weights += track.weight;
    const qreal gaps = laneGap * qreal(std::max<std::size_t>(t.lanes.size(), 1) - 1);
    const qreal unit = weights > 0 ? std::max<qreal>(0, area.height() - gaps) / weights : 0;
    std::vector<QRectF> rects(t.tracks.size());
    qreal y = area.top();
    for (const HopperLane& lane : t.lanes) {
        for (int i = lane.firstTrack; i < lane.firstTrack + lane.trackCount; ++i) {
            const qreal h = unit * t.tracks[std::size_t(i)].weight;
            rects[std::size_t(i)] = QRectF(area.left(), y, area.width(), h);
            y += h;
        }
        y += laneGap;
    }
    return rects;
}

qreal hopperX(double ns, const HopperTimeWindow& w, const QRectF& chart) {
    return chart.left() + chart.width() * (ns - w.startNs) / std::max(w.spanNs(), 1e-9);
}

double hopperNsAt(qreal x, const HopperTimeWindow& w, const QRectF& chart) {
    return w.startNs + w.spanNs() * (x - chart.left()) / std::max<qreal>(chart.width(), 1e-9);
}

QRectF hopperBarRect(const HopperBar& bar, const QRectF& track, const HopperTimeWindow& w,
                     const QRectF& chart) {
    if (bar.endNs < w.startNs || bar.startNs > w.endNs) return {};
    const qreal left = std::max(chart.left(), hopperX(bar.startNs, w, chart));
    const qreal right = std::min(chart.right(), hopperX(bar.endNs, w, chart));
    const qreal inset = track.height() * 0.12;
    return QRectF(left, track.top() + inset, std::max<qreal>(1, right - left),
                  track.height() - 2 * inset);
}

std::vector<double> hopperTicks(const HopperTimeWindow& w, int maxTicks) {
    std::vector<double> ticks;
    if (maxTicks < 1 || !(w.spanNs() > 0)) return ticks;
    const double rough = w.spanNs() / maxTicks;
    const double decade = std::pow(10.0, std::floor(std::log10(rough)));
    double step = decade;
    for (const double m : {1.0, 2.0, 5.0, 10.0})
        if (decade * m >= rough) {
            step = decade * m;
            break;
        }
    for (double x = std::ceil(w.startNs / step) * step; x <= w.endNs + step * 1e-9; x += step)
        ticks.push_back(std::abs(x) < step * 1e-9 ? 0 : x);
    return ticks;
}

// ---- C: the findings ----

namespace {

QString orDash(double ns, bool applies) {
    return applies ? duration(ns) : QStringLiteral("–");
}

std::vector<HopperWarpgroupRow> warpgroupRows(const kernels::HopperBlockSummary& s) {
    std::vector<HopperWarpgroupRow> rows;
    for (std::size_t wg = 0; wg < s.warpgroups.size(); ++wg) {
        const kernels::HopperWarpgroupTotals& w = s.warpgroups[wg];
        const bool producer = wg == 0;
        rows.push_back({producer ? QObject::tr("Producer") : QObject::tr("Consumer %1").arg(wg),
                        orDash(w.copyNs, producer), orDash(w.outstandingNs, !producer),
                        orDash(w.cudaCoresNs, !producer), duration(w.waitingNs)});
    }
    return rows;
}

QString blockLineOf(const kernels::HopperTrace& trace, int index, int tiles) {
    const kernels::HopperBlockTrace& b = trace.blocks[std::size_t(index)];
    const QString where = b.sm >= 0 ? QObject::tr(", on SM %1").arg(b.sm) : QString();
    const QString longest =
        index == kernels::longestBlock(trace) ? QObject::tr(" (the longest)") : QString();
    return QObject::tr(
               "Block %1 of %2%3: query block %4 (rows %5), head %6, batch %7%8; %9 key tiles")
        .arg(index + 1)
        .arg(trace.blocks.size())
        .arg(longest)
        .arg(b.queryBlock)
        .arg(rowsText(b.queryBlock * trace.config().blockRows(),
                      std::min((b.queryBlock + 1) * trace.config().blockRows(), trace.queries) - 1))
        .arg(b.head)
        .arg(b.batch)
        .arg(where)
        .arg(tiles);
}

QString recordedLineOf(const kernels::HopperTrace& t) {
    // One call: a device name holding "%4" must not take a later argument.
    return QObject::tr("Recorded on %1 on %2: %3, batch %4 × %5 heads, n_q = %6, n_k = %7, d = %8, "
                       "%9; %10 blocks")
        .arg(QString::fromStdString(t.device).left(120),
             QString::fromStdString(t.recorded).left(40), QString::fromStdString(t.element),
             QString::number(t.batch), QString::number(t.heads), QString::number(t.queries),
             QString::number(t.keys), QString::number(t.headDim),
             t.causal ? QObject::tr("causal") : QObject::tr("no mask"),
             QString::number(t.blocks.size()));
}

QString timingLineOf(const kernels::HopperTrace& t) {
    QString cost;
    if (t.plainKernelNs > 0 && t.tracedKernelNs > 0)
        cost = t.tracedKernelNs >= t.plainKernelNs
                   ? QObject::tr(" (the marks cost %1)")
                         .arg(formatShare(t.tracedKernelNs / t.plainKernelNs - 1))
                   : QObject::tr(" (no cost measurable)");
    const QString clock =
        t.nsPerCycle > 0 ? QObject::tr("; SM clock %1").arg(formatFrequency(1e9 / t.nsPerCycle))
                         : QString();
    return QObject::tr("Kernel %1 plain, %2 traced%3; %globaltimer steps by %4%5")
        .arg(duration(t.plainKernelNs), duration(t.tracedKernelNs), cost, duration(t.timerStepNs),
             clock);
}

} // namespace

HopperFindings hopperFindings(const kernels::HopperTrace& trace, int block) {
    HopperFindings f;
    if (trace.blocks.empty()) return f;
    const int index = std::clamp(block, 0, int(trace.blocks.size()) - 1);
    const kernels::HopperBlockTrace& b = trace.blocks[std::size_t(index)];
    f.summary = kernels::summarize(b, trace.config().consumers + 1);
    const HopperTimeline timeline = hopperTimeline(b, trace.config());
    f.blockLine = blockLineOf(trace, index, timeline.tiles);
    f.headline =
        QObject::tr("The block ran %1. A product was outstanding (issued, not yet waited for) "
                    "%2 of it, and %3 of the softmax ran beside one; the tensor cores worked "
                    "between %4 and %2 of it.")
            .arg(duration(f.summary.durationNs), formatShare(f.summary.outstandingFraction()),
                 formatShare(f.summary.softmaxBesideProductsFraction()),
                 formatShare(f.summary.tensorWorkFraction()));
    f.rows = warpgroupRows(f.summary);
    f.recordedLine = recordedLineOf(trace);
    f.timingLine = timingLineOf(trace);
    f.note =
        QObject::tr("A product's bar runs from its issue to the wait that retired it, a copy's "
                    "from its issue until a consumer found it arrived: upper bounds on the work. "
                    "The lower figure counts every product at the shortest time one of its kind "
                    "took when waited for at once (S %1, P·V %2).")
            .arg(duration(f.summary.scoresOwnNs), duration(f.summary.valuesOwnNs));
    return f;
}

// ---- which trace ----

HopperTraceChoice chooseHopperTrace(const std::vector<kernels::HopperTrace>& own,
                                    const std::vector<kernels::HopperTrace>& shipped, int row,
                                    bool causal) {
    for (const kernels::HopperTrace& t : own)
        if (t.configRow == row && t.causal == causal && !t.blocks.empty()) return {&t, true};
    for (const kernels::HopperTrace& t : shipped)
        if (t.configRow == row && t.causal == causal && !t.blocks.empty()) return {&t, false};
    return {};
}

QString hopperRecordCommand(int row, bool causal) {
    const kernels::HopperConfig& c =
        kernels::kHopperConfigs[std::clamp(row, 0, kernels::kHopperConfigCount - 1)];
    return QStringLiteral("flashviz-cli hopper-trace --variant %1 --d %2%3 --out trace.json")
        .arg(QString::fromStdString(kernels::hopperConfigName(c)))
        .arg(c.headDim)
        .arg(causal ? QStringLiteral(" --causal") : QString());
}

QString hopperNoTraceText(int row, bool causal, bool canRecord, const QString& whyNot) {
    const QString kernel = QString::fromStdString(kernels::hopperConfigName(
        kernels::kHopperConfigs[std::clamp(row, 0, kernels::kHopperConfigCount - 1)]));
    const QString what =
        QObject::tr("No trace of %1 %2 is available: FlashViz ships none, and none "
                    "was recorded or opened here.")
            .arg(kernel,
                 causal ? QObject::tr("with the causal mask") : QObject::tr("without a mask"));
    // The command on a line of its own, so that it is read (and copied) whole.
    const QString how =
        canRecord
            ? QObject::tr("Record on this GPU records one.")
            : QObject::tr("Recording needs an H100 or H200 (here, %1). On a machine with one,\n%2\n"
                          "records it, and Open trace… shows the file here.")
                  .arg(whyNot, hopperRecordCommand(row, causal));
    return what + QLatin1Char(' ') + how;
}

} // namespace flashviz::gui
