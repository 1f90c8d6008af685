#pragma once
// Lecture mode: full screen, large type, high contrast; chapters that follow the explainer's five
// steps, then the bug, then a summary, each with a short narrative and its own fixed settings so a
// demo replays identically. PageDown / PageUp walk through a chapter's steps and on to the next
// chapter (what a presenter's clicker sends).
#include "session/settings.h"
#include "session/view_options.h"
#include "style/theme.h"

#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

class QHBoxLayout;
class QLabel;

namespace flashviz::gui {

class CheckPanel;
class CodePanel;
class ComparisonView;
class Controller;
class MatricesView;
class MemoryStageView;
class TileDetailView;
class VersionsView;
class FrameFeed;
class FrameView;
struct Frame;
struct Scene;

struct LectureChapter {
    QString id;
    QString title;
    QString narrative; // may name figures as {placeholders}, filled from the scene
    QString notes;     // the speaker notes the presenter view shows; {placeholders} as above
    VizSettings settings;
    QStringList beats;  // steps: numbers, "all", "outer0", "first-rescale", "first-wrong", "end"
    QStringList views;  // one or two of: memory, tile, matrices, code, comparison, versions
    QList<int> weights; // their share of the height (equal when absent)
};

// The longest chapter id, and the longest speaker notes, that are read (the shipped file's and
// the lecturer's own copy, presenter_notes.h).
inline constexpr qsizetype kMaxChapterIdChars = 64;
inline constexpr qsizetype kMaxNotesChars = 4000;

// The chapters in a lecture.json: each entry that reads (id, title, narrative and notes with
// their {placeholders}, beats as step expressions or "all"/"outer0", views, weights, settings as
// the engine would take them), and one message for each entry skipped, naming `source`, the entry
// and the field. Any bytes at all; never throws.
struct LectureParse {
    std::vector<LectureChapter> chapters;
    QStringList errors;
};
LectureParse parseLectureChapters(const QByteArray& bytes, const QString& source);

// The chapters shipped in resources/lecture.json (a bad entry is skipped with a qWarning).
const std::vector<LectureChapter>& lectureChapters();
// The steps a chapter's beats name, for a built scene (sorted, unique).
std::vector<int> resolveBeats(const LectureChapter& chapter, const Scene& scene);
// Why `text` cannot be filled: the first {placeholder} that is not one of fillNarrative()'s, in
// a sentence naming the figures there are; empty when every one is.
QString placeholderProblem(const QString& text);
// The narrative (or the notes) with {placeholders} replaced by the scene's figures, and the
// sentences that depend on the state ({verdict}, {bugSwitch}) as the scene has it now.
// `view`: the page's options, for the FlashAttention-2 figures (the warps, batch and heads).
QString fillNarrative(const QString& narrative, const Scene& scene,
                      const ViewOptions& view = ViewOptions{});
// The check as it stands, in a sentence (the {verdict}): passes, or fails by how much, in how
// many rows, and from which step.
QString checkVerdict(const Scene& scene);

class LectureView : public QWidget {
    Q_OBJECT
  public:
    // The lecture's views observe `feed`, as the step view's do; `controller` is driven by the
    // chapters and beats.
    LectureView(Controller* controller, FrameFeed* feed, QWidget* parent = nullptr);

    void start(int chapter); // applies the chapter's settings and goes to its first beat
    // The GPU the chapters are drawn on: the window's choice (hardware profile id), not the
    // chapters' default; every chapter's settings take it.
    void useHardware(const std::string& hardwareId);
    // A chapter's settings as the lecture applies them: on the GPU of useHardware().
    VizSettings chapterSettings(const LectureChapter& chapter) const;
    void setActive(bool active); // inactive: scene changes made elsewhere are ignored
    bool isActive() const { return m_active; }
    int chapter() const { return m_chapter; }
    int chapterCount() const { return int(lectureChapters().size()); }
    const std::vector<int>& beats() const { return m_beats; }
    QString narrativeText() const;
    QString titleText() const;   // "3 / 9   An online softmax"
    QString captionText() const; // "2 / 5   ·   <what the step does>"
    // The beat nextBeat() goes to within the chapter; none at its last beat (then the next
    // chapter's first).
    std::optional<int> nextBeatInChapter() const;
    // The key line under the views ("PgDn / PgUp  next / back     …"), from the window's actions.
    void setKeysLine(const QString& keys);
    QString keysLine() const;
    // Off while the presenter view shows the keys: the audience sees the slide alone.
    void showKeysLine(bool shown);
    std::vector<FrameView*> frameViews() const;

  public slots:
    void nextBeat();
    void previousBeat();
    void nextChapter();
    void previousChapter();

  signals:
    void leaveRequested();
    void chapterChanged(int chapter);
    // The slide now shows a new chapter, narrative or step (its caption is up to date).
    void slideChanged();

  protected:
    void paintEvent(QPaintEvent* event) override;
    // The type follows the window's size (Theme::presentation).
    void resizeEvent(QResizeEvent* event) override;
    // The narrative's resizes, to fit its type (fitNarrative).
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void applyTheme(const Theme& theme);
    void fitNarrative();
    void onSceneChanged();
    void goToChapter(int chapter, bool atEnd);
    void layoutViews();
    void updateCaption();

    Controller* m_controller;
    FrameFeed* m_feed;
    int m_chapter = 0;
    std::string m_hardwareId; // empty: the chapters' own
    bool m_active = false;
    bool m_pendingEnd = false;
    std::vector<int> m_beats;
    QLabel* m_title;
    QLabel* m_narrative;
    QLabel* m_caption;
    QLabel* m_keys;
    MemoryStageView* m_memory;
    TileDetailView* m_tile;
    MatricesView* m_matrices;
    CodePanel* m_code;
    ComparisonView* m_comparison;
    VersionsView* m_versions;
    CheckPanel* m_check;
    QWidget* m_viewArea;
    QHBoxLayout* m_body;
    Theme m_theme;
};

} // namespace flashviz::gui
