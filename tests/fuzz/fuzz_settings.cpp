// The saved settings and layout (app/gui/session/settings.cpp, app/gui/shell/main_window.cpp): the same bytes
// go to the settings JSON reader, strict and per field, and to the checks of a saved splitter
// state, window geometry and window state; none may crash, throw past its contract or hang.
#include "shell/main_window.h"
#include "session/settings.h"

#include "core/errors.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRect>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace flashviz::gui;
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    const QJsonDocument doc = QJsonDocument::fromJson(bytes);
    if (doc.isObject()) {
        try {
            const VizSettings s = settingsFromJson(doc.object(), toySettings());
            // What was read writes back and reads the same.
            if (!(settingsFromJson(settingsToJson(s), toySettings()) == s)) __builtin_trap();
        } catch (const flashviz::EngineError&) {
        }
        QStringList problems;
        (void)settingsFromJson(doc.object(), toySettings(), &problems); // never throws
    }
    for (const int panes : {2, 3})
        for (const Qt::Orientation o : {Qt::Horizontal, Qt::Vertical})
            (void)checkSplitterState(bytes, panes, o);
    (void)checkWindowGeometry(bytes, QRect(0, 0, 1920, 1080));
    (void)checkWindowGeometry(bytes, QRect());
    (void)checkWindowState(bytes);
    return 0;
}
