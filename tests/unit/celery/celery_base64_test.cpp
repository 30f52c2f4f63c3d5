#include <string>

#include <catch2/catch.hpp>

#include "celery/base64.h"

namespace warmpool::celery {
namespace {

struct Case {
  const char* name;
  std::string plain;
  std::string encoded;
};

TEST_CASE("Base64 round-trips RFC 4648 vectors", "[celery][base64]") {
  // clang-format off
  std::vector<Case> cases = {
      {"empty",  "",        ""},
      {"one",    "f",       "Zg=="},
      {"two",    "fo",      "Zm8="},
      {"three",  "foo",     "Zm9v"},
      {"six",    "foobar",  "Zm9vYmFy"},
      {"binary", std::string("\x00\xff\x10", 3), "AP8Q"},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      CHECK(Base64Encode(c.plain) == c.encoded);
      auto decoded = Base64Decode(c.encoded);
      REQUIRE(decoded.has_value());
      CHECK(*decoded == c.plain);
    }
  }
}

TEST_CASE("Base64 decodes the body of a real Celery 5.2.6 message", "[celery][base64]") {
  auto body = Base64Decode(
      "W1syLCAzXSwgeyJ6IjogMX0sIHsiY2FsbGJhY2tzIjogbnVsbCwgImVycmJhY2tzIjogbnVsbCwgImNoYWluIjogbn"
      "VsbCwgImNob3JkIjogbnVsbH1d");
  REQUIRE(body.has_value());
  CHECK(
      *body ==
      R"([[2, 3], {"z": 1}, {"callbacks": null, "errbacks": null, "chain": null, "chord": null}])");
}

TEST_CASE("Base64 accepts whitespace and missing padding", "[celery][base64]") {
  CHECK(Base64Decode("Zm9v\nYmFy") == std::optional<std::string>("foobar"));
  CHECK(Base64Decode("Zm8") == std::optional<std::string>("fo"));
}

TEST_CASE("Base64 rejects invalid input", "[celery][base64][negative]") {
  CHECK_FALSE(Base64Decode("Zm9v!").has_value());
  CHECK_FALSE(Base64Decode("Z").has_value());
  CHECK_FALSE(Base64Decode("Zg==Zg").has_value());
  CHECK_FALSE(Base64Decode("Zg===").has_value());
  CHECK_FALSE(Base64Decode("not base64 at all?").has_value());
}

}  // namespace
}  // namespace warmpool::celery
