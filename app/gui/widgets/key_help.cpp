#include "widgets/key_help.h"

#include <QAction>
#include <QCoreApplication>
#include <QKeySequence>
#include <QStringList>

#include <algorithm>
#include <utility>
#include <vector>

namespace flashviz::gui {

namespace {

constexpr char kLectureOnlyProperty[] = "flashvizLectureOnly";

QByteArray wordsProperty(KeyHelpForm form) {
    return "flashvizKeyHint" + QByteArray::number(int(form));
}
QByteArray orderProperty(KeyHelpForm form) {
    return "flashvizKeyHintOrder" + QByteArray::number(int(form));
}

QString dialogLines(const QList<QAction*>& actions, bool lectureOnly) {
    QStringList lines;
    for (const QAction* a : actions)
        if (!a->shortcut().isEmpty() && isLectureOnly(a) == lectureOnly)
            lines << keyName(a->shortcut()) + QStringLiteral("  ") +
                         QString(a->text()).remove(QLatin1Char('&'));
    return lines.join(QLatin1Char('\n'));
}

} // namespace

void setLectureOnly(QAction* action) {
    action->setProperty(kLectureOnlyProperty, true);
}

bool isLectureOnly(const QAction* action) {
    return action->property(kLectureOnlyProperty).toBool();
}

void setKeyHint(QAction* action, KeyHelpForm form, int order, const QString& words) {
    action->setProperty(wordsProperty(form).constData(), words);
    action->setProperty(orderProperty(form).constData(), order);
}

QString keyName(const QKeySequence& key) {
    if (key.count() == 1) {
        switch (key[0].toCombined()) {
        case Qt::Key_Left: return QStringLiteral("←");
        case Qt::Key_Right: return QStringLiteral("→");
        case Qt::Key_Up: return QStringLiteral("↑");
        case Qt::Key_Down: return QStringLiteral("↓");
        case Qt::Key_PageDown: return QStringLiteral("PgDn");
        case Qt::Key_PageUp: return QStringLiteral("PgUp");
        default: break;
        }
    }
    return key.toString(QKeySequence::NativeText);
}

QString keyHelp(const QList<QAction*>& actions, KeyHelpForm form) {
    if (form == KeyHelpForm::Dialog) {
        QString text = dialogLines(actions, false);
        const QString lecture = dialogLines(actions, true);
        if (!lecture.isEmpty())
            text += QStringLiteral("\n\n") +
                    QCoreApplication::translate("flashviz::gui::KeyHelp", "In lecture mode only:") +
                    QLatin1Char('\n') + lecture;
        return text;
    }
    struct Entry {
        int order;
        QString words;
        std::vector<std::pair<int, QString>> keys; // (order, key name)
    };
    std::vector<Entry> entries;
    for (const QAction* a : actions) {
        const QString words = a->property(wordsProperty(form).constData()).toString();
        if (words.isEmpty() || a->shortcut().isEmpty()) continue;
        const int order = a->property(orderProperty(form).constData()).toInt();
        auto same = std::find_if(entries.begin(), entries.end(),
                                 [&](const Entry& e) { return e.words == words; });
        if (same == entries.end()) {
            entries.push_back({order, words, {}});
            same = entries.end() - 1;
        }
        same->order = std::min(same->order, order);
        same->keys.emplace_back(order, keyName(a->shortcut()));
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& x, const Entry& y) { return x.order < y.order; });
    QStringList parts;
    for (Entry& e : entries) {
        // The keys of one entry by their own order ("PgDn / PgUp", "← →").
        std::stable_sort(e.keys.begin(), e.keys.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        QStringList keys;
        bool symbols = true;
        for (const auto& key : e.keys) {
            keys << key.second;
            symbols = symbols && key.second.size() == 1;
        }
        const QString joined = keys.join(symbols ? QStringLiteral(" ") : QStringLiteral(" / "));
        parts << (form == KeyHelpForm::PlaybackHint ? joined + QLatin1Char(' ') + e.words
                                                    : joined + QStringLiteral("  ") + e.words);
    }
    return parts.join(form == KeyHelpForm::PlaybackHint ? QStringLiteral(", ")
                                                        : QStringLiteral("     "));
}

} // namespace flashviz::gui
