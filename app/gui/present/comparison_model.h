#pragma once
// The comparison view's model: standard attention against FlashAttention on the current sizes,
// from the Scene's totals (HBM traffic, the largest scratch buffer, FLOPs), with how many times
// less each is. The backward: the trade FlashAttention makes, P stored by the forward against P
// recomputed (HBM traffic, the floats the forward leaves in HBM, FLOPs), from the engine's
// counts. Plain values: the view paints them as bars.
#include "session/scene.h"

#include <QString>

#include <array>

namespace flashviz::gui {

enum class ComparisonUnit { Bytes, Flops, Floats };

struct ComparisonRow {
    QString label;
    double standard = 0, flash = 0; // the first bar and the second (backward: P stored, recompute)
    ComparisonUnit unit = ComparisonUnit::Bytes;
    QString note; // the ratio in words
};

struct ComparisonModel {
    QString title;
    QString firstName, secondName;     // the bars' names: "standard", "flash"
    Counters standard, flash;          // Scene::standardTotals and Scene::flashTotals(); the
                                       // backward: with P stored, and recomputing it
    std::array<ComparisonRow, 3> rows; // HBM traffic, scratch (backward: floats stored), FLOPs
    // The forward: how it counts the traffic; the backward: the script's demo-5 model of the trade.
    QString footnote;
};

ComparisonModel comparisonModel(const Scene& scene);

} // namespace flashviz::gui
