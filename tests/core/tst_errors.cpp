// Every bad input gets an EngineError of the right kind with a sentence a person can read, and
// nothing crashes or tries to allocate what the machine does not have.
#include "core/attention.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/hardware.h"
#include "core/options.h"
#include "core/problem.h"
#include "core/steps.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>

using namespace flashviz;

Q_DECLARE_METATYPE(flashviz::ErrorKind)

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Runs `call`, which must throw an EngineError of `kind`; returns its message.
std::string expectError(const std::function<void()>& call, ErrorKind kind, bool* ok) {
    *ok = false;
    try {
        call();
    } catch (const EngineError& e) {
        if (e.kind() != kind) {
            qWarning("wrong kind: got '%s', expected '%s' (%s)", toString(e.kind()), toString(kind),
                     e.what());
            return e.what();
        }
        *ok = true;
        return e.what();
    } catch (const std::exception& e) {
        qWarning("not an EngineError: %s", e.what());
        return {};
    }
    qWarning("nothing was thrown");
    return {};
}

#define EXPECT_ENGINE_ERROR(call, kind, message)                                                   \
    do {                                                                                           \
        bool ok_ = false;                                                                          \
        message = expectError([&] { call; }, kind, &ok_);                                          \
        QVERIFY2(ok_, #call);                                                                      \
        QVERIFY2(message.size() >= 20, message.c_str()); /* a sentence, not a code */              \
    } while (false)

// The sizes alone; the rest as ProblemSpec leaves it (seed 0).
ProblemSpec sizes(int nq, int nk, int d) {
    return test::makeSpec(nq, nk, d, false, Precision::Double, InputPattern::Gaussian, 0);
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// A problem with n = 2^20 queries and keys but d = 1: the inputs take 24 MB, S would take 8 TB.
Problem hugeProblem() {
    const int n = kMaxSequenceLength;
    return makeProblem(Matrix::Zero(n, 1), Matrix::Zero(n, 1), Matrix::Zero(n, 1));
}

} // namespace

class TstErrors : public QObject {
    Q_OBJECT

  private slots:
    void errorKindsHaveNames();
    void badSizes_data();
    void badSizes();
    void badScale_data();
    void badScale();
    void badBlocks_data();
    void badBlocks();
    void nonFiniteInputs_data();
    void nonFiniteInputs();
    void mismatchedShapes_data();
    void mismatchedShapes();
    void scoreMatrixTooLarge();
    void inputsTooLarge();
    void unknownHardware();
    void softmaxBlockZero();
};

void TstErrors::errorKindsHaveNames() {
    std::set<std::string> names;
    for (ErrorKind kind :
         {ErrorKind::InvalidArgument, ErrorKind::LimitExceeded, ErrorKind::OutOfMemory,
          ErrorKind::NonFinite, ErrorKind::Unsupported, ErrorKind::BackendFailure}) {
        const std::string name = toString(kind);
        QVERIFY(!name.empty());
        names.insert(name);
    }
    QCOMPARE(int(names.size()), 6);
    const EngineError e(ErrorKind::NonFinite, "The input K holds a NaN");
    QVERIFY(e.kind() == ErrorKind::NonFinite);
    QCOMPARE(std::string(e.what()), std::string("The input K holds a NaN"));
    const std::runtime_error& base = e; // callers may catch it as a standard exception
    QCOMPARE(std::string(base.what()), std::string("The input K holds a NaN"));
}

void TstErrors::badSizes_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<ErrorKind>("kind");
    QTest::addColumn<int>("badValue");
    QTest::newRow("n_q 0") << 0 << 8 << 4 << ErrorKind::InvalidArgument << 0;
    QTest::newRow("n_q -3") << -3 << 8 << 4 << ErrorKind::InvalidArgument << -3;
    QTest::newRow("n_k 0") << 8 << 0 << 4 << ErrorKind::InvalidArgument << 0;
    QTest::newRow("n_k -1") << 8 << -1 << 4 << ErrorKind::InvalidArgument << -1;
    QTest::newRow("d 0") << 8 << 8 << 0 << ErrorKind::InvalidArgument << 0;
    QTest::newRow("d -64") << 8 << 8 << -64 << ErrorKind::InvalidArgument << -64;
    QTest::newRow("d past the limit")
        << 8 << 8 << kMaxHeadDim + 1 << ErrorKind::LimitExceeded << kMaxHeadDim + 1;
    QTest::newRow("n_q past the limit")
        << kMaxSequenceLength + 1 << 8 << 4 << ErrorKind::LimitExceeded << kMaxSequenceLength + 1;
    QTest::newRow("n_k past the limit")
        << 8 << kMaxSequenceLength + 1 << 4 << ErrorKind::LimitExceeded << kMaxSequenceLength + 1;
    QTest::newRow("n_k at int max") << 8 << std::numeric_limits<int>::max() << 4
                                    << ErrorKind::LimitExceeded << std::numeric_limits<int>::max();
}

