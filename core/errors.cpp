#include "core/errors.h"

namespace flashviz {

const char* toString(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::InvalidArgument: return "invalid argument";
    case ErrorKind::LimitExceeded: return "limit exceeded";
    case ErrorKind::OutOfMemory: return "out of memory";
    case ErrorKind::NonFinite: return "non-finite input";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::BackendFailure: return "backend failure";
    }
    return "error";
}

} // namespace flashviz
