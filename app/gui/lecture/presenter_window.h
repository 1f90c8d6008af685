#pragma once
// The presenter view: in lecture mode a second window, for the lecturer's eyes only (on a second
// screen when there is one), with the chapter's speaker notes (their figures filled from the
// scene on screen, as the slide's), the beat on screen, a picture of the slide the next click
// shows, the time against a target and the keys. It follows the lecture; the window's actions
// work in it too, so the clicker and the keys drive the lecture from either window. The audience
// window shows the slide alone meanwhile.
#include "lecture/presenter_notes.h"
#include "session/settings.h"
#include "style/theme.h"

#include <QElapsedTimer>
#include <QImage>
#include <QList>
#include <QTimer>
#include <QWidget>

#include <chrono>
#include <memory>
#include <optional>

class QAction;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QStackedWidget;
class QTimeEdit;

namespace flashviz::gui {

class Controller;
class FrameFeed;
class LectureView;
struct Scene;

// The talk's length the clock counts against unless the lecturer sets another.
inline constexpr std::chrono::minutes kDefaultTalkTarget{20};

// A slide as the audience sees it: the lecture view painted into an image of its size.
QImage renderSlide(LectureView& lecture);
// Makes `lecture` a slide that is never on a screen, of `size` (a window's, however small: it is
// a window of its own, without the minimum its layout would ask for), without the key line, as
// the audience's is beside the presenter view; its views work as on screen.
void showOffscreen(LectureView& lecture, QSize size);

class PresenterWindow : public QWidget {
    Q_OBJECT
  public:
    // Follows `lecture`, which `controller` drives and whose views `feed` feeds (for the view
    // options the preview takes); `notesPath` is the user's copy of the notes.
    PresenterWindow(LectureView* lecture, Controller* controller, FrameFeed* feed,
                    QWidget* parent = nullptr, const QString& notesPath = userNotesPath());
    ~PresenterWindow() override;

    // The window's actions: they work here too, and the key line is theirs
    // (KeyHelpForm::LectureKeys, as the lecture's).
    void setKeyActions(const QList<QAction*>& actions);

    QString titleText() const;
    QString notesText() const; // as shown: placeholders filled
    QString beatText() const;
    QString keysText() const;
    QString clockText() const;
    QString messageText() const; // a problem with the user's notes, or empty
    bool isClockOver() const;
    // The slide the next click shows, at the audience's size; null at the lecture's last beat.
    QImage previewImage() const { return m_previewImage; }
    bool isPreviewReady() const { return m_previewReady; }
    // Processes events until the preview of the current next beat is rendered.
    bool waitForPreview(int timeoutMs = 120000);

    std::chrono::seconds target() const { return m_target; }
    void setTarget(std::chrono::seconds target);
    void resetClock();
    std::chrono::milliseconds elapsed() const;

    // Editing the chapter's notes, as the buttons do: the editor opens on the notes as written
    // ({placeholders} and all); saving writes the user's copy.
    void editNotes();
    void saveNotes();
    void cancelEdit();
    void revertNotes();
    bool isEditing() const;

  signals:
    void closed(); // by the window's own close button

  protected:
    void closeEvent(QCloseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    // What the next click shows: a beat of this chapter, or the next chapter's first.
    struct PreviewTarget {
        int chapter = 0;
        std::optional<int> step; // none: the chapter's first beat, which its scene resolves
        VizSettings settings;
        bool operator==(const PreviewTarget&) const = default;
    };

    void buildUi();
    void applyTheme(const Theme& theme);
    void refresh();
    void showNotes();
    void showMessage(const QString& text);
    void updateClock();
    std::optional<PreviewTarget> nextTarget() const;
    void requestPreview();
    void checkPreview();
    void showPreview();
    const LectureChapter* chapter() const;

    LectureView* m_lecture;
    Controller* m_controller;
    LectureNotes m_notes;
    Theme m_theme;
    // The preview: a lecture of its own, never on screen, so the audience's is not touched.
    Controller* m_previewController;
    FrameFeed* m_previewFeed;
    std::unique_ptr<LectureView> m_previewLecture;
    std::optional<PreviewTarget> m_previewTarget;
    QImage m_previewImage;
    bool m_previewReady = false;
    QTimer m_previewCheck;

    QList<QAction*> m_keyActions;
    QElapsedTimer m_clock;
    std::chrono::seconds m_target = kDefaultTalkTarget;
    QTimer m_tick;

    // What the notes were filled from last (filling counts the backward's traffic).
    std::shared_ptr<const Scene> m_notesScene;
    QString m_notesSource;
    QString m_notesPlain;      // as shown, placeholders filled
    int m_editingChapter = -1; // the chapter the editor is open on

    QLabel* m_title;
    QLabel* m_clockLabel;
    QLabel* m_targetLabel;
    QTimeEdit* m_targetTime;
    QPushButton* m_resetClock;
    QStackedWidget* m_notesStack;
    QLabel* m_notesLabel;
    QPlainTextEdit* m_editor;
    QLabel* m_message;
    QPushButton* m_edit;
    QPushButton* m_save;
    QPushButton* m_cancel;
    QPushButton* m_revert;
    QLabel* m_beat;
    QLabel* m_nextHeading;
    QLabel* m_preview;
    QLabel* m_keys;
};

// Puts the presenter view where the lecturer sees it: with a second screen, the presenter on the
// screen the window is on (the lecturer's) and the audience window on another; with one screen,
// a window beside (or over the right part of) the audience window.
void placePresenter(QWidget& audience, PresenterWindow& presenter);

} // namespace flashviz::gui
