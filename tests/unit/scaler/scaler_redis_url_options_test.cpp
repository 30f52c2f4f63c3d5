// The scaler's --redis / WARMPOOL_REDIS with the URL forms beyond redis://: rediss://, sentinel://
// and a scheme it does not speak.
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "scaler/scaler_options.h"

namespace warmpool::scaler {
namespace {

TEST_CASE("A --redis URL with an unsupported scheme names the scheme", "[options]") {
  std::map<std::string, RedisEndpoint> out;
  Status s = ParseRedisConnections({"default=http://x:1"}, std::chrono::milliseconds(500), &out);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message() ==
        "--redis default: unsupported scheme 'http' (use redis://, rediss:// or sentinel://)");
}

TEST_CASE("WARMPOOL_REDIS takes rediss:// and sentinel:// with encoded secrets", "[options]") {
  // Azure Cache for Redis access keys are base64: '+', '/' and '=' percent-encoded.
  const std::vector<std::string> entries = SplitRedisList(
      "default=rediss://:Ab%2Bc%2Fd%3D@x.redis.cache.windows.net:6380/0?ssl_cert_reqs=required,"
      "ha=sentinel://:p%2Cw@s1:26379/2;sentinel://s2:26379/2");
  REQUIRE(entries.size() == 2);
  std::map<std::string, RedisEndpoint> out;
  Status missing = ParseRedisConnections(entries, std::chrono::milliseconds(500), &out);
  CHECK_THAT(missing.message(), Catch::Contains("--redis ha") && Catch::Contains("master_name"));
  REQUIRE(ParseRedisConnections(entries, std::chrono::milliseconds(500), &out, "mymaster").ok());
  CHECK(out["default"].tls.enabled);
  CHECK(out["default"].password == "Ab+c/d=");
  CHECK(out["default"].port == 6380);
  CHECK(out["ha"].sentinels.size() == 2);
  CHECK(out["ha"].password == "p,w");
  CHECK(out["ha"].db == 2);
  CHECK(out["ha"].master_name == "mymaster");
}

}  // namespace
}  // namespace warmpool::scaler
