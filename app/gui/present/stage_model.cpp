#include "present/stage_model.h"

#include "style/format.h"
#include "style/heatmap.h"

#include "core/hardware.h"

#include <QCoreApplication>

#include <algorithm>

namespace flashviz::gui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("flashviz::gui::MemoryStageView", text);
}

QImage tileImage(const Matrix& m, Colouring colouring) {
    if (m.size() == 0) return {};
    return heatmapImage(m, colouring, std::max(finiteAbsMax(m), 1e-300), 256);
}

QImage columnImage(const Vector& v) {
    if (v.size() == 0) return {};
    Matrix m = v;
    return heatmapImage(m, Colouring::Diverging, std::max(finiteAbsMax(m), 1e-300), 256);
}

QRect rowPart(Range rows, int cols) {
    return {0, rows.begin, cols, rows.size()};
}

StageMatrix stageMatrix(const Scene& scene, const StepInfo& info, MatrixId id, QString name) {
    StageMatrix m{hbmMatrix(scene, info, id), hbmImage(scene, id), std::move(name), {}, {}, {}};
    m.shape = QStringLiteral("%1×%2").arg(m.hbm.rows).arg(m.hbm.cols);
    // A never-stored S stands for S and P: standard attention would store both.
    m.bytes = m.hbm.neverStored ? tr("0 B (std: %1)").arg(formatBytes(2 * m.hbm.bytes()))
                                : formatBytes(m.hbm.bytes());
    m.bytesShort = m.hbm.neverStored ? tr("0 B") : m.bytes; // the tooltip keeps standard's
    return m;
}

std::vector<StageMatrix> stageMatrices(const Scene& scene, const StepInfo& info) {
    std::vector<StageMatrix> out;
    for (MatrixId id : {MatrixId::Q, MatrixId::K, MatrixId::V})
        out.push_back(stageMatrix(scene, info, id,
                                  id == MatrixId::Q   ? QStringLiteral("Q")
                                  : id == MatrixId::K ? QStringLiteral("K")
                                                      : QStringLiteral("V")));
    if (scene.isFlash()) {
        out.push_back(stageMatrix(scene, info, MatrixId::O, QStringLiteral("O")));
        // The paper order keeps every row's m and ℓ in HBM between key blocks.
        if (scene.settings.options.loopOrder == LoopOrder::KeyValueOuter) {
            out.push_back(stageMatrix(scene, info, MatrixId::M, QStringLiteral("m")));
            out.push_back(stageMatrix(scene, info, MatrixId::L, QStringLiteral("ℓ")));
        }
        out.push_back(
            stageMatrix(scene, info, MatrixId::S,
                        scene.settings.options.keepFullScores ? tr("S (debug copy)") : tr("S, P")));
    } else {
        out.push_back(stageMatrix(scene, info, MatrixId::S, QStringLiteral("S")));
        out.push_back(stageMatrix(scene, info, MatrixId::P, QStringLiteral("P")));
        out.push_back(stageMatrix(scene, info, MatrixId::O, QStringLiteral("O")));
    }
    return out;
}

std::vector<Highlight> flashHighlights(const Scene& scene, const StepInfo& info) {
    const ProblemSpec& spec = scene.settings.spec;
    std::vector<Highlight> out;
    if (info.queryBlock >= 0) out.push_back({MatrixId::Q, rowPart(info.rows, spec.headDim)});
    if (info.keyBlock >= 0) {
        out.push_back({MatrixId::K, rowPart(info.cols, spec.headDim)});
        out.push_back({MatrixId::V, rowPart(info.cols, spec.headDim)});
    }
    if (info.queryBlock >= 0 &&
        (info.kind == StepKind::StoreOutput || info.kind == StepKind::LoadRunningState ||
         info.kind == StepKind::StoreRunningState))
        out.push_back({MatrixId::O, rowPart(info.rows, spec.headDim)});
    if (info.queryBlock >= 0 &&
        (info.kind == StepKind::LoadRunningState || info.kind == StepKind::StoreRunningState))
        for (const MatrixId id : {MatrixId::M, MatrixId::L})
            out.push_back({id, rowPart(info.rows, 1)});
    if (info.kind == StepKind::InitialiseOutput)
        for (const MatrixId id : {MatrixId::O, MatrixId::M, MatrixId::L})
            out.push_back({id, QRect(0, 0, id == MatrixId::O ? spec.headDim : 1, spec.queries)});
    if (scene.settings.options.keepFullScores && info.queryBlock >= 0 && info.keyBlock >= 0)
        out.push_back({MatrixId::S, QRect(info.cols.begin, info.rows.begin, info.cols.size(),
                                          info.rows.size())});
    return out;
}

