#pragma once
// The lecturer's own speaker notes: a copy kept beside the notes shipped in resources/lecture.json,
// edited in the presenter view and read over the shipped ones at start. The file, in the
// application's data folder (QStandardPaths::AppDataLocation), is
//   {"version": 1, "notes": {"<chapter id>": "<notes, with the lecture's {placeholders}>", ...}}
// A chapter the file does not name shows its shipped notes; "Revert to the shipped notes" takes
// the chapter out of the file. A file that cannot be read leaves the shipped notes on screen and
// is left as it is until the lecturer saves.
#include "lecture/lecture.h"

#include <QByteArray>
#include <QString>

#include <map>

namespace flashviz::gui {

// Why `text` cannot be a chapter's speaker notes, the shipped ones (resources/lecture.json) or
// the lecturer's own: longer than kMaxNotesChars, or placeholderProblem(); empty when it can.
QString notesProblem(const QString& text);

inline constexpr int kUserNotesVersion = 1;
inline constexpr qint64 kMaxUserNotesBytes = 1024 * 1024;
inline constexpr int kMaxUserNotesEntries = 256;

// The chapters' notes of one file, by chapter id (ids of chapters this version does not have are
// kept, so that saving does not lose them); or why the file cannot be used, naming `source` and
// the field, and then no notes at all. Any bytes at all; never throws.
struct UserNotesParse {
    std::map<QString, QString> notes;
    QString error;
};
UserNotesParse parseUserNotes(const QByteArray& bytes, const QString& source);
// The file's bytes for these notes (what parseUserNotes reads back).
QByteArray userNotesJson(const std::map<QString, QString>& notes);

// Where the user's copy lives: lecture-notes.json in the application's data folder.
QString userNotesPath();

class LectureNotes {
  public:
    // Reads the user's copy at `path` (a missing file is no copy, not a problem).
    explicit LectureNotes(QString path = userNotesPath());

    // The notes the presenter shows for a chapter: the user's copy, else the shipped ones.
    QString notes(const LectureChapter& chapter) const;
    bool isEdited(const QString& chapterId) const;
    // Why the user's copy could not be read, as the presenter view says it; empty when it was.
    QString loadProblem() const { return m_loadProblem; }
    const QString& path() const { return m_path; }

    // Keeps `text` as the chapter's notes and writes the file (QSaveFile). Returns why not, and
    // then nothing changes: notes too long or with an unknown {placeholder}, a file that cannot
    // be written. Notes equal to the shipped ones take the chapter out of the file.
    QString save(const LectureChapter& chapter, const QString& text);
    // Takes the chapter out of the user's copy (the shipped notes show again); why not, or empty.
    QString revert(const LectureChapter& chapter);

  private:
    QString write(const std::map<QString, QString>& notes);

    QString m_path;
    std::map<QString, QString> m_notes;
    QString m_loadProblem;
};

} // namespace flashviz::gui
