#pragma once

// Skipping a Catch2 v2 test case (v2 has no SKIP). ctest runs each TEST_CASE in a process of its
// own (catch_discover_tests), so a test case that cannot run here prints why and ends the process
// with kSkipReturnCode, which tests/CMakeLists.txt registers as every test's SKIP_RETURN_CODE:
// ctest then reports it Skipped, never Passed. Run by hand, the binary stops at the first skip.

#include <cstdlib>
#include <iostream>
#include <string>

namespace warmpool::testing {

inline constexpr int kSkipReturnCode = 77;

[[noreturn]] inline void SkipTest(const std::string& reason) {
  std::cout << "SKIPPED: " << reason << std::endl;
  std::exit(kSkipReturnCode);
}

}  // namespace warmpool::testing
