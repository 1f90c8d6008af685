// The lecture chapters file (app/gui/lecture/lecture.cpp parseLectureChapters, and its "why" list,
// session/step_why.cpp parseStepWhys): any bytes give entries and messages, never a crash or an
// exception.
#include "lecture/lecture.h"
#include "session/step_why.h"

#include <QByteArray>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    const flashviz::gui::LectureParse parsed =
        flashviz::gui::parseLectureChapters(bytes, QStringLiteral("lecture.json"));
    for (const flashviz::gui::LectureChapter& c : parsed.chapters)
        if (c.beats.isEmpty() || c.views.isEmpty() ||
            (!c.weights.isEmpty() && c.weights.size() != c.views.size()) ||
            c.notes.size() > flashviz::gui::kMaxNotesChars ||
            !flashviz::gui::placeholderProblem(c.notes).isEmpty())
            __builtin_trap();
    const flashviz::gui::StepWhyParse whys =
        flashviz::gui::parseStepWhys(bytes, QStringLiteral("lecture.json"));
    for (const flashviz::gui::StepWhy& why : whys.entries)
        if (why.id.isEmpty() || why.text.trimmed().isEmpty() || why.steps.empty()) __builtin_trap();
    return 0;
}
