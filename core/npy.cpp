#include "core/npy.h"

#include "core/errors.h"
#include "core/problem.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace flashviz {

// The data is copied as it lies in the file: a big-endian machine would need to swap bytes.
static_assert(std::endian::native == std::endian::little,
              "the .npy reader assumes a little-endian machine");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kVersionEnd = 8;                  // magic (6 bytes) + major + minor
constexpr std::uint64_t kMaxHeaderBytes = 65536;        // a (h, n, d) header is about 120 bytes
constexpr std::size_t kPreambleBytes = kVersionEnd + 4; // with version 2.0's 4-byte length
constexpr const char* kFloatsRead = "FlashViz reads float32 ('<f4') or float64 ('<f8')";
constexpr const char* kShapesRead = "FlashViz reads (n, d), or (h, n, d) with a head index";

[[noreturn]] void refuse(const std::string& source, const std::string& what,
                         ErrorKind kind = ErrorKind::InvalidArgument) {
    throw EngineError(kind, source + ": " + what);
}

[[noreturn]] void malformed(const std::string& source, const std::string& what) {
    refuse(source, "malformed .npy header: " + what);
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string text = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + (shape.size() == 1 ? ",)" : ")");
}

std::string bytesText(std::uint64_t bytes) {
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::uint64_t littleEndian(std::string_view bytes) {
    std::uint64_t value = 0;
    for (std::size_t i = bytes.size(); i-- > 0;)
        value = (value << 8) | static_cast<unsigned char>(bytes[i]);
    return value;
}

struct Preamble {
    int major = 0, minor = 0;
    std::uint64_t headerStart = 0, headerBytes = 0;
};

// Magic, version and header length, from the file's first bytes (`prefix`, as many as it has).
Preamble readPreamble(std::string_view prefix, const std::string& source) {
    if (prefix.substr(0, kMagic.size()) != kMagic)
        refuse(source, "not an .npy file (it does not start with NumPy's magic \\x93NUMPY)");
    if (prefix.size() < kVersionEnd)
        refuse(source, "truncated: the file ends inside the .npy version");
    Preamble p;
    p.major = static_cast<unsigned char>(prefix[6]);
    p.minor = static_cast<unsigned char>(prefix[7]);
    if (p.major < 1 || p.major > 3 || p.minor != 0)
        refuse(source, "unsupported .npy version " + std::to_string(p.major) + "." +
                           std::to_string(p.minor) + "; FlashViz reads versions 1.0, 2.0 and 3.0");
    const std::size_t lengthBytes = p.major == 1 ? 2 : 4;
    p.headerStart = kVersionEnd + lengthBytes;
    if (prefix.size() < p.headerStart)
        refuse(source, "truncated: the file ends inside the .npy header length");
    p.headerBytes = littleEndian(prefix.substr(kVersionEnd, lengthBytes));
    if (p.headerBytes > kMaxHeaderBytes)
        refuse(source, "the .npy header is " + bytesText(p.headerBytes) +
                           " long; FlashViz reads headers of up to " + bytesText(kMaxHeaderBytes));
    return p;
}

// The header's Python dict literal, as numpy.save writes it:
// {'descr': '<f4', 'fortran_order': False, 'shape': (8, 4), }
class HeaderParser {
  public:
    HeaderParser(std::string_view text, const std::string& source)
        : m_text(text), m_source(source) {}

    void parse(std::string& descr, bool& fortranOrder, std::vector<std::int64_t>& shape) {
        bool seenDescr = false, seenOrder = false, seenShape = false;
        expect('{', "a dict that starts with '{'");
        while (!take('}')) {
            const std::string key = quoted("a key in quotes");
            expect(':', "':' after the key '" + key + "'");
            if (key == "descr") {
                once(seenDescr, key);
                if (peek() == '[')
                    refuse(m_source,
                           "a structured dtype (a list of fields); " + std::string(kFloatsRead));
                descr = quoted("the 'descr' value, a dtype in quotes such as '<f4'");
            } else if (key == "fortran_order") {
                once(seenOrder, key);
                fortranOrder = boolean();
            } else if (key == "shape") {
                once(seenShape, key);
                shape = tuple();
            } else {
                malformed(m_source, "unknown key '" + key +
                                        "' (an .npy header has 'descr', 'fortran_order' and "
                                        "'shape')");
            }
            if (!take(',')) {
                expect('}', "',' or '}' after the '" + key + "' value");
                break;
            }
        }
        skipSpace();
        if (m_at != m_text.size()) malformed(m_source, "text after the closing '}'");
        for (const auto& [seen, key] :
             {std::pair{seenDescr, "descr"}, std::pair{seenOrder, "fortran_order"},
              std::pair{seenShape, "shape"}})
            if (!seen) malformed(m_source, "no '" + std::string(key) + "' key");
    }

  private:
    void skipSpace() {
        while (m_at < m_text.size() && (m_text[m_at] == ' ' || m_text[m_at] == '\t' ||
                                        m_text[m_at] == '\n' || m_text[m_at] == '\r'))
            ++m_at;
    }
    char peek() {
        skipSpace();
        return m_at < m_text.size() ? m_text[m_at] : '\0';
    }
    bool take(char c) {
        if (peek() != c) return false;
        ++m_at;
        return true;
    }
    void expect(char c, const std::string& what) {
        if (!take(c)) malformed(m_source, "expected " + what);
    }
    void once(bool& seen, const std::string& key) {
        if (seen) malformed(m_source, "the key '" + key + "' appears twice");
        seen = true;
    }
    std::string quoted(const std::string& what) {
        const char quote = peek();
        if (quote != '\'' && quote != '"') malformed(m_source, "expected " + what);
        const std::size_t end = m_text.find(quote, m_at + 1);
        if (end == std::string_view::npos) malformed(m_source, "a quote is never closed");
        const std::string_view inside = m_text.substr(m_at + 1, end - m_at - 1);
        if (inside.find('\\') != std::string_view::npos || inside.size() > 64)
            malformed(m_source, "expected " + what);
        m_at = end + 1;
        return std::string(inside);
    }
    bool boolean() {
        skipSpace();
        for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
            if (m_text.substr(m_at, std::strlen(word)) == word) {
                m_at += std::strlen(word);
                return value;
            }
        malformed(m_source, "'fortran_order' must be True or False");
    }
    std::vector<std::int64_t> tuple() {
        expect('(', "the 'shape' value, a tuple such as (8, 4)");
        std::vector<std::int64_t> dims;
        while (!take(')')) {
            skipSpace();
            const std::size_t start = m_at;
            while (m_at < m_text.size() && m_text[m_at] >= '0' && m_text[m_at] <= '9')
                ++m_at;
            std::int64_t dim = 0;
            const auto [end, error] =
                std::from_chars(m_text.data() + start, m_text.data() + m_at, dim);
            if (m_at == start || error != std::errc{} || end != m_text.data() + m_at)
                malformed(m_source, "the 'shape' value must be a tuple of whole numbers, each "
                                    "below 2^63");
            dims.push_back(dim);
            if (dims.size() > 32) malformed(m_source, "the 'shape' has more than 32 dimensions");
            if (!take(',')) {
                expect(')', "',' or ')' in the 'shape' tuple");
                break;
            }
        }
        return dims;
    }

    std::string_view m_text;
    const std::string& m_source;
    std::size_t m_at = 0;
};

// What a dtype string names, for a message: "int32 ('<i4')".
std::string dtypeName(const std::string& descr) {
    std::size_t at = 0;
    if (!descr.empty() && std::string_view("<>=|").find(descr[0]) != std::string_view::npos) ++at;
    const char kind = at < descr.size() ? descr[at] : '\0';
    int bytes = 0;
    const auto [end, error] = std::from_chars(descr.data() + std::min(at + 1, descr.size()),
                                              descr.data() + descr.size(), bytes);
    const bool sized =
        error == std::errc{} && end == descr.data() + descr.size() && bytes > 0 && bytes <= 1024;
    const std::string bits = sized ? std::to_string(8 * bytes) : std::string();
    std::string name;
    switch (sized ? kind : '\0') {
    case 'f':
        name = bytes == 16 ? "long double (float128)" : "float" + bits;
        break;
    case 'i':
        name = "int" + bits;
        break;
    case 'u':
        name = "uint" + bits;
        break;
    case 'c':
        name = "complex" + bits;
        break;
    case 'b':
        name = "bool";
        break;
    case 'U':
        name = "text (unicode strings)";
        break;
    case 'S':
    case 'a':
        name = "bytes";
        break;
    case 'V':
        name = "raw bytes (void)";
        break;
    default:
        break;
    }
    if (descr == "|O" || descr == "O") name = "Python objects";
    if (!descr.empty() && (descr[at] == 'M' || descr[at] == 'm'))
        name = descr[at] == 'M' ? "datetime64" : "timedelta64";
    return (name.empty() ? "the dtype" : name) + " ('" + descr + "')";
}

NpyDtype readDtype(const std::string& descr, const std::string& source) {
    // '=' and '|' mean the machine's own order, which is little-endian here (static_assert
    // above); NumPy itself writes '<'.
    const bool little = !descr.empty() && (descr[0] == '<' || descr[0] == '=' || descr[0] == '|');
    const std::string_view type = little ? std::string_view(descr).substr(1) : descr;
    if (little && type == "f4") return NpyDtype::Float32;
    if (little && type == "f8") return NpyDtype::Float64;
    if (descr == ">f4" || descr == ">f8")
        refuse(source, "big-endian " + dtypeName(descr) +
                           "; FlashViz reads little-endian float32 ('<f4') or float64 ('<f8'): "
                           "save it with a.astype('<" +
                           descr.substr(1) + "')");
    refuse(source, dtypeName(descr) + "; " + kFloatsRead);
}

void checkDimension(std::int64_t value, std::int64_t highest, const std::string& what,
                    const std::string& shape, const std::string& source) {
    if (value < 1)
        refuse(source, "shape " + shape + " has " + std::to_string(value) + " " + what +
                           "; FlashViz reads 1 to " + std::to_string(highest));
    if (value > highest)
        refuse(source,
               "shape " + shape + " has " + std::to_string(value) + " " + what +
                   ", past FlashViz's limit of " + std::to_string(highest),
               ErrorKind::LimitExceeded);
}

void checkShape(const std::vector<std::int64_t>& shape, const std::string& source) {
    const std::string text = shapeText(shape);
    if (shape.size() != 2 && shape.size() != 3)
        refuse(source, "shape " + text + " has " + std::to_string(shape.size()) +
                           (shape.size() == 1 ? " dimension; " : " dimensions; ") + kShapesRead);
    if (shape.size() == 3) checkDimension(shape[0], kMaxNpyHeads, "heads (h)", text, source);
    checkDimension(shape[shape.size() - 2], kMaxSequenceLength, "rows (n)", text, source);
    checkDimension(shape.back(), kMaxHeadDim, "columns (d)", text, source);
}

// The header of a file of `fileSize` bytes whose first bytes are `prefix` (all of the file, or
// at least its preamble and header).
NpyHeader parseHeader(std::string_view prefix, std::uint64_t fileSize, const std::string& source) {
    const Preamble p = readPreamble(prefix, source);
    NpyHeader header;
    header.majorVersion = p.major;
    header.minorVersion = p.minor;
    header.dataOffset = p.headerStart + p.headerBytes;
    if (fileSize < header.dataOffset)
        refuse(source, "truncated: the .npy header is " + bytesText(p.headerBytes) +
                           " long, and the file ends " + bytesText(header.dataOffset - fileSize) +
                           " short of its end");
    // Versions 1.0 and 2.0 write the header in Latin-1, 3.0 in UTF-8: either way the keys and
    // values FlashViz reads are ASCII, and anything else is refused as malformed.
    std::string descr;
    bool fortranOrder = false;
    HeaderParser(prefix.substr(p.headerStart, p.headerBytes), source)
        .parse(descr, fortranOrder, header.shape);
    header.dtype = readDtype(descr, source);
    if (fortranOrder)
        refuse(source, "Fortran order (column-major); FlashViz reads C order (row-major): save it "
                       "with numpy.save(path, numpy.ascontiguousarray(a))");
    checkShape(header.shape, source);
    const std::uint64_t expected = header.dataOffset + header.dataBytes();
    const std::string data = describe(header) + " is " + bytesText(header.dataBytes()) +
                             " of data after a header of " + bytesText(header.dataOffset);
    if (fileSize < expected)
        refuse(source, "truncated: " + data + ", and the file has " +
                           bytesText(fileSize - header.dataOffset) + ": " +
                           bytesText(expected - fileSize) + " missing");
    if (fileSize > expected)
        refuse(source, bytesText(fileSize - expected) + " past the end of the data (" + data +
                           "); FlashViz reads one array as numpy.save writes it");
    return header;
}

std::uint64_t headBytes(const NpyHeader& header) {
    return std::uint64_t(header.rows()) * std::uint64_t(header.cols()) *
           std::uint64_t(header.elementBytes());
}

// The matrix a head's data is decoded into, refused first if this machine cannot hold it.
Matrix allocate(const NpyHeader& header, const std::string& source) {
    const double need = double(header.rows()) * header.cols() * sizeof(double);
    if (need > double(physicalMemoryBytes()) / 2)
        refuse(source,
               "shape " + shapeText(header.shape) + " needs " +
                   std::to_string(int(std::ceil(need / double(1 << 30)))) +
                   " GiB as float64, more than half of this machine's memory",
               ErrorKind::OutOfMemory);
    return Matrix(header.rows(), header.cols());
}

// Decodes `chunk` (whole elements) into `m`'s storage from element `first` on; the file's C
// order is the matrix's row-major order.
void decode(Matrix& m, std::string_view chunk, std::uint64_t first, NpyDtype dtype) {
    double* out = m.data() + first;
    if (dtype == NpyDtype::Float64) {
        std::memcpy(out, chunk.data(), chunk.size());
        return;
    }
    for (std::size_t i = 0; i < chunk.size() / 4; ++i) {
        float value;
        std::memcpy(&value, chunk.data() + 4 * i, 4);
        out[i] = value;
    }
}

void requireFinite(const Matrix& m, const NpyHeader& header, int head, const std::string& source) {
    std::uint64_t count = 0;
    Eigen::Index firstRow = 0, firstCol = 0;
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            if (!std::isfinite(m(r, c)) && count++ == 0) {
                firstRow = r;
                firstCol = c;
            }
    if (count == 0) return;
    const double first = m(firstRow, firstCol);
    refuse(source,
           std::to_string(count) + (count == 1 ? " value is" : " values are") +
               " not finite (inf or NaN), the first at row " + std::to_string(firstRow) +
               ", column " + std::to_string(firstCol) +
               (header.shape.size() == 3 ? " of head " + std::to_string(head) : std::string()) +
               " (" +
               (std::isnan(first) ? "nan"
                : first > 0       ? "inf"
                                  : "-inf") +
               "); attention needs finite inputs",
           ErrorKind::NonFinite);
}

} // namespace

