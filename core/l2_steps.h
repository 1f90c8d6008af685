#pragma once
// The step view's run through L2: which of the counting model's HBM bytes, step by step, pass
// between L2 and DRAM. The counting model's traffic is what the SMs move to and from L2; this is
// the third level under it, for the memory stage's two counters (SRAM ↔ L2, L2 ↔ DRAM).
//
// The run is the engine's: one head, its blocks one after another (core/l2_traffic.h models a
// whole launch, many blocks at once). Its assumptions, also in assumptions() for the faces:
// - L2 starts empty, and the usable L2 is core/l2_traffic's (half of it).
// - When the matrices the run touches in HBM (their whole sizes added up) fit in the usable L2,
//   L2 keeps every line once loaded: a byte comes from DRAM the first time it is read, never
//   when the run wrote it first, and goes to DRAM once, when first written (the write-back
//   happens later, at an eviction or after the run; a rewrite of a line still in L2 costs DRAM
//   nothing).
// - Otherwise L2 is taken to keep nothing between steps: DRAM sees every counted byte. (Re-reads
//   of K and V sweep through more than L2 holds, and an LRU cache misses all of them.)
#include "core/hardware.h"
#include "core/steps.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace flashviz {

struct DramTraffic {
    std::uint64_t readBytes = 0, writeBytes = 0;
    std::uint64_t bytes() const { return readBytes + writeBytes; }
    DramTraffic& operator+=(const DramTraffic& other);
    bool operator==(const DramTraffic&) const = default;
};

class StepL2Model {
  public:
    // Walks the run once when it fits (O(steps)); otherwise costs nothing.
    StepL2Model(std::shared_ptr<const StepEngine> engine, double usableL2Bytes);

    double usableL2Bytes() const { return m_usable; }
    double footprintBytes() const { return m_footprint; } // the run's matrices in HBM, added up
    bool fits() const { return m_footprint <= m_usable; }

    DramTraffic ofStep(int step) const;   // this step alone
    DramTraffic through(int step) const;  // steps 0 .. step; step -1: nothing
    DramTraffic total() const;
    // One sentence each, as every face shows them.
    std::vector<std::string> assumptions() const;

  private:
    DramTraffic ofStep(const StepInfo& info) const;
    int outerOf(int step) const;

    std::shared_ptr<const StepEngine> m_engine;
    double m_usable = 0, m_footprint = 0;
    std::vector<int> m_outerFirst;          // the first step of each outer block
    std::vector<DramTraffic> m_outerBefore; // DRAM traffic before each outer block
    DramTraffic m_total;
};

} // namespace flashviz
