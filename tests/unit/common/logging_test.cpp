#include "common/logging.h"

#include <catch2/catch.hpp>

namespace warmpool {
namespace {

TEST_CASE("Log format and level parse strictly", "[logging]") {
  CHECK(ParseLogFormat("json") == LogFormat::kJson);
  CHECK(ParseLogFormat("text") == LogFormat::kText);
  CHECK_FALSE(ParseLogFormat("JSON ").has_value());
  CHECK(ParseLogLevel("debug") == spdlog::level::debug);
  CHECK(ParseLogLevel("warning") == spdlog::level::warn);
  CHECK_FALSE(ParseLogLevel("loud").has_value());
}

}  // namespace
}  // namespace warmpool
