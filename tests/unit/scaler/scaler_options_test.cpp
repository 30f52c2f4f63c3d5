#include "scaler/scaler_options.h"

#include <cstdlib>
#include <string>
#include <vector>

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

bool Parse(std::vector<std::string> args, ScalerOptions* out) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int exit_code = 0;
  return ParseScalerOptions(static_cast<int>(argv.size()), argv.data(), out, &exit_code);
}

TEST_CASE("A comma in a --redis password is kept, the env list takes %2C", "[options]") {
  unsetenv("WARMPOOL_REDIS");
  ScalerOptions opts;
  REQUIRE(Parse({"warmpool-scaler", "--redis", "default=redis://:pa,ss@r1:6379/0"}, &opts));
  REQUIRE(opts.redis.size() == 1);
  CHECK(opts.redis["default"].password == "pa,ss");
  CHECK(opts.redis["default"].host == "r1");

  setenv("WARMPOOL_REDIS", "default=redis://:pa%2Css@r1:6379/0,jobs=redis://u%40x:p%3Aw@r2/3", 1);
  ScalerOptions env_opts;
  REQUIRE(Parse({"warmpool-scaler"}, &env_opts));
  unsetenv("WARMPOOL_REDIS");
  REQUIRE(env_opts.redis.size() == 2);
  CHECK(env_opts.redis["default"].password == "pa,ss");
  CHECK(env_opts.redis["jobs"].username == "u@x");
  CHECK(env_opts.redis["jobs"].password == "p:w");
  CHECK(env_opts.redis["jobs"].db == 3);
  CHECK(SplitRedisList("a=redis://h,,b=redis://g,") ==
        std::vector<std::string>{"a=redis://h", "b=redis://g"});
}

}  // namespace
}  // namespace warmpool::scaler
