#pragma once
// What the chart suites share: the text items Qt Charts draws (titles, labels, legend entries),
// found under any graphics item, so that a test reads what the reader sees.
#include <QGraphicsItem>
#include <QGraphicsTextItem>
#include <QList>

#include <vector>

namespace flashviz::gui::test {

// The visible text items among `roots` and everything under them.
inline std::vector<const QGraphicsTextItem*> visibleTextItems(QList<QGraphicsItem*> roots) {
    std::vector<const QGraphicsTextItem*> texts;
    while (!roots.isEmpty()) {
        QGraphicsItem* item = roots.takeLast();
        if (const auto* text = dynamic_cast<const QGraphicsTextItem*>(item); text && text->isVisible())
            texts.push_back(text);
        roots << item->childItems();
    }
    return texts;
}

} // namespace flashviz::gui::test
