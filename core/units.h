#pragma once
// How a memory capacity is written, on every face (the window's format.* and flashviz-cli's
// `profiles` both call this): in binary units, as the CUDA tools and nvidia-smi report device
// memory, and labelled as such, so that an A100's 40 x 2^30 bytes read "40.0 GiB" everywhere
// and never "40 GB" in one place and "42.9 GB" in another.
#include <string>

namespace flashviz {

// "512 MiB" below 1 GiB, "40.0 GiB", "141.0 GiB" from there.
std::string formatMemoryCapacity(double bytes);

// How many times one figure is another, on every face: "1.5", and whole from 10 up ("13"); the
// sentence adds the ×.
std::string formatTimes(double ratio);
// A share: 0.563 as "56 %", below a tenth with one decimal ("4.2 %").
std::string formatPercent(double share);
// Bytes moved (traffic, tiles, working sets), on every face: in steps of 1024, three figures:
// "128 B", "1.50 KB", "8.50 MB", "4.06 GB".
std::string formatByteAmount(double bytes);

// A short time (a kernel, a span of a trace), three figures: "850 ns", "1.25 µs", "12.5 µs",
// "1.20 ms"; non-finite values as "nan" / "inf", never hidden.
std::string formatNanoseconds(double ns);

} // namespace flashviz
