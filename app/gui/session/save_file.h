#pragma once
// Every file the window writes (sessions, the lecturer's notes, the exports, screenshots) goes
// through QSaveFile: the bytes land whole or not at all, and a write that fails leaves what was
// there before.
#include <QByteArray>
#include <QString>

namespace flashviz::gui {

// False, with *error "Could not write <file>: <why>", when the bytes could not be written.
bool writeFileSafely(const QString& file, const QByteArray& bytes, QString* error);

} // namespace flashviz::gui
