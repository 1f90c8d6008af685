// The presets file (app/gui/session/settings.cpp parsePresets): any bytes give entries and messages,
// never a crash or an exception.
#include "session/settings.h"

#include <QByteArray>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    const flashviz::gui::PresetsParse parsed =
        flashviz::gui::parsePresets(bytes, QStringLiteral("presets.json"));
    for (const flashviz::gui::Preset& p : parsed.presets)
        if (p.id.isEmpty() || p.title.isEmpty()) __builtin_trap(); // required fields
    return 0;
}
