#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace warmpool::testing {

// Certificates made with the openssl CLI at test time: a CA, a server certificate it signed for
// 127.0.0.1 and localhost, a client certificate it signed, and an unrelated second CA.
struct TestCerts {
  std::string dir;
  std::string ca, server_cert, server_key, client_cert, client_key, other_ca;
};
// Skips the test (exit 77) when the openssl CLI is missing; fails it when a command fails.
TestCerts MakeTestCerts();

// The ACL user the TLS servers define; the default user is off, so only it can log in.
inline constexpr const char* kAclUser = "celery";
inline constexpr const char* kAclPassword = "p@ss,w:rd";  // needs encoding in URLs
inline constexpr const char* kAclPasswordEncoded = "p%40ss%2Cw%3Ard";

// A redis-server on a free loopback port, killed on destruction. Plain, TLS-only (--port 0), or
// a Sentinel. Test-only.
class RedisProcess {
 public:
  enum class Kind { kPlain, kTls, kSentinel };
  RedisProcess(Kind kind, std::vector<std::string> extra_args, const TestCerts* certs = nullptr);
  ~RedisProcess();
  RedisProcess(const RedisProcess&) = delete;
  RedisProcess& operator=(const RedisProcess&) = delete;

  int port() const { return port_; }
  // redis-cli against this server (TLS and ACL user as needed); trimmed stdout.
  std::string Cli(const std::vector<std::string>& args, int db = 0) const;
  void Kill();  // SIGKILL, as a crashed node

 private:
  Kind kind_;
  int port_;
  std::string dir_;
  const TestCerts* certs_;
  bool acl_ = false;
  std::unique_ptr<ChildProcess> proc_;
};

// A TLS-only Redis with ACL user kAclUser (default user off); `auth_clients` = require client
// certificates (--tls-auth-clients yes).
std::unique_ptr<RedisProcess> StartTlsRedis(const TestCerts& certs, bool auth_clients = false);

// rediss://celery:...@127.0.0.1:PORT/DB?ssl_cert_reqs=required&ssl_ca_certs=CA
std::string TlsUrl(const RedisProcess& redis, const std::string& ca, int db = 0);

// A master, a replica of it and one Sentinel (quorum 1, down-after 1000 ms) watching it as
// "mymaster"; the constructor waits until the Sentinel knows the replica.
class SentinelSetup {
 public:
  SentinelSetup();
  RedisProcess& master() { return *master_; }
  RedisProcess& replica() { return *replica_; }
  RedisProcess& sentinel() { return *sentinel_; }
  // sentinel:// URL listing a dead Sentinel first (must be skipped), then the live one.
  std::string Url(int db, bool with_master_name) const;
  // Waits until the replica has every write the master acknowledged so far.
  bool WaitReplicated(std::chrono::milliseconds timeout);
  // SIGKILLs the master and waits until the Sentinel names the replica as master.
  bool KillMasterAndWaitFailover(std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<RedisProcess> master_, replica_, sentinel_;
  int dead_sentinel_port_;
};

}  // namespace warmpool::testing
