// RedisConnection over TLS (rediss://) with an ACL user, against a TLS-only redis-server with
// certificates made by openssl at test time: the right CA works, a wrong CA, a wrong name, a
// missing client certificate and a plaintext/TLS mix-up fail with errors that say so.
#include <string>

#include <catch2/catch.hpp>
#include <hiredis/hiredis.h>

#include "redis/connection.h"
#include "redis/errors.h"
#include "tests/integration/redis/redis_tls_fixture.h"

namespace warmpool::testing {
namespace {

RedisEndpoint Endpoint(const std::string& url) {
  std::string error;
  auto ep = ParseRedisUrl(url, &error);
  INFO(error);
  REQUIRE(ep);
  return *ep;
}

std::string ConnectError(const RedisEndpoint& ep) {
  try {
    RedisConnection conn(ep);
    conn.Command({"PING"});
  } catch (const RedisError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("rediss:// with an ACL user and the right CA runs commands and pipelines",
          "[redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto redis = StartTlsRedis(certs);
  RedisConnection conn(Endpoint(TlsUrl(*redis, certs.ca, 3)));
  CHECK(ReplyString(conn.Command({"ACL", "WHOAMI"}).get()) == kAclUser);
  // Larger than one TLS record and than the read buffer: framing over SSL_read is right.
  const std::string big(100000, 'x');
  conn.Command({"SET", "k", big});
  auto replies = conn.Pipeline({{"GET", "k"}, {"LPUSH", "q", "a", "b"}, {"LLEN", "q"}});
  CHECK(ReplyString(replies[0].get()) == big);
  CHECK(ReplyInteger(replies[2].get()) == 2);
  CHECK(redis->Cli({"LLEN", "q"}, 3) == "2");  // SELECTed db 3
  CHECK_FALSE(conn.broken());
}

TEST_CASE("A server certificate from another CA fails with certificate verify failed",
          "[redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto redis = StartTlsRedis(certs);
  const std::string error = ConnectError(Endpoint(TlsUrl(*redis, certs.other_ca)));
  CHECK_THAT(error, Catch::Contains("certificate verify failed for host '127.0.0.1'"));
  CHECK_THAT(error, !Catch::Contains("p@ss") && !Catch::Contains(kAclPasswordEncoded));
  // ssl_cert_reqs=none is the documented way out: it connects without verifying.
  std::string none = TlsUrl(*redis, certs.other_ca);
  none.replace(none.find("required"), 8, "none");
  RedisConnection conn(Endpoint(none));
  CHECK(ReplyString(conn.Command({"PING"}).get()) == "PONG");
}

TEST_CASE("A certificate that does not name the host fails unless the check is off",
          "[redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto redis = StartTlsRedis(certs);
  std::string url = TlsUrl(*redis, certs.ca);
  url.replace(url.find("127.0.0.1"), 9, "127.0.0.2");  // same server, a name not in its cert
  const std::string error = ConnectError(Endpoint(url));
  CHECK_THAT(error, Catch::Contains("certificate verify failed for host '127.0.0.2'") &&
                        Catch::Contains("mismatch"));
  RedisConnection conn(Endpoint(url + "&ssl_check_hostname=false"));
  CHECK(ReplyString(conn.Command({"PING"}).get()) == "PONG");
  url.replace(url.find("127.0.0.2"), 9, "localhost");  // the DNS name in its SAN
  RedisConnection by_name(Endpoint(url));
  CHECK(ReplyString(by_name.Command({"PING"}).get()) == "PONG");
}

TEST_CASE("With --tls-auth-clients yes a client certificate is required",
          "[redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto redis = StartTlsRedis(certs, /*auth_clients=*/true);
  const std::string url = TlsUrl(*redis, certs.ca);
  CHECK_FALSE(ConnectError(Endpoint(url)).empty());
  RedisConnection conn(
      Endpoint(url + "&ssl_certfile=" + certs.client_cert + "&ssl_keyfile=" + certs.client_key));
  CHECK(ReplyString(conn.Command({"PING"}).get()) == "PONG");
}

TEST_CASE("Plaintext to a TLS port and TLS to a plaintext port fail, not hang",
          "[redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto tls = StartTlsRedis(certs);
  RedisEndpoint plain_to_tls;
  plain_to_tls.port = tls->port();
  plain_to_tls.command_timeout = std::chrono::milliseconds(500);
  CHECK_FALSE(ConnectError(plain_to_tls).empty());

  RedisProcess plain(RedisProcess::Kind::kPlain, {});
  RedisEndpoint tls_to_plain = Endpoint("rediss://127.0.0.1:" + std::to_string(plain.port()) +
                                        "/0?ssl_ca_certs=" + certs.ca);
  const std::string error = ConnectError(tls_to_plain);
  CHECK_THAT(error, Catch::Contains("TLS handshake"));
}

TEST_CASE("A missing CA file is named", "[redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto redis = StartTlsRedis(certs);
  const std::string error = ConnectError(Endpoint(TlsUrl(*redis, certs.dir + "/missing.pem")));
  CHECK_THAT(error,
             Catch::Contains("cannot load CA certificates from '" + certs.dir + "/missing.pem'"));
}

}  // namespace
}  // namespace warmpool::testing
