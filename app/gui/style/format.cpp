#include "style/format.h"

#include "core/units.h"

#include <cmath>

namespace flashviz::gui {

QString formatValue(double value, int significant) {
    if (std::isnan(value)) return QStringLiteral("NaN");
    if (std::isinf(value)) return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    if (value == 0) return QStringLiteral("0");
    const double magnitude = std::abs(value);
    if (magnitude >= 1e5 || magnitude < 1e-3)
        return QString::number(value, 'e', std::max(0, significant - 2));
    QString text = QString::number(value, 'g', significant);
    return text;
}

static QString scaled(double value, const char* const* units, int unitCount, double base,
                      int digits) {
    int unit = 0;
    while (std::abs(value) >= base && unit < unitCount - 1) {
        value /= base;
        ++unit;
    }
    if (unit == 0)
        return QString::number(value, 'f', 0) + QLatin1Char(' ') + QLatin1String(units[0]);
    const int decimals = std::abs(value) >= 100 ? 0 : std::abs(value) >= 10 ? 1 : digits;
    return QString::number(value, 'f', decimals) + QLatin1Char(' ') + QLatin1String(units[unit]);
}

QString formatBytes(double bytes) {
    return QString::fromStdString(flashviz::formatByteAmount(bytes));
}

QString formatMemorySize(double bytes) {
    return QString::fromStdString(formatMemoryCapacity(bytes));
}

QString formatRate(double bytesPerSecond) {
    static const char* const units[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
    return scaled(bytesPerSecond, units, 6, 1000.0, 2);
}

QString formatFlops(double flops) {
    static const char* const units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
    return scaled(flops, units, 6, 1000.0, 2);
}

QString formatFlopRate(double flopsPerSecond) {
    static const char* const units[] = {"FLOP/s",  "kFLOP/s", "MFLOP/s",
                                        "GFLOP/s", "TFLOP/s", "PFLOP/s"};
    return scaled(flopsPerSecond, units, 6, 1000.0, 2);
}

QString formatSeconds(double seconds) {
    if (seconds <= 0) return QStringLiteral("0");
    struct Unit {
        double size;
        const char* name;
    };
    static const Unit units[] = {{1e-12, "ps"}, {1e-9, "ns"}, {1e-6, "µs"}, {1e-3, "ms"}, {1.0, "s"}};
    const Unit* chosen = &units[0];
    for (const Unit& u : units)
        if (seconds >= u.size) chosen = &u;
    const double value = seconds / chosen->size;
    const int decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;
    return QString::number(value, 'f', decimals) + QLatin1Char(' ') +
           QString::fromUtf8(chosen->name);
}

QString formatNanoseconds(double ns) {
    return QString::fromStdString(flashviz::formatNanoseconds(ns));
}

QString formatFrequency(double hertz) {
    static const char* const units[] = {"Hz", "kHz", "MHz", "GHz", "THz"};
    return scaled(hertz, units, 5, 1000.0, 2);
}

QString formatCount(std::uint64_t count) {
    QString digits = QString::number(count);
    for (qsizetype i = digits.size() - 3; i > 0; i -= 3)
        digits.insert(i, QChar(0x2009));
    return digits;
}

QString formatOperations(std::uint64_t count) {
    if (count < 100000) return formatCount(count);
    return formatFlops(double(count)).remove(QStringLiteral("FLOP")).trimmed();
}

QString formatShare(double share) {
    return QString::fromStdString(formatPercent(share));
}

QString formatRatio(double ratio) {
    return QString::fromStdString(formatTimes(ratio));
}

QString formatBytesIn(double bytes, ByteUnit unit, int decimals) {
    const bool mb = unit == ByteUnit::MB;
    return QString::number(bytes / (mb ? 1024.0 * 1024.0 : 1024.0), 'f', decimals) +
           (mb ? QStringLiteral(" MB") : QStringLiteral(" KB"));
}

QString formatMilliseconds(double ms) {
    return QString::number(ms, 'f', ms >= 10 ? 1 : 2) + QStringLiteral(" ms");
}

QString formatDeviceMemory(double bytes) {
    return formatMemorySize(bytes);
}

QString unbroken(const QString& text) {
    static const QChar wordJoiner(0x2060);
    QString out;
    out.reserve(text.size() + text.size() / 8);
    for (const QChar c : text) {
        out += c;
        if (c == QLatin1Char('/') || c == QLatin1Char('|')) out += wordJoiner;
    }
    return out;
}

} // namespace flashviz::gui
