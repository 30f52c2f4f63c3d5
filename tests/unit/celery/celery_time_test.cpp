#include <catch2/catch.hpp>

#include "celery/time.h"

namespace warmpool::celery {
namespace {

struct Case {
  const char* text;
  double unix_seconds;
};

TEST_CASE("ParseIso8601 reads Celery's forms", "[celery][time]") {
  // 2026-11-29T19:57:10Z = 1795982230 (checked with `date -u -d ... +%s`).
  // clang-format off
  std::vector<Case> cases = {
      {"2026-11-29T19:57:10.620453+00:00", 1795982230.620453},
      {"2026-11-29T19:57:10Z",             1795982230.0},
      {"2026-11-29T19:57:10",              1795982230.0},
      {"2026-11-29 19:57:10.5",            1795982230.5},
      {"2026-11-29T20:57:10+01:00",        1795982230.0},
      {"2026-11-29T18:27:10-0130",         1795982230.0},
      {"1970-01-01T00:00:00",              0.0},
      {"2024-02-29",                       1709164800.0},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.text) {
      auto t = ParseIso8601(c.text);
      REQUIRE(t.has_value());
      CHECK(*t == Approx(c.unix_seconds).margin(1e-6));
    }
  }
}

TEST_CASE("ParseIso8601 rejects malformed times", "[celery][time][negative]") {
  for (const char* bad :
       {"", "2026-13-01T00:00:00", "2026-02-30", "2023-02-29", "tomorrow", "2026-11-29T25:00:00",
        "2026-11-29T10:00:00+", "2026-11-29T10:00:00 UTC", "2026-11-29T10:00:00."}) {
    DYNAMIC_SECTION(bad) { CHECK_FALSE(ParseIso8601(bad).has_value()); }
  }
}

TEST_CASE("FormatIso writes naive and aware UTC with microseconds", "[celery][time]") {
  CHECK(FormatIsoNaiveUtc(1795982240.304333) == "2026-11-29T19:57:20.304333");
  CHECK(FormatIsoUtc(1795982230.620453) == "2026-11-29T19:57:10.620453+00:00");
  CHECK(FormatIsoNaiveUtc(0) == "1970-01-01T00:00:00.000000");
  auto back = ParseIso8601(FormatIsoUtc(1795982230.25));
  REQUIRE(back.has_value());
  CHECK(*back == Approx(1795982230.25).margin(1e-6));
}

}  // namespace
}  // namespace warmpool::celery
