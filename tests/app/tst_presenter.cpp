// The presenter view: every chapter's speaker notes, filled with the scene's figures and following
// the lecture beat by beat; the preview of the next click, which is the slide that click shows;
// the clock against its target; the lecturer's own copy of the notes (saved, read back, reverted,
// a broken file reported and left alone); the keys working from the presenter's window.
#include "lecture/lecture.h"
#include "lecture/presenter_notes.h"
#include "lecture/presenter_window.h"
#include "session/controller.h"
#include "shell/command_line.h"
#include "shell/main_window.h"
#include "style/format.h"
#include "views/frame_feed.h"
#include "window_support.h"

#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QRandomGenerator>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimeEdit>
#include <QtTest>

using namespace flashviz;
using namespace flashviz::gui;
using namespace flashviz::gui::test;

namespace {

// Lecture mode in the window, the step's animation held at its end (as a screenshot is), so that
// the audience's slide can be compared with a render.
StartOptions lectureOptions(int chapter = 0) {
    StartOptions options = freshOptions();
    options.lecture = true;
    options.chapter = chapter;
    options.transition = 1.0;
    return options;
}

// F6 on the window: the presenter view, shown and idle.
PresenterWindow& openPresenter(MainWindow& w) {
    if (!w.presenter() || !w.presenter()->isVisible()) QTest::keyClick(&w, Qt::Key_F6);
    if (!w.presenter()) qFatal("F6 opened no presenter view");
    if (!w.waitUntilIdle() || !w.presenter()->waitForPreview())
        qFatal("the presenter's preview did not come");
    // Shown, it took the keys; the tests send them to the audience's window unless they say.
    QApplication::setActiveWindow(&w);
    if (!QTest::qWaitForWindowActive(&w)) qFatal("the window did not become active again");
    return *w.presenter();
}

bool settle(MainWindow& w) {
    return w.waitUntilIdle() && (!w.presenter() || w.presenter()->waitForPreview());
}

QString filledNotes(const MainWindow& w, const QString& notes) {
    return fillNarrative(notes, *w.controller()->scene());
}

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        qFatal("could not write %s", qPrintable(path));
}

// A slide rendered by a lecture of its own, at `size`: what the audience sees at that chapter and
// step (without the key line, as beside the presenter view).
QImage referenceSlide(int chapter, std::optional<int> step, const VizSettings& settings,
                      QSize size) {
    Controller controller;
    FrameFeed feed(&controller);
    feed.holdTransition(1.0);
    LectureView lecture(&controller, &feed);
    showOffscreen(lecture, size);
    lecture.useHardware(settings.hardwareId);
    lecture.start(chapter);
    controller.apply(settings);
    if (!controller.waitUntilIdle()) qFatal("the reference slide's scene did not come");
    if (step) controller.setStep(*step);
    if (!controller.waitUntilIdle()) qFatal("the reference slide's frame did not come");
    QCoreApplication::processEvents();
    return renderSlide(lecture);
}

} // namespace

class TestPresenter : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void init();
    void everyChapterHasNotes();
    void notesAreParsedStrictly();
    void presenterFollowsTheLecture();
    void audienceShowsOnlyTheSlide();
    void keysFromThePresenterReachTheLecture();
    void escapeInTheEditorEndsTheEdit();
    void previewIsTheNextClicksSlide();
    void previewFollowsTheBugSwitch();
    void clockCountsAgainstTheTarget();
    void userCopyRoundTrip();
    void brokenUserFileIsReportedAndKept();
    void userNotesParserIsStrict();
    void savedNotesAreCheckedAsReadOnes();
    void commandLineOpensThePresenter();
    void secondScreenTakesTheAudience();
    void everyShortcutIsOneAction();
    void quickKeysLeaveItInStep();
};

void TestPresenter::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
}

void TestPresenter::init() {
    QFile::remove(userNotesPath());
}

