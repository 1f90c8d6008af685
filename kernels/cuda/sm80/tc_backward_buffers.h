#pragma once
// The device buffers a tensor-core backward needs beside Q, K, V, O and dO: the forward's
// log-sum-exp, the scratch (dQ's fp32 accumulator, D and the scaled LSE) and dQ, dK, dV. The
// benchmarks and the host-data API allocate them here, sized from the forward's parameters, which
// are kept so that the backward's parameters cannot describe another problem.
#include "kernels/cuda/runtime/device_memory.h"
#include "kernels/cuda/sm80/tc_backward_launch.h"

#include <cstddef>
#include <cstdint>

namespace flashviz::cuda {

struct TcBackwardBuffers {
    explicit TcBackwardBuffers(const TcParams& sizes)
        : forward(sizes),
          lse(std::size_t(sizes.batch) * sizes.heads * sizes.queries, "the log-sum-exp"),
          workspace(tcBackwardWorkspaceFloats(sizes), "the backward's scratch"),
          dq(elements(sizes, sizes.queries), "dQ"),
          dk(elements(sizes, sizes.keys), "dK"),
          dv(elements(sizes, sizes.keys), "dV") {}

    // The forward's parameters writing the LSE here (a forward launched with them leaves what
    // the backward reads), with dO and these gradients: ready for launchTcBackward.
    TcBackwardParams params(const void* dout) const {
        TcBackwardParams p;
        static_cast<TcParams&>(p) = forward;
        p.lse = lse.get();
        p.dout = dout;
        p.dq = dq.get();
        p.dk = dk.get();
        p.dv = dv.get();
        p.workspace = workspace.get();
        return p;
    }
    // What the backward adds to the forward's memory besides the gradients.
    std::size_t scratchBytes() const { return lse.bytes() + workspace.bytes(); }

    const TcParams forward; // what the buffers are sized for
    DeviceBuffer<float> lse, workspace;
    DeviceBuffer<std::uint16_t> dq, dk, dv;

private:
    static std::size_t elements(const QkvParams& p, int rows) {
        return std::size_t(p.batch) * p.heads * rows * p.headDim;
    }
};

} // namespace flashviz::cuda