std::uint64_t NpyHeader::dataBytes() const {
    std::uint64_t elements = 1;
    for (const std::int64_t dim : shape)
        elements *= std::uint64_t(dim); // checkShape bounds every dimension: no overflow
    return elements * std::uint64_t(elementBytes());
}

const char* toString(NpyDtype dtype) {
    return dtype == NpyDtype::Float32 ? "float32" : "float64";
}

std::string describe(const NpyHeader& header) {
    return std::string(toString(header.dtype)) + " " + shapeText(header.shape);
}

int chooseNpyHead(const NpyHeader& header, std::optional<int> head, const std::string& source) {
    const std::string shape = shapeText(header.shape);
    const std::string range = "0 to " + std::to_string(header.heads() - 1);
    if (header.shape.size() == 2) {
        if (head)
            refuse(source, "shape " + shape + " is one (n, d) matrix; the head index " +
                               std::to_string(*head) +
                               " chooses a head of an (h, n, d) file: leave it out");
        return 0;
    }
    if (!head)
        refuse(source, "shape " + shape + " holds " + std::to_string(header.heads()) +
                           " heads (h, n, d): choose one with a head index, " + range);
    if (*head < 0 || *head >= header.heads())
        refuse(source, "head " + std::to_string(*head) + " is out of range: shape " + shape +
                           " holds " + std::to_string(header.heads()) + " heads, " + range);
    return *head;
}

