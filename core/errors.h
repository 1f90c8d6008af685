#pragma once
// The engine reports every refusal as an EngineError with a sentence a user can read.
// Callers keep their previous state when one is thrown.
#include <stdexcept>
#include <string>

namespace flashviz {

enum class ErrorKind {
    InvalidArgument, // a size of zero, a negative block, an unknown name
    LimitExceeded,   // a size past what the engine accepts
    OutOfMemory,     // the machine does not have the memory the request needs
    NonFinite,       // inf or NaN in the inputs
    Unsupported,     // a backend cannot run this configuration
    BackendFailure,  // a backend failed while running (launch failure, device lost)
};

class EngineError : public std::runtime_error {
public:
    EngineError(ErrorKind kind, const std::string& message)
        : std::runtime_error(message), m_kind(kind) {}
    ErrorKind kind() const { return m_kind; }

private:
    ErrorKind m_kind;
};

const char* toString(ErrorKind kind);

} // namespace flashviz
