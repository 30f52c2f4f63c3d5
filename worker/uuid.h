#pragma once

#include <string>

namespace warmpool::worker {

// A random (version 4) UUID in canonical text form, as Python's str(uuid4()). Thread-safe.
std::string NewUuid4();

}  // namespace warmpool::worker
