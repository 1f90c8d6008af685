#include "style/paint_util.h"

#include <QFontMetricsF>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace flashviz::gui {

QRectF rowBand(const QRectF& m, int total, Range rows) {
    if (total <= 0) return {};
    const qreal h = m.height() / total;
    return {m.left(), m.top() + h * rows.begin, m.width(), h * rows.size()};
}

QRectF colBand(const QRectF& m, int total, Range cols) {
    if (total <= 0) return {};
    const qreal w = m.width() / total;
    return {m.left() + w * cols.begin, m.top(), w * cols.size(), m.height()};
}

namespace {

// Reducing a 4096-row image to a few hundred pixels costs milliseconds; the same reduction is
// asked for on every repaint, so the last results are kept (keyed by image, part and size).
struct ScaledKey {
    qint64 image;
    QRect source;
    QSize size;
    bool operator==(const ScaledKey&) const = default;
};

const QImage& scaledCached(const QImage& image, const QRect& source, const QSize& size) {
    static std::vector<std::pair<ScaledKey, QImage>> cache;
    const ScaledKey key{image.cacheKey(), source, size};
    for (auto it = cache.begin(); it != cache.end(); ++it)
        if (it->first == key) {
            if (it != cache.begin()) std::rotate(cache.begin(), it, it + 1);
            return cache.front().second;
        }
    QImage scaled =
        image.copy(source).scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    cache.insert(cache.begin(), {key, std::move(scaled)});
    if (cache.size() > 48) cache.pop_back();
    return cache.front().second;
}

} // namespace

void drawMatrixImage(QPainter& p, const QRectF& target, const QImage& image, const QRectF& source) {
    if (image.isNull() || target.isEmpty()) return;
    const QRectF src = source.isNull() ? QRectF(image.rect()) : source;
    const bool reduce = src.width() > target.width() || src.height() > target.height();
    const QRect whole = src.toAlignedRect();
    if (reduce && whole == src.toRect() && src.width() * src.height() > 4096) {
        const QSize size(std::max(1, int(std::ceil(target.width()))),
                         std::max(1, int(std::ceil(target.height()))));
        p.drawImage(QRectF(target.topLeft(), QSizeF(size)), scaledCached(image, whole, size));
        return;
    }
    p.save();
    p.setRenderHint(QPainter::SmoothPixmapTransform, reduce);
    p.drawImage(target, image, src);
    p.restore();
}

QRectF drawPanel(QPainter& p, const QRectF& box, const Theme& theme, const QColor& colour,
                 const QString& title, const QString& subtitle) {
    p.save();
    p.setPen(QPen(colour, 1.5 * theme.scale));
    p.setBrush(withAlpha(colour, theme.lecture ? 38 : 22));
    p.drawRoundedRect(box, 8 * theme.scale, 8 * theme.scale);
    const qreal pad = 8 * theme.scale;
    QFont titleFont = theme.font(10.5, true);
    QFont subFont = theme.font(8.5);
    const qreal titleH = QFontMetricsF(titleFont).height();
    QRectF titleRect(box.left() + pad, box.top() + pad * 0.7, box.width() - 2 * pad, titleH);
    p.setPen(theme.text);
    drawFittedText(p, titleRect, Qt::AlignLeft | Qt::AlignVCenter, title, titleFont);
    if (!subtitle.isEmpty()) {
        p.setPen(theme.muted);
        drawFittedText(p, titleRect.translated(0, titleH), Qt::AlignLeft | Qt::AlignVCenter,
                       subtitle, subFont);
    }
    p.restore();
    return panelContentRect(box, theme, !subtitle.isEmpty());
}

QRectF panelContentRect(const QRectF& box, const Theme& theme, bool withSubtitle) {
    const qreal pad = 8 * theme.scale;
    const qreal titleH = QFontMetricsF(theme.font(10.5, true)).height();
    const qreal subH = withSubtitle ? QFontMetricsF(theme.font(8.5)).height() : 0;
    const qreal top = box.top() + pad * 0.7 + titleH + subH + pad * 0.6;
    return {box.left() + pad, top, box.width() - 2 * pad, box.bottom() - pad - top};
}

