#pragma once
// Where a 64-row block of fp32 accumulators sits when stored in "fragment order": as one
// warpgroup's registers hold a wgmma m64 product (the PTX ISA's accumulator layout, which is also
// mma.sync's m16n8 layout per warp), chunk of 8 columns first, then the thread, then its four
// values. The Hopper backward stores dQ's tiles so (16-byte stores, a warp's 512 bytes
// contiguous) and adds them to the scratch whole (sm90/hopper_backward.cuh); the post-pass reads
// the scratch back in rows (sm80/tc_backward.cuh). Both use these two rules, and
// tests/core/tst_fragment_order.cpp checks them against the accumulator layout. Plain C++17 so a
// host test compiles it; under nvcc the rules are device functions too.

#ifdef __CUDACC__
#define FLASHVIZ_FRAGMENT_RULE constexpr __host__ __device__
#else
#define FLASHVIZ_FRAGMENT_RULE constexpr
#endif

namespace flashviz::cuda {

// The float offset, in its 64-row block, of value `value` (0..3) of thread `thread` (0..127) in
// chunk `chunk` (columns 8 chunk .. 8 chunk + 7): a thread's four values are one 16-byte store.
FLASHVIZ_FRAGMENT_RULE int fragmentOrderOffset(int chunk, int thread, int value) {
    return (chunk * 128 + thread) * 4 + value;
}

// The same offset for the element at (row, column) of the block: warp row / 16 holds it; in the
// warp, lane 4 (row % 8) + (column % 8) / 2, and value 2 (row % 16 / 8) + column % 2. Unsigned,
// so the divisions and remainders are shifts and masks (the post-pass calls this per element).
FLASHVIZ_FRAGMENT_RULE int fragmentOrderOffsetOf(unsigned row, unsigned column) {
    const unsigned thread = 32 * (row % 64 / 16) + 4 * (row % 8) + column % 8 / 2;
    return fragmentOrderOffset(int(column / 8), int(thread), int(2 * (row % 16 / 8) + column % 2));
}

} // namespace flashviz::cuda

#undef FLASHVIZ_FRAGMENT_RULE
