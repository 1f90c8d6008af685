// The bad-input matrix: both command lines (flashviz-cli's commands and the window's flashviz
// arguments) run as real processes on bad input. Every row must end, within a timeout, with a
// non-zero exit code and a message on stderr that names what was wrong: nothing crashes, hangs,
// or starts work it will refuse later. The GUI rows are skipped where the GUI is not built.
#include <QElapsedTimer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QtTest>

namespace {

constexpr int kRowTimeoutMs = 20000;

QString executable(const QString& program) {
    if (program == QLatin1String("cli")) return QStringLiteral(FLASHVIZ_CLI_EXECUTABLE);
#ifdef FLASHVIZ_EXECUTABLE
    return QStringLiteral(FLASHVIZ_EXECUTABLE);
#else
    return {};
#endif
}

} // namespace

class TestBadInput : public QObject {
    Q_OBJECT
  private slots:
    void refused_data();
    void refused();
};

void TestBadInput::refused_data() {
    QTest::addColumn<QString>("program"); // "cli" (flashviz-cli) or "gui" (flashviz)
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message"); // a fragment of stderr
    const auto cli = [](const char* name, QStringList args, const char* message) {
        QTest::newRow(qPrintable(QStringLiteral("cli: ") + QLatin1String(name)))
            << QStringLiteral("cli") << args << 2 << QString::fromUtf8(message);
    };
    const auto gui = [](const char* name, QStringList args, const char* message) {
        QTest::newRow(qPrintable(QStringLiteral("gui: ") + QLatin1String(name)))
            << QStringLiteral("gui") << args << 2 << QString::fromUtf8(message);
    };

    // flashviz-cli: commands, and options that belong to another command.
    cli("no command", {}, "no command given");
    cli("unknown command", {"fly"}, "unknown command 'fly'");
    cli("extra argument", {"run", "extra"}, "unexpected argument 'extra'");
    cli("unknown option", {"run", "--frobnicate"}, "Unknown option 'frobnicate'");
    cli("missing value", {"run", "--n"}, "Missing value after '--n'");
    cli("demos --n", {"demos", "--n", "-5"}, "demos does not take --n");
    cli("profiles --json", {"profiles", "--json"}, "profiles does not take --json");
    cli("bench --pattern", {"bench", "--pattern", "large"}, "bench does not take --pattern");
    cli("run --step", {"run", "--step", "3"}, "run does not take --step");
    cli("steps --sizes", {"steps", "--sizes", "5"}, "steps does not take --sizes");
    cli("steps --backend", {"steps", "--backend", "cpu"}, "steps does not take --backend");
    // Demo numbers.
    cli("only 0", {"demos", "--only", "0"}, "--only '0': the demo number must be at least 1");
    cli("only 10", {"demos", "--only", "10"}, "(allowed: 1 to 9)");
    cli("only garbage", {"demos", "--only", "x"}, "--only 'x'");
    // Sizes and blocks: the option, the value and the range.
    cli("n 0", {"run", "--n", "0"},
        "--n '0': n_q (queries) must be at least 1 (allowed: 1 to 1048576)");
    cli("n negative", {"run", "--n", "-5"}, "--n '-5'");
    cli("n past int", {"run", "--n", "99999999999"}, "is past the limit of 1048576");
    cli("n trailing garbage", {"run", "--n", "12abc"},
        "--n '12abc': n_q (queries) expects a whole number");
    cli("n fraction", {"run", "--n", "1.5"}, "expects a whole number");
    cli("n huge", {"run", "--n", "999999999999999999999999"}, "past the limit");
    cli("nk past the limit", {"run", "--nk", "2000000"}, "--nk '2000000'");
    cli("d 0", {"run", "--d", "0"}, "--d '0'");
    cli("d past the limit", {"run", "--d", "5000"}, "past the limit of 1024");
    cli("br 0", {"run", "--br", "0"}, "--br '0': Br (query block size) must be at least 1");
    cli("bc negative", {"steps", "--bc", "-1"}, "--bc '-1'");
    cli("br past the limit", {"run", "--br", "2000000"}, "past the limit of 1048576");
    // Seeds and scales: NaN, inf, negative, garbage.
    cli("seed negative", {"run", "--seed", "-1"}, "--seed '-1'");
    cli("seed past 64 bits", {"run", "--seed", "18446744073709551616"}, "0 to 9223372036854775807");
    cli("seed past 63 bits", {"run", "--seed", "9223372036854775808"}, "0 to 9223372036854775807");
    cli("block past the sequence", {"run", "--n", "8", "--br", "1000000"},
        "Br = 1000000 is larger than n_q = 8 (allowed: 1 to 8)");
    cli("scale nan", {"run", "--scale", "nan"},
        "--scale 'nan': the softmax scale expects a finite");
    cli("scale inf", {"steps", "--scale", "inf"}, "--scale 'inf'");
    cli("scale -inf", {"run", "--scale", "-inf"}, "--scale '-inf'");
    cli("scale negative", {"run", "--scale", "-1"}, "above 0");
    cli("scale zero", {"run", "--scale", "0"}, "above 0");
    cli("scale past double", {"run", "--scale", "1e400"}, "--scale '1e400'");
    cli("scale garbage", {"run", "--scale", "0.5x"}, "--scale '0.5x'");
    // Names.
    cli("pattern", {"run", "--pattern", "zigzag"}, "--pattern 'zigzag': use gaussian");
    cli("precision", {"run", "--precision", "half"}, "--precision 'half'");
    cli("backend", {"run", "--backend", "tpu"}, "--backend 'tpu': use cpu or cuda");
    cli("loop order", {"steps", "--loop-order", "sideways"}, "--loop-order 'sideways'");
    cli("algorithm", {"steps", "--algorithm", "quantum"}, "--algorithm 'quantum'");
    // The backward: one algorithm, its switches on it alone, its reference's memory.
    cli("backward and standard", {"run", "--backward", "--algorithm", "standard"},
        "--backward and --algorithm 'standard' ask for two algorithms; give one");
    cli("backward switch on the forward", {"run", "--no-row-dot"},
        "--no-row-dot is a switch of the backward pass");
    cli("store-p on standard", {"steps", "--algorithm", "standard", "--store-p"},
        "--store-p is a switch of the backward pass");
    cli("backward too big",
        {"run", "--backward", "--n", "1048576", "--d", "1", "--br", "1024", "--bc", "1024"},
        "run --backward checks the backward pass's gradients");
    cli("backward step past the run", {"steps", "--backward", "--step", "38"},
        "this run has steps 0 to 37");
    // Memory: ordinary attention's n x n matrix is refused, not attempted.
    cli("standard too big", {"run", "--n", "1048576", "--d", "1", "--br", "1024", "--bc", "1024"},
        "memory");
    // Steps and step expressions.
    cli("step count past int", {"steps", "--n", "100000"},
        "gives 3750075000 steps; the step view handles at most 2147483647; use larger blocks");
    cli("step count past int, kv-outer",
        {"steps", "--n", "1048576", "--loop-order", "kv-outer", "--step", "0"},
        "gives 549756338177 steps");
    cli("step offset past int", {"steps", "--step", "first-rescale+2147483647"},
        "the offset is past 2147483646");
    cli("step past the run", {"steps", "--step", "1000"}, "this run has steps 0 to 29");
    cli("step end+1", {"steps", "--step", "end+1"}, "names step 30");
    cli("step negative", {"steps", "--step", "-1"}, "cannot be negative");
    cli("step garbage", {"steps", "--step", "first-rescale*2"}, "only +K or -K");
    cli("step empty", {"steps", "--step", ""}, "empty");
    cli("no first rescale",
        {"steps", "--n", "16", "--pattern", "early-max", "--step", "first-rescale"},
        "no step of this run rescales");
    // The benchmark: refused before any timing.
    cli("bench br 0", {"bench", "--br", "0"}, "--br '0'");
    cli("bench repeats 0", {"bench", "--repeats", "0"}, "(allowed: 1 to 100)");
    cli("bench repeats huge", {"bench", "--repeats", "1000000000"}, "past the limit of 100");
    cli("bench size past the bound", {"bench", "--sizes", "40000", "--repeats", "1"},
        "each size is a whole number from 1 to 16384");
    cli("bench sizes empty", {"bench", "--sizes", ""}, "--sizes ''");
    cli("bench sizes gap", {"bench", "--sizes", "1024,,2048"}, "(got '')");
    cli("bench sizes garbage", {"bench", "--sizes", "1024,big"}, "(got 'big')");
    cli("bench too many sizes", {"bench", "--sizes", "8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8"},
        "a benchmark takes 1 to 16");
    cli("bench too much work", {"bench", "--sizes", "16384", "--repeats", "100"},
        "it does at most 1e+13");
    cli("bench d past the limit", {"bench", "--d", "5000"}, "--d '5000'");

    // flashviz: the window's arguments.
    gui("unknown option", {"--frobnicate"}, "Unknown option 'frobnicate'");
    gui("an option of neither", {"--sizes", "5"}, "Unknown option 'sizes'");
    // The problem options, checked by the code that checks flashviz-cli's, with its messages.
    gui("n 0", {"--n", "0"}, "--n '0': n_q (queries) must be at least 1 (allowed: 1 to 1048576)");
    gui("n past the window", {"--n", "20000"}, "more than the window animates");
    gui("block past the sequence", {"--br", "1000000"},
        "Br = 1000000 is larger than n_q = 8 (allowed: 1 to 8)");
    gui("seed negative", {"--seed", "-1"},
        "--seed '-1': the seed expects a whole number from 0 to "
        "9223372036854775807");
    gui("pattern", {"--pattern", "zigzag"}, "--pattern 'zigzag'");
    gui("loop order", {"--loop-order", "sideways"}, "--loop-order 'sideways'");
    // Steps the run does not have: refused once the run is known, never shown as the nearest.
    gui("step past the run", {"--step", "999999"}, "names step 999999; this run has steps 0 to 29");
    gui("step end+1", {"--step", "end+1", "--screenshot", "/tmp/flashviz-bad-input.png"},
        "this run has steps 0 to 29");
    gui("no first rescale", {"--pattern", "early-max", "--n", "16", "--step", "first-rescale"},
        "no step of this run rescales");
    gui("unknown preset", {"--preset", "nope"}, "Unknown preset 'nope'");
    gui("unknown backend", {"--backend", "tpu"}, "--backend 'tpu': use cpu or cuda");
    gui("step offset past int", {"--step", "first-rescale+2147483647"},
        "the offset is past 2147483646");
    gui("step number past int", {"--step", "99999999999999999999"}, "past 2147483646");
    gui("step negative", {"--step", "-3"}, "cannot be negative");
    gui("step word", {"--step", "later"}, "not a whole number");
    gui("step garbage offset", {"--step", "end+x"}, "not a whole number");
    gui("step empty", {"--step", ""}, "empty");
    gui("chapter 0", {"--chapter", "0"}, "--chapter takes a chapter number from 1 to");
    gui("chapter past the last", {"--chapter", "999"}, "(got '999')");
    gui("chapter garbage", {"--chapter", "abc"}, "(got 'abc')");
    gui("analysis 0", {"--analysis", "0"}, "--analysis takes a chart number from 1 to");
    gui("analysis past the last", {"--analysis", "99"}, "(got '99')");
    gui("transition nan", {"--transition", "nan"},
        "--transition takes a number from 0 to 1 (got 'nan')");
    gui("transition inf", {"--transition", "inf"}, "(got 'inf')");
    gui("transition negative", {"--transition", "-0.5"}, "(got '-0.5')");
    gui("transition garbage", {"--transition", "0.5abc"}, "(got '0.5abc')");
    gui("size too small", {"--screenshot", "/tmp/x.png", "--size", "100x100"}, "from 320x240");
    gui("size past int", {"--size", "1600x99999999999"}, "(got '1600x99999999999')");
    gui("size garbage", {"--size", "big"}, "WIDTHxHEIGHT");
    gui("screenshot empty", {"--screenshot", ""}, "--screenshot takes the name of a PNG file");
    gui("screenshot missing folder", {"--screenshot", "/no/such/folder/x.png"}, "does not exist");
    gui("screenshot a folder", {"--screenshot", "/tmp"}, "is a folder");
}

