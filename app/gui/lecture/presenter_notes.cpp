#include "lecture/presenter_notes.h"

#include "session/save_file.h"
#include "session/settings.h"

#include "core/errors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

namespace flashviz::gui {

namespace {

// One chapter's notes as the file holds them: text, bounded, with the lecture's placeholders.
QString readNotes(const QJsonObject& notes, const QString& id) {
    if (id.isEmpty() || id.size() > kMaxChapterIdChars)
        refuseJson(QStringLiteral("notes: a chapter id must have 1 to %1 characters, not '%2'")
                       .arg(kMaxChapterIdChars)
                       .arg(id.left(40)));
    const QJsonValue v = notes.value(id);
    if (!v.isString())
        refuseJson(QStringLiteral("notes.%1 must be text, not %2").arg(id, jsonExcerpt(v)));
    const QString text = v.toString();
    if (const QString problem = notesProblem(text); !problem.isEmpty())
        refuseJson(QStringLiteral("notes.%1: %2").arg(id, problem));
    return text;
}

std::map<QString, QString> readUserNotes(const QByteArray& bytes) {
    if (bytes.size() > kMaxUserNotesBytes)
        refuseJson(QStringLiteral("it is %1 bytes long; at most %2 are read")
                       .arg(bytes.size())
                       .arg(kMaxUserNotesBytes));
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError)
        refuseJson(QStringLiteral("not valid JSON (%1 at byte %2)")
                       .arg(error.errorString())
                       .arg(error.offset));
    if (!doc.isObject()) refuseJson(QStringLiteral("it is not a JSON object"));
    const QJsonObject o = doc.object();
    (void)readFormatVersion(o, kUserNotesVersion, QStringLiteral("notes file"));
    checkJsonKeys(o, {QStringLiteral("version"), QStringLiteral("notes")});
    const QJsonValue notes = o.value(QStringLiteral("notes"));
    if (!notes.isObject())
        refuseJson(QStringLiteral("notes must be an object of chapter ids and their notes, not %1")
                       .arg(notes.isUndefined() ? QStringLiteral("missing") : jsonExcerpt(notes)));
    const QJsonObject byChapter = notes.toObject();
    if (byChapter.size() > kMaxUserNotesEntries)
        refuseJson(QStringLiteral("notes has %1 chapters; at most %2 are read")
                       .arg(byChapter.size())
                       .arg(kMaxUserNotesEntries));
    std::map<QString, QString> out;
    for (const QString& id : byChapter.keys())
        out[id] = readNotes(byChapter, id);
    return out;
}

} // namespace

QString notesProblem(const QString& text) {
    if (text.size() > kMaxNotesChars)
        return QStringLiteral("%1 characters long; at most %2 are kept")
            .arg(text.size())
            .arg(kMaxNotesChars);
    return placeholderProblem(text);
}

UserNotesParse parseUserNotes(const QByteArray& bytes, const QString& source) {
    UserNotesParse out;
    try {
        out.notes = readUserNotes(bytes);
    } catch (const EngineError& error) {
        out.error = QStringLiteral("%1: %2").arg(source, QString::fromUtf8(error.what()));
    }
    return out;
}

QByteArray userNotesJson(const std::map<QString, QString>& notes) {
    QJsonObject byChapter;
    for (const auto& entry : notes)
        byChapter.insert(entry.first, entry.second);
    const QJsonObject file{{QStringLiteral("version"), kUserNotesVersion},
                           {QStringLiteral("notes"), byChapter}};
    return QJsonDocument(file).toJson(QJsonDocument::Indented);
}

QString userNotesPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/lecture-notes.json");
}

LectureNotes::LectureNotes(QString path) : m_path(std::move(path)) {
    QFile file(m_path);
    if (!file.exists()) return;
    if (!file.open(QIODevice::ReadOnly)) {
        m_loadProblem = QObject::tr("%1 could not be opened (%2)").arg(m_path, file.errorString());
    } else {
        // One byte past the bound, so that a longer file is reported as too long.
        const UserNotesParse parsed = parseUserNotes(file.read(kMaxUserNotesBytes + 1), m_path);
        m_notes = parsed.notes;
        m_loadProblem = parsed.error;
    }
    if (!m_loadProblem.isEmpty()) qWarning("flashviz: %s", qPrintable(m_loadProblem));
}

QString LectureNotes::notes(const LectureChapter& chapter) const {
    const auto it = m_notes.find(chapter.id);
    return it != m_notes.end() ? it->second : chapter.notes;
}

bool LectureNotes::isEdited(const QString& chapterId) const {
    return m_notes.count(chapterId) > 0;
}

QString LectureNotes::save(const LectureChapter& chapter, const QString& text) {
    if (const QString problem = notesProblem(text); !problem.isEmpty())
        return QObject::tr("The notes are not saved: %1.").arg(problem);
    std::map<QString, QString> next = m_notes;
    if (text == chapter.notes)
        next.erase(chapter.id);
    else
        next[chapter.id] = text;
    return write(next);
}

QString LectureNotes::revert(const LectureChapter& chapter) {
    if (!isEdited(chapter.id)) return {};
    std::map<QString, QString> next = m_notes;
    next.erase(chapter.id);
    return write(next);
}

QString LectureNotes::write(const std::map<QString, QString>& notes) {
    if (!QDir().mkpath(QFileInfo(m_path).absolutePath()))
        return QObject::tr("The folder of %1 could not be made.").arg(m_path);
    if (QString error; !writeFileSafely(m_path, userNotesJson(notes), &error)) return error;
    m_notes = notes;
    m_loadProblem.clear(); // the broken file is replaced by the notes as they are now
    return {};
}

} // namespace flashviz::gui