void TstErrors::badSizes() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, headDim);
    QFETCH(ErrorKind, kind);
    QFETCH(int, badValue);
    const ProblemSpec spec = sizes(queries, keys, headDim);
    std::string message;
    EXPECT_ENGINE_ERROR(validate(spec), kind, message);
    QVERIFY2(contains(message, std::to_string(badValue)), message.c_str()); // names the bad value
    EXPECT_ENGINE_ERROR((void)makeProblem(spec), kind, message);
    // The limits themselves are accepted by validation.
    validate(sizes(1, 1, kMaxHeadDim));
    validate(sizes(kMaxSequenceLength, 1, 1));
}

void TstErrors::badScale_data() {
    QTest::addColumn<double>("scale");
    QTest::newRow("NaN") << kNaN;
    QTest::newRow("+inf") << kInf;
    QTest::newRow("-inf") << -kInf;
}

void TstErrors::badScale() {
    QFETCH(double, scale);
    ProblemSpec spec = sizes(8, 8, 4);
    spec.scale = scale;
    try {
        (void)makeProblem(spec);
        QFAIL("a non-finite softmax scale was accepted");
    } catch (const EngineError& e) {
        QVERIFY2(e.kind() == ErrorKind::InvalidArgument || e.kind() == ErrorKind::NonFinite,
                 e.what());
        QVERIFY(std::string(e.what()).size() >= 20);
    }
}

void TstErrors::badBlocks_data() {
    QTest::addColumn<int>("blockRows");
    QTest::addColumn<int>("blockCols");
    QTest::addColumn<ErrorKind>("kind");
    QTest::newRow("Br 0") << 0 << 64 << ErrorKind::InvalidArgument;
    QTest::newRow("Bc 0") << 64 << 0 << ErrorKind::InvalidArgument;
    QTest::newRow("both 0") << 0 << 0 << ErrorKind::InvalidArgument;
    QTest::newRow("Br -1") << -1 << 64 << ErrorKind::InvalidArgument;
    QTest::newRow("Bc -5") << 64 << -5 << ErrorKind::InvalidArgument;
    QTest::newRow("Br past the limit") << kMaxSequenceLength + 1 << 64 << ErrorKind::LimitExceeded;
    QTest::newRow("Bc past the limit") << 64 << kMaxSequenceLength + 1 << ErrorKind::LimitExceeded;
}

void TstErrors::badBlocks() {
    QFETCH(int, blockRows);
    QFETCH(int, blockCols);
    QFETCH(ErrorKind, kind);
    FlashOptions options;
    options.blockRows = blockRows;
    options.blockCols = blockCols;
    const Problem p = makeProblem(sizes(16, 16, 4));
    std::string message;
    EXPECT_ENGINE_ERROR(validate(options), kind, message);
    EXPECT_ENGINE_ERROR((void)flashForward(p, options), kind, message);
    EXPECT_ENGINE_ERROR(StepEngine(p, Algorithm::Flash, options), kind, message);
    options.loopOrder = LoopOrder::KeyValueOuter;
    EXPECT_ENGINE_ERROR((void)flashForward(p, options), kind, message);
}

void TstErrors::nonFiniteInputs_data() {
    QTest::addColumn<int>("which"); // 0 Q, 1 K, 2 V
    QTest::addColumn<double>("value");
    const char* names[] = {"Q", "K", "V"};
    for (int which = 0; which < 3; ++which) {
        QTest::addRow("%s NaN", names[which]) << which << kNaN;
        QTest::addRow("%s +inf", names[which]) << which << kInf;
        QTest::addRow("%s -inf", names[which]) << which << -kInf;
    }
}

void TstErrors::nonFiniteInputs() {
    QFETCH(int, which);
    QFETCH(double, value);
    NormalGenerator g(1);
    Matrix m[3] = {g.matrix(6, 4, 1.0), g.matrix(9, 4, 1.0), g.matrix(9, 4, 1.0)};
    m[which](which + 1, 2) = value;
    std::string message;
    EXPECT_ENGINE_ERROR((void)makeProblem(m[0], m[1], m[2]), ErrorKind::NonFinite, message);
    const char* names[] = {"Q", "K", "V"};
    QVERIFY2(contains(message, names[which]), message.c_str()); // says which input
}

