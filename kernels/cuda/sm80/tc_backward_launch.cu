// Launchers of the tensor-core backward pass (tc_backward.cuh): the variant table (the mma.sync
// rows, then where the toolkit builds sm_90a the Hopper ones, sm90/hopper_backward_launch.cu),
// the default, checks, the scratch's layout, and the pre-pass, the variant's key-block kernel and
// the post-pass. Variants and their figures: kernels/bench/BACKWARD_NOTES.md.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_attributes.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/sm80/tc_backward.cuh"
#include "kernels/cuda/sm80/tc_backward_launch.h"
#include "kernels/cuda/sm80/tc_launch.h"
#include "kernels/cuda/sm90/hopper_backward_launch.h"
#include "kernels/cuda/sm90/hopper_launch.h"
#include "kernels/kernel_configs.h"

#include "core/errors.h"
#include "core/tiling.h"

#include <cstdint>
#include <string>
#include <utility>

// Set by kernels/cuda_sources.cmake: 1 where the toolkit builds the sm_90a kernels (sm90/).
#ifndef FLASHVIZ_HAS_SM90A
#define FLASHVIZ_HAS_SM90A 0
#endif

namespace flashviz::cuda {

namespace {

// Every variant's query block divides this (the mma.sync rows' asserted in variant(), the Hopper
// rows' here).
constexpr int kRowPadding = 128;

constexpr bool hopperQueryBlocksDivideThePadding() {
    for (const kernels::HopperBackwardConfig& c : kernels::kHopperBackwardConfigs)
        if (kRowPadding % c.blockRows() != 0) return false;
    return true;
}
static_assert(hopperQueryBlocksDivideThePadding(), "whole query blocks in the scratch");

template <class Tile, TcElement E, bool Causal>
void launchTyped(const TcBackwardParams& p) {
    const auto kernel = tc::tcBackwardKernel<Tile, E, Causal>;
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(Tile::kSharedBytes)),
          "Reserving shared memory for the tensor-core backward kernel");
    kernel<<<tc::keyBlockGrid(p, Tile::BC), Tile::kThreads, Tile::kSharedBytes>>>(p);
    checkLaunch("flash backward (tensor cores)");
}

template <int D, TcElement E>
void prepare(const TcBackwardParams& p) {
    const dim3 grid(unsigned(blockCount(p.rowsPadded, 4)), unsigned(p.heads), unsigned(p.batch));
    tc::backwardPrepareKernel<D, E><<<grid, 128>>>(p);
    checkLaunch("flash backward: D = rowsum(dO o O)");
}

template <int D, TcElement E>
void finish(const TcBackwardParams& p, bool fragmentOrder) {
    const dim3 grid(unsigned(blockCount(p.queries * (D / 8), 256)), unsigned(p.heads), unsigned(p.batch));
    if (fragmentOrder) tc::backwardFinishKernel<D, E, true><<<grid, 256>>>(p);
    else tc::backwardFinishKernel<D, E, false><<<grid, 256>>>(p);
    checkLaunch("flash backward: dQ");
}

template <class Tile>
void launchTile(const TcBackwardParams& p) {
    withElementAndMask(p.element, p.causal, [&](auto e, auto causal) {
        launchTyped<Tile, decltype(e)::value, decltype(causal)::value>(p);
    });
}

// D and the LSE into the scratch, the variant's key blocks, then dQ from its accumulator.
template <int D, TcElement E>
void runPasses(const TcBackwardParams& p, const TcBackwardVariant& variant) {
    prepare<D, E>(p);
    variant.launch(p);
    finish<D, E>(p, variant.dqInFragmentOrder);
}

template <int D>
void runPasses(const TcBackwardParams& p, const TcBackwardVariant& variant) {
    if (p.element == TcElement::Fp16) runPasses<D, TcElement::Fp16>(p, variant);
    else runPasses<D, TcElement::Bf16>(p, variant);
}

// Variant I, instantiated from row I of the table (kernels/kernel_configs.h).
template <int I>
TcBackwardVariant variant() {
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
std::vector<TcBackwardVariant> allVariants(std::integer_sequence<int, I...>) {
    std::vector<TcBackwardVariant> all{variant<I>()...};
#if FLASHVIZ_HAS_SM90A
    for (const TcBackwardVariant& v : hopperBackwardVariants()) all.push_back(v);
#endif
    return all;
}

const std::vector<TcBackwardVariant>& variants() {
    static const std::vector<TcBackwardVariant> all =
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
    return info.sharedBytes <= maxSharedBytesPerBlock() && (!info.wgmma || hopperKernelsRunHere());
}

const TcBackwardKernelInfo* defaultTcBackwardKernel(int headDim, bool causal) {
    const std::size_t perBlock = maxSharedBytesPerBlock(), perSm = sharedBytesPerSm(),
                      reserved = reservedSharedBytesPerBlock();
#if FLASHVIZ_HAS_SM90A
    // On Hopper the wgmma backward (BACKWARD_NOTES.md, v7 and v8), as the forward's default.
    if (hopperKernelsRunHere()) {
        const int row = kernels::chooseHopperBackwardConfig(headDim, causal, perBlock, perSm, reserved);
        if (row >= 0) return &tcBackwardKernels()[std::size_t(kernels::kTensorCoreBackwardConfigCount + row)];
    }
#endif
    const int i = kernels::chooseTensorCoreBackwardConfig(headDim, causal, perBlock, perSm, reserved);
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
        if (chosen->wgmma && !hopperKernelsRunHere())
            throw EngineError(ErrorKind::Unsupported,
                              "The tensor-core backward variant " + chosen->name +
                                  " runs on Hopper GPUs only (compute capability 9.0).");
        if (!tcBackwardKernelRunsHere(*chosen))
            throw EngineError(ErrorKind::Unsupported,
                              "The tensor-core backward variant " + chosen->name +
                                  " needs more shared memory than this GPU gives a block.");
    }
    // Under the mask the key blocks are the grid's y (tc::keyBlockGrid), which holds 65535.
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
    const TcBackwardVariant& variant = variants()[std::size_t(chosen->id)];
    if (p.headDim == 64) runPasses<64>(p, variant);
    else runPasses<128>(p, variant);
}

} // namespace flashviz::cuda