void TestPresenter::everyChapterHasNotes() {
    Controller c;
    for (const LectureChapter& chapter : lectureChapters()) {
        QVERIFY2(chapter.notes.trimmed().size() > 100, qPrintable(chapter.id));
        QVERIFY(chapter.notes.size() <= kMaxNotesChars);
        QVERIFY2(chapter.notes != chapter.narrative, qPrintable(chapter.id));
        QVERIFY(c.apply(chapter.settings));
        QVERIFY(c.waitUntilIdle());
        const QString text = fillNarrative(chapter.notes, *c.scene());
        QVERIFY2(!text.contains(QLatin1Char('{')),
                 qPrintable(chapter.id + QLatin1Char(' ') + text));
        // A question for the room in each.
        QVERIFY2(text.contains(QStringLiteral("Ask the room")), qPrintable(chapter.id));
    }
}

// The notes field reads as the others do: text, bounded, with the narrative's placeholders.
void TestPresenter::notesAreParsedStrictly() {
    const auto chapterWithNotes = [](const QByteArray& notes) {
        return QByteArray(R"({"chapters": [{"id": "a", "title": "A", "narrative": "N.",)") +
               R"( "beats": ["0"], "views": ["tile"], "notes": )" + notes + "}]}";
    };
    const LectureParse good =
        parseLectureChapters(chapterWithNotes(R"("Say {n}.")"), QStringLiteral("t.json"));
    QCOMPARE(int(good.chapters.size()), 1);
    QCOMPARE(good.chapters[0].notes, QStringLiteral("Say {n}."));
    const QByteArray tooLong = '"' + QByteArray(kMaxNotesChars + 1, 'x') + '"';
    for (const auto& [notes, expected] :
         {std::pair{QByteArray(R"("Say {nn}.")"),
                    QStringLiteral("notes: unknown placeholder {nn}")},
          std::pair{QByteArray("12"), QStringLiteral("notes must be text")},
          std::pair{tooLong, QStringLiteral("notes: %1 characters long; at most %2 are kept")
                                 .arg(kMaxNotesChars + 1)
                                 .arg(kMaxNotesChars)}}) {
        const LectureParse bad =
            parseLectureChapters(chapterWithNotes(notes), QStringLiteral("t.json"));
        QVERIFY(bad.chapters.empty());
        QCOMPARE(bad.errors.size(), 1);
        QVERIFY2(bad.errors[0].contains(expected) &&
                     bad.errors[0].contains(QStringLiteral("t.json")),
                 qPrintable(bad.errors[0]));
    }
}

void TestPresenter::presenterFollowsTheLecture() {
    const auto window = freshWindow({1366, 768}, lectureOptions());
    MainWindow& w = *window;
    PresenterWindow& p = openPresenter(w);
    QVERIFY(p.isVisible());
    const auto& chapters = lectureChapters();
    const auto shows = [&](int chapter) {
        return p.titleText() == w.lecture()->titleText() &&
               p.titleText().contains(chapters[std::size_t(chapter)].title) &&
               p.notesText() == filledNotes(w, chapters[std::size_t(chapter)].notes);
    };
    QVERIFY(shows(0));
    // The figures are the scene's: the GPU's name, its SRAM.
    const Scene& scene = *w.controller()->scene();
    QVERIFY2(p.notesText().contains(unbroken(QString::fromStdString(scene.hardware.name))),
             qPrintable(p.notesText()));
    QVERIFY(!p.notesText().contains(QLatin1Char('{')));
    QVERIFY2(p.beatText().contains(QStringLiteral("1 / 3")) &&
                 p.beatText().contains(w.lecture()->captionText()),
             qPrintable(p.beatText()));
    QTest::keyClick(&w, Qt::Key_PageDown);
    QVERIFY(settle(w));
    QVERIFY2(p.beatText().contains(QStringLiteral("2 / 3")), qPrintable(p.beatText()));
    QVERIFY2(p.beatText().contains(QStringLiteral("step 1 of")), qPrintable(p.beatText()));
    QTest::keyClick(&w, Qt::Key_PageDown);
    QTest::keyClick(&w, Qt::Key_PageDown); // past the last beat: the next chapter
    QVERIFY(settle(w));
    QCOMPARE(w.lecture()->chapter(), 1);
    QVERIFY2(shows(1), qPrintable(p.titleText() + QLatin1Char('\n') + p.notesText()));
    QTest::keyClick(&w, Qt::Key_PageUp); // back to chapter 1's last beat
    QVERIFY(settle(w));
    QVERIFY(shows(0));
    QVERIFY2(p.beatText().contains(QStringLiteral("3 / 3")), qPrintable(p.beatText()));
    QTest::keyClick(&w, Qt::Key_Down);
    QTest::keyClick(&w, Qt::Key_Down);
    QVERIFY(settle(w));
    QVERIFY(shows(2));
    QTest::keyClick(&w, Qt::Key_Up);
    QVERIFY(settle(w));
    QVERIFY(shows(1));
}

