// libFuzzer harness: the `warmWindows` ScaledObject value.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "policy/warm_windows.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warmpool::policy;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<WarmWindow> windows;
  if (warmpool::Status s = ParseWarmWindows(input, &windows); !s.ok()) {
    // Says why, as InvalidArgument, and leaves the output untouched.
    if (s.code() != warmpool::Status::Code::kInvalidArgument || s.message().empty() ||
        !windows.empty()) {
      std::abort();
    }
    return 0;
  }
  for (const WarmWindow& w : windows) {
    if (w.start_minute < 0 || w.end_minute > 1440 || w.start_minute >= w.end_minute ||
        w.replicas < 0 || w.weekdays == 0 || w.weekdays > 0x7f) {
      std::abort();
    }
  }
  // One probe per hour over a week (2026-11-29 was a Sunday).
  const auto sunday = std::chrono::sys_days{std::chrono::year{2026} / 11 / 29};
  for (int hour = 0; hour < 7 * 24; ++hour) WarmFloorAt(windows, sunday + std::chrono::hours(hour));
  return 0;
}
