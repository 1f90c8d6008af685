#include "present/comparison_model.h"

#include <QObject>

#include <algorithm>

namespace flashviz::gui {

ComparisonModel comparisonModel(const Scene& scene) {
    const auto& spec = scene.settings.spec;
    ComparisonModel model;
    model.title = QObject::tr("n = %1, d = %2, tiles %3 × %4: standard vs FlashAttention")
                      .arg(spec.queries)
                      .arg(spec.headDim)
                      .arg(scene.settings.options.blockRows)
                      .arg(scene.settings.options.blockCols);
    const Counters& standard = model.standard = scene.standardTotals;
    const Counters& flash = model.flash = scene.flashTotals();
    const double traffic = double(standard.hbmBytes()), flashTraffic = double(flash.hbmBytes());
    const double scratch = double(standard.peakScratchBytes());
    const double flashScratch = double(flash.peakScratchBytes());
    model.rows = {{
        {QObject::tr("HBM traffic"), traffic, flashTraffic, false,
         QObject::tr("%1× less").arg(traffic / std::max(1.0, flashTraffic), 0, 'f', 1)},
        {QObject::tr("largest scratch buffer"), scratch, flashScratch, false,
         QObject::tr("%1× smaller").arg(scratch / std::max(1.0, flashScratch), 0, 'f', 0)},
        {QObject::tr("FLOPs"), double(standard.flops), double(flash.flops), true,
         standard.flops == flash.flops
             ? QObject::tr("identical")
             : QObject::tr("ratio %1")
                   .arg(double(flash.flops) / double(standard.flops), 0, 'f', 2)},
    }};
    return model;
}

} // namespace flashviz::gui