// With the presenter view on, the audience's slide has no key line: the keys are the
// presenter's, the same words the lecture's line has.
void TestPresenter::audienceShowsOnlyTheSlide() {
    const auto window = freshWindow({1366, 768}, lectureOptions());
    MainWindow& w = *window;
    auto* keys = w.lecture()->findChild<QLabel*>(QStringLiteral("lectureKeys"));
    QVERIFY(keys);
    QVERIFY(keys->isVisible());
    PresenterWindow& p = openPresenter(w);
    QVERIFY(!keys->isVisible());
    QCOMPARE(p.keysText(), w.lecture()->keysLine());
    QVERIFY2(p.keysText().contains(QStringLiteral("PgDn / PgUp  next / back")) &&
                 p.keysText().contains(QStringLiteral("Esc  leave")),
             qPrintable(p.keysText()));
    QTest::keyClick(&w, Qt::Key_F6); // hidden again: the key line is back
    QVERIFY(!p.isVisible());
    QVERIFY(keys->isVisible());
    // Leaving lecture mode closes it, and the next lecture opens a new one (F6 stays on).
    openPresenter(w);
    QPointer<PresenterWindow> open = w.presenter();
    QTest::keyClick(&w, Qt::Key_Escape);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!w.isLectureMode());
    QTRY_VERIFY(open.isNull());
    QVERIFY(!w.presenter());
    QTest::keyClick(&w, Qt::Key_F5);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.presenter() && w.presenter()->isVisible());
    QVERIFY(!keys->isVisible());
    QApplication::setActiveWindow(&w);
    QVERIFY(QTest::qWaitForWindowActive(&w));
    // Its own close button: off, and the key line back.
    w.presenter()->close();
    QVERIFY(keys->isVisible());
    QTest::keyClick(&w, Qt::Key_Escape);
    QVERIFY(w.waitUntilIdle());
    QTest::keyClick(&w, Qt::Key_F5);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!w.presenter() || !w.presenter()->isVisible());
}

void TestPresenter::keysFromThePresenterReachTheLecture() {
    const auto window = freshWindow({1366, 768}, lectureOptions());
    MainWindow& w = *window;
    PresenterWindow& p = openPresenter(w);
    QApplication::setActiveWindow(&p);
    QVERIFY(QTest::qWaitForWindowActive(&p));
    QTest::keyClick(&p, Qt::Key_PageDown);
    QVERIFY(settle(w));
    QCOMPARE(w.controller()->step(), 1);
    QTest::keyClick(&p, Qt::Key_Down);
    QVERIFY(settle(w));
    QCOMPARE(w.lecture()->chapter(), 1);
    QVERIFY(p.titleText().contains(lectureChapters()[1].title));
    QTest::keyClick(&p, Qt::Key_Right);
    QVERIFY(settle(w));
    QCOMPARE(w.controller()->step(), 1);
    QTest::keyClick(&p, Qt::Key_Up);
    QVERIFY(settle(w));
    QCOMPARE(w.lecture()->chapter(), 0);
    QTest::keyClick(&p, Qt::Key_Escape);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!w.isLectureMode());
    // The presenter view gone, the keys are the window's again.
    QTRY_COMPARE(QApplication::activeWindow(), &w);
}

