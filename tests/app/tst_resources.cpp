// The shipped presets and lecture chapters, entry by entry, so that a typo in
// resources/presets.json or resources/lecture.json fails the tests instead of aborting the
// window (issue #12: "pattern": "early-maxx" ended it with an uncaught EngineError); and the
// byte parsers against corrupted versions of both formats: a bad entry is skipped with a
// message naming the file, the entry and the field, and the rest still load.
#include "lecture/lecture.h"
#include "session/settings.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace flashviz;
using namespace flashviz::gui;

namespace {

QByteArray readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(path));
    return file.readAll();
}

QByteArray source(const char* name) {
    return readFile(QStringLiteral(FLASHVIZ_SOURCE_DIR "/resources/") + QLatin1String(name));
}

qsizetype entryCount(const QByteArray& bytes, const char* list) {
    return QJsonDocument::fromJson(bytes).object().value(QLatin1String(list)).toArray().size();
}

// The shipped file with entry `index`'s member `key` set to `value` (or removed when undefined).
QByteArray edited(const char* file, const char* list, int index, const QString& key,
                  const QJsonValue& value) {
    QJsonObject doc = QJsonDocument::fromJson(source(file)).object();
    QJsonArray entries = doc.value(QLatin1String(list)).toArray();
    QJsonObject entry = entries.at(index).toObject();
    if (key.startsWith(QStringLiteral("settings."))) {
        QJsonObject settings = entry.value(QStringLiteral("settings")).toObject();
        settings.insert(key.mid(9), value);
        entry.insert(QStringLiteral("settings"), settings);
    } else if (value.isUndefined()) {
        entry.remove(key);
    } else {
        entry.insert(key, value);
    }
    entries.replace(index, entry);
    doc.insert(QLatin1String(list), entries);
    return QJsonDocument(doc).toJson();
}

} // namespace

class TestResources : public QObject {
    Q_OBJECT
  private slots:
    void shippedPresetsAllRead();
    void shippedChaptersAllRead();
    void compiledInResourcesAreTheShippedOnes();
    void corruptedPresets_data();
    void corruptedPresets();
    void corruptedChapters_data();
    void corruptedChapters();
    void unreadableFilesGiveOneMessage_data();
    void unreadableFilesGiveOneMessage();
};

void TestResources::shippedPresetsAllRead() {
    const QByteArray bytes = source("presets.json");
    const PresetsParse parsed = parsePresets(bytes, QStringLiteral("presets.json"));
    QVERIFY2(parsed.errors.isEmpty(), qPrintable(parsed.errors.join(QLatin1Char('\n'))));
    QCOMPARE(qsizetype(parsed.presets.size()), entryCount(bytes, "presets"));
    QVERIFY(parsed.presets.size() >= 10);
    for (const Preset& p : parsed.presets) {
        QVERIFY(!p.id.isEmpty() && !p.title.isEmpty());
        (void)hardwareFor(p.settings); // throws for an unknown profile
    }
}

void TestResources::shippedChaptersAllRead() {
    const QByteArray bytes = source("lecture.json");
    const LectureParse parsed = parseLectureChapters(bytes, QStringLiteral("lecture.json"));
    QVERIFY2(parsed.errors.isEmpty(), qPrintable(parsed.errors.join(QLatin1Char('\n'))));
    QCOMPARE(qsizetype(parsed.chapters.size()), entryCount(bytes, "chapters"));
    for (const LectureChapter& c : parsed.chapters) {
        QVERIFY(!c.beats.isEmpty() && !c.views.isEmpty());
        QVERIFY(c.weights.isEmpty() || c.weights.size() == c.views.size());
    }
}

void TestResources::compiledInResourcesAreTheShippedOnes() {
    QCOMPARE(readFile(QStringLiteral(":/flashviz/presets.json")), source("presets.json"));
    QCOMPARE(readFile(QStringLiteral(":/flashviz/lecture.json")), source("lecture.json"));
    QCOMPARE(qsizetype(presets().size()), entryCount(source("presets.json"), "presets"));
    QCOMPARE(qsizetype(lectureChapters().size()), entryCount(source("lecture.json"), "chapters"));
}

