#include "present/stage_model.h"

#include "style/format.h"
#include "style/heatmap.h"

#include "core/hardware.h"
#include "core/units.h"

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

// The gradients on the scene's colour scale, so that an accumulator is seen to grow.
QImage gradientImage(const Matrix& m, double scale) {
    if (m.size() == 0) return {};
    return heatmapImage(m, Colouring::Diverging, std::max(scale, 1e-300), 256);
}

QImage columnImage(const Vector& v) {
    if (v.size() == 0) return {};
    Matrix m = v;
    return heatmapImage(m, Colouring::Diverging, std::max(finiteAbsMax(m), 1e-300), 256);
}

Flight makeFlight(HbmTraffic direction, MatrixId matrix, const QRect& hbmPart, ChipEnd chipEnd,
                  QImage image, QRectF imageSource, QString label) {
    Flight f;
    f.direction = direction;
    f.matrix = matrix;
    f.hbmPart = hbmPart;
    f.chipEnd = chipEnd;
    f.image = std::move(image);
    f.imageSource = imageSource;
    f.label = std::move(label);
    return f;
}

QRect rowPart(Range rows, int cols) {
    return {0, rows.begin, cols, rows.size()};
}

// What a never-stored S costs elsewhere: standard attention stores S and P; the backward's
// trade stores P from the forward.
QString neverStoredBytes(const Scene& scene, const HbmMatrix& m) {
    if (!scene.isBackward()) return tr("0 B (std: %1)").arg(formatBytes(2 * m.bytes()));
    if (!scene.settings.options.backward.storeWeights)
        return tr("0 B (stored P: %1)").arg(formatBytes(m.bytes()));
    return tr("0 B");
}

StageMatrix stageMatrix(const Scene& scene, const StepInfo& info, MatrixId id, QString name,
                        int tier = 0) {
    StageMatrix m{
        hbmMatrix(scene, info, id), hbmImage(scene, id), std::move(name), {}, {}, {}, tier};
    m.shape = QStringLiteral("%1×%2").arg(m.hbm.rows).arg(m.hbm.cols);
    m.bytes = m.hbm.neverStored ? neverStoredBytes(scene, m.hbm) : formatBytes(m.hbm.bytes());
    m.bytesShort = m.hbm.neverStored ? tr("0 B") : m.bytes; // the tooltip keeps the comparison
    return m;
}

// The backward reads the top row (the inputs, what the forward saved, dO) and writes the
// bottom one (D, the gradients); S and P are recomputed, never stored, unless the forward
// stored P.
std::vector<StageMatrix> backwardMatrices(const Scene& scene, const StepInfo& info) {
    const bool storedWeights = scene.settings.options.backward.storeWeights;
    std::vector<StageMatrix> out;
    const auto add = [&](MatrixId id, QString name, int tier) {
        out.push_back(stageMatrix(scene, info, id, std::move(name), tier));
    };
    add(MatrixId::Q, QStringLiteral("Q"), 0);
    add(MatrixId::K, QStringLiteral("K"), 0);
    add(MatrixId::V, QStringLiteral("V"), 0);
    add(MatrixId::O, QStringLiteral("O"), 0);
    add(MatrixId::LogSumExp, QStringLiteral("L"), 0);
    if (storedWeights) add(MatrixId::P, tr("P (forward)"), 0);
    add(MatrixId::dO, QStringLiteral("dO"), 0);
    add(MatrixId::RowDot, QStringLiteral("D"), 1);
    add(MatrixId::dQ, QStringLiteral("dQ"), 1);
    add(MatrixId::dK, QStringLiteral("dK"), 1);
    add(MatrixId::dV, QStringLiteral("dV"), 1);
    add(MatrixId::S, storedWeights ? QStringLiteral("S") : tr("S, P"), 1);
    return out;
}