void drawFittedText(QPainter& p, const QRectF& box, int flags, const QString& text, QFont font,
                    qreal minPointSize) {
    qreal size = font.pointSizeF();
    if (flags & Qt::TextWordWrap) {
        // Too tall, or a word wider than the box (Qt lets it run over the edge).
        const auto tooTall = [&] {
            const QRectF used = QFontMetricsF(font).boundingRect(box, flags, text);
            return used.height() > box.height() || used.width() > box.width() + 0.5;
        };
        while (size > minPointSize && tooTall()) {
            size -= 0.5;
            font.setPointSizeF(size);
        }
        // Lines that cannot all fit even at the floor would be cut through ("never storec"):
        // one line, elided, instead.
        if (tooTall()) {
            drawFittedText(p, box, flags & ~Qt::TextWordWrap,
                           QString(text).replace(QLatin1Char('\n'), QLatin1Char(' ')), font,
                           minPointSize);
            return;
        }
        p.save();
        p.setFont(font);
        p.drawText(box, flags, text);
        p.restore();
        return;
    }
    // Measure once; shrink (and elide) only when the text does not fit.
    qreal width = QFontMetricsF(font).horizontalAdvance(text);
    while (size > minPointSize && width > box.width()) {
        size -= 0.5;
        font.setPointSizeF(size);
        width = QFontMetricsF(font).horizontalAdvance(text);
    }
    p.save();
    p.setFont(font);
    p.drawText(box, flags,
               width > box.width()
                   ? QFontMetricsF(font).elidedText(text, Qt::ElideRight, box.width())
                   : text);
    p.restore();
}

std::vector<QRectF> layoutSideBySide(const std::vector<QSize>& shapes, const QRectF& area,
                                     qreal gap, qreal minSide) {
    std::vector<QRectF> out;
    if (shapes.empty()) return out;
    int maxRows = 1;
    double sumCols = 0;
    for (const QSize& s : shapes) {
        maxRows = std::max(maxRows, s.height());
        sumCols += s.width();
    }
    const qreal gaps = gap * qreal(shapes.size() - 1);
    qreal scale = std::min(area.height() / maxRows, (area.width() - gaps) / qreal(sumCols));
    // Narrow matrices are widened to minSide; the others share the width that is left.
    for (int pass = 0; pass < 3; ++pass) {
        qreal fixed = 0, flexibleCols = 0;
        for (const QSize& s : shapes) {
            if (s.width() * scale < minSide)
                fixed += minSide;
            else
                flexibleCols += s.width();
        }
        if (flexibleCols > 0) scale = std::min(scale, (area.width() - gaps - fixed) / flexibleCols);
    }
    qreal x = area.left();
    for (const QSize& s : shapes) {
        const qreal w = std::max(minSide, s.width() * scale);
        const qreal h = std::max(minSide, s.height() * scale);
        out.emplace_back(x, area.top(), w, h);
        x += w + gap;
    }
    return out;
}

void drawPlacedText(QPainter& p, const PlacedText& text) {
    p.setPen(text.colour);
    p.setFont(text.font);
    p.drawText(text.rect, text.flags, text.text);
}

qreal textWidth(const PlacedText& text) {
    return QFontMetricsF(text.font).horizontalAdvance(text.text);
}

QColor withAlpha(QColor c, int alpha) {
    c.setAlpha(std::clamp(alpha, 0, 255));
    return c;
}

std::vector<qreal> fitColumnWidths(const std::vector<qreal>& weights,
                                   const std::vector<qreal>& minimums, qreal total) {
    qreal weightSum = 0;
    for (const qreal w : weights)
        weightSum += w;
    std::vector<qreal> widths;
    for (const qreal w : weights)
        widths.push_back(weightSum > 0 ? total * w / weightSum : 0);
    qreal deficit = 0, room = 0;
    for (std::size_t c = 0; c < widths.size(); ++c) {
        const qreal need = c < minimums.size() ? minimums[c] : 0;
        if (widths[c] < need)
            deficit += need - widths[c];
        else
            room += widths[c] - need;
    }
    if (deficit <= 0 || deficit > room) return widths;
    for (std::size_t c = 0; c < widths.size(); ++c) {
        const qreal need = c < minimums.size() ? minimums[c] : 0;
        widths[c] = widths[c] < need ? need : widths[c] - (widths[c] - need) * deficit / room;
    }
    return widths;
}

TableHeader fitTableHeader(const QStringList& titles, const QStringList& compact,
                           const std::vector<qreal>& weights, const std::vector<qreal>& contents,
                           QFont font, qreal minPointSize, qreal total, qreal padding) {
    const qreal largest = font.pointSizeF();
    TableHeader header;
    std::vector<qreal> needs;
    for (const QStringList* choice : {&titles, &compact}) {
        header.titles = *choice;
        for (qreal size = largest; size >= minPointSize; size -= 0.5) {
            font.setPointSizeF(size);
            const QFontMetricsF fm(font);
            needs.clear();
            qreal sum = 0;
            for (int c = 0; c < header.titles.size(); ++c) {
                qreal need = std::size_t(c) < contents.size() ? contents[std::size_t(c)] : 0;
                for (const QString& line : header.titles[c].split(QLatin1Char('\n')))
                    need = std::max(need, fm.horizontalAdvance(line) + padding);
                needs.push_back(need);
                sum += need;
            }
            if (sum <= total) {
                header.font = font;
                header.widths = fitColumnWidths(weights, needs, total);
                header.fits = true;
                return header;
            }
        }
    }
    // Not even the compact titles fit: the smallest size, the shares by weight.
    header.font = font;
    header.widths = fitColumnWidths(weights, needs, total);
    return header;
}

} // namespace flashviz::gui
