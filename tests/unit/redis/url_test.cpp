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
       {"redis://h:0/0", "redis://h:99999", "redis://h:1/x", "redis://:1", "redis://[::1:1",
        "redis://user:pa1]:6380/2", "redis://user:secret:6380", "[[;*0]"}) {
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

TEST_CASE("rediss:// takes Celery's ssl_* query parameters and verifies by default",
          "[redis_url]") {
  std::string error;
  auto bare = ParseRedisUrl("rediss://:k%2By%3D@cache.redis.cache.windows.net:6380/0", &error);
  REQUIRE(bare);
  CHECK(bare->tls.enabled);
  CHECK(bare->tls.verify == TlsVerify::kRequired);  // kombu would use CERT_NONE here
  CHECK(bare->tls.check_hostname);
  CHECK(bare->tls.ca_file.empty());  // the system store
  CHECK(bare->password == "k+y=");
  CHECK(bare->port == 6380);
  CHECK(bare->Redacted() == "rediss://:***@cache.redis.cache.windows.net:6380/0");

  auto full = ParseRedisUrl(
      "rediss://celery:p%40ss@h:6380/2?ssl_cert_reqs=CERT_REQUIRED&ssl_ca_certs=%2Fetc%2Fca.pem"
      "&ssl_certfile=/c.pem&ssl_keyfile=/k.pem&socket_timeout=5",
      &error);
  REQUIRE(full);
  CHECK(full->username == "celery");
  CHECK(full->password == "p@ss");
  CHECK(full->db == 2);
  CHECK(full->tls.ca_file == "/etc/ca.pem");
  CHECK(full->tls.cert_file == "/c.pem");
  CHECK(full->tls.key_file == "/k.pem");

  auto cert_only = ParseRedisUrl("rediss://h?ssl_certfile=/both.pem", &error);
  REQUIRE(cert_only);
  CHECK(cert_only->tls.key_file == "/both.pem");  // one PEM with certificate and key

  const std::pair<const char*, TlsVerify> reqs[] = {{"required", TlsVerify::kRequired},
                                                    {"CERT_OPTIONAL", TlsVerify::kOptional},
                                                    {"optional", TlsVerify::kOptional},
                                                    {"CERT_NONE", TlsVerify::kNone},
                                                    {"none", TlsVerify::kNone}};
  for (const auto& [text, want] : reqs) {
    auto ep = ParseRedisUrl(std::string("rediss://h?ssl_cert_reqs=") + text, &error);
    REQUIRE(ep);
    CHECK(ep->tls.verify == want);
  }
  auto no_host_check = ParseRedisUrl("rediss://h?ssl_check_hostname=false", &error);
  REQUIRE(no_host_check);
  CHECK_FALSE(no_host_check->tls.check_hostname);
}

TEST_CASE("TLS parameters that cannot work are refused, naming the parameter", "[redis_url]") {
  const std::pair<const char*, const char*> cases[] = {
      {"redis://h?ssl_cert_reqs=required", "ssl_cert_reqs needs a rediss:// URL"},
      {"rediss://h?ssl_cert_reqs=maybe", "ssl_cert_reqs must be required, optional or none"},
      {"rediss://h?ssl_ca_cert=/ca.pem", "unknown TLS parameter 'ssl_ca_cert'"},
      {"rediss://h?ssl_check_hostname=perhaps", "ssl_check_hostname must be true or false"},
      {"redis://h?master_name=m", "master_name is only for sentinel:// URLs"},
      {"sentinel://h?ssl_cert_reqs=none", "TLS through Sentinel is not supported"},
  };
  for (const auto& [url, message] : cases) {
    DYNAMIC_SECTION(url) {
      std::string error;
      CHECK_FALSE(ParseRedisUrl(url, &error).has_value());
      CHECK_THAT(error, Catch::Contains(message));
    }
  }
}

TEST_CASE("An unsupported scheme is named, not read as a host or a database", "[redis_url]") {
  for (const char* url : {"http://x:1", "HTTP://x:1", "unix:///run/redis.sock", "amqp://u:p@h"}) {
    DYNAMIC_SECTION(url) {
      std::string error;
      CHECK_FALSE(ParseRedisUrl(url, &error).has_value());
      CHECK_THAT(error, Catch::StartsWith("unsupported scheme '") &&
                            Catch::Contains("(use redis://, rediss:// or sentinel://)"));
      CHECK_THAT(error, !Catch::Contains("database"));
    }
  }
  std::string error;
  ParseRedisUrl("http://x:1", &error);
  CHECK(error == "unsupported scheme 'http' (use redis://, rediss:// or sentinel://)");
  ParseRedisUrl("amqp://u:p@h", &error);
  CHECK_THAT(error, !Catch::Contains(":p@"));
}

TEST_CASE("sentinel:// lists Sentinels, credentials and db taken from the first", "[redis_url]") {
  std::string error;
  auto ep = ParseRedisUrl(
      "sentinel://:pa%3Bss@h1:26380/3;sentinel://h2;sentinel://[::1]:5000?master_name=my%20m",
      &error);
  REQUIRE(ep);
  CHECK(ep->uses_sentinel());
  REQUIRE(ep->sentinels.size() == 3);
  CHECK(ep->sentinels[0].host == "h1");
  CHECK(ep->sentinels[0].port == 26380);
  CHECK(ep->sentinels[1].host == "h2");
  CHECK(ep->sentinels[1].port == 26379);  // Sentinel's default port
  CHECK(ep->sentinels[2].host == "::1");
  CHECK(ep->password == "pa;ss");
  CHECK(ep->db == 3);
  CHECK(ep->master_name == "my m");
  CHECK(ep->Redacted() ==
        "sentinel://:***@h1:26380/3;sentinel://h2:26379;sentinel://[::1]:5000?master_name=my%20m");
  auto again = ParseRedisUrl(ep->Redacted(), &error);
  REQUIRE(again);
  CHECK(again->sentinels.size() == 3);
  CHECK(again->master_name == "my m");

  CHECK_FALSE(ParseRedisUrl("sentinel://h1;redis://h2", &error));
  CHECK_THAT(error, Catch::Contains("sentinel://host[:port]"));
  // Celery reads the first part's database: a different one later would be ignored there.
  CHECK_FALSE(ParseRedisUrl("sentinel://h1;sentinel://h2/2", &error));
  CHECK_THAT(error, Catch::Contains("different databases"));
  CHECK(ParseRedisUrl("sentinel://h1/2;sentinel://h2/2", &error));
}

TEST_CASE("A sentinel endpoint needs a master name from the URL or the flag", "[redis_url]") {
  std::string error;
  auto ep = ParseRedisUrl("sentinel://h1", &error);
  REQUIRE(ep);
  Status missing = ApplyDefaultMasterName("", "--broker", &ep.value());
  CHECK_FALSE(missing.ok());
  CHECK_THAT(missing.message(), Catch::Contains("--broker") && Catch::Contains("master_name"));
  CHECK(ApplyDefaultMasterName("mymaster", "--broker", &ep.value()).ok());
  CHECK(ep->master_name == "mymaster");
  auto explicit_name = ParseRedisUrl("sentinel://h1?master_name=own", &error);
  REQUIRE(explicit_name);
  CHECK(ApplyDefaultMasterName("flag", "--broker", &explicit_name.value()).ok());
  CHECK(explicit_name->master_name == "own");  // the URL wins
  auto plain = ParseRedisUrl("redis://h", &error);
  CHECK(ApplyDefaultMasterName("", "--broker", &plain.value()).ok());
}

}  // namespace
}  // namespace warmpool