void TestResources::corruptedPresets_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("expected"); // in the one message
    const char* f = "presets.json";
    const char* l = "presets";
    QTest::newRow("pattern typo (issue #12)")
        << edited(f, l, 2, "settings.pattern", "early-maxx")
        << QStringList{"presets.json", "entry 3 ('bug-hides')", "pattern", "early-maxx"};
    QTest::newRow("n 8.5") << edited(f, l, 0, "settings.queries", 8.5)
                           << QStringList{"'toy'", "queries", "8.5"};
    QTest::newRow("n 10^12") << edited(f, l, 0, "settings.queries", 1e12)
                             << QStringList{"queries", "1000000000000"};
    QTest::newRow("n 2^31") << edited(f, l, 0, "settings.queries", 2147483648.0)
                            << QStringList{"queries", "2147483648"};
    QTest::newRow("Br 0") << edited(f, l, 0, "settings.blockRows", 0)
                          << QStringList{"'toy'", "blockRows", "from 1"};
    QTest::newRow("rescale as text") << edited(f, l, 1, "settings.rescale", "no")
                                     << QStringList{"'rescale'", "rescale", "true or false"};
    QTest::newRow("unknown setting")
        << edited(f, l, 1, "settings.pattren", "late-max") << QStringList{"'rescale'", "pattren"};
    QTest::newRow("unknown field") << edited(f, l, 1, "stepp", "end") << QStringList{"stepp"};
    QTest::newRow("missing title") << edited(f, l, 4, "title", QJsonValue::Undefined)
                                   << QStringList{"'standard'", "title is missing"};
    QTest::newRow("title a number") << edited(f, l, 4, "title", 7) << QStringList{"title", "7"};
    QTest::newRow("bad step") << edited(f, l, 4, "step", "first-rescal")
                              << QStringList{"'standard'", "step", "first-rescal"};
    QTest::newRow("huge step") << edited(f, l, 4, "step", 1e300) << QStringList{"step"};
    QTest::newRow("settings a list")
        << edited(f, l, 4, "settings", QJsonArray{1}) << QStringList{"settings", "a list"};
    QTest::newRow("duplicate id") << edited(f, l, 1, "id", "toy")
                                  << QStringList{"entry 2 ('toy')", "taken"};
    QTest::newRow("unknown hardware") << edited(f, l, 0, "settings.hardware", "a100-40gbb")
                                      << QStringList{"hardware", "a100-40gbb"};
}

void TestResources::corruptedPresets() {
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, expected);
    const PresetsParse parsed = parsePresets(bytes, QStringLiteral("presets.json"));
    QCOMPARE(parsed.errors.size(), 1);
    for (const QString& part : expected)
        QVERIFY2(parsed.errors[0].contains(part), qPrintable(parsed.errors[0]));
    // One entry skipped; the others still load.
    QCOMPARE(qsizetype(parsed.presets.size()), entryCount(bytes, "presets") - 1);
}

