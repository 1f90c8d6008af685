#pragma once
// What the window's suites share: a fresh window (one that neither reads nor writes the saved
// settings and layout), and the settings panel's controls found by their object names instead of
// getters of the panel's insides. The suites run on the offscreen platform (flashviz_add_test).
#include "shell/main_window.h"
#include "widgets/controls_panel.h"

#include <QApplication>
#include <QTimer>
#include <QtTest>

#include <memory>

namespace flashviz::gui::test {

// As --no-restore, and nothing saved on close; lecture mode in the window, not full screen.
inline StartOptions freshOptions() {
    StartOptions options;
    options.restore = false;
    options.save = false;
    options.fullScreen = false;
    return options;
}

// A fresh window of `size`, shown, active (keys reach it) and idle: its scene built and its
// frame on the views. A window that does not get there ends the suite, saying so.
inline std::unique_ptr<MainWindow> freshWindow(QSize size = {1366, 768},
                                               const StartOptions& options = freshOptions()) {
    auto window = std::make_unique<MainWindow>(options);
    window->resize(size);
    window->show();
    QApplication::setActiveWindow(window.get());
    if (!QTest::qWaitForWindowActive(window.get())) qFatal("a fresh window did not become active");
    if (!window->waitUntilIdle()) qFatal("a fresh window's first scene and frame did not come");
    return window;
}

// The settings panel's control named `name` ("queries", "bug", "preset", "backendValues", …);
// a name the panel does not have ends the suite.
template <typename Control> Control* control(const MainWindow& window, const char* name) {
    auto* found = window.controls()->findChild<Control*>(QLatin1String(name));
    if (!found)
        qFatal("the settings panel has no %s named '%s'", Control::staticMetaObject.className(),
               name);
    return found;
}

// Runs `act` on the modal dialog of type `Dialog` once the click about to be made has opened it
// (its exec() returns only when it closes); a dialog that does not open ends the suite.
template <typename Dialog, typename Act> void whenModalOpens(Act act) {
    QTimer::singleShot(0, [act] {
        auto* dialog = qobject_cast<Dialog*>(QApplication::activeModalWidget());
        if (!dialog) qFatal("the %s did not open", Dialog::staticMetaObject.className());
        act(dialog);
    });
}

// Types `text` into a settings field over what it holds and presses Return, as a user does.
template <typename Field> void typeInto(Field* field, const QString& text) {
    field->setFocus();
    field->selectAll();
    QTest::keyClicks(field, text);
    QTest::keyClick(field, Qt::Key_Return);
}

} // namespace flashviz::gui::test