// Standard attention touches whole matrices: the ones the step reads or writes.
std::vector<MatrixId> standardTouched(StepKind kind) {
    switch (kind) {
    case StepKind::ReadInputs:
        return {MatrixId::Q, MatrixId::K, MatrixId::V};
    case StepKind::WriteScores:
    case StepKind::ReadScores:
        return {MatrixId::S};
    case StepKind::WriteWeights:
        return {MatrixId::P};
    case StepKind::ReadWeights:
        return {MatrixId::P, MatrixId::V};
    case StepKind::WriteOutput:
        return {MatrixId::O};
    default:
        return {};
    }
}

std::vector<Highlight> highlights(const StageModel& model, const Scene& scene,
                                  const StepInfo& info) {
    if (model.flash) return flashHighlights(scene, info);
    std::vector<Highlight> out;
    for (MatrixId id : standardTouched(info.kind))
        out.push_back({id, model.matrix(id)->hbm.whole()});
    return out;
}

std::vector<ChipTile> chipTiles(const Scene& scene, const StepState& st) {
    const StepInfo& info = st.info;
    const ProblemSpec& spec = scene.settings.spec;
    const int d = spec.headDim;
    const int br = std::max(1, info.rows.size() > 0
                                   ? info.rows.size()
                                   : std::min(scene.settings.options.blockRows, spec.queries));
    const int bc =
        std::max(1, info.cols.size() > 0 ? info.cols.size()
                                         : std::min(scene.settings.options.blockCols, spec.keys));
    const StepKind k = info.kind;
    const Matrix& acc = st.output.size() ? st.output : st.accNew.size() ? st.accNew : st.accOld;
    return {
        {ChipSlot::Query, QStringLiteral("Q_i"), br, d, tileImage(st.query, Colouring::Diverging),
         st.query.size() > 0, false},
        {ChipSlot::Key, QStringLiteral("K_j"), bc, d, tileImage(st.key, Colouring::Diverging),
         st.key.size() > 0, false},
        {ChipSlot::Value, QStringLiteral("V_j"), bc, d, tileImage(st.value, Colouring::Diverging),
         st.value.size() > 0, false},
        {ChipSlot::Scores, QStringLiteral("S_ij"), br, bc,
         tileImage(st.scores, Colouring::Diverging), st.scores.size() > 0,
         k == StepKind::ComputeScores},
        {ChipSlot::Weights, QStringLiteral("P_ij"), br, bc,
         tileImage(st.weights, Colouring::Sequential), st.weights.size() > 0,
         k == StepKind::ComputeWeights},
        {ChipSlot::Max, QStringLiteral("m"), br, 1, columnImage(st.mNew.size() ? st.mNew : st.mOld),
         st.mOld.size() > 0 || st.mNew.size() > 0, k == StepKind::UpdateMax},
        {ChipSlot::Sum, QStringLiteral("ℓ"), br, 1, columnImage(st.lNew.size() ? st.lNew : st.lOld),
         st.lOld.size() > 0 || st.lNew.size() > 0, k == StepKind::UpdateSum},
        {ChipSlot::Accumulator,
         st.output.size() > 0 ? QStringLiteral("O_i = acc/ℓ") : QStringLiteral("acc"), br, d,
         tileImage(acc, Colouring::Diverging), st.accOld.size() > 0 || st.accNew.size() > 0,
         k == StepKind::UpdateOutput || k == StepKind::Normalise},
    };
}

std::vector<StageKernel> stageKernels(StepKind kind) {
    const std::optional<StandardKernel> active = standardKernelOf(kind);
    std::vector<StageKernel> out = {
        {StandardKernel::Scores, tr("kernel 1 · S = scale·QKᵀ"), false},
        {StandardKernel::Softmax, tr("kernel 2 · P = softmax(S)"), false},
        {StandardKernel::Output, tr("kernel 3 · O = PV"), false},
    };
    for (StageKernel& k : out)
        k.active = active == k.kernel;
    return out;
}

