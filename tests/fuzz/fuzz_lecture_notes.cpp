// The lecturer's own copy of the speaker notes (app/gui/lecture/presenter_notes.cpp
// parseUserNotes): any bytes give notes or one message, never a crash or an exception; notes
// that are read are within the limits the shipped ones keep, and write back to the same notes.
#include "lecture/lecture.h"
#include "lecture/presenter_notes.h"

#include <QByteArray>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace flashviz::gui;
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    const UserNotesParse parsed = parseUserNotes(bytes, QStringLiteral("lecture-notes.json"));
    if (!parsed.error.isEmpty() && !parsed.notes.empty()) __builtin_trap();
    if (parsed.notes.size() > std::size_t(kMaxUserNotesEntries)) __builtin_trap();
    for (const auto& [id, text] : parsed.notes)
        if (id.isEmpty() || id.size() > kMaxChapterIdChars || text.size() > kMaxNotesChars ||
            !placeholderProblem(text).isEmpty())
            __builtin_trap();
    if (parsed.error.isEmpty()) {
        const UserNotesParse again =
            parseUserNotes(userNotesJson(parsed.notes), QStringLiteral("lecture-notes.json"));
        if (!again.error.isEmpty() || again.notes != parsed.notes) __builtin_trap();
    }
    return 0;
}