// Typing in the notes does not drive the lecture, and Esc there ends the edit, not the lecture.
void TestPresenter::escapeInTheEditorEndsTheEdit() {
    const auto window = freshWindow({1366, 768}, lectureOptions());
    MainWindow& w = *window;
    PresenterWindow& p = openPresenter(w);
    QApplication::setActiveWindow(&p);
    QVERIFY(QTest::qWaitForWindowActive(&p));
    p.editNotes();
    auto* editor = p.findChild<QPlainTextEdit*>(QStringLiteral("presenterEditor"));
    QVERIFY(editor && editor->hasFocus());
    QTest::keyClicks(editor, QStringLiteral(" b"));
    QTest::keyClick(editor, Qt::Key_Right);
    QCOMPARE(w.controller()->step(), 0);
    QVERIFY(!w.controller()->isPlaying());
    QTest::keyClick(editor, Qt::Key_Escape);
    QVERIFY(!p.isEditing());
    QVERIFY(w.isLectureMode());
    QCOMPARE(p.notesText(), filledNotes(w, lectureChapters()[0].notes)); // nothing saved
}

// The preview is the slide the next click shows: a render of that beat by a lecture of its own,
// and what the audience sees after the click; the audience's step and scene stay as they were
// while it is made.
void TestPresenter::previewIsTheNextClicksSlide() {
    const auto window = freshWindow({1366, 768}, lectureOptions());
    MainWindow& w = *window;
    PresenterWindow& p = openPresenter(w);
    const QSize audience = w.lecture()->size();
    QCOMPARE(w.controller()->step(), 0);
    const QImage next = p.previewImage();
    QCOMPARE(next.size(), audience);
    QCOMPARE(next, referenceSlide(0, 1, w.controller()->settings(), audience));
    QVERIFY(next != renderSlide(*w.lecture())); // not the slide on screen now
    QTest::keyClick(&w, Qt::Key_PageDown);
    QVERIFY(settle(w));
    QCOMPARE(renderSlide(*w.lecture()), next);

    // At a chapter's last beat: the next chapter's first slide, made without touching the
    // audience's scene.
    QTest::keyClick(&w, Qt::Key_PageDown);
    QVERIFY(w.waitUntilIdle());
    const auto onScreen = w.controller()->scene();
    QVERIFY(p.waitForPreview());
    QCOMPARE(w.controller()->scene(), onScreen);
    QCOMPARE(w.controller()->step(), 2);
    const LectureChapter& standard = lectureChapters()[1];
    const QImage nextChapter = p.previewImage();
    QCOMPARE(nextChapter,
             referenceSlide(1, std::nullopt, w.lecture()->chapterSettings(standard), audience));
    QTest::keyClick(&w, Qt::Key_PageDown);
    QVERIFY(settle(w));
    QCOMPARE(w.lecture()->chapter(), 1);
    QCOMPARE(renderSlide(*w.lecture()), nextChapter);

    // The lecture's last beat has no next.
    w.enterLecture(w.lecture()->chapterCount() - 1);
    QVERIFY(settle(w));
    w.controller()->goToEnd();
    QVERIFY(settle(w));
    QVERIFY(p.previewImage().isNull());
}

// B in the bug chapter: the next beat's preview is of the switched scene, as the click will be.
void TestPresenter::previewFollowsTheBugSwitch() {
    const int bug = 5;
    QCOMPARE(lectureChapters()[bug].id, QStringLiteral("bug"));
    const auto window = freshWindow({1366, 768}, lectureOptions(bug));
    MainWindow& w = *window;
    PresenterWindow& p = openPresenter(w);
    const QImage broken = p.previewImage();
    QVERIFY(p.notesText().contains(QStringLiteral("The check fails")));
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(settle(w));
    QVERIFY(w.controller()->settings().options.rescale);
    QVERIFY2(p.notesText().contains(QStringLiteral("The check passes")), qPrintable(p.notesText()));
    const QImage fixed = p.previewImage();
    QVERIFY(fixed != broken);
    QCOMPARE(fixed, referenceSlide(bug, w.lecture()->nextBeatInChapter(),
                                   w.controller()->settings(), w.lecture()->size()));
    QTest::keyClick(&w, Qt::Key_PageDown);
    QVERIFY(settle(w));
    QCOMPARE(renderSlide(*w.lecture()), fixed);
}

