#pragma once
// NumPy's .npy format (versions 1.0, 2.0 and 3.0), read strictly: float32 or float64,
// little-endian, C order, shape (n, d) or (h, n, d). Every refusal is an EngineError whose
// message names the file, what is wrong and what FlashViz reads.
//
// FlashViz has its own reader rather than xtensor's load_npy (Debian 12 ships xtensor 0.24.3):
// that one does not notice truncated data, allocates whatever shape a header names, and reads
// the shape with a stringstream that accepts junk. Here nothing is allocated before the header
// has been checked against the limits and against the size of the file.
#include "core/types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flashviz {

enum class NpyDtype { Float32, Float64 };

// The heads an (h, n, d) file may hold: more than any model has, and with n and d inside their
// limits the data's size stays far from overflowing 64 bits.
inline constexpr int kMaxNpyHeads = 1 << 16;

// What an .npy file's header says, checked: a supported version, dtype and order, a shape of
// rank 2 or 3 within FlashViz's limits, and a file exactly as long as that shape's data.
struct NpyHeader {
    int majorVersion = 1;
    int minorVersion = 0;
    NpyDtype dtype = NpyDtype::Float64;
    std::vector<std::int64_t> shape; // (n, d) or (h, n, d)
    std::uint64_t dataOffset = 0;    // bytes before the data: magic, version, length, header

    int elementBytes() const { return dtype == NpyDtype::Float32 ? 4 : 8; }
    std::uint64_t dataBytes() const; // the product of the shape, times elementBytes()
    int rows() const { return int(shape[shape.size() - 2]); }
    int cols() const { return int(shape.back()); }
    int heads() const { return shape.size() == 3 ? int(shape[0]) : 1; }
};

// "float32", "float64"
const char* toString(NpyDtype dtype);
// "float32 (8, 16, 64)"
std::string describe(const NpyHeader& header);

// The header of the .npy file whose whole contents are `bytes`; `source` names it in messages.
NpyHeader readNpyHeader(std::string_view bytes, const std::string& source);
// One matrix from the .npy file whose whole contents are `bytes`: the file itself when it is
// (n, d), or head `head` of an (h, n, d) file (which needs one; a 2-D file takes none). Every
// value must be finite.
Matrix readNpyMatrix(std::string_view bytes, const std::string& source,
                     std::optional<int> head = std::nullopt);

// The head a matrix is taken from: 0 for an (n, d) file (which takes no head index), `head` for
// an (h, n, d) file (which needs one, 0 to h - 1). Throws EngineError naming `source`.
int chooseNpyHead(const NpyHeader& header, std::optional<int> head, const std::string& source);

// The same from a file on disk; only the header and the chosen head's data are read.
NpyHeader loadNpyHeader(const std::string& path);
Matrix loadNpyMatrix(const std::string& path, std::optional<int> head = std::nullopt);

} // namespace flashviz