NpyHeader readNpyHeader(std::string_view bytes, const std::string& source) {
    return parseHeader(bytes, bytes.size(), source);
}

Matrix readNpyMatrix(std::string_view bytes, const std::string& source, std::optional<int> head) {
    const NpyHeader header = readNpyHeader(bytes, source);
    const int chosen = chooseNpyHead(header, head, source);
    Matrix m = allocate(header, source);
    decode(m, bytes.substr(header.dataOffset + chosen * headBytes(header), headBytes(header)), 0,
           header.dtype);
    requireFinite(m, header, chosen, source);
    return m;
}

namespace {

struct OpenedFile {
    std::ifstream stream;
    NpyHeader header;
};

OpenedFile openNpy(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (path.empty()) refuse("(no file name)", "no .npy file was given");
    if (!fs::exists(status)) refuse(path, "no such file");
    if (fs::is_directory(status)) refuse(path, "is a folder, not an .npy file");
    if (!fs::is_regular_file(status)) refuse(path, "is not a regular file");
    const std::uintmax_t size = fs::file_size(path, error);
    OpenedFile file;
    file.stream.open(path, std::ios::binary);
    if (error || !file.stream)
        refuse(path, std::string("cannot be read (") + std::strerror(errno) + ")");
    // The preamble first, to learn the header's length; then the whole header.
    std::string prefix(std::size_t(std::min<std::uintmax_t>(size, kPreambleBytes)), '\0');
    file.stream.read(prefix.data(), std::streamsize(prefix.size()));
    const Preamble p = readPreamble(prefix, path);
    const std::uint64_t headerEnd = std::min<std::uint64_t>(size, p.headerStart + p.headerBytes);
    if (headerEnd > prefix.size()) {
        const std::size_t had = prefix.size();
        prefix.resize(std::size_t(headerEnd));
        file.stream.read(prefix.data() + had, std::streamsize(headerEnd - had));
    }
    if (!file.stream) refuse(path, std::string("cannot be read (") + std::strerror(errno) + ")");
    file.header = parseHeader(prefix, size, path);
    return file;
}

} // namespace

NpyHeader loadNpyHeader(const std::string& path) {
    return openNpy(path).header;
}

Matrix loadNpyMatrix(const std::string& path, std::optional<int> head) {
    OpenedFile file = openNpy(path);
    const NpyHeader& header = file.header;
    const int chosen = chooseNpyHead(header, head, path);
    Matrix m = allocate(header, path);
    file.stream.seekg(std::streamoff(header.dataOffset + chosen * headBytes(header)));
    // In chunks of whole elements: a float32 head is never held twice.
    constexpr std::uint64_t kChunkBytes = 1 << 20;
    std::string chunk;
    for (std::uint64_t done = 0; done < headBytes(header);) {
        chunk.resize(std::size_t(std::min(kChunkBytes, headBytes(header) - done)));
        file.stream.read(chunk.data(), std::streamsize(chunk.size()));
        if (!file.stream) refuse(path, "cannot be read to its end (it changed while it was read?)");
        decode(m, chunk, done / std::uint64_t(header.elementBytes()), header.dtype);
        done += chunk.size();
    }
    requireFinite(m, header, chosen, path);
    return m;
}

} // namespace flashviz
