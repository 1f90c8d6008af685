#pragma once
// The real flashviz executable run by a test, on the offscreen platform. The test target defines
// FLASHVIZ_EXECUTABLE (its path, from CMake's $<TARGET_FILE:flashviz>).
#include <QByteArray>
#include <QProcess>
#include <QStringList>

#ifndef FLASHVIZ_EXECUTABLE
#error "FLASHVIZ_EXECUTABLE must name the flashviz executable"
#endif

// Its exit status and output; code -1 when it is still running after `timeoutMs` (it is then
// killed).
struct FlashvizExit {
    int code = -1;
    QByteArray out, err;
};

inline FlashvizExit runFlashviz(const QStringList& args, int timeoutMs = 120000) {
    QProcess process;
    process.start(QStringLiteral(FLASHVIZ_EXECUTABLE),
                  args + QStringList{QStringLiteral("-platform"), QStringLiteral("offscreen")});
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return {};
    }
    return {process.exitCode(), process.readAllStandardOutput(), process.readAllStandardError()};
}
