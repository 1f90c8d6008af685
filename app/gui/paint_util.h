#pragma once
// Small drawing helpers shared by the painted views.
#include "theme.h"

#include "core/types.h"

#include <QImage>
#include <QPainter>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>

#include <vector>

namespace flashviz::gui {

// The part of a matrix drawn in `matrixRect` that holds rows [range) of `total`.
QRectF rowBand(const QRectF& matrixRect, int total, Range rows);
QRectF colBand(const QRectF& matrixRect, int total, Range cols);

// Draws an image scaled into `target`, crisp when enlarged and smooth when reduced.
void drawMatrixImage(QPainter& p, const QRectF& target, const QImage& image,
                     const QRectF& source = QRectF());

// A rounded panel with a title and an optional subtitle; returns the content rectangle.
QRectF drawPanel(QPainter& p, const QRectF& box, const Theme& theme, const QColor& colour,
                 const QString& title, const QString& subtitle);

// Text that shrinks (down to a floor) to fit the width.
void drawFittedText(QPainter& p, const QRectF& box, int flags, const QString& text, QFont font,
                    qreal minPointSize = 6.0);

QColor withAlpha(QColor c, int alpha);

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
};
TableHeader fitTableHeader(const QStringList& titles, const QStringList& compact,
                           const std::vector<qreal>& weights, const std::vector<qreal>& contents,
                           QFont font, qreal minPointSize, qreal total, qreal padding);

} // namespace flashviz::gui
