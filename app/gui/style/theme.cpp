#include "style/theme.h"

#include <QFontDatabase>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

// The system fonts, asked for once: views ask for fonts many times per paint.
static const QFont& generalFont() {
    static const QFont f = QFontDatabase::systemFont(QFontDatabase::GeneralFont);
    return f;
}

static const QFont& fixedFont() {
    static const QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    return f;
}

QFont Theme::font(qreal pointSize, bool bold) const {
    QFont f = generalFont();
    f.setPointSizeF(pointSize * scale);
    f.setBold(bold);
    return f;
}

QFont Theme::mono(qreal pointSize, bool bold) const {
    QFont f = fixedFont();
    f.setPointSizeF(pointSize * scale);
    f.setBold(bold);
    return f;
}

Theme Theme::desktop() {
    Theme t;
    t.background = QColor(0xee, 0xf0, 0xf4);
    t.panel = QColor(0xff, 0xff, 0xff);
    t.border = QColor(0xc9, 0xcf, 0xd8);
    t.text = QColor(0x1b, 0x21, 0x2c);
    t.muted = QColor(0x5f, 0x6a, 0x7a);
    t.accent = QColor(0xf2, 0x9f, 0x05);
    t.changed = QColor(0xff, 0xe0, 0x8a);
    t.good = QColor(0x1a, 0x8f, 0x4a);
    t.bad = QColor(0xd0, 0x21, 0x2e);
    t.hbm = QColor(0x4a, 0x5a, 0x78);
    t.sram = QColor(0x1f, 0x8a, 0x70);
    t.q = QColor(0x2f, 0x6f, 0xd6);
    t.k = QColor(0x12, 0x9a, 0x8a);
    t.v = QColor(0xe0, 0x7a, 0x10);
    t.o = QColor(0x8a, 0x45, 0xc8);
    t.s = QColor(0xc0, 0x39, 0x4b);
    t.p = QColor(0xd9, 0x4f, 0x9c);
    t.dO = QColor(0x0b, 0x7d, 0xa8);
    t.dQ = QColor(0x43, 0x38, 0xca);
    t.dK = QColor(0x2f, 0x8a, 0x2f);
    t.dV = QColor(0x8a, 0x55, 0x1e);
    t.lse = QColor(0x6b, 0x7a, 0x12);
    t.delta = QColor(0xa3, 0x1f, 0xb0);
    t.dP = QColor(0x9a, 0x25, 0x70);
    t.dS = QColor(0x86, 0x1c, 0x25);
    return t;
}

Theme Theme::presentation(QSize window) {
    Theme t;
    t.background = QColor(0x0b, 0x0e, 0x14);
    t.panel = QColor(0x14, 0x19, 0x22);
    t.border = QColor(0x3a, 0x44, 0x55);
    t.text = QColor(0xf5, 0xf7, 0xfa);
    t.muted = QColor(0xb4, 0xbe, 0xcc);
    t.accent = QColor(0xff, 0xc4, 0x2e);
    t.changed = QColor(0x80, 0x62, 0x00);
    t.good = QColor(0x3d, 0xdc, 0x84);
    t.bad = QColor(0xff, 0x4d, 0x5a);
    t.hbm = QColor(0x8f, 0xa7, 0xd6);
    t.sram = QColor(0x3d, 0xd6, 0xb0);
    t.q = QColor(0x5c, 0x9d, 0xff);
    t.k = QColor(0x2e, 0xd3, 0xbf);
    t.v = QColor(0xff, 0x9f, 0x3a);
    t.o = QColor(0xc0, 0x84, 0xfc);
    t.s = QColor(0xff, 0x6b, 0x81);
    t.p = QColor(0xff, 0x7e, 0xc8);
    t.dO = QColor(0x4c, 0xc9, 0xf0);
    t.dQ = QColor(0x9d, 0x9f, 0xff);
    t.dK = QColor(0x7c, 0xdc, 0x62);
    t.dV = QColor(0xdd, 0xaa, 0x6e);
    t.lse = QColor(0xcf, 0xe0, 0x5a);
    t.delta = QColor(0xe8, 0x86, 0xf8);
    t.dP = QColor(0xff, 0xb3, 0xe2);
    t.dS = QColor(0xff, 0xa8, 0xaa);
    const qreal fit =
        window.isValid() ? std::min(window.width() / 1920.0, window.height() / 1080.0) : 1.0;
    t.scale = 1.55 * std::clamp(fit, 0.5, 2.0);
    t.lecture = true;
    return t;
}

namespace {
QColor mix(const QColor& a, const QColor& b, double t) {
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                            float(a.greenF() + (b.greenF() - a.greenF()) * t),
                            float(a.blueF() + (b.blueF() - a.blueF()) * t));
}
} // namespace

namespace {

constexpr int kLutSize = 1024;

// Colour maps tabulated once: a heatmap of a 4096 x 64 matrix looks a colour up 262 144 times.
struct ColourTables {
    QRgb diverging[2 * kLutSize + 1]; // index kLutSize is zero
    QRgb sequential[kLutSize + 1];
    ColourTables() {
        const QColor negative(0x21, 0x66, 0xac), zero(0xf7, 0xf7, 0xf7), positive(0xb2, 0x18, 0x2b);
        for (int i = 0; i <= 2 * kLutSize; ++i) {
            const double x = double(i - kLutSize) / kLutSize; // value / absMax in [-1, 1]
            const double t = std::sqrt(std::abs(x));
            diverging[i] = (x < 0 ? mix(zero, negative, t) : mix(zero, positive, t)).rgb();
        }
        const QColor low(0xfb, 0xf8, 0xf3), mid(0xf4, 0x9a, 0x3a), high(0x7a, 0x1f, 0x5c);
        for (int i = 0; i <= kLutSize; ++i) {
            const double t = double(i) / kLutSize;
            sequential[i] = (t < 0.5 ? mix(low, mid, t * 2) : mix(mid, high, (t - 0.5) * 2)).rgb();
        }
    }
};

const ColourTables& tables() {
    static const ColourTables t;
    return t;
}

} // namespace

QRgb divergingRgb(double value, double absMax) {
    if (std::isnan(value)) return qRgb(0xff, 0x00, 0xff);
    if (std::isinf(value)) return value > 0 ? qRgb(0x40, 0x00, 0x00) : qRgb(0x6e, 0x73, 0x7c);
    if (!(absMax > 0)) return tables().diverging[kLutSize];
    const double x = std::clamp(value / absMax, -1.0, 1.0);
    return tables().diverging[kLutSize + int(std::lround(x * kLutSize))];
}

QRgb sequentialRgb(double value, double max) {
    if (std::isnan(value)) return qRgb(0xff, 0x00, 0xff);
    if (std::isinf(value)) return qRgb(0x20, 0x00, 0x20);
    if (!(max > 0)) return tables().sequential[0];
    const double t = std::clamp(value / max, 0.0, 1.0);
    return tables().sequential[int(std::lround(t * kLutSize))];
}

QColor divergingColour(double value, double absMax) {
    return QColor::fromRgb(divergingRgb(value, absMax));
}

QColor sequentialColour(double value, double max) {
    return QColor::fromRgb(sequentialRgb(value, max));
}

QColor textOn(const QColor& background) {
    const double luma =
        0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF();
    return luma > 0.55 ? QColor(0x10, 0x14, 0x1c) : QColor(0xff, 0xff, 0xff);
}

} // namespace flashviz::gui
