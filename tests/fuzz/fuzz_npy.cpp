// The .npy reader (core/npy.cpp): any bytes give a matrix or an EngineError, never a crash, a
// hang or an allocation sized by a header that was not checked (ASan aborts on a huge one). The
// same bytes go through the reader of files on disk, which reads the header and then only the
// chosen head; both must agree.
#include "core/errors.h"
#include "core/npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>

namespace {

// One file per process, rewritten for every input.
const std::string& scratchPath() {
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir && *dir ? dir : "/tmp") + "/fuzz_npy-" + std::to_string(getpid()) +
               ".npy";
    }();
    return path;
}

// The matrix, or the refusal's message.
template <class Read> std::string outcome(Read read) {
    try {
        const flashviz::Matrix m = read();
        return "matrix " + std::to_string(m.rows()) + "x" + std::to_string(m.cols());
    } catch (const flashviz::EngineError& e) {
        return std::string("refused: ") + e.what();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // The last byte chooses the head (none, 0, 1, 2) so that 3-D files are read too.
    const std::optional<int> head =
        size && data[size - 1] % 4 ? std::optional<int>(data[size - 1] % 4 - 1) : std::nullopt;
    const std::string fromBytes =
        outcome([&] { return flashviz::readNpyMatrix(bytes, "fuzz.npy", head); });
    {
        std::ofstream out(scratchPath(), std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), std::streamsize(bytes.size()));
    }
    const std::string fromFile =
        outcome([&] { return flashviz::loadNpyMatrix(scratchPath(), head); });
    std::remove(scratchPath().c_str());
    // The two readers name their source differently; what they decide must be the same.
    const auto decision = [](const std::string& text) {
        const std::size_t colon = text.find(".npy: ");
        return text.rfind("refused: ", 0) == 0 && colon != std::string::npos
                   ? "refused: " + text.substr(colon + 6)
                   : text;
    };
    if (decision(fromBytes) != decision(fromFile)) __builtin_trap();
    return 0;
}
