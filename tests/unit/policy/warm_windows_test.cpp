#include "policy/warm_windows.h"

#include <catch2/catch.hpp>

namespace warmpool::policy {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::sys_days;

// 2026-11-30 is a Monday.
std::chrono::system_clock::time_point At(int day_offset, int hh, int mm) {
  using namespace std::chrono;
  return sys_days(year(2026) / November / 30) + days(day_offset) + hours(hh) + minutes(mm);
}

constexpr uint8_t kMonFri = 0b0111110;
constexpr uint8_t kSat = 0b1000000;

struct GoodCase {
  const char* name;
  const char* text;
  std::vector<WarmWindow> want;
};

TEST_CASE("warmWindows parses the documented forms", "[windows]") {
  // clang-format off
  const GoodCase cases[] = {
      {"empty",            "",                                  {}},
      {"issue example",    "Mon-Fri 07:00-19:00 UTC=2; Sat 10:00-14:00 UTC=1",
                           {{kMonFri, 420, 1140, 2}, {kSat, 600, 840, 1}}},
      {"zone optional",    "mon-fri 07:00-19:00=3",             {{kMonFri, 420, 1140, 3}}},
      {"list and range",   "Mon,Wed,Sat-Sun 00:00-24:00 UTC=1", {{0b1001011, 0, 1440, 1}}},
      {"wrapping range",   "Fri-Mon 08:30-09:00 UTC=4",         {{0b1100011, 510, 540, 4}}},
      {"daily",            "Daily 12:00-13:00 UTC=0;",          {{0x7f, 720, 780, 0}}},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      std::vector<WarmWindow> out;
      REQUIRE(ParseWarmWindows(c.text, &out).ok());
      CHECK(out == c.want);
    }
  }
}

TEST_CASE("warmWindows rejects malformed entries and names them", "[windows]") {
  const char* bad[] = {
      "Mon-Fri 07:00-19:00 UTC",     // no =N
      "Mon-Fri 07:00-19:00 UTC=x",   // N not a number
      "Mon-Fri 07:00-19:00 UTC=-1",  // negative
      "Mon-Fri 07:00-19:00 CET=2",   // zone
      "Mon-Fry 07:00-19:00 UTC=2",   // day
      "Mon-Fri 7:00-19:00 UTC=2",    // clock format
      "Mon-Fri 19:00-07:00 UTC=2",   // overnight
      "Mon-Fri 07:00-24:30 UTC=2",   // past midnight
      "Mon-Fri 07:00 UTC=2",         // no range
      "07:00-19:00 UTC=2",           // no days
      "Mon 10:00-11:00=1; Tue",      // second entry broken
  };
  for (const char* text : bad) {
    DYNAMIC_SECTION(text) {
      std::vector<WarmWindow> out = {{1, 0, 1, 9}};
      Status s = ParseWarmWindows(text, &out);
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK_FALSE(s.message().empty());
      CHECK(out.size() == 1);  // untouched
    }
  }
}

TEST_CASE("warmWindows errors quote the entry and say what to write", "[windows]") {
  std::vector<WarmWindow> out;
  CHECK(ParseWarmWindows("Mon 10:00-11:00=1; Mon-Fri 07:00-19:00 CET=2", &out).message() ==
        R"(entry "Mon-Fri 07:00-19:00 CET=2": time zone must be UTC (got "CET"))");
  CHECK(ParseWarmWindows("Mon 11:00-10:00=1", &out).message() ==
        R"(entry "Mon 11:00-10:00=1": start must be before end (split overnight windows in two))");
  CHECK(out.empty());
}

struct FloorCase {
  const char* name;
  std::chrono::system_clock::time_point now;
  int64_t want;
};

TEST_CASE("The warm floor applies inside windows only, in UTC", "[windows]") {
  std::vector<WarmWindow> windows;
  REQUIRE(ParseWarmWindows("Mon-Fri 07:00-19:00 UTC=2; Sat 10:00-14:00 UTC=1; Mon 08:00-09:00=5",
                           &windows)
              .ok());
  // clang-format off
  const FloorCase cases[] = {
      {"Mon before start",   At(0, 6, 59),  0},
      {"Mon at start",       At(0, 7, 0),   2},
      {"Mon overlap is max", At(0, 8, 30),  5},
      {"Fri last minute",    At(4, 18, 59), 2},
      {"Fri end exclusive",  At(4, 19, 0),  0},
      {"Sat window",         At(5, 12, 0),  1},
      {"Sun nothing",        At(6, 12, 0),  0},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(WarmFloorAt(windows, c.now) == c.want); }
  }
}

}  // namespace
}  // namespace warmpool::policy