void TstErrors::mismatchedShapes_data() {
    QTest::addColumn<int>("qRows");
    QTest::addColumn<int>("qCols");
    QTest::addColumn<int>("kRows");
    QTest::addColumn<int>("kCols");
    QTest::addColumn<int>("vRows");
    QTest::addColumn<int>("vCols");
    QTest::newRow("K and V rows differ") << 4 << 3 << 5 << 3 << 6 << 3;
    QTest::newRow("Q and K widths differ") << 4 << 3 << 5 << 2 << 5 << 2;
    QTest::newRow("V width differs") << 4 << 3 << 5 << 3 << 5 << 2;
    QTest::newRow("no queries") << 0 << 3 << 5 << 3 << 5 << 3;
    QTest::newRow("no keys") << 4 << 3 << 0 << 3 << 0 << 3;
    QTest::newRow("d 0") << 4 << 0 << 5 << 0 << 5 << 0;
}

void TstErrors::mismatchedShapes() {
    QFETCH(int, qRows);
    QFETCH(int, qCols);
    QFETCH(int, kRows);
    QFETCH(int, kCols);
    QFETCH(int, vRows);
    QFETCH(int, vCols);
    const Matrix q = Matrix::Ones(qRows, qCols), k = Matrix::Ones(kRows, kCols),
                 v = Matrix::Ones(vRows, vCols);
    std::string message;
    EXPECT_ENGINE_ERROR((void)makeProblem(q, k, v), ErrorKind::InvalidArgument, message);
    if (qRows > 0 && kRows > 0 && qCols > 0 && kCols > 0 && vCols > 0) {
        // The templated pass checks shapes too, rather than reading past a matrix.
        EXPECT_ENGINE_ERROR((void)flashForward<double>(q, k, v, 1.0, false, FlashOptions{}),
                            ErrorKind::InvalidArgument, message);
    }
}

void TstErrors::scoreMatrixTooLarge() {
    const int n = kMaxSequenceLength;
    std::string message;
    EXPECT_ENGINE_ERROR(requireScoreMatrixMemory(n, n, 8, 2), ErrorKind::OutOfMemory, message);
    requireScoreMatrixMemory(64, 64, 8, 2); // small: no complaint
    QVERIFY(physicalMemoryBytes() > (std::uint64_t(1) << 28));

    // n = 2^20 is within the sequence limit, but S and P would need 16 TB: refused up front,
    // never attempted (an attempt aborts under AddressSanitizer or throws std::bad_alloc).
    const Problem p = hugeProblem();
    EXPECT_ENGINE_ERROR((void)standardForward(p), ErrorKind::OutOfMemory, message);
    EXPECT_ENGINE_ERROR((void)referenceAttention(p), ErrorKind::OutOfMemory, message);
    EXPECT_ENGINE_ERROR(StepEngine(p, Algorithm::Standard, FlashOptions{}), ErrorKind::OutOfMemory,
                        message);
    FlashOptions keep;
    keep.keepFullScores = true; // the debug copy is n x n as well
    EXPECT_ENGINE_ERROR((void)flashForward(p, keep), ErrorKind::OutOfMemory, message);
    // Flash attention's own memory does not grow with n x n: the step engine accepts it.
    const StepEngine flash(p, Algorithm::Flash, FlashOptions{});
    QVERIFY(flash.stepCount() > 0);
}

void TstErrors::inputsTooLarge() {
    // Q, K, V (and O) for n = 2^20, d = 1024 take about 32 GB in double: more than half of
    // this machine's memory unless it has 64 GB or more.
    const ProblemSpec spec = sizes(kMaxSequenceLength, kMaxSequenceLength, kMaxHeadDim);
    const double need = 3.0 * kMaxSequenceLength * kMaxHeadDim * sizeof(double);
    if (need <= double(physicalMemoryBytes()) / 2)
        QSKIP("this machine could hold the inputs; the refusal cannot be provoked here");
    std::string message;
    EXPECT_ENGINE_ERROR(validate(spec), ErrorKind::OutOfMemory, message);
    EXPECT_ENGINE_ERROR((void)makeProblem(spec), ErrorKind::OutOfMemory, message);
}

void TstErrors::unknownHardware() {
    std::string message;
    EXPECT_ENGINE_ERROR((void)findHardwareProfile("tpu-v9"), ErrorKind::InvalidArgument, message);
    for (const HardwareProfile& profile : hardwareProfiles())
        QVERIFY2(contains(message, profile.id), message.c_str()); // names the ids that exist
    EXPECT_ENGINE_ERROR((void)findHardwareProfile(""), ErrorKind::InvalidArgument, message);
}

void TstErrors::softmaxBlockZero() {
    Vector x(4);
    x << 1, 2, 3, 4;
    std::string message;
    EXPECT_ENGINE_ERROR((void)onlineSoftmax(x, 0, true), ErrorKind::InvalidArgument, message);
    EXPECT_ENGINE_ERROR((void)onlineSoftmax(x, -2, false), ErrorKind::InvalidArgument, message);
}

QTEST_APPLESS_MAIN(TstErrors)
#include "tst_errors.moc"