void TestPresenter::clockCountsAgainstTheTarget() {
    const auto window = freshWindow({1366, 768}, lectureOptions());
    MainWindow& w = *window;
    PresenterWindow& p = openPresenter(w);
    QCOMPARE(p.target(), std::chrono::seconds(kDefaultTalkTarget));
    QVERIFY2(p.clockText().startsWith(QStringLiteral("0:0")) &&
                 p.clockText().endsWith(QStringLiteral("/ 20:00")),
             qPrintable(p.clockText()));
    QVERIFY(!p.isClockOver());
    // The target as the lecturer types it.
    auto* target = p.findChild<QTimeEdit*>(QStringLiteral("presenterTarget"));
    QVERIFY(target);
    target->setTime(QTime(0, 45, 0));
    QCOMPARE(p.target(), std::chrono::seconds(45 * 60));
    QVERIFY2(p.clockText().endsWith(QStringLiteral("/ 45:00")), qPrintable(p.clockText()));
    p.setTarget(std::chrono::seconds(1));
    QCOMPARE(target->time(), QTime(0, 0, 1));
    QTRY_VERIFY_WITH_TIMEOUT(p.isClockOver(), 3000);
    QTRY_VERIFY_WITH_TIMEOUT(p.clockText().contains(QStringLiteral("(+")), 3000);
    auto* clock = p.findChild<QLabel*>(QStringLiteral("presenterClock"));
    QVERIFY(clock);
    QCOMPARE(clock->palette().color(QPalette::WindowText), Theme::presentation().bad);
    p.setTarget(std::chrono::minutes(20));
    p.resetClock();
    QVERIFY(!p.isClockOver());
    QVERIFY(p.elapsed() < std::chrono::seconds(1));
    QVERIFY2(p.clockText().startsWith(QStringLiteral("0:00 /")), qPrintable(p.clockText()));
    QVERIFY(clock->palette().color(QPalette::WindowText) != Theme::presentation().bad);
}

// Edit, save, read back by a new presenter view; revert; a save refused keeps file and notes.
void TestPresenter::userCopyRoundTrip() {
    const QString path = userNotesPath();
    QVERIFY(path.contains(QStringLiteral("qttest")));
    const auto window = freshWindow({1366, 768}, lectureOptions());
    MainWindow& w = *window;
    PresenterWindow& p = openPresenter(w);
    const LectureChapter& first = lectureChapters()[0];
    p.editNotes();
    auto* editor = p.findChild<QPlainTextEdit*>(QStringLiteral("presenterEditor"));
    QVERIFY(editor);
    QCOMPARE(editor->toPlainText(), first.notes); // as written, placeholders and all
    editor->setPlainText(QStringLiteral("Mine: {n} queries on the {gpu}."));
    p.saveNotes();
    QVERIFY(!p.isEditing());
    QCOMPARE(p.messageText(), QString());
    const QString mine = filledNotes(w, QStringLiteral("Mine: {n} queries on the {gpu}."));
    QCOMPARE(p.notesText(), mine);
    const UserNotesParse saved = parseUserNotes(readAll(path), path);
    QCOMPARE(saved.error, QString());
    QCOMPARE(saved.notes.size(), std::size_t(1));
    QCOMPARE(saved.notes.at(first.id), QStringLiteral("Mine: {n} queries on the {gpu}."));

    // A refused save: the message names the problem; the file and the notes stay.
    const QByteArray before = readAll(path);
    p.editNotes();
    editor->setPlainText(QStringLiteral("Broken {nope}"));
    p.saveNotes();
    QVERIFY(p.isEditing());
    QVERIFY2(p.messageText().contains(QStringLiteral("{nope}")), qPrintable(p.messageText()));
    QCOMPARE(readAll(path), before);
    p.cancelEdit();
    QCOMPARE(p.notesText(), mine);

    // A new window reads the user's copy over the shipped notes.
    const auto second = freshWindow({1366, 768}, lectureOptions());
    PresenterWindow& q = openPresenter(*second);
    QCOMPARE(q.notesText(), mine);
    // Other chapters keep the shipped notes.
    QTest::keyClick(second.get(), Qt::Key_Down);
    QVERIFY(settle(*second));
    QCOMPARE(q.notesText(), filledNotes(*second, lectureChapters()[1].notes));
    QTest::keyClick(second.get(), Qt::Key_Up);
    QVERIFY(settle(*second));
    q.revertNotes();
    QCOMPARE(q.notesText(), filledNotes(*second, first.notes));
    QVERIFY(parseUserNotes(readAll(path), path).notes.empty());
}