std::vector<StageMatrix> stageMatrices(const Scene& scene, const StepInfo& info) {
    if (scene.isBackward()) return backwardMatrices(scene, info);
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

// The backward: the key block's K_j, V_j and the query block's Q_i, dO_i, L_i, D_i while they
// are on chip; dQ_i as it is updated, dK_j, dV_j as they are stored, P_ij as it is read.
std::vector<Highlight> backwardHighlights(const Scene& scene, const StepInfo& info) {
    const ProblemSpec& spec = scene.settings.spec;
    const int d = spec.headDim;
    std::vector<Highlight> out;
    const auto all = [&](MatrixId id, int cols) {
        out.push_back({id, QRect(0, 0, cols, spec.queries)});
    };
    if (info.kind == StepKind::ComputeRowDots) {
        all(MatrixId::O, d);
        all(MatrixId::dO, d);
        all(MatrixId::RowDot, 1);
        return out;
    }
    if (info.kind == StepKind::InitialiseQueryGradient) {
        all(MatrixId::dQ, d);
        return out;
    }
    if (info.keyBlock >= 0)
        for (const MatrixId id : {MatrixId::K, MatrixId::V})
            out.push_back({id, rowPart(info.cols, d)});
    if (info.queryBlock >= 0) {
        out.push_back({MatrixId::Q, rowPart(info.rows, d)});
        out.push_back({MatrixId::dO, rowPart(info.rows, d)});
        if (!scene.settings.options.backward.storeWeights)
            out.push_back({MatrixId::LogSumExp, rowPart(info.rows, 1)});
        out.push_back({MatrixId::RowDot, rowPart(info.rows, 1)});
    }
    if (info.kind == StepKind::UpdateQueryGradient)
        out.push_back({MatrixId::dQ, rowPart(info.rows, d)});
    if (info.kind == StepKind::StoreKeyValueGradient)
        for (const MatrixId id : {MatrixId::dK, MatrixId::dV})
            out.push_back({id, rowPart(info.cols, d)});
    if (info.kind == StepKind::ReadStoredWeights)
        out.push_back({MatrixId::P, QRect(info.cols.begin, info.rows.begin, info.cols.size(),
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
    if (model.backward) return backwardHighlights(scene, info);
    if (model.tiled) return flashHighlights(scene, info);
    std::vector<Highlight> out;
    for (MatrixId id : standardTouched(info.kind))
        out.push_back({id, model.matrix(id)->hbm.whole()});
    return out;
}

// A tile's rows and columns: its block's at this step, or where the step has no such block (a
// step over every row: the backward's pre-pass) a whole block's.
int tileRows(const Scene& scene, const StepInfo& info) {
    const ProblemSpec& spec = scene.settings.spec;
    return std::max(1, info.queryBlock >= 0
                           ? info.rows.size()
                           : std::min(scene.settings.options.blockRows, spec.queries));
}

int tileCols(const Scene& scene, const StepInfo& info) {
    const ProblemSpec& spec = scene.settings.spec;
    return std::max(1, info.keyBlock >= 0 ? info.cols.size()
                                          : std::min(scene.settings.options.blockCols, spec.keys));
}

std::vector<ChipTile> chipTiles(const Scene& scene, const StepState& st) {
    const StepInfo& info = st.info;
    const int d = scene.settings.spec.headDim;
    const int br = tileRows(scene, info), bc = tileCols(scene, info);
    const StepKind k = info.kind;
    const Matrix& acc = st.output.size() ? st.output : st.accNew.size() ? st.accNew : st.accOld;
    // What is loaded (Q_i, K_j, V_j) on top, what is computed below.
    constexpr int loaded = 0, computed = 1;
    return {
        {ChipSlot::Query, QStringLiteral("Q_i"), br, d, tileImage(st.query, Colouring::Diverging),
         st.query.size() > 0, false, loaded},
        {ChipSlot::Key, QStringLiteral("K_j"), bc, d, tileImage(st.key, Colouring::Diverging),
         st.key.size() > 0, false, loaded},
        {ChipSlot::Value, QStringLiteral("V_j"), bc, d, tileImage(st.value, Colouring::Diverging),
         st.value.size() > 0, false, loaded},
        {ChipSlot::Scores, QStringLiteral("S_ij"), br, bc,
         tileImage(st.scores, Colouring::Diverging), st.scores.size() > 0,
         k == StepKind::ComputeScores, computed},
        {ChipSlot::Weights, QStringLiteral("P_ij"), br, bc,
         tileImage(st.weights, Colouring::Sequential), st.weights.size() > 0,
         k == StepKind::ComputeWeights, computed},
        {ChipSlot::Max, QStringLiteral("m"), br, 1, columnImage(st.mNew.size() ? st.mNew : st.mOld),
         st.mOld.size() > 0 || st.mNew.size() > 0, k == StepKind::UpdateMax, computed},
        {ChipSlot::Sum, QStringLiteral("ℓ"), br, 1, columnImage(st.lNew.size() ? st.lNew : st.lOld),
         st.lOld.size() > 0 || st.lNew.size() > 0, k == StepKind::UpdateSum, computed},
        {ChipSlot::Accumulator,
         st.output.size() > 0 ? QStringLiteral("O_i = acc/ℓ") : QStringLiteral("acc"), br, d,
         tileImage(acc, Colouring::Diverging), st.accOld.size() > 0 || st.accNew.size() > 0,
         k == StepKind::UpdateOutput || k == StepKind::Normalise, computed},
    };
}

const Matrix& latest(const Matrix& after, const Matrix& before) {
    return after.size() > 0 ? after : before;
}

// The backward's tiles, in three rows: the key block's (resident through the key block), the
// query block's, the tiles computed from them. S_ij and P_ij share one buffer (P is computed in
// S's place), as do dP_ij and dS_ij: each slot shows what it holds now.
std::vector<ChipTile> backwardTiles(const Scene& scene, const StepState& st) {
    const StepInfo& info = st.info;
    const BackwardScene& bw = *scene.backward;
    const int d = scene.settings.spec.headDim;
    const int br = tileRows(scene, info), bc = tileCols(scene, info);
    const StepKind k = info.kind;
    constexpr int keyBlock = 0, queryBlock = 1, computed = 2;
    // The pre-pass's state holds every row of dO and D, not a block's.
    const bool inQueryBlock = info.queryBlock >= 0;
    const bool zeroed = k == StepKind::LoadKeyValue; // dK_j = dV_j = 0 on chip
    const Matrix& dK = latest(st.dKNew, st.dKOld);
    const Matrix& dV = latest(st.dVNew, st.dVOld);
    std::vector<ChipTile> tiles = {
        {ChipSlot::Key, QStringLiteral("K_j"), bc, d, tileImage(st.key, Colouring::Diverging),
         st.key.size() > 0, false, keyBlock},
        {ChipSlot::Value, QStringLiteral("V_j"), bc, d, tileImage(st.value, Colouring::Diverging),
         st.value.size() > 0, false, keyBlock},
        {ChipSlot::KeyGradient, QStringLiteral("dK_j"), bc, d, gradientImage(dK, bw.dkScale),
         dK.size() > 0, zeroed || k == StepKind::UpdateKeyGradient, keyBlock},
        {ChipSlot::ValueGradient, QStringLiteral("dV_j"), bc, d, gradientImage(dV, bw.dvScale),
         dV.size() > 0, zeroed || k == StepKind::UpdateValueGradient, keyBlock},
        {ChipSlot::Query, QStringLiteral("Q_i"), br, d, tileImage(st.query, Colouring::Diverging),
         inQueryBlock, false, queryBlock},
        {ChipSlot::OutputGradient, QStringLiteral("dO_i"), br, d,
         inQueryBlock ? gradientImage(st.dO, bw.dOScale) : QImage(), inQueryBlock, false,
         queryBlock},
    };
    // With P stored the backward never needs L: it reads P instead of recomputing it.
    if (!scene.settings.options.backward.storeWeights)
        tiles.push_back({ChipSlot::LogSumExp, QStringLiteral("L_i"), br, 1,
                         inQueryBlock ? columnImage(st.lse) : QImage(), inQueryBlock, false,
                         queryBlock});
    tiles.push_back({ChipSlot::RowDot, QStringLiteral("D_i"), br, 1,
                     inQueryBlock ? columnImage(st.delta) : QImage(), inQueryBlock, false,
                     queryBlock});
    // dQ_i lives in HBM: on chip only while it is read, added to and written back.
    const bool updatingQuery = k == StepKind::UpdateQueryGradient;
    tiles.push_back({ChipSlot::QueryGradient, QStringLiteral("dQ_i"), br, d,
                     updatingQuery ? gradientImage(st.dQNew, bw.dqScale) : QImage(), updatingQuery,
                     updatingQuery, queryBlock});
    const bool weights = st.weights.size() > 0;
    tiles.push_back({weights ? ChipSlot::Weights : ChipSlot::Scores,
                     weights ? QStringLiteral("P_ij") : QStringLiteral("S_ij"), br, bc,
                     weights ? tileImage(st.weights, Colouring::Sequential)
                             : tileImage(st.scores, Colouring::Diverging),
                     weights || st.scores.size() > 0,
                     k == StepKind::RecomputeScores || k == StepKind::RecomputeWeights, computed});
    const bool scoreGradient = st.dS.size() > 0;
    tiles.push_back(
        {scoreGradient ? ChipSlot::ScoreGradient : ChipSlot::WeightGradient,
         scoreGradient ? QStringLiteral("dS_ij") : QStringLiteral("dP_ij"), br, bc,
         tileImage(scoreGradient ? st.dS : st.dP, Colouring::Diverging), st.dP.size() > 0,
         k == StepKind::ComputeWeightGradient || k == StepKind::ComputeScoreGradient, computed});
    return tiles;
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
        return makeFlight(direction, id, rowPart(rows, d), slot, image,
                          imageRegion(image, m.rows, m.cols, rowPart(rows, d)), std::move(label));
    };
    auto state = [&](QString label) {
        return makeFlight(direction, MatrixId::O, rowPart(info.rows, d), ChipSlot::Accumulator,
                          model.tile(ChipSlot::Accumulator)->image, {}, std::move(label));
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
        return {makeFlight(direction, MatrixId::O, model.matrix(MatrixId::O)->hbm.whole(),
                           ChipCentre{}, {}, {}, QStringLiteral("O = 0, m = −∞, ℓ = 0"))};
    default:
        return {};
    }
}

// The backward moves blocks of rows and, in its pre-pass and dQ = 0, whole matrices; dQ_i makes
// a round trip at every tile.
std::vector<Flight> backwardFlights(const StageModel& model, const Scene& scene,
                                    const StepState& st) {
    const StepInfo& info = st.info;
    const ProblemSpec& spec = scene.settings.spec;
    const int d = spec.headDim;
    const HbmTraffic read = HbmTraffic::Read, write = HbmTraffic::Write;
    // A block of an HBM matrix between HBM and a slot, carrying the matrix's image where the
    // scene has one, else the values the slot holds (the columns L and D).
    auto block = [&](HbmTraffic direction, MatrixId id, const QRect& part, ChipEnd end,
                     QString label) {
        const QImage& image = hbmImage(scene, id);
        const HbmMatrix& m = model.matrix(id)->hbm;
        const ChipSlot* slot = std::get_if<ChipSlot>(&end);
        if (image.isNull() && slot)
            return makeFlight(direction, id, part, end, model.tile(*slot)->image, {},
                              std::move(label));
        return makeFlight(direction, id, part, end, image, imageRegion(image, m.rows, m.cols, part),
                          std::move(label));
    };
    const auto all = [&](int cols) { return QRect(0, 0, cols, spec.queries); };
    switch (info.kind) {
    case StepKind::ComputeRowDots: {
        // O and dO stream through the chip block by block, D comes back.
        Flight o = block(read, MatrixId::O, all(d), ChipCentre{}, QStringLiteral("O"));
        Flight dO = block(read, MatrixId::dO, all(d), ChipCentre{}, QStringLiteral("dO"));
        o.lands = dO.lands = 0.5;
        Flight delta = makeFlight(write, MatrixId::RowDot, all(1), ChipCentre{},
                                  columnImage(st.delta), {}, tr("D = rowsum(dO ∘ O)"));
        delta.departs = 0.5;
        return {o, dO, delta};
    }
    case StepKind::InitialiseQueryGradient:
        return {makeFlight(write, MatrixId::dQ, all(d), ChipCentre{}, {}, {},
                           QStringLiteral("dQ = 0"))};
    case StepKind::LoadKeyValue:
        return {
            block(read, MatrixId::K, rowPart(info.cols, d), ChipSlot::Key, QStringLiteral("K_j")),
            block(read, MatrixId::V, rowPart(info.cols, d), ChipSlot::Value,
                  QStringLiteral("V_j"))};
    case StepKind::LoadQueryGradient: {
        std::vector<Flight> out = {
            block(read, MatrixId::Q, rowPart(info.rows, d), ChipSlot::Query, QStringLiteral("Q_i")),
            block(read, MatrixId::dO, rowPart(info.rows, d), ChipSlot::OutputGradient,
                  QStringLiteral("dO_i"))};
        if (!scene.settings.options.backward.storeWeights)
            out.push_back(block(read, MatrixId::LogSumExp, rowPart(info.rows, 1),
                                ChipSlot::LogSumExp, QStringLiteral("L_i")));
        out.push_back(block(read, MatrixId::RowDot, rowPart(info.rows, 1), ChipSlot::RowDot,
                            QStringLiteral("D_i")));
        return out;
    }
    case StepKind::ReadStoredWeights:
        return {block(read, MatrixId::P,
                      QRect(info.cols.begin, info.rows.begin, info.cols.size(), info.rows.size()),
                      ChipSlot::Weights, QStringLiteral("P_ij"))};
    case StepKind::UpdateQueryGradient: {
        const BackwardScene& bw = *scene.backward;
        const QImage& updated = model.tile(ChipSlot::QueryGradient)->image;
        // With the bug dQ_i is overwritten: nothing is read (the engine counts no read).
        if (!scene.settings.options.backward.accumulateDq)
            return {makeFlight(write, MatrixId::dQ, rowPart(info.rows, d), ChipSlot::QueryGradient,
                               updated, {}, tr("dQ_i = scale·dS_ij K_j (overwritten)"))};
        Flight f = makeFlight(HbmTraffic::ReadWrite, MatrixId::dQ, rowPart(info.rows, d),
                              ChipSlot::QueryGradient, gradientImage(st.dQOld, bw.dqScale), {},
                              QStringLiteral("dQ_i"));
        f.returnImage = updated;
        f.returnLabel = tr("dQ_i + scale·dS_ij K_j");
        return {f};
    }
    case StepKind::StoreKeyValueGradient:
        return {makeFlight(write, MatrixId::dK, rowPart(info.cols, d), ChipSlot::KeyGradient,
                           model.tile(ChipSlot::KeyGradient)->image, {}, QStringLiteral("dK_j")),
                makeFlight(write, MatrixId::dV, rowPart(info.cols, d), ChipSlot::ValueGradient,
                           model.tile(ChipSlot::ValueGradient)->image, {}, QStringLiteral("dV_j"))};
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
        out.push_back(
            makeFlight(direction, id, m.hbm.whole(), *kernel, hbmImage(scene, id), {}, m.name));
    }
    return out;
}

BusTraffic busTraffic(std::uint64_t read, std::uint64_t written) {
    BusTraffic bus;
    bus.reading = read > 0;
    bus.writing = written > 0;
    bus.readLabel = tr("read");
    bus.writeLabel = tr("write");
    bus.readAmount = QStringLiteral("+%1").arg(formatBytes(double(read)));
    bus.writeAmount = QStringLiteral("+%1").arg(formatBytes(double(written)));
    return bus;
}

BusTraffic busTraffic(const Counters& before, const Counters& now) {
    return busTraffic(now.hbmReadBytes - before.hbmReadBytes,
                      now.hbmWriteBytes - before.hbmWriteBytes);
}

// L2's panel at this step: what the run's matrices take of it, and the step's HBM side.
L2Panel l2Panel(const Scene& scene, int step) {
    const StepL2Model& model = *scene.l2;
    const HardwareProfile& hw = scene.hardware;
    L2Panel l2;
    l2.title = tr("L2");
    l2.size = formatMemorySize(hw.l2Bytes.value);
    l2.rate = formatRate(hw.l2BandwidthBytesPerSecond.value);
    l2.fits = model.fits();
    l2.fraction = model.usableL2Bytes() > 0 ? model.footprintBytes() / model.usableL2Bytes() : 0;
    l2.fillText = l2.fits ? tr("fits") : tr("full");
    l2.summary = tr("L2 · %1 on the %2 (%3), read at %4 (%5); half of it usable by one working "
                    "set. This run's matrices take %6: %7")
                     .arg(l2.size, QString::fromStdString(hw.name),
                          QString::fromStdString(hw.l2Bytes.source), l2.rate,
                          QString::fromStdString(hw.l2BandwidthBytesPerSecond.source),
                          formatBytes(model.footprintBytes()),
                          l2.fits ? tr("they stay in L2, and HBM sees each byte once.")
                                  : tr("they do not fit, and HBM sees every byte the chip moves."));
    for (const std::string& a : model.assumptions()) l2.assumptions.push_back(QString::fromStdString(a));
    l2.before = model.through(step - 1);
    l2.now = model.through(step);
    l2.total = model.total();
    l2.bus = busTraffic(l2.now.readBytes - l2.before.readBytes,
                        l2.now.writeBytes - l2.before.writeBytes);
    return l2;
}

// The flights whose bytes L2 holds already: every read of a step whose reads all hit, every
// write of a step that sends HBM nothing. The backward's first read of a query block is the one
// step that does both: dO_i and D_i were read and written by the pre-pass, Q_i and L_i are new.
void markL2Flights(std::vector<Flight>& flights, const L2Panel& l2, const Counters& before,
                   const Counters& now, StepKind kind) {
    const std::uint64_t counted = now.hbmReadBytes - before.hbmReadBytes;
    const std::uint64_t fromHbm = l2.now.readBytes - l2.before.readBytes;
    const bool readsHit = counted > 0 && fromHbm == 0;
    const bool rewrites = now.hbmWriteBytes > before.hbmWriteBytes &&
                          l2.now.writeBytes == l2.before.writeBytes;
    for (Flight& f : flights) {
        if (f.direction == HbmTraffic::Write)
            f.viaL2Only = rewrites;
        else if (kind == StepKind::LoadQueryGradient && fromHbm > 0 && fromHbm < counted)
            f.viaL2Only = f.matrix == MatrixId::dO || f.matrix == MatrixId::RowDot;
        else
            f.viaL2Only = readsHit;
    }
}

// These sizes as one launch on this GPU, where FlashViz ships its counters.
QString measuredLine(const Scene& scene) {
    if (!scene.measuredLaunch) return {};
    const measured::ThroughL2& t = *scene.measuredLaunch;
    const measured::ThroughL2Point& p = t.points.front();
    const bool flash = scene.isFlash();
    const MeasuredTraffic& m = flash ? *p.flashMeasured : *p.standardMeasured;
    const TrafficEstimate& model = flash ? p.flash : p.standard;
    const auto bytes = [](double b) { return QString::fromStdString(formatByteAmount(b)); };
    // The GPU as the file names it, without its date (the tooltip has the whole record).
    const QString gpu = QString::fromStdString(t.measuredOn).section(QStringLiteral(", "), 0, 0);
    return tr("Measured on the %1, this n and d as one %2 launch of %3 × %4 heads: HBM %5 (model "
              "%6) · L2 %7 (counted %8)")
        .arg(gpu,
             flash ? tr("fp16 (Br %1)").arg(t.blockRows) : tr("fp32"))
        .arg(p.batch)
        .arg(p.heads)
        .arg(bytes(m.dramReadBytes + m.dramWriteBytes), bytes(model.dram.total()),
             bytes(m.l2Bytes), bytes(model.counting.total()));
}

SramFill sramFill(const Scene& scene, const StepState& st) {
    SramFill fill;
    fill.usedBytes = double(st.sramElements) * double(kBytesPerElement);
    fill.budgetBytes = scene.hardware.sharedMemoryPerSmBytes.value;
    fill.fraction = fill.budgetBytes > 0 ? fill.usedBytes / fill.budgetBytes : 0;
    fill.over = fill.fraction > 1.0;
    if (scene.settings.algorithm == Algorithm::Standard)
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
        return (f.direction == HbmTraffic::Read || f.direction == HbmTraffic::ReadWrite) &&
               f.chipEnd == ChipEnd(slot);
    });
}

std::optional<qreal> Flight::position(qreal progress) const {
    if (progress < departs || progress > lands || lands <= departs) return std::nullopt;
    const qreal along = (progress - departs) / (lands - departs);
    switch (direction) {
    case HbmTraffic::Read:
        return along;
    case HbmTraffic::ReadWrite: // up to the chip, then back
        return along < 0.5 ? 2 * along : 2 - 2 * along;
    case HbmTraffic::Write:
    case HbmTraffic::None:
        break;
    }
    return 1 - along;
}

bool Flight::returning(qreal progress) const {
    return direction == HbmTraffic::ReadWrite && progress >= departs + (lands - departs) / 2;
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
    if (l2) { // two levels: what the chip moves to and from L2, and what of it reaches HBM
        const double fromHbm = tick(l2->before.readBytes, l2->now.readBytes);
        const double toHbm = tick(l2->before.writeBytes, l2->now.writeBytes);
        const auto pair = [](double a, double b) {
            return QStringLiteral("%1 · %2").arg(formatBytes(a), formatBytes(b));
        };
        out.read = {tr("read: L2 → SRAM · HBM → L2"), pair(read, fromHbm),
                    tr("of %1 in the run")
                        .arg(pair(double(totals.hbmReadBytes), double(l2->total.readBytes))),
                    bus.reading};
        out.written = {tr("written: SRAM → L2 · L2 → HBM"), pair(written, toHbm),
                       tr("of %1 in the run")
                           .arg(pair(double(totals.hbmWriteBytes), double(l2->total.writeBytes))),
                       bus.writing};
    } else {
        out.read = {tr("HBM bytes read"), formatBytes(read),
                    tr("of %1 in the whole run").arg(formatBytes(double(totals.hbmReadBytes))),
                    bus.reading};
        out.written = {tr("HBM bytes written"), formatBytes(written),
                       tr("of %1 in the whole run").arg(formatBytes(double(totals.hbmWriteBytes))),
                       bus.writing};
    }
    // Short enough for its cell at 1280 px (it read "of 1.02 kFLOP (standard: 1.02 …"). The
    // backward's comparison is its own trade: the same pass with P stored, no recompute.
    const double whole = double(totals.flops);
    QString flopsNote;
    if (backward)
        flopsNote = (tradeStoresP ? tr("of %1; P stored %2") : tr("of %1; recomputed %2"))
                        .arg(formatFlops(whole), formatFlops(double(tradeTotals.flops)));
    else if (totals.flops == standardTotals.flops)
        flopsNote = tr("of %1, as standard").arg(formatFlops(whole));
    else
        flopsNote = tr("of %1; standard %2")
                        .arg(formatFlops(whole), formatFlops(double(standardTotals.flops)));
    // The counting model's FLOPs are the matmuls' (core/counters.h), so a step of elementwise
    // work (the backward's row dots D, a rescale) adds none: the title says so.
    out.flops = {tr("matmul FLOPs"), formatFlops(flops), flopsNote, now.flops > before.flops};
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
    m.backward = scene.isBackward();
    m.tiled = scene.settings.algorithm != Algorithm::Standard;
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
    if (m.backward) {
        m.tiles = backwardTiles(scene, st);
        m.flights = backwardFlights(m, scene, st);
    } else if (m.tiled) {
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
    if (scene.l2) {
        m.l2 = l2Panel(scene, frame.step);
        markL2Flights(m.flights, *m.l2, m.before, m.now, st.info.kind);
    }
    m.measuredLine = measuredLine(scene);
    if (scene.measuredLaunch) m.measuredOn = QString::fromStdString(scene.measuredLaunch->measuredOn);
    if (scene.measuredLaunch)
        m.measuredKernel = scene.isFlash()
                               ? QString::fromStdString(scene.measuredLaunch->kernelName)
                               : tr("standard attention in fp32 (cuBLAS, softmax, cuBLAS)");
    m.sram = sramFill(scene, st);
    m.totals = scene.totals;
    m.standardTotals = scene.standardTotals;
    if (scene.backward) {
        const auto& spec = scene.settings.spec;
        const BackwardTrade trade = backwardTrade(spec.queries, spec.keys, spec.headDim,
                                                  spec.causal, scene.settings.options);
        m.tradeStoresP = !scene.settings.options.backward.storeWeights;
        m.tradeTotals = m.tradeStoresP ? trade.stored : trade.recompute;
    }
    m.hbmBandwidth = hw.hbmBandwidthBytesPerSecond.value;
    m.flopRate = hw.fp32FlopsPerSecond.value;
    m.ridge = ridgeFlopsPerByte(hw, Arithmetic::Fp32CudaCores);
    return m;
}

} // namespace flashviz::gui