void TestResources::corruptedChapters_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("expected");
    const char* f = "lecture.json";
    const char* l = "chapters";
    QTest::newRow("pattern typo (issue #12)")
        << edited(f, l, 2, "settings.pattern", "early-maxx")
        << QStringList{"lecture.json", "entry 3 ('online')", "pattern", "early-maxx"};
    QTest::newRow("huge n") << edited(f, l, 4, "settings.queries", 1e12)
                            << QStringList{"'traffic'", "queries", "1000000000000"};
    QTest::newRow("unknown view") << edited(f, l, 0, "views", QJsonArray{"memory", "tiles"})
                                  << QStringList{"'memory'", "views[1]", "tiles"};
    QTest::newRow("views a string")
        << edited(f, l, 0, "views", "memory") << QStringList{"views", "must be a list"};
    QTest::newRow("no views") << edited(f, l, 0, "views", QJsonValue::Undefined)
                              << QStringList{"views is missing"};
    QTest::newRow("bad beat") << edited(f, l, 0, "beats", QJsonArray{"0", "first-rescal"})
                              << QStringList{"beats[1]", "first-rescal"};
    QTest::newRow("beat past 64 characters")
        << edited(f, l, 0, "beats", QJsonArray{QString(64, QLatin1Char('0')) + QStringLiteral("x")})
        << QStringList{"beats[0]", "65 characters long"};
    QTest::newRow("beat with garbage after its number")
        << edited(f, l, 0, "beats", QJsonArray{QString(40, QLatin1Char('0')) + QStringLiteral("x")})
        << QStringList{"beats[0]"};
    QTest::newRow("'all' over too many steps")
        << edited(f, l, 3, "settings.queries", 4096)
        << QStringList{"beats 'all'", "at most 4096"};
    QTest::newRow("beat a number")
        << edited(f, l, 0, "beats", QJsonArray{0}) << QStringList{"beats[0]", "must be text"};
    QTest::newRow("no beats") << edited(f, l, 0, "beats", QJsonArray{})
                              << QStringList{"beats", "0 entries"};
    QTest::newRow("weights mismatch")
        << edited(f, l, 1, "weights", QJsonArray{4}) << QStringList{"'standard'", "weights"};
    QTest::newRow("weight 1e300") << edited(f, l, 1, "weights", QJsonArray{4, 1e300})
                                  << QStringList{"weights[1]"};
    QTest::newRow("missing narrative") << edited(f, l, 6, "narrative", QJsonValue::Undefined)
                                       << QStringList{"'summary'", "narrative is missing"};
    QTest::newRow("placeholder typo")
        << edited(f, l, 6, "narrative", "About {hbmm} of it") << QStringList{"narrative", "{hbmm}"};
    QTest::newRow("id a number") << edited(f, l, 6, "id", 7) << QStringList{"entry 7", "id"};
    QTest::newRow("unknown field")
        << edited(f, l, 6, "veiws", QJsonArray{"memory"}) << QStringList{"veiws"};
}

void TestResources::corruptedChapters() {
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, expected);
    const LectureParse parsed = parseLectureChapters(bytes, QStringLiteral("lecture.json"));
    QCOMPARE(parsed.errors.size(), 1);
    for (const QString& part : expected)
        QVERIFY2(parsed.errors[0].contains(part), qPrintable(parsed.errors[0]));
    QCOMPARE(qsizetype(parsed.chapters.size()), entryCount(bytes, "chapters") - 1);
}

void TestResources::unreadableFilesGiveOneMessage_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    QTest::newRow("empty") << QByteArray() << "not valid JSON";
    QTest::newRow("cut short") << source("presets.json").left(200) << "not valid JSON";
    QTest::newRow("a list") << QByteArray("[1, 2]") << "no list";
    QTest::newRow("other file") << QByteArray("{\"format\": 1}") << "no list";
    QTest::newRow("list of numbers")
        << QByteArray("{\"presets\": [1], \"chapters\": [1]}") << "must be an object";
    QTest::newRow("huge") << QByteArray(2 * 1024 * 1024, ' ') << "bytes";
}

void TestResources::unreadableFilesGiveOneMessage() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    const PresetsParse p = parsePresets(bytes, QStringLiteral("presets.json"));
    QVERIFY(p.presets.empty());
    QCOMPARE(p.errors.size(), 1);
    QVERIFY2(p.errors[0].contains(expected) && p.errors[0].contains(QStringLiteral("presets.json")),
             qPrintable(p.errors[0]));
    const LectureParse c = parseLectureChapters(bytes, QStringLiteral("lecture.json"));
    QVERIFY(c.chapters.empty());
    QCOMPARE(c.errors.size(), 1);
    QVERIFY2(c.errors[0].contains(expected), qPrintable(c.errors[0]));
}

QTEST_MAIN(TestResources)
#include "tst_resources.moc"
