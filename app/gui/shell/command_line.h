#pragma once
// The command line: --preset, --step, --lecture [--chapter], --screenshot FILE [--size WxH],
// --bug, --backend NAME, --analysis N, --transition T, --no-restore.
#include "shell/main_window.h"

#include <QSize>
#include <QString>
#include <QStringList>

namespace flashviz::gui {

struct CommandLine {
    StartOptions start;
    QString screenshot; // write a PNG of the window and exit
    QSize size{1920, 1080};
    QString error;        // set when the arguments cannot be used
    bool exitNow = false; // --help or --version was answered
    QString output;       // what to print for --help / --version
};

CommandLine parseCommandLine(const QStringList& arguments);

} // namespace flashviz::gui