// FlashAttention moves blocks of rows between HBM and the chip.
std::vector<Flight> flashFlights(const StageModel& model, const Scene& scene,
                                 const StepInfo& info) {
    const HbmTraffic direction = hbmTrafficOf(info.kind);
    const int d = scene.settings.spec.headDim;
    auto block = [&](MatrixId id, Range rows, ChipSlot slot, QString label) {
        const QImage& image = hbmImage(scene, id);
        const HbmMatrix& m = model.matrix(id)->hbm;
        return Flight{direction,
                      id,
                      rowPart(rows, d),
                      slot,
                      image,
                      imageRegion(image, m.rows, m.cols, rowPart(rows, d)),
                      std::move(label)};
    };
    auto state = [&](QString label) {
        return Flight{direction,
                      MatrixId::O,
                      rowPart(info.rows, d),
                      ChipSlot::Accumulator,
                      model.tile(ChipSlot::Accumulator)->image,
                      {},
                      std::move(label)};
    };
    switch (info.kind) {
    case StepKind::LoadQuery:
        return {block(MatrixId::Q, info.rows, ChipSlot::Query, QStringLiteral("Q_i"))};
    case StepKind::LoadKeyValue:
        return {block(MatrixId::K, info.cols, ChipSlot::Key, QStringLiteral("K_j")),
                block(MatrixId::V, info.cols, ChipSlot::Value, QStringLiteral("V_j"))};
    case StepKind::LoadRunningState:
    case StepKind::StoreRunningState:
        return {state(QStringLiteral("O_i, m_i, ℓ_i"))};
    case StepKind::StoreOutput:
        return {state(QStringLiteral("O_i"))};
    case StepKind::InitialiseOutput:
        return {Flight{direction,
                       MatrixId::O,
                       model.matrix(MatrixId::O)->hbm.whole(),
                       ChipCentre{},
                       {},
                       {},
                       QStringLiteral("O = 0, m = −∞, ℓ = 0")}};
    default:
        return {};
    }
}

// Standard attention streams whole matrices between HBM and its kernels.
std::vector<Flight> standardFlights(const StageModel& model, const Scene& scene,
                                    const StepInfo& info) {
    const std::optional<StandardKernel> kernel = standardKernelOf(info.kind);
    const HbmTraffic direction = hbmTrafficOf(info.kind);
    std::vector<Flight> out;
    if (!kernel || direction == HbmTraffic::None) return out;
    for (MatrixId id : standardTouched(info.kind)) {
        const StageMatrix& m = *model.matrix(id);
        // S and P are written filling up in HBM, not as a token.
        if (direction == HbmTraffic::Write && id != MatrixId::O) continue;
        out.push_back({direction, id, m.hbm.whole(), *kernel, hbmImage(scene, id), {}, m.name});
    }
    return out;
}

BusTraffic busTraffic(const Counters& before, const Counters& now) {
    BusTraffic bus;
    bus.reading = now.hbmReadBytes > before.hbmReadBytes;
    bus.writing = now.hbmWriteBytes > before.hbmWriteBytes;
    bus.readLabel = tr("read");
    bus.writeLabel = tr("write");
    bus.readAmount =
        QStringLiteral("+%1").arg(formatBytes(double(now.hbmReadBytes - before.hbmReadBytes)));
    bus.writeAmount =
        QStringLiteral("+%1").arg(formatBytes(double(now.hbmWriteBytes - before.hbmWriteBytes)));
    return bus;
}

SramFill sramFill(const Scene& scene, const StepState& st) {
    SramFill fill;
    fill.usedBytes = double(st.sramElements) * double(kBytesPerElement);
    fill.budgetBytes = scene.hardware.sharedMemoryPerSmBytes.value;
    fill.fraction = fill.budgetBytes > 0 ? fill.usedBytes / fill.budgetBytes : 0;
    fill.over = fill.fraction > 1.0;
    if (!scene.isFlash())
        fill.text = tr("SRAM holds only the GEMMs' tiles; S and P live in HBM");
    else if (fill.over)
        fill.text = tr("%1 of %2 per SM: too big, the tile spills to HBM")
                        .arg(formatBytes(fill.usedBytes), formatBytes(fill.budgetBytes));
    else
        fill.text = tr("SRAM used %1 of %2 per SM (%3 %)")
                        .arg(formatBytes(fill.usedBytes), formatBytes(fill.budgetBytes))
                        .arg(fill.fraction * 100, 0, 'f', fill.fraction < 0.1 ? 2 : 1);
    return fill;
}

} // namespace

const StageMatrix* StageModel::matrix(MatrixId id) const {
    for (const StageMatrix& m : matrices)
        if (m.hbm.id == id) return &m;
    return nullptr;
}

const ChipTile* StageModel::tile(ChipSlot slot) const {
    for (const ChipTile& t : tiles)
        if (t.slot == slot) return &t;
    return nullptr;
}

