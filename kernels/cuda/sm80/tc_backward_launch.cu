// Launchers of the tensor-core backward pass (tc_backward.cuh): the variant table, checks, the
// scratch's layout and the three kernels' grids. Variants and their figures: kernels/bench/TC_NOTES.md.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_attributes.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/sm80/tc_backward.cuh"
#include "kernels/cuda/sm80/tc_backward_launch.h"
#include "kernels/cuda/sm80/tc_launch.h"
#include "kernels/kernel_configs.h"

#include "core/errors.h"
#include "core/tiling.h"

#include <cstdint>
#include <string>
#include <utility>

namespace flashviz::cuda {

namespace {

// Every variant's query block divides this (kernels::TensorCoreBackwardConfig::blockRows).
constexpr int kRowPadding = 128;

using BackwardLaunch = void (*)(const TcBackwardParams&);

struct BackwardVariant {
    TcBackwardKernelInfo info;
    BackwardLaunch launch;
};

template <class Tile, TcElement E, bool Causal>
void launchTyped(const TcBackwardParams& p) {
    const auto kernel = tc::tcBackwardKernel<Tile, E, Causal>;
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(Tile::kSharedBytes)),
          "Reserving shared memory for the tensor-core backward kernel");
    // Under the mask every head's first (longest) key blocks start first (tcBackwardKernel).
    const unsigned keyBlocks = unsigned(blockCount(p.keys, Tile::BC)), heads = unsigned(p.heads);
    const dim3 grid = Causal ? dim3(heads, keyBlocks, unsigned(p.batch)) : dim3(keyBlocks, heads, unsigned(p.batch));
    kernel<<<grid, Tile::kThreads, Tile::kSharedBytes>>>(p);
    checkLaunch("flash backward (tensor cores)");
}

template <int D, TcElement E>
void prepare(const TcBackwardParams& p) {
    const dim3 grid(unsigned(blockCount(p.rowsPadded, 4)), unsigned(p.heads), unsigned(p.batch));
    tc::backwardPrepareKernel<D, E><<<grid, 128>>>(p);
    checkLaunch("flash backward: D = rowsum(dO o O)");
}

template <int D, TcElement E>
void finish(const TcBackwardParams& p) {
    const dim3 grid(unsigned(blockCount(p.queries * (D / 8), 256)), unsigned(p.heads), unsigned(p.batch));
    tc::backwardFinishKernel<D, E><<<grid, 256>>>(p);
    checkLaunch("flash backward: dQ");
}

template <class Tile, TcElement E>
void launchElement(const TcBackwardParams& p) {
    prepare<Tile::D, E>(p);
    p.causal ? launchTyped<Tile, E, true>(p) : launchTyped<Tile, E, false>(p);
    finish<Tile::D, E>(p);
}

template <class Tile>
void launchTile(const TcBackwardParams& p) {
    if (p.element == TcElement::Fp16) launchElement<Tile, TcElement::Fp16>(p);
    else launchElement<Tile, TcElement::Bf16>(p);
}

// Variant I, instantiated from row I of the table (kernels/kernel_configs.h).
template <int I>
BackwardVariant variant() {
    constexpr kernels::TensorCoreBackwardConfig c = kernels::kTensorCoreBackwardConfigs[I];
    using Tile = tc::BackwardTile<c.headDim, c.warps, c.rows, c.minBlocksPerSm, c.streamed, c.kvInRegisters>;
    static_assert(Tile::BC == c.blockCols() && Tile::BR == c.blockRows() &&
                      Tile::kThreads == c.threads() && std::size_t(Tile::kSharedBytes) == c.sharedBytes() &&
                      kRowPadding % Tile::BR == 0,
                  "the table's derived sizes are the kernel's");
    TcBackwardKernelInfo info;
    info.id = I;
    info.name = kernels::tensorCoreBackwardConfigName(c);
    info.headDim = c.headDim;
    info.blockCols = Tile::BC;
    info.blockRows = Tile::BR;
    info.threads = Tile::kThreads;
    info.sharedBytes = Tile::kSharedBytes;
    info.blocksPerSm = c.minBlocksPerSm;
    return {info, &launchTile<Tile>};
}

template <int... I>
std::vector<BackwardVariant> allVariants(std::integer_sequence<int, I...>) {
    return {variant<I>()...};
}

