#pragma once
// An owning device allocation. Running out of memory is an EngineError(OutOfMemory) that names
// the buffer, the size asked for and what the GPU has free. Internal to kernels/cuda.
#include "kernels/cuda/runtime/check.h"

#include "core/errors.h"

#include <cstddef>
#include <string>
#include <utility>

namespace flashviz::cuda {

template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(std::size_t count, const char* what) : m_count(count) {
        if (count == 0) return;
        const double bytes = double(count) * sizeof(T);
        const cudaError_t error = cudaMalloc(reinterpret_cast<void**>(&m_data), count * sizeof(T));
        if (error == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            const MemoryInfo mem = memoryInfo();
            throw EngineError(ErrorKind::OutOfMemory,
                              std::string("The GPU is out of memory: ") + what + " needs " +
                                  formatBytes(bytes) + ", and " + formatBytes(double(mem.freeBytes)) +
                                  " of " + formatBytes(double(mem.totalBytes)) + " are free.");
        }
        check(error, (std::string("Allocating ") + what).c_str());
    }
    ~DeviceBuffer() {
        if (m_data) (void)cudaFree(m_data);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : m_data(std::exchange(other.m_data, nullptr)), m_count(std::exchange(other.m_count, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        std::swap(m_data, other.m_data);
        std::swap(m_count, other.m_count);
        return *this;
    }

    T* get() const { return m_data; }
    std::size_t size() const { return m_count; }
    std::size_t bytes() const { return m_count * sizeof(T); }

    void upload(const T* host, std::size_t count) {
        check(cudaMemcpy(m_data, host, count * sizeof(T), cudaMemcpyHostToDevice),
              "Copying inputs to the GPU");
    }
    void download(T* host, std::size_t count) const {
        check(cudaMemcpy(host, m_data, count * sizeof(T), cudaMemcpyDeviceToHost),
              "Copying results from the GPU");
    }
    // Every byte set to `value`: 0xFF poisons floats with NaN so unwritten outputs show.
    void fillBytes(int value) {
        check(cudaMemset(m_data, value, m_count * sizeof(T)), "Clearing a GPU buffer");
    }

private:
    T* m_data = nullptr;
    std::size_t m_count = 0;
};

} // namespace flashviz::cuda
