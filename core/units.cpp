#include "core/units.h"

#include <cmath>
#include <cstdio>

namespace flashviz {

std::string formatMemoryCapacity(double bytes) {
    constexpr double kMiB = 1024.0 * 1024.0;
    constexpr double kGiB = 1024.0 * kMiB;
    char text[64];
    if (bytes < kGiB)
        std::snprintf(text, sizeof text, "%.0f MiB", bytes / kMiB);
    else
        std::snprintf(text, sizeof text, "%.1f GiB", bytes / kGiB);
    return text;
}

std::string formatTimes(double ratio) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", ratio >= 10 ? 0 : 1, ratio);
    return text;
}

std::string formatByteAmount(double bytes) {
    static const char* const units[] = {"B", "KB", "MB", "GB", "TB"};
    int unit = 0;
    while (std::abs(bytes) >= 1024.0 && unit < 4) {
        bytes /= 1024.0;
        ++unit;
    }
    const double magnitude = std::abs(bytes);
    const int decimals = unit == 0 || magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2;
    char text[64];
    std::snprintf(text, sizeof text, "%.*f %s", decimals, bytes, units[unit]);
    return text;
}

std::string formatPercent(double share) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f %%", share >= 0.1 ? 0 : 1, 100 * share);
    return text;
}

std::string formatNanoseconds(double ns) {
    if (!std::isfinite(ns)) return std::isnan(ns) ? "nan" : (ns > 0 ? "inf" : "-inf");
    static const char* units[] = {"ns", "\u00b5s", "ms", "s"};
    double value = ns;
    int unit = 0;
    while (std::abs(value) >= 999.5 && unit < 3) value /= 1000, ++unit;
    char text[64];
    const int decimals = unit == 0 || std::abs(value) >= 99.95 ? 0 : std::abs(value) >= 9.995 ? 1 : 2;
    std::snprintf(text, sizeof text, "%.*f %s", decimals, value, units[unit]);
    return text;
}

} // namespace flashviz
