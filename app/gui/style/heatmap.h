#pragma once
// Matrices as images: one pixel per entry (block-averaged past maxSide), so that a 4096 x 4096
// score matrix costs one drawImage call, not sixteen million items.
#include "core/types.h"

#include <QImage>

namespace flashviz::gui {

enum class Colouring { Diverging, Sequential };

// The largest finite |value| (0 when there is none).
double finiteAbsMax(const Eigen::Ref<const Matrix>& m);

// rows x cols image (or smaller, averaged, when a side exceeds maxSide). Masked (-inf) entries
// are drawn grey, NaN magenta, +inf near-black.
QImage heatmapImage(const Eigen::Ref<const Matrix>& m, Colouring colouring, double scaleMax,
                    int maxSide = 1024);

} // namespace flashviz::gui