bool StageModel::arriving(ChipSlot slot) const {
    return std::any_of(flights.begin(), flights.end(), [&](const Flight& f) {
        return f.direction == HbmTraffic::Read && f.chipEnd == ChipEnd(slot);
    });
}

// "1.2 FLOP/B so far, ridge 12.6": FLOPs per HBM byte of the run up to here, against the GPU's.
QString StageModel::intensityNote(double flops, double bytes) const {
    if (bytes <= 0) return tr("no HBM bytes yet; ridge %1 FLOP/B").arg(ridge, 0, 'g', 3);
    return tr("%1 FLOP/B so far, ridge %2").arg(flops / bytes, 0, 'g', 3).arg(ridge, 0, 'g', 3);
}

CounterReadout StageModel::counters(double progress) const {
    auto tick = [&](std::uint64_t a, std::uint64_t b) {
        return double(a) + (double(b) - double(a)) * progress;
    };
    const double read = tick(before.hbmReadBytes, now.hbmReadBytes);
    const double written = tick(before.hbmWriteBytes, now.hbmWriteBytes);
    const double flops = tick(before.flops, now.flops);
    CounterReadout out;
    out.read = {tr("HBM bytes read"), formatBytes(read),
                tr("of %1 in the whole run").arg(formatBytes(double(totals.hbmReadBytes))),
                bus.reading};
    out.written = {tr("HBM bytes written"), formatBytes(written),
                   tr("of %1 in the whole run").arg(formatBytes(double(totals.hbmWriteBytes))),
                   bus.writing};
    out.flops = {
        tr("FLOPs"), formatFlops(flops),
        // Short enough for its cell at 1280 px (it read "of 1.02 kFLOP (standard: 1.02 …").
        totals.flops == standardTotals.flops
            ? tr("of %1, as standard").arg(formatFlops(double(totals.flops)))
            : tr("of %1; standard %2")
                  .arg(formatFlops(double(totals.flops)), formatFlops(double(standardTotals.flops))),
        now.flops > before.flops};
    out.time = {tr("time at %1 / %2").arg(formatRate(hbmBandwidth), formatFlopRate(flopRate)),
                QStringLiteral("%1 / %2").arg(formatSeconds((read + written) / hbmBandwidth),
                                              formatSeconds(flops / flopRate)),
                // The run's arithmetic intensity so far against the ridge point: which of the two
                // times bounds it (standard attention's totals are in the strip's tooltip).
                intensityNote(flops, read + written), false};
    return out;
}

StageModel makeStageModel(const Frame& frame) {
    const Scene& scene = *frame.scene;
    const StepState& st = frame.state;
    const HardwareProfile& hw = scene.hardware;
    StageModel m;
    m.flash = scene.isFlash();
    m.hbmTitle = tr("HBM · off-chip memory");
    m.hbmSubtitle = tr("%1 · %2 to and from the chip · fp32, %3 B a value")
                        .arg(formatMemorySize(hw.hbmBytes.value),
                             formatRate(hw.hbmBandwidthBytesPerSecond.value))
                        .arg(kBytesPerElement);
    m.chipTitle = tr("SRAM · on the chip");
    m.chipSubtitle = tr("%1 per SM × %2 SMs · %3")
                         .arg(formatBytes(hw.sharedMemoryPerSmBytes.value))
                         .arg(int(hw.smCount.value))
                         .arg(formatRate(hw.sramBandwidthBytesPerSecond.value));
    m.matrices = stageMatrices(scene, st.info);
    m.highlights = highlights(m, scene, st.info);
    if (m.flash) {
        m.tiles = chipTiles(scene, st);
        m.flights = flashFlights(m, scene, st.info);
    } else {
        m.kernels = stageKernels(st.info.kind);
        m.kernelNote = tr("each kernel writes its whole result to HBM");
        m.flights = standardFlights(m, scene, st.info);
    }
    m.before = frame.before;
    m.now = st.counters;
    m.bus = busTraffic(m.before, m.now);
    m.sram = sramFill(scene, st);
    m.totals = scene.totals;
    m.standardTotals = scene.standardTotals;
    m.hbmBandwidth = hw.hbmBandwidthBytesPerSecond.value;
    m.flopRate = hw.fp32FlopsPerSecond.value;
    m.ridge = ridgeFlopsPerByte(hw, Arithmetic::Fp32CudaCores);
    return m;
}

} // namespace flashviz::gui
