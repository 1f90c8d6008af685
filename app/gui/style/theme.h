#pragma once
// Colours and type sizes shared by every view. The desktop theme is light and compact; the
// lecture theme is dark, large and high-contrast, for a projector at the back of a room.
#include <QColor>
#include <QFont>
#include <QRgb>
#include <QSize>

namespace flashviz::gui {

struct Theme {
    QColor background; // behind the views
    QColor panel;      // a view's own surface
    QColor border;
    QColor text;
    QColor muted;   // secondary labels
    QColor accent;  // the active step, the current line
    QColor changed; // values that changed at this step
    QColor good;
    QColor bad;
    QColor hbm;  // off-chip memory
    QColor sram; // on-chip memory
    QColor q, k, v, o, s, p;
    // The backward's: the upstream gradient dO, the three gradients, the forward's log-sum-exp L
    // and the pre-pass's D = rowsum(dO ∘ O) (one value a row), the tiles dP and dS on chip. A
    // gradient never takes its matrix's colour (dQ beside Q must read as another matrix on a
    // projector); dP and dS are S's and P's family, darker on the light theme, lighter on the
    // dark one.
    QColor dO, dQ, dK, dV, lse, delta, dP, dS;
    qreal scale = 1.0; // multiplies every font size
    bool lecture = false;

    QFont font(qreal pointSize, bool bold = false) const;
    QFont mono(qreal pointSize, bool bold = false) const;

    static Theme desktop();
    // Large type for a projector, designed for 1920 x 1080; for another window size the type
    // scales with it, so a smaller projector shows the same picture.
    static Theme presentation(QSize window = QSize(1920, 1080));
};

// The same two colour maps as raw pixels, from tables (fast enough for large images).
QRgb divergingRgb(double value, double absMax);
QRgb sequentialRgb(double value, double max);
// Diverging colour for signed values (blue below zero, red above), |value| / absMax in [0, 1].
QColor divergingColour(double value, double absMax);
// Sequential colour for non-negative values such as softmax weights.
QColor sequentialColour(double value, double max);
// A colour readable on top of the given background.
QColor textOn(const QColor& background);

} // namespace flashviz::gui
