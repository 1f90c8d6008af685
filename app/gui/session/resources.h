#pragma once
// The data files compiled into the application (resources/, served from ":/flashviz/"): read
// once at start, parsed by their own parser; what the parser refuses, and a file that cannot be
// opened, goes to the log (the shipped files are tested entry by entry in tst_resources).
#include <QFile>
#include <QString>

#include <utility>

namespace flashviz::gui {

// Larger than any shipped data file by far; a bound so that a damaged build cannot make the
// window read without end.
inline constexpr qint64 kMaxResourceBytes = 2 * 1024 * 1024;

// `parse(bytes, name)` returns a struct with a QStringList `errors`; its result is returned.
template <class Parse> auto parseResource(const QString& name, Parse parse) {
    QFile file(QStringLiteral(":/flashviz/") + name);
    decltype(parse(QByteArray(), name)) parsed;
    if (file.open(QIODevice::ReadOnly))
        parsed = parse(file.read(kMaxResourceBytes), name);
    else
        parsed.errors << QStringLiteral("%1 could not be opened").arg(file.fileName());
    for (const QString& error : std::as_const(parsed.errors))
        qWarning("flashviz: %s", qPrintable(error));
    return parsed;
}

} // namespace flashviz::gui
