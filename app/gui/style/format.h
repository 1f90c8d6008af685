#pragma once
// How numbers are written on screen: values, byte counts, rates. One place, so that the memory
// stage, the tile detail and the lecture narrative agree on units (KB = 1024 bytes, like the
// explainer script; bandwidths and FLOP rates in powers of ten, like datasheets).
#include <QString>

#include <cstdint>

namespace flashviz::gui {

QString formatValue(double value, int significant = 4); // "0.4213", "-1.2e-05", "-inf", "NaN"
QString formatBytes(double bytes); // "128 B", "1.50 KB", "8.50 MB" (core formatByteAmount, as the CLI)
QString formatMemorySize(double bytes); // capacities, binary: "40.0 GiB" (core/units.h, as the CLI)
QString formatRate(double bytesPerSecond);     // "1.56 TB/s"
QString formatFlops(double flops);             // "4.29 GFLOP"
QString formatFlopRate(double flopsPerSecond); // "19.5 TFLOP/s"
QString formatSeconds(double seconds);         // "3.28 ps", "830 ns", "1.2 ms"
// A short time (a kernel, a span of a trace), three figures: "850 ns", "1.25 µs", "12.5 µs"
// (core/units.h, as the CLI's hopper-trace).
QString formatNanoseconds(double ns);
QString formatFrequency(double hertz);         // "1.98 GHz"
QString formatCount(std::uint64_t count);      // "1 048 576"
QString formatOperations(std::uint64_t count); // "74 880", then "153 M", "4.29 G" from 100 000
QString formatShare(double share);             // 0.563 as "56 %" (core/units.h, as the CLI)
QString formatRatio(double ratio);             // "1.5", "13" from 10 up (core/units.h, as the CLI)
// The text with no line break allowed after '/' or '|' (a word joiner follows each): a wrapped
// label broke "1.55 TB/s" into "1.55 TB/" and "s", and "max |diff|" after its first bar.
QString unbroken(const QString& text);

// In one given unit with fixed decimals, so that the figures one sentence compares share it:
// formatBytesIn(3 << 20, ByteUnit::MB, 2) is "3.00 MB".
enum class ByteUnit { KB, MB };
QString formatBytesIn(double bytes, ByteUnit unit, int decimals);
QString formatMilliseconds(double ms); // "12.3 ms", "0.85 ms": two times compared in one unit
// Device memory a run takes, in the capacities' unit: "512 MiB", "8.0 GiB".
QString formatDeviceMemory(double bytes);

} // namespace flashviz::gui
