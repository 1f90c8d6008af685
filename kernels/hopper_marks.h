#pragma once
// The marks the Hopper kernel's trace mode records (kernels/cuda/sm90/hopper_flash.cuh), one
// thread per warpgroup, each with %globaltimer and the SM's clock: shared by the device code and
// the host's reader (kernels/hopper_trace.h), so plain C++ with no includes beyond <cstdint>.
#include <cstdint>

namespace flashviz::kernels {

enum class HopperMark : std::uint8_t {
    // The producer's issuing thread.
    QIssued,     // Q's copy handed to the copy engine
    KBufferWait, // waiting for a consumer to hand K's buffer back
    KIssued,     // K_j's copy handed to the copy engine
    VBufferWait,
    VIssued,
    // The first thread of each consumer warpgroup.
    QWait,
    QReady,
    KWait, // waiting for K_j to arrive
    KReady,
    TurnWait, // ping-pong: waiting for the other consumer to hand over the tensor cores
    TurnGranted,
    ScoresIssued, // S_j = Q K_j^T handed to the tensor cores
    ScoresRetired, // ... and its result in registers
    SoftmaxBegin,
    SoftmaxEnd,
    VWait,
    VReady,
    ValuesIssued, // O += P_j V_j handed to the tensor cores
    ValuesWait,   // the warpgroup stops to wait for it
    ValuesRetired,
    StoreBegin, // O = acc / l written out
    StoreEnd,
    Finish, // every warpgroup's last but one: its second reading of %globaltimer
    TimerTick, // the first different reading after Finish's: the timer's step
    Count
};

// One mark as the device writes it: 16 bytes, the mark and the tile packed beside the SM's clock.
// Reading %globaltimer costs far more than the clock, so a warpgroup reads it at its first mark
// and at Finish alone (0 elsewhere): enough to place each block on the launch's time axis.
struct HopperDeviceMark {
    std::uint64_t globalNs; // %globaltimer, or 0 where not read
    std::uint32_t clockLow; // the low 32 bits of clock64 (a block lasts far less than 2^32 cycles)
    std::uint32_t markAndTile; // mark in the low 8 bits, the key tile (or -1) above
};
static_assert(sizeof(HopperDeviceMark) == 16, "two 8-byte stores");

// Where a traced launch writes: for each block (in launch order, blockIdx.x fastest) and
// warpgroup, `capacity` marks and how many it recorded (more than `capacity`: it ran out); for
// each block, the SM it ran on.
struct HopperTraceBuffers {
    HopperDeviceMark* marks;
    int* counts;
    int* sms;
    int capacity;
};

// Marks each warpgroup may record for a block that visits `tiles` key tiles.
constexpr int hopperMarkCapacity(int tiles) { return 16 * tiles + 16; } // Finish, TimerTick included

} // namespace flashviz::kernels
