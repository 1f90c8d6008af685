#pragma once
// The comparison view's model: standard attention against FlashAttention on the current sizes,
// from the Scene's totals (HBM traffic, the largest scratch buffer, FLOPs), with how many times
// less each is. Plain values: the view paints them as bars.
#include "session/scene.h"

#include <QString>

#include <array>

namespace flashviz::gui {

struct ComparisonRow {
    QString label;
    double standard = 0, flash = 0;
    bool flops = false; // FLOPs, else bytes
    QString note;       // the ratio in words
};

struct ComparisonModel {
    QString title;
    Counters standard, flash;          // Scene::standardTotals and Scene::flashTotals()
    std::array<ComparisonRow, 3> rows; // HBM traffic, largest scratch buffer, FLOPs
};

ComparisonModel comparisonModel(const Scene& scene);

} // namespace flashviz::gui
