#pragma once
// The key help, generated from the window's QActions (their text and shortcut), so that it cannot
// drift from the keys that work. keyHelp() is the one place that writes it, in the three forms
// the window shows: the F1 dialog, the playback bar's hint and the lecture's key line.
#include <QList>
#include <QString>

class QAction;
class QKeySequence;

namespace flashviz::gui {

enum class KeyHelpForm {
    Dialog,       // every action with a shortcut, one line each ("Space  Play / pause"); the
                  // lecture-only ones after a heading of their own
    PlaybackHint, // "Space plays, → steps, B breaks the rescale"
    LectureKeys,  // "PgDn / PgUp  next / back     ← →  one step     …"
};

// Marks an action as working only in lecture mode (the dialog lists it apart).
void setLectureOnly(QAction* action);
bool isLectureOnly(const QAction* action);

// Puts an action into a one-line form (PlaybackHint or LectureKeys) with its own short words, at
// `order` among that form's entries. Actions of one form with the same words are one entry with
// their keys together: joined by a space when each is one symbol ("← →"), else by " / "
// ("PgDn / PgUp").
void setKeyHint(QAction* action, KeyHelpForm form, int order, const QString& words);

// A shortcut as the help writes it: arrows as ← → ↑ ↓, Page Down as PgDn, else Qt's native text.
QString keyName(const QKeySequence& key);

// The key help of these actions (those without a shortcut are left out) in one form.
QString keyHelp(const QList<QAction*>& actions, KeyHelpForm form);

} // namespace flashviz::gui
