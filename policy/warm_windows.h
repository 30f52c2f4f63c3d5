#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace warmpool::policy {

// One `warmWindows` entry: on the given UTC weekdays, between start and end (minutes since
// midnight, end exclusive, start < end <= 24:00), keep at least `replicas` warm.
struct WarmWindow {
  uint8_t weekdays = 0;  // bit d set = weekday d (0 = Sunday ... 6 = Saturday), UTC
  int start_minute = 0;  // 0..1439
  int end_minute = 0;    // 1..1440, > start_minute
  int64_t replicas = 0;  // warm floor inside the window, >= 0

  friend bool operator==(const WarmWindow&, const WarmWindow&) = default;
};

// Parses `Mon-Fri 07:00-19:00 UTC=2; Sat 10:00-14:00 UTC=1`. Entries are separated by `;`.
// Days: `Mon`..`Sun` (case-insensitive), ranges `Mon-Fri` (wrapping `Fri-Mon` allowed), lists
// `Mon,Wed,Sat-Sun`, or `Daily`. The zone token is optional and must be `UTC` (no zone database
// in a pure library; write overnight windows as two entries). Empty text = no windows.
// Fills *out on success; otherwise InvalidArgument says what is wrong (which entry, which part,
// the allowed form) and *out is left untouched. Pure.
Status ParseWarmWindows(std::string_view text, std::vector<WarmWindow>* out);

// The highest floor of the windows that contain `now` (UTC), or 0 when none does. Pure.
int64_t WarmFloorAt(const std::vector<WarmWindow>& windows,
                    std::chrono::system_clock::time_point now);

}  // namespace warmpool::policy