// A broken file: a message naming it and why, the shipped notes, and the file untouched until the
// lecturer saves.
void TestPresenter::brokenUserFileIsReportedAndKept() {
    const QString path = userNotesPath();
    for (const auto& [bytes, why] :
         {std::pair{QByteArray("{\"version\": 1, \"notes\": {\"memory\": "),
                    QStringLiteral("not valid JSON")},
          std::pair{QByteArray(R"({"version": 2, "notes": {}})"), QStringLiteral("newer")},
          std::pair{QByteArray(R"({"version": 1, "notes": {"memory": 3}})"),
                    QStringLiteral("notes.memory must be text")}}) {
        writeFile(path, bytes);
        const auto window = freshWindow({1366, 768}, lectureOptions());
        MainWindow& w = *window;
        PresenterWindow& p = openPresenter(w);
        QVERIFY2(p.messageText().contains(path) && p.messageText().contains(why) &&
                     p.messageText().contains(QStringLiteral("shipped notes are shown")),
                 qPrintable(p.messageText()));
        QCOMPARE(p.notesText(), filledNotes(w, lectureChapters()[0].notes));
        QTest::keyClick(&w, Qt::Key_PageDown);
        QTest::keyClick(&w, Qt::Key_Down);
        QVERIFY(settle(w));
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(w.waitUntilIdle());
        QCOMPARE(readAll(path), bytes);
    }
    // Saving replaces it, and the message goes.
    const auto window = freshWindow({1366, 768}, lectureOptions());
    PresenterWindow& p = openPresenter(*window);
    QVERIFY(!p.messageText().isEmpty());
    p.editNotes();
    p.findChild<QPlainTextEdit*>(QStringLiteral("presenterEditor"))
        ->setPlainText(QStringLiteral("New."));
    p.saveNotes();
    QCOMPARE(p.messageText(), QString());
    QCOMPARE(parseUserNotes(readAll(path), path).notes.at(lectureChapters()[0].id),
             QStringLiteral("New."));
}

