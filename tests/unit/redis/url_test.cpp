#include "redis/url.h"

#include <catch2/catch.hpp>

namespace warmpool {
namespace {

struct UrlCase {
  const char* name;
  const char* url;
  const char* host;
  int port;
  int db;
  const char* user;
  const char* password;
};

TEST_CASE("ParseRedisUrl accepts the forms Celery and redis-py accept", "[redis_url]") {
  // clang-format off
  const UrlCase cases[] = {
      {"plain",          "redis://localhost:6380/2",          "localhost", 6380, 2, "",    ""},
      {"defaults",       "redis://cache",                     "cache",     6379, 0, "",    ""},
      {"no scheme",      "10.0.0.1:7000",                     "10.0.0.1",  7000, 0, "",    ""},
      {"password only",  "redis://:s3cret@h:1/3",             "h",         1,    3, "",    "s3cret"},
      {"user+password",  "redis://bob:p%40ss@h:6379/0",       "h",         6379, 0, "bob", "p@ss"},
      {"bare password",  "redis://secret@h",                  "h",         6379, 0, "",    "secret"},
      {"ipv6",           "redis://[::1]:6390/1",              "::1",       6390, 1, "",    ""},
      {"query ignored",  "redis://h:1/0?socket_timeout=3",    "h",         1,    0, "",    ""},
      {"comma encoded",  "redis://:pa%2Css@h:1/0",            "h",         1,    0, "",    "pa,ss"},
      {"comma raw",      "redis://:pa,ss@h:1/0",              "h",         1,    0, "",    "pa,ss"},
      {"colon, at, %",   "redis://u%3Ax:p%3A%40%25w@h/0",     "h",         6379, 0, "u:x", "p:@%w"},
      {"raw @ in pass",  "redis://:p@ss@h/0",                 "h",         6379, 0, "",    "p@ss"},
      {"lone %",         "redis://:100%@h/0",                 "h",         6379, 0, "",    "100%"},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      std::string error;
      auto ep = ParseRedisUrl(c.url, &error);
      REQUIRE(ep.has_value());
      CHECK(ep->host == c.host);
      CHECK(ep->port == c.port);
      CHECK(ep->db == c.db);
      CHECK(ep->username == c.user);
      CHECK(ep->password == c.password);
    }
  }
}

TEST_CASE("ParseRedisUrl rejects bad URLs with a reason", "[redis_url]") {
  for (const char* bad :
       {"redis://h:0/0", "redis://h:99999", "redis://h:1/x", "redis://:1", "rediss://h:1",
        "redis://[::1:1", "redis://user:pa1]:6380/2", "redis://user:secret:6380", "[[;*0]"}) {
    DYNAMIC_SECTION(bad) {
      std::string error;
      CHECK_FALSE(ParseRedisUrl(bad, &error).has_value());
      CHECK_FALSE(error.empty());
    }
  }
}

TEST_CASE("Redacted never shows the password", "[redis_url]") {
  std::string error;
  auto ep = ParseRedisUrl("redis://bob:hunter2@h:1/4", &error);
  REQUIRE(ep);
  CHECK(ep->Redacted() == "redis://bob:***@h:1/4");
  CHECK(ep->Redacted().find("hunter2") == std::string::npos);
  auto v6 = ParseRedisUrl("redis://:pw@[::1]:6390/1", &error);  // brackets kept around IPv6
  REQUIRE(v6);
  CHECK(v6->Redacted() == "redis://:***@[::1]:6390/1");
}

TEST_CASE("ParseRedisAddress refuses credentials", "[redis_url]") {
  std::string error;
  auto ep = ParseRedisAddress("redis.ns.svc:6380/5", &error);
  REQUIRE(ep);
  CHECK(ep->host == "redis.ns.svc");
  CHECK(ep->port == 6380);
  CHECK(ep->db == 5);
  CHECK_FALSE(ParseRedisAddress("a:b@h:1", &error).has_value());
  CHECK_FALSE(ParseRedisAddress("redis://h:1", &error).has_value());
}

}  // namespace
}  // namespace warmpool
