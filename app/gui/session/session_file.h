#pragma once
// A session: everything the window shows, saved as one versioned JSON file (.flashviz) and
// opened again as it was: the settings (with the inputs they carry), the step, the tab, the
// analysis chart, the view options and lecture mode with its chapter and step. Reading is strict:
// every field is checked, unknown ones are refused, and a message names the file and the field.
#include "session/settings.h"
#include "session/view_options.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

class QSettings;

namespace flashviz::gui {

// The file format, defined here once: its name (the "format" field, and the magic the installed
// MIME type matches), the newest version this build reads and writes, and the file extension.
inline constexpr char kSessionFormat[] = "flashviz-session";
inline constexpr int kSessionVersion = 1;
inline constexpr char kSessionExtension[] = "flashviz";
// Larger files are refused before they are read (a session is a few kilobytes; the settings'
// inputs, a designed maximum per query row, some hundred more).
inline constexpr qint64 kMaxSessionBytes = 4 * 1024 * 1024;
// The File menu's "Open recent" holds this many, newest first.
inline constexpr int kMaxRecentSessions = 8;

// The window's tabs, in their order.
enum class SessionTab { StepByStep, Analysis, GpuBenchmark, Versions, Hopper };

// Lecture mode as a session keeps it: the chapter (from 0) and the step on screen, a beat or a
// step between two (the arrow keys).
struct SessionLecture {
    int chapter = 0;
    int step = 0;
    bool operator==(const SessionLecture&) const = default;
};

struct Session {
    VizSettings settings; // the user's own: in lecture mode, those the window returns to
    int step = 0;         // of those settings
    SessionTab tab = SessionTab::StepByStep;
    int analysisChart = 0; // from 0
    ViewOptions view;
    std::optional<SessionLecture> lecture; // lecture mode on
    bool operator==(const Session&) const = default;
};

// What a session may name on this build: the analysis charts, and each lecture chapter's steps.
struct SessionLimits {
    int analysisCharts = 0;
    std::vector<std::int64_t> chapterSteps;
};

// The file's bytes: {"format": "flashviz-session", "version": 1, "settings": {...}, "step",
// "tab", "chart" (from 1), "view": {...}, "lecture": null or {"chapter" (from 1), "step"}}.
QByteArray sessionToJson(const Session& session);

// A session read from bytes, or the message saying why not, starting with `source` (the file).
// Any bytes at all; never throws.
struct SessionRead {
    std::optional<Session> session;
    QString error;
};
SessionRead parseSession(const QByteArray& bytes, const QString& source,
                         const SessionLimits& limits);
// The same for a file: one that is missing, not a plain file or over kMaxSessionBytes is refused
// before it is read.
SessionRead readSessionFile(const QString& path, const SessionLimits& limits);
// Writes through QSaveFile (the old file stays whole if writing fails). Empty, or why not.
QString writeSessionFile(const QString& path, const Session& session);

// A session saved where its backend runs, opened where it does not (a CUDA machine's session on
// a laptop): the CPU computes instead. Returns the sentence saying so, or empty.
QString fallBackToAvailableBackend(VizSettings& settings);

// The recent sessions in QSettings, absolute paths, newest first, at most kMaxRecentSessions.
QStringList recentSessions(QSettings& store);
void rememberRecentSession(QSettings& store, const QString& path); // to the front
void forgetRecentSession(QSettings& store, const QString& path);
void clearRecentSessions(QSettings& store);

} // namespace flashviz::gui
