#pragma once
// The command line: --preset, --step, --lecture [--chapter], --screenshot FILE [--size WxH],
// --bug, --backend NAME, --tc-check TYPE, --gpu ID, --analysis N, --versions, --hopper, --hopper-trace FILE,
// --transition T, --no-restore, and the problem options flashviz-cli takes (--n --nk --d --br
// --bc --seed --pattern --causal --loop-order ..., from core/setup.h), and a session file
// (FILE.flashviz) to open.
#include "shell/animation_recorder.h"
#include "shell/main_window.h"

#include <QSize>
#include <QString>
#include <QStringList>

namespace flashviz::gui {

struct CommandLine {
    StartOptions start;
    QString screenshot; // write a PNG of the window and exit
    // --export FILE [--from --to | --lecture --chapter] [--size --fps --frames-per-step]:
    // record this animation and exit.
    std::optional<AnimationRequest> animation;
    QSize size{1920, 1080};
    QString error;        // set when the arguments cannot be used
    bool exitNow = false; // --help or --version was answered
    QString output;       // what to print for --help / --version
    QString warning;      // what to say on stderr before starting (a backend replaced by the CPU)
    bool backendFellBack = false; // --backend named one that is not here; the CPU stands in
};

// Exit statuses of flashviz (its --help lists them).
inline constexpr int kExitRefused = 2;         // a command-line value refused
inline constexpr int kExitBackendFellBack = 3; // --screenshot written, on the CPU instead

CommandLine parseCommandLine(const QStringList& arguments);

} // namespace flashviz::gui
