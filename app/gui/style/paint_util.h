#pragma once
// Small drawing helpers shared by the painted views.
#include "style/theme.h"

#include "core/types.h"

#include <QImage>
#include <QPainter>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace flashviz::gui {

// ---- Log axes (header-only: the chart libraries, app/gui/analysis and app/gui/gpu_bench, use it
// without linking flashviz_gui_lib) ----------------------------------------------------------
//
// Qt Charts recurses without end (QLogValueAxisPrivate::setRange and LogXLogYDomain::setRange
// calling each other, >72,900 frames, then SIGSEGV) when a log axis is given a range that is not
// positive, not finite or empty. Every log axis in app/gui is given its range by
// setLogAxisRange(), never by QLogValueAxis::setRange() directly.

inline constexpr double kLogAxisFloor = 1e-300; // ends are clamped into [floor, ceiling]
inline constexpr double kLogAxisCeiling = 1e300;
inline constexpr double kLogAxisMinRatio = 1.01; // hi / lo at least this, else widened

// A range a log axis of `base` can take that covers as much of [lo, hi] as it can: both ends
// finite and inside [kLogAxisFloor, kLogAxisCeiling], hi at least kLogAxisMinRatio times lo. A
// non-positive or non-finite end is replaced by one a factor `base` from the other end (1 to
// `base` when neither is usable); an empty or reversed range is widened by `base` either side.
inline std::pair<double, double> safeLogRange(double lo, double hi, double base = 10.0) {
    if (!std::isfinite(base) || base <= 1.0) base = 10.0;
    base = std::min(base, 1e6);
    const auto usable = [](double v) { return std::isfinite(v) && v > 0; };
    const auto clamp = [](double v) { return std::clamp(v, kLogAxisFloor, kLogAxisCeiling); };
    if (!usable(lo) && !usable(hi)) return {1.0, base};
    if (!usable(lo)) lo = clamp(hi) / base;
    if (!usable(hi)) hi = clamp(lo) * base;
    lo = clamp(lo);
    hi = clamp(hi);
    if (lo > hi) std::swap(lo, hi);
    if (hi < lo * kLogAxisMinRatio) {
        lo = std::max(kLogAxisFloor, lo / base);
        hi = std::min(kLogAxisCeiling, hi * base);
    }
    return {lo, hi};
}

// Sets a QLogValueAxis (a template so that this header needs no Qt Charts) to safeLogRange() of
// [lo, hi] for its base; set the base first.
template <class LogAxis> void setLogAxisRange(LogAxis* axis, double lo, double hi) {
    const auto [safeLo, safeHi] = safeLogRange(lo, hi, axis->base());
    axis->setRange(safeLo, safeHi);
}

// The part of a matrix drawn in `matrixRect` that holds rows [range) of `total`.
QRectF rowBand(const QRectF& matrixRect, int total, Range rows);
QRectF colBand(const QRectF& matrixRect, int total, Range cols);

// Draws an image scaled into `target`, crisp when enlarged and smooth when reduced.
void drawMatrixImage(QPainter& p, const QRectF& target, const QImage& image,
                     const QRectF& source = QRectF());

// The content rectangle of a panel drawn by drawPanel, below its title (and subtitle): layouts
// compute it before anything is painted.
QRectF panelContentRect(const QRectF& box, const Theme& theme, bool withSubtitle);

// A rounded panel with a title and an optional subtitle; returns the content rectangle.
QRectF drawPanel(QPainter& p, const QRectF& box, const Theme& theme, const QColor& colour,
                 const QString& title, const QString& subtitle);

// Text that shrinks (down to a floor) to fit the width.
void drawFittedText(QPainter& p, const QRectF& box, int flags, const QString& text, QFont font,
                    qreal minPointSize = 6.0);

QColor withAlpha(QColor c, int alpha);

// A text as a layout placed it: drawn at its font into its rectangle, never shrunk or elided
// while painting, so that what the layout measured is what is seen (tst_text_fits checks the
// views' placed texts against their rectangles and each other).
struct PlacedText {
    QRectF rect;
    QString text;
    QFont font;
    int flags = Qt::AlignLeft | Qt::AlignVCenter;
    QColor colour;
};
void drawPlacedText(QPainter& p, const PlacedText& text);
// The width the text takes at its font.
qreal textWidth(const PlacedText& text);

// Places matrices of the given shapes (width = columns, height = rows) side by side in `area`,
// to one scale, each at least `minSide` pixels wide and tall.
std::vector<QRectF> layoutSideBySide(const std::vector<QSize>& shapes, const QRectF& area,
                                     qreal gap, qreal minSide);

// Widths for table columns that share `total` in proportion to `weights`, except that a column
// whose share is below its `minimums` entry (what its title needs) gets that minimum, paid for
// by the columns with room to spare, in proportion to that room. When the minimums do not fit
// together, the plain proportional shares.
std::vector<qreal> fitColumnWidths(const std::vector<qreal>& weights,
                                   const std::vector<qreal>& minimums, qreal total);

// The header of a table whose titles are a symbol line and an explanation line ("ℓ\nsum so
// far"): the largest size from `font`'s down to `minPointSize` at which the columns fit side by
// side in `total`, each as wide as its widest title line plus `padding` or its `contents` entry
// (what its values need), whichever is more; where even the smallest does not, the `compact`
// titles (the symbols alone, long ones over two lines) at the largest size that fits. The
// widths are fitColumnWidths' for the chosen titles.
struct TableHeader {
    QFont font;
    QStringList titles;
    std::vector<qreal> widths;
    bool fits = false; // every column has what its title and contents need
};
TableHeader fitTableHeader(const QStringList& titles, const QStringList& compact,
                           const std::vector<qreal>& weights, const std::vector<qreal>& contents,
                           QFont font, qreal minPointSize, qreal total, qreal padding);

} // namespace flashviz::gui
