// Styling the analysis page and the GPU benchmark page share, so that the two look alike.
#pragma once

#include <QFont>
#include <QLabel>
#include <QString>

#include <cmath>

namespace flashviz::gui {

// base enlarged by factor: in points where the font has a point size, else in whole pixels.
inline QFont scaledFont(const QFont& base, double factor, bool bold = false) {
    QFont font = base;
    if (base.pointSizeF() > 0)
        font.setPointSizeF(base.pointSizeF() * factor);
    else
        font.setPixelSize(static_cast<int>(std::lround(base.pixelSize() * factor)));
    font.setBold(bold);
    return font;
}

// Shows text in a page's message line: a light red box for an error, a blue-grey one otherwise.
inline void showPageMessage(QLabel* label, const QString& text, bool error) {
    label->setText(text);
    label->setStyleSheet(error ? QStringLiteral("QLabel { background: #fde4e1; color: #7a1408; "
                                                "padding: 0.4em; border: 1px solid #d9826f; }")
                               : QStringLiteral("QLabel { background: #eef2f7; color: #1f2d3d; "
                                                "padding: 0.4em; border: 1px solid #b8c4d2; }"));
    label->show();
}

} // namespace flashviz::gui
