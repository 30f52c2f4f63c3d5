#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace warmpool {

// How a TLS client checks the server (rediss://). The names follow Python's ssl module as
// Celery and kombu read `ssl_cert_reqs`; unlike kombu (which defaults a bare rediss:// to
// CERT_NONE), warmpool verifies unless told `ssl_cert_reqs=none`.
enum class TlsVerify {
  kRequired,  // CERT_REQUIRED / required (default)
  kOptional,  // CERT_OPTIONAL / optional: a client still gets a certificate, so it is verified
  kNone,      // CERT_NONE / none: no verification at all (a warning is logged)
};

struct RedisTlsOptions {
  bool enabled = false;  // rediss://
  TlsVerify verify = TlsVerify::kRequired;
  bool check_hostname = true;  // ssl_check_hostname (redis-py's name); verify only
  std::string ca_file;         // ssl_ca_certs; empty = the system CA store
  std::string cert_file;       // ssl_certfile: client certificate (mutual TLS)
  std::string key_file;        // ssl_keyfile; default = cert_file
};

struct RedisHostPort {
  std::string host;
  int port = 26379;
};

// Where and how to reach one Redis server. Parsed from a URL; credentials stay here and are never
// printed (see Redacted()).
struct RedisEndpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;                                       // SELECTed after connect; 0 = default DB
  std::string username;                             // empty = no ACL user (AUTH with password only)
  std::string password;                             // empty = no AUTH
  std::chrono::milliseconds connect_timeout{1000};  // 0 = wait forever (never used by warmpool)
  std::chrono::milliseconds command_timeout{1000};  // per command; 0 = wait forever
  RedisTlsOptions tls;
  // Non-empty: host/port are unused; every connect asks these Sentinels, in order, for the
  // address of `master_name` (Celery's `master_name` transport option).
  std::vector<RedisHostPort> sentinels;
  std::string master_name;

  bool uses_sentinel() const { return !sentinels.empty(); }

  // "redis://host:port/db", "rediss://..." or "sentinel://h1:p1;sentinel://h2:p2/db?master_name=m"
  // with the password replaced by "***"; safe for logs and errors. Parses back to the same server.
  std::string Redacted() const;
};

// Parses the URL forms Celery/kombu users write:
//   redis://[[user]:pass@]host[:port][/db]          (also "host:port[/db]" without a scheme)
//   rediss://[[user]:pass@]host[:port][/db][?ssl_cert_reqs=required&ssl_ca_certs=FILE
//            &ssl_certfile=FILE&ssl_keyfile=FILE&ssl_check_hostname=true]
//   sentinel://[[user]:pass@]host[:port][/db][;sentinel://host[:port]...][?master_name=NAME]
// Credentials are percent-decoded; other query parameters are ignored, as kombu ignores
// transport options it does not use. Returns nullopt and sets *error to a message naming the
// problem (never the password) on bad input. Pure.
std::optional<RedisEndpoint> ParseRedisUrl(std::string_view url, std::string* error);

// Gives every sentinel:// endpoint without ?master_name this one (--redis-master-name), and
// fails naming `what` when a sentinel endpoint still has none. Pure.
Status ApplyDefaultMasterName(const std::string& master_name, std::string_view what,
                              RedisEndpoint* endpoint);

// Parses "host:port[/db]" (no credentials allowed), as the scaler's `redisAddress` metadata.
std::optional<RedisEndpoint> ParseRedisAddress(std::string_view address, std::string* error);

}  // namespace warmpool
