// dQ's scratch in fragment order (kernels/cuda/params/fragment_order.h), the one layout the Hopper
// backward writes and the post-pass reads: held to the accumulator layout of a wgmma m64 product as
// the PTX ISA draws it, a place for every element, and the store and load widths both kernels use.
#include "kernels/cuda/params/fragment_order.h"

#include <QtTest/QtTest>

#include <vector>

using namespace flashviz::cuda;

static_assert(fragmentOrderOffset(0, 0, 0) == 0);
static_assert(fragmentOrderOffsetOf(8, 1) == 3); // thread 0's fourth value

namespace {

struct Element {
    int row;
    int column;
};

// Register `reg` of thread `thread` (0..127) of a warpgroup holding a 64 x N fp32 wgmma
// accumulator, by the PTX ISA's figure: warp thread / 32 holds rows 16 warp .. 16 warp + 15;
// lane l holds row l / 4 (+ 8 for registers 2 and 3 of each four) and columns 2 (l % 4), + 1 of
// each 8-column chunk reg / 4.
Element accumulatorElement(int thread, int reg) {
    const int lane = thread % 32;
    return {16 * (thread / 32) + lane / 4 + 8 * (reg % 4 / 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

} // namespace

class TestFragmentOrder : public QObject {
    Q_OBJECT
private slots:
    void offsetsFollowTheAccumulatorLayout_data() {
        QTest::addColumn<int>("headDim");
        QTest::newRow("d 64") << 64;
        QTest::newRow("d 128") << 128;
    }
    // Each register's element is found where the kernel's store put that register.
    void offsetsFollowTheAccumulatorLayout() {
        QFETCH(int, headDim);
        for (int thread = 0; thread < 128; ++thread)
            for (int reg = 0; reg < headDim / 2; ++reg) {
                const Element e = accumulatorElement(thread, reg);
                QCOMPARE(fragmentOrderOffsetOf(e.row, e.column), fragmentOrderOffset(reg / 4, thread, reg % 4));
            }
    }

    void everyElementHasItsOwnPlace_data() { offsetsFollowTheAccumulatorLayout_data(); }
    void everyElementHasItsOwnPlace() {
        QFETCH(int, headDim);
        std::vector<int> owners(std::size_t(64 * headDim), 0);
        for (int row = 0; row < 64; ++row)
            for (int column = 0; column < headDim; ++column) {
                const int offset = fragmentOrderOffsetOf(row, column);
                QVERIFY2(offset >= 0 && offset < 64 * headDim, qPrintable(QString::number(offset)));
                ++owners[std::size_t(offset)];
            }
        for (int count : owners) QCOMPARE(count, 1);
    }

    // The kernel stores a thread's four values as one float4 and a warp's as 512 contiguous bytes;
    // the post-pass reads two neighbouring columns as one float2.
    void storesAndLoadsAreWhole() {
        for (int chunk = 0; chunk < 16; ++chunk)
            for (int warp = 0; warp < 4; ++warp) {
                const int first = fragmentOrderOffset(chunk, 32 * warp, 0);
                QCOMPARE(first % 128, 0);
                for (int lane = 0; lane < 32; ++lane)
                    for (int value = 0; value < 4; ++value)
                        QCOMPARE(fragmentOrderOffset(chunk, 32 * warp + lane, value), first + 4 * lane + value);
            }
        for (int row = 0; row < 64; ++row)
            for (int column = 0; column < 128; column += 2) {
                QCOMPARE(fragmentOrderOffsetOf(row, column) % 2, 0);
                QCOMPARE(fragmentOrderOffsetOf(row, column + 1), fragmentOrderOffsetOf(row, column) + 1);
            }
    }
};

QTEST_APPLESS_MAIN(TestFragmentOrder)
#include "tst_fragment_order.moc"
