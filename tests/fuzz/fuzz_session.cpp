// Sessions (app/gui/session/session_file.cpp): any bytes are read as a .flashviz file, strictly
// and field by field, and give a session or a message naming the file, never a crash, a throw
// or an allocation past the size limit; a session read writes back and reads the same.
#include "session/session_file.h"

#include <QByteArray>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace flashviz::gui;
    // Limits as a build might have them: charts, and chapters of different lengths.
    static const SessionLimits limits{8, {1, 16, 120, 4096}};
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    const SessionRead read = parseSession(bytes, QStringLiteral("fuzz.flashviz"), limits);
    if (read.session.has_value() == !read.error.isEmpty()) __builtin_trap();
    if (read.session) {
        const SessionRead again =
            parseSession(sessionToJson(*read.session), QStringLiteral("again.flashviz"), limits);
        if (!again.session || !(*again.session == *read.session)) __builtin_trap();
    } else if (!read.error.startsWith(QStringLiteral("fuzz.flashviz: "))) {
        __builtin_trap(); // every message names the file
    }
    return 0;
}