void TestPresenter::userNotesParserIsStrict() {
    const std::map<QString, QString> notes{
        {QStringLiteral("bug"), QStringLiteral("Ask: {verdict}")},
        {QStringLiteral("gone"), QStringLiteral("kept")}};
    const UserNotesParse back = parseUserNotes(userNotesJson(notes), QStringLiteral("n.json"));
    QCOMPARE(back.error, QString());
    QVERIFY(back.notes == notes); // a chapter this version lacks is kept for the next save
    const QByteArray tooLong =
        R"({"version": 1, "notes": {"bug": ")" + QByteArray(kMaxNotesChars + 1, 'x') + "\"}}";
    const std::pair<QByteArray, QString> bad[] = {
        {"[]", QStringLiteral("not a JSON object")},
        {R"({"notes": {}})", QStringLiteral("version is missing")},
        {R"({"version": "1", "notes": {}})", QStringLiteral("version must be a whole number")},
        // The session's words for a newer file, and before its fields: a newer file may add some.
        {R"({"version": 2, "notes": {}, "slides": 3})",
         QStringLiteral("This notes file was saved by a newer FlashViz (format version 2; this "
                        "one reads up to 1)")},
        {R"({"version": 1e300, "notes": {}})", QStringLiteral("saved by a newer FlashViz")},
        {R"({"version": 1.5, "notes": {}})", QStringLiteral("version must be a whole number")},
        {R"({"version": 0, "notes": {}})", QStringLiteral("version must be a whole number from 1")},
        {R"({"version": 1})", QStringLiteral("notes must be an object")},
        {R"({"version": 1, "notes": [], "x": 1})", QStringLiteral("unknown field 'x'")},
        {R"({"version": 1, "notes": {"bug": "{nope}"}})",
         QStringLiteral("notes.bug: unknown placeholder {nope}")},
        {R"({"version": 1, "notes": {"": "a"}})", QStringLiteral("chapter id")},
        {tooLong, QStringLiteral("notes.bug: %1 characters long; at most %2 are kept")
                      .arg(kMaxNotesChars + 1)
                      .arg(kMaxNotesChars)},
        {QByteArray(kMaxUserNotesBytes + 1, ' '), QStringLiteral("bytes long")}};
    for (const auto& [bytes, why] : bad) {
        const UserNotesParse parsed = parseUserNotes(bytes, QStringLiteral("n.json"));
        QVERIFY2(parsed.notes.empty() && parsed.error.startsWith(QStringLiteral("n.json: ")) &&
                     parsed.error.contains(why),
                 qPrintable(bytes.left(60) + " -> " + parsed.error));
    }
}

// A save meets the bound and the placeholders the notes files are read with (notesProblem), and
// is written whole (writeFileSafely): a path that cannot be written is named, the notes stay.
void TestPresenter::savedNotesAreCheckedAsReadOnes() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const LectureChapter& first = lectureChapters()[0];
    const QString path = dir.filePath(QStringLiteral("notes.json"));
    LectureNotes notes(path);
    const QString tooLong(kMaxNotesChars + 1, QLatin1Char('x'));
    QCOMPARE(notes.save(first, tooLong),
             QStringLiteral("The notes are not saved: %1 characters long; at most %2 are kept.")
                 .arg(kMaxNotesChars + 1)
                 .arg(kMaxNotesChars));
    QCOMPARE(notes.save(first, QStringLiteral("Say {nope}.")),
             QStringLiteral("The notes are not saved: %1.")
                 .arg(placeholderProblem(QStringLiteral("{nope}"))));
    QVERIFY(!QFile::exists(path));
    QVERIFY(!notes.isEdited(first.id));
    // At the bound they are kept, and read back by the file's parser.
    const QString longest(kMaxNotesChars, QLatin1Char('x'));
    QCOMPARE(notes.save(first, longest), QString());
    QCOMPARE(parseUserNotes(readAll(path), path).notes.at(first.id), longest);
    QCOMPARE(LectureNotes(path).notes(first), longest);

    LectureNotes folder(dir.path()); // a folder where the file should be
    const QString error = folder.save(first, QStringLiteral("Mine."));
    QVERIFY2(error.startsWith(QStringLiteral("Could not write %1: ").arg(dir.path())),
             qPrintable(error));
    QVERIFY(!folder.isEdited(first.id));
    QCOMPARE(folder.notes(first), first.notes);
}

void TestPresenter::commandLineOpensThePresenter() {
    const CommandLine command =
        parseCommandLine({QStringLiteral("flashviz"), QStringLiteral("--presenter"),
                          QStringLiteral("--chapter"), QStringLiteral("4")});
    QCOMPARE(command.error, QString());
    QVERIFY(command.start.presenter);
    QVERIFY(command.start.lecture);
    StartOptions start = lectureOptions(command.start.chapter);
    start.presenter = command.start.presenter;
    const auto window = freshWindow({1366, 768}, start);
    QVERIFY(window->presenter() && window->presenter()->isVisible());
    QVERIFY(window->presenter()->waitForPreview());
    QVERIFY(window->presenter()->titleText().contains(lectureChapters()[3].title));
    // One screen here: the presenter is a window of its own beside the audience's, inside the
    // screen.
    const QRect screen = window->screen()->availableGeometry();
    QVERIFY(screen.contains(window->presenter()->geometry()));
}

