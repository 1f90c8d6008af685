#include "present/comparison_model.h"

#include "style/format.h"

#include <QObject>

#include <algorithm>

namespace flashviz::gui {

namespace {

QString times(double ratio, int decimals) {
    return QString::number(ratio, 'f', decimals);
}

// How the second of two sizes compares with the first, in words that agree with the bars: "3.2×
// smaller", "1.1× larger" (the toy's flash working set is larger than standard's S), "the same".
QString sizeRatio(double first, double second) {
    if (first == second) return QObject::tr("the same");
    const double ratio = std::max(first, second) / std::max(1.0, std::min(first, second));
    const QString text = times(ratio, ratio >= 10 ? 0 : 1);
    return second < first ? QObject::tr("%1× smaller").arg(text)
                          : QObject::tr("%1× larger").arg(text);
}

// FlashAttention's backward recomputing S and P against the same backward reading the P its
// forward stored: the engine's counts of both (this run is one of them), and what the forward
// leaves in HBM for each.
ComparisonModel backwardComparison(const Scene& scene) {
    const auto& spec = scene.settings.spec;
    ComparisonModel model;
    model.title = QObject::tr("n = %1, d = %2, tiles %3 × %4: the backward with P stored vs "
                              "recomputed")
                      .arg(spec.queries)
                      .arg(spec.headDim)
                      .arg(scene.settings.options.blockRows)
                      .arg(scene.settings.options.blockCols);
    model.firstName = QObject::tr("P stored");
    model.secondName = QObject::tr("recompute");
    const BackwardTrade trade =
        backwardTrade(spec.queries, spec.keys, spec.headDim, spec.causal, scene.settings.options);
    model.standard = trade.stored;
    model.flash = trade.recompute;
    const double storedFloats = double(trade.storedKept);
    const double recomputeFloats = double(trade.recomputeKept);
    const double traffic = double(model.standard.hbmBytes());
    const double recomputeTraffic = double(model.flash.hbmBytes());
    const double flops = double(model.standard.flops), recomputeFlops = double(model.flash.flops);
    model.rows = {{
        {QObject::tr("HBM traffic"), traffic, recomputeTraffic, ComparisonUnit::Bytes,
         QObject::tr("recompute: %1× less")
             .arg(times(traffic / std::max(1.0, recomputeTraffic), 1))},
        {QObject::tr("floats left in HBM"), storedFloats, recomputeFloats, ComparisonUnit::Floats,
         QObject::tr("recompute: %1× fewer")
             .arg(times(storedFloats / std::max(1.0, recomputeFloats), 1))},
        {QObject::tr("FLOPs"), flops, recomputeFlops, ComparisonUnit::Flops,
         QObject::tr("recompute: %1× more").arg(times(recomputeFlops / std::max(1.0, flops), 2))},
    }};
    // The script prices the trade for n × n with d: P and Q, K, V kept against Q, K, V, m and ℓ;
    // FlashAttention-2 keeps O and one L per row instead of m and ℓ, and reads dO too.
    const BackwardComparison script = backwardCosts(spec.queries, spec.headDim);
    model.footnote =
        QObject::tr("the script's demo 5 (n = %1): %2 vs %3 floats, %4 vs %5 (it keeps m and ℓ; "
                    "FlashAttention-2 keeps O and L)")
            .arg(spec.queries)
            .arg(formatCount(script.standard.storedElements),
                 formatCount(script.flash.storedElements),
                 formatFlops(double(script.standard.flops)),
                 formatFlops(double(script.flash.flops)));
    return model;
}

} // namespace

ComparisonModel comparisonModel(const Scene& scene) {
    if (scene.backward) return backwardComparison(scene);
    const auto& spec = scene.settings.spec;
    ComparisonModel model;
    model.title = QObject::tr("n = %1, d = %2, tiles %3 × %4: standard vs FlashAttention")
                      .arg(spec.queries)
                      .arg(spec.headDim)
                      .arg(scene.settings.options.blockRows)
                      .arg(scene.settings.options.blockCols);
    model.firstName = QObject::tr("standard");
    model.secondName = QObject::tr("flash");
    const Counters& standard = model.standard = scene.standardTotals;
    const Counters& flash = model.flash = scene.flashTotals();
    const double traffic = double(standard.hbmBytes()), flashTraffic = double(flash.hbmBytes());
    const double scratch = double(standard.peakScratchBytes());
    const double flashScratch = double(flash.peakScratchBytes());
    model.rows = {{
        {QObject::tr("HBM traffic"), traffic, flashTraffic, ComparisonUnit::Bytes,
         QObject::tr("%1× less").arg(times(traffic / std::max(1.0, flashTraffic), 1))},
        {QObject::tr("largest scratch buffer"), scratch, flashScratch, ComparisonUnit::Bytes,
         sizeRatio(scratch, flashScratch)},
        {QObject::tr("FLOPs"), double(standard.flops), double(flash.flops), ComparisonUnit::Flops,
         standard.flops == flash.flops
             ? QObject::tr("identical")
             : QObject::tr("ratio %1").arg(times(double(flash.flops) / double(standard.flops), 2))},
    }};
    // The counting model's traffic is every tile's trip, with no cache in between; the memory
    // view's counters beside it on the lecture's slide give the same trips split at L2.
    model.footnote = QObject::tr("HBM traffic counted as the paper does: every tile moved between HBM and "
                                 "SRAM, no cache (the memory view splits it at L2)");
    return model;
}

} // namespace flashviz::gui
