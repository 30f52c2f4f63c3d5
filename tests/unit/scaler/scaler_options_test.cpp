#include "scaler/scaler_options.h"

#include <catch2/catch.hpp>

namespace warmpool::scaler {
namespace {

TEST_CASE("Named Redis connections parse, bad ones are named", "[options]") {
  std::map<std::string, RedisEndpoint> out;
  REQUIRE(ParseRedisConnections({"default=redis://:pw@r1:6379/0", "jobs=redis://r2:7000/3"},
                                std::chrono::milliseconds(500), &out)
              .ok());
  REQUIRE(out.size() == 2);
  CHECK(out["default"].host == "r1");
  CHECK(out["default"].password == "pw");
  CHECK(out["default"].command_timeout == std::chrono::milliseconds(500));
  CHECK(out["jobs"].db == 3);

  Status s = ParseRedisConnections({"redis://r1"}, std::chrono::milliseconds(500), &out);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  s = ParseRedisConnections({"a=redis://:secret@h:0"}, std::chrono::milliseconds(500), &out);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message().find("secret") == std::string::npos);
  s = ParseRedisConnections({"a=redis://h", "a=redis://g"}, std::chrono::milliseconds(500), &out);
  CHECK(s.code() == Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace warmpool::scaler