const std::vector<BackwardVariant>& variants() {
    static const std::vector<BackwardVariant> all =
        allVariants(std::make_integer_sequence<int, kernels::kTensorCoreBackwardConfigCount>());
    return all;
}

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

} // namespace

const std::vector<TcBackwardKernelInfo>& tcBackwardKernels() {
    static const std::vector<TcBackwardKernelInfo> infos = [] {
        std::vector<TcBackwardKernelInfo> out;
        for (const auto& v : variants()) out.push_back(v.info);
        return out;
    }();
    return infos;
}

bool tcBackwardKernelRunsHere(const TcBackwardKernelInfo& info) {
    return info.sharedBytes <= maxSharedBytesPerBlock();
}

const TcBackwardKernelInfo* defaultTcBackwardKernel(int headDim, bool causal) {
    const int i = kernels::chooseTensorCoreBackwardConfig(headDim, causal, maxSharedBytesPerBlock(),
                                                          sharedBytesPerSm(), reservedSharedBytesPerBlock());
    return i < 0 ? nullptr : &tcBackwardKernels()[std::size_t(i)];
}

int tcBackwardRowsPadded(int queries) { return blockCount(queries, kRowPadding) * kRowPadding; }

std::size_t tcBackwardWorkspaceFloats(const QkvParams& p) {
    const std::size_t rows = std::size_t(p.batch) * std::size_t(p.heads) *
                             std::size_t(tcBackwardRowsPadded(p.queries));
    return rows * (std::size_t(p.headDim) + 2);
}

void checkTcBackwardParams(const TcBackwardParams& p) {
    checkTcParams(p);
    if (!p.dout || !p.dq || !p.dk || !p.dv || !p.lse || !p.workspace)
        throw EngineError(ErrorKind::InvalidArgument,
                          "The tensor-core backward needs dO, dQ, dK, dV, the forward's log-sum-exp "
                          "and its scratch.");
    if (!aligned16(p.dout) || !aligned16(p.dq) || !aligned16(p.dk) || !aligned16(p.dv) ||
        !aligned16(p.workspace))
        throw EngineError(ErrorKind::Unsupported,
                          "The tensor-core backward needs 16-byte aligned dO, dQ, dK, dV and scratch.");
}

void launchTcBackward(TcBackwardParams p, int kernelId) {
    checkTcBackwardParams(p);
    const TcBackwardKernelInfo* chosen = nullptr;
    if (kernelId < 0) {
        chosen = defaultTcBackwardKernel(p.headDim, p.causal);
        if (!chosen)
            throw EngineError(ErrorKind::Unsupported,
                              "No tensor-core backward variant for d = " + std::to_string(p.headDim) +
                                  " fits this GPU's shared memory.");
    } else {
        if (std::size_t(kernelId) >= tcBackwardKernels().size() ||
            tcBackwardKernels()[std::size_t(kernelId)].headDim != p.headDim)
            throw EngineError(ErrorKind::Unsupported,
                              "The tensor-core backward has no variant " + std::to_string(kernelId) +
                                  " for d = " + std::to_string(p.headDim) + ".");
        chosen = &tcBackwardKernels()[std::size_t(kernelId)];
        if (!tcBackwardKernelRunsHere(*chosen))
            throw EngineError(ErrorKind::Unsupported,
                              "The tensor-core backward variant " + chosen->name +
                                  " needs more shared memory than this GPU gives a block.");
    }
    // Under the mask the key blocks are the grid's y (launchTyped), which holds 65535.
    if (p.causal && blockCount(p.keys, chosen->blockCols) > 65535)
        throw EngineError(ErrorKind::LimitExceeded,
                          "Under the causal mask the tensor-core backward takes at most " +
                              std::to_string(65535 * chosen->blockCols) + " keys (got " +
                              std::to_string(p.keys) + ").");
    p.rowsPadded = tcBackwardRowsPadded(p.queries);
    const std::size_t rows = std::size_t(p.batch) * std::size_t(p.heads) * std::size_t(p.rowsPadded);
    p.dqAccum = p.workspace;
    p.lse2 = p.dqAccum + rows * std::size_t(p.headDim);
    p.delta = p.lse2 + rows;
    check(cudaMemsetAsync(p.dqAccum, 0, rows * std::size_t(p.headDim) * sizeof(float)),
          "Clearing the backward's dQ accumulator");
    variants()[std::size_t(chosen->id)].launch(p);
}

} // namespace flashviz::cuda
