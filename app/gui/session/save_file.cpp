#include "session/save_file.h"

#include <QDir>
#include <QObject>
#include <QSaveFile>

namespace flashviz::gui {

bool writeFileSafely(const QString& file, const QByteArray& bytes, QString* error) {
    QSaveFile out(file);
    // Until commit() the file on disk is untouched; a short write is discarded with `out`.
    if (out.open(QIODevice::WriteOnly) && out.write(bytes) == bytes.size() && out.commit())
        return true;
    if (error)
        *error = QObject::tr("Could not write %1: %2")
                     .arg(QDir::toNativeSeparators(file), out.errorString());
    return false;
}

} // namespace flashviz::gui
