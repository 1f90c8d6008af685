#include "style/heatmap.h"

#include "style/theme.h"

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

double finiteAbsMax(const Eigen::Ref<const Matrix>& m) {
    double best = 0;
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) {
            const double x = m(r, c);
            if (std::isfinite(x)) best = std::max(best, std::abs(x));
        }
    return best;
}

static QRgb colourOf(double value, Colouring colouring, double scaleMax) {
    return colouring == Colouring::Diverging ? divergingRgb(value, scaleMax)
                                             : sequentialRgb(value, scaleMax);
}

QImage heatmapImage(const Eigen::Ref<const Matrix>& m, Colouring colouring, double scaleMax,
                    int maxSide) {
    const int rows = int(m.rows()), cols = int(m.cols());
    if (rows == 0 || cols == 0) return {};
    const int rowStep = (rows + maxSide - 1) / maxSide;
    const int colStep = (cols + maxSide - 1) / maxSide;
    const int height = (rows + rowStep - 1) / rowStep;
    const int width = (cols + colStep - 1) / colStep;
    QImage image(width, height, QImage::Format_RGB32);
    for (int y = 0; y < height; ++y) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 0; x < width; ++x) {
            if (rowStep == 1 && colStep == 1) {
                line[x] = colourOf(m(y, x), colouring, scaleMax);
                continue;
            }
            double sum = 0;
            int finite = 0;
            bool nan = false, posInf = false;
            for (int r = y * rowStep; r < std::min(rows, (y + 1) * rowStep); ++r)
                for (int c = x * colStep; c < std::min(cols, (x + 1) * colStep); ++c) {
                    const double v = m(r, c);
                    if (std::isfinite(v)) {
                        sum += v;
                        ++finite;
                    } else if (std::isnan(v)) {
                        nan = true;
                    } else if (v > 0) {
                        posInf = true;
                    }
                }
            const double shown = nan      ? std::nan("")
                                 : posInf ? INFINITY
                                 : finite ? sum / finite
                                          : -INFINITY;
            line[x] = colourOf(shown, colouring, scaleMax);
        }
    }
    return image;
}

} // namespace flashviz::gui