void TestBadInput::refused() {
    QFETCH(QString, program);
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const QString path = executable(program);
    if (path.isEmpty())
        QSKIP("the GUI (flashviz) is not built in this configuration (FLASHVIZ_BUILD_GUI=OFF or "
              "FLASHVIZ_CORE_ONLY=ON), so its command line cannot be run");
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    process.setProcessEnvironment(env);
    process.setProgram(path);
    // No -platform argument: the window's refusals are answered before it looks for a display
    // (main.cpp), as on a terminal without one; what needs a window gets the offscreen one.
    process.setArguments(args);
    QElapsedTimer timer;
    timer.start();
    process.start();
    QVERIFY2(process.waitForStarted(kRowTimeoutMs), qPrintable(process.errorString()));
    if (!process.waitForFinished(kRowTimeoutMs)) {
        process.kill();
        process.waitForFinished(5000);
        QFAIL(qPrintable(QStringLiteral("still running after %1 s: %2 %3")
                             .arg(kRowTimeoutMs / 1000)
                             .arg(path, args.join(QLatin1Char(' ')))));
    }
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(process.exitStatus() == QProcess::NormalExit,
             qPrintable(QStringLiteral("crashed: ") + err));
    QVERIFY2(
        process.exitCode() == exitCode,
        qPrintable(QStringLiteral("exit code %1, stderr: %2").arg(process.exitCode()).arg(err)));
    QVERIFY2(err.contains(message), qPrintable(QStringLiteral("stderr: ") + err));
}

QTEST_GUILESS_MAIN(TestBadInput)
#include "tst_bad_input.moc"