// Two screens (the tst_presenter_two_screens run configures them): the presenter stays on the
// lecturer's screen, where the window was, and the audience's slide goes to the other.
void TestPresenter::secondScreenTakesTheAudience() {
    const QList<QScreen*> screens = QGuiApplication::screens();
    if (screens.size() < 2) QSKIP("one screen here; tst_presenter_two_screens runs this with two");
    const QRect laptop = screens[0]->geometry();
    const QRect projector = screens[1]->geometry();
    const auto window = freshWindow({1280, 700});
    MainWindow& w = *window;
    QVERIFY(laptop.contains(w.geometry()));
    QTest::keyClick(&w, Qt::Key_F6); // outside lecture mode: starts the lecture with it
    QVERIFY(w.isLectureMode());
    QVERIFY(w.presenter() && w.presenter()->waitForPreview());
    QTRY_VERIFY2(projector.contains(w.geometry().topLeft()),
                 qPrintable(QStringLiteral("the audience window is at %1, %2")
                                .arg(w.geometry().x())
                                .arg(w.geometry().y())));
    QCOMPARE(w.presenter()->geometry(), screens[0]->availableGeometry());
}

// F6 was picked free: no two of the window's actions share a key.
void TestPresenter::everyShortcutIsOneAction() {
    const auto window = freshWindow();
    QMap<QString, QString> owner;
    for (const QAction* a : window->actions()) {
        if (a->shortcut().isEmpty()) continue;
        const QString key = a->shortcut().toString();
        QVERIFY2(!owner.contains(key), qPrintable(key + QStringLiteral(": ") + owner.value(key) +
                                                  QStringLiteral(" and ") + a->text()));
        owner.insert(key, a->text());
    }
    QCOMPARE(owner.value(QStringLiteral("F6")), QStringLiteral("Presenter view"));
}

// Keys faster than the scenes build, F6, B, chapters, leaving and coming back: once the window is
// idle the presenter shows the chapter on screen, its notes with this scene's figures, and the
// preview of the click to come.
void TestPresenter::quickKeysLeaveItInStep() {
    const auto window = freshWindow({1366, 768}, lectureOptions());
    MainWindow& w = *window;
    const Qt::Key keys[] = {Qt::Key_PageDown, Qt::Key_PageUp,  Qt::Key_Down,  Qt::Key_Up,
                            Qt::Key_B,        Qt::Key_F6,      Qt::Key_Right, Qt::Key_Escape,
                            Qt::Key_F5,       Qt::Key_PageDown};
    // To the window that has the keys, as a clicker's go: the presenter view takes them when it
    // opens, and hidden gives them back.
    const auto press = [&](Qt::Key key) {
        QWidget* active = QApplication::activeWindow();
        QTest::keyClick(active ? active : &w, key);
    };
    QRandomGenerator random(16);
    for (int i = 0; i < 300; ++i) {
        press(keys[random.bounded(int(std::size(keys)))]);
        // The events a key sets off (a window shown takes the keys), not the builds.
        QCoreApplication::processEvents();
    }
    if (!w.isLectureMode()) press(Qt::Key_F5);
    if (!w.presenter() || !w.presenter()->isVisible()) press(Qt::Key_F6);
    QVERIFY(settle(w));
    QVERIFY(w.isLectureMode() && w.presenter() && w.presenter()->isVisible());
    PresenterWindow& p = *w.presenter();
    const LectureChapter& chapter = lectureChapters()[std::size_t(w.lecture()->chapter())];
    QCOMPARE(p.titleText(), w.lecture()->titleText());
    QCOMPARE(p.notesText(), filledNotes(w, chapter.notes));
    QVERIFY(p.beatText().contains(w.lecture()->captionText()));
    if (const auto beat = w.lecture()->nextBeatInChapter())
        QCOMPARE(p.previewImage(), referenceSlide(w.lecture()->chapter(), *beat,
                                                  w.controller()->settings(), w.lecture()->size()));
}

QTEST_MAIN(TestPresenter)
#include "tst_presenter.moc"
