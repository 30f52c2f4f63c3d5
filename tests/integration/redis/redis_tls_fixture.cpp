#include "tests/integration/redis/redis_tls_fixture.h"

#include <csignal>
#include <fstream>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "redis/connection.h"
#include "tests/support/skip_test.h"

namespace warmpool::testing {
namespace {

void Openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv, std::chrono::seconds(30));
  INFO("openssl " << args.front() << ": " << r.output);
  REQUIRE(r.exit_code == 0);
}

void MakeCa(const std::string& dir, const std::string& name) {
  Openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
           "/CN=warmpool test " + name, "-keyout", dir + "/" + name + ".key", "-out",
           dir + "/" + name + ".pem"});
}

void MakeSigned(const std::string& dir, const std::string& name, const std::string& ext) {
  const std::string base = dir + "/" + name;
  Openssl({"req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name, "-keyout", base + ".key",
           "-out", base + ".csr"});
  std::ofstream(base + ".ext") << ext << "\n";
  Openssl({"x509", "-req", "-in", base + ".csr", "-CA", dir + "/ca.pem", "-CAkey", dir + "/ca.key",
           "-CAcreateserial", "-days", "2", "-extfile", base + ".ext", "-out", base + ".pem"});
}

std::vector<std::string> TlsCliArgs(const TestCerts& certs) {
  return {"--tls", "--cacert", certs.ca, "--cert", certs.client_cert, "--key", certs.client_key};
}

}  // namespace

TestCerts MakeTestCerts() {
  if (RunCommand({"openssl", "version"}, std::chrono::seconds(10)).exit_code != 0) {
    SkipTest("the openssl CLI is not installed");
  }
  TestCerts c;
  c.dir = MakeTempDir("redis-tls-certs");
  MakeCa(c.dir, "ca");
  MakeCa(c.dir, "other-ca");
  MakeSigned(c.dir, "server", "subjectAltName=IP:127.0.0.1,DNS:localhost");
  MakeSigned(c.dir, "client", "extendedKeyUsage=clientAuth");
  c.ca = c.dir + "/ca.pem";
  c.other_ca = c.dir + "/other-ca.pem";
  c.server_cert = c.dir + "/server.pem";
  c.server_key = c.dir + "/server.key";
  c.client_cert = c.dir + "/client.pem";
  c.client_key = c.dir + "/client.key";
  return c;
}

RedisProcess::RedisProcess(Kind kind, std::vector<std::string> extra_args, const TestCerts* certs)
    : kind_(kind), port_(FreePort()), dir_(MakeTempDir("redis-ha")), certs_(certs) {
  std::vector<std::string> argv = {"redis-server"};
  if (kind == Kind::kSentinel) {
    // A Sentinel rewrites its config file: it must be its own, writable.
    std::ofstream(dir_ + "/sentinel.conf") << "port " << port_ << "\nbind 127.0.0.1\n";
    argv = {"redis-server", dir_ + "/sentinel.conf", "--sentinel"};
  } else {
    // 127.0.0.2 too: the same server under an address its certificate does not name.
    argv.insert(argv.end(), {"--bind", "127.0.0.1 127.0.0.2", "--save", "", "--appendonly", "no",
                             "--protected-mode", "no"});
    if (kind == Kind::kTls) {
      argv.insert(argv.end(), {"--port", "0", "--tls-port", std::to_string(port_),
                               "--tls-cert-file", certs->server_cert, "--tls-key-file",
                               certs->server_key, "--tls-ca-cert-file", certs->ca});
    } else {
      argv.insert(argv.end(), {"--port", std::to_string(port_)});
    }
  }
  argv.insert(argv.end(), {"--dir", dir_, "--daemonize", "no"});
  for (const auto& a : extra_args) acl_ = acl_ || a == "--user";
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  proc_ = std::make_unique<ChildProcess>(argv, dir_ + "/redis.log");
  if (!WaitFor([&] { return Cli({"PING"}) == "PONG"; }, std::chrono::seconds(10))) {
    throw std::runtime_error("redis-server did not start: " + proc_->Log());
  }
}

RedisProcess::~RedisProcess() { Kill(); }

void RedisProcess::Kill() {
  if (!proc_) return;
  proc_->Signal(SIGKILL);
  proc_->Wait(std::chrono::seconds(5));
  proc_.reset();
}

std::string RedisProcess::Cli(const std::vector<std::string>& args, int db) const {
  std::vector<std::string> argv = {"redis-cli", "-p", std::to_string(port_)};
  if (kind_ != Kind::kSentinel) argv.insert(argv.end(), {"-n", std::to_string(db)});
  if (kind_ == Kind::kTls) {
    auto tls = TlsCliArgs(*certs_);
    argv.insert(argv.end(), tls.begin(), tls.end());
  }
  if (acl_) {
    argv.insert(argv.end(), {"--no-auth-warning", "--user", kAclUser, "--pass", kAclPassword});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out = RunCommand(argv, std::chrono::seconds(10)).output;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::unique_ptr<RedisProcess> StartTlsRedis(const TestCerts& certs, bool auth_clients) {
  return std::make_unique<RedisProcess>(
      RedisProcess::Kind::kTls,
      std::vector<std::string>{"--tls-auth-clients", auth_clients ? "yes" : "no", "--user",
                               "default", "off", "--user", kAclUser, "on",
                               std::string(">") + kAclPassword, "~*", "&*", "+@all"},
      &certs);
}

std::string TlsUrl(const RedisProcess& redis, const std::string& ca, int db) {
  std::string url = "rediss://";
  url.append(kAclUser).append(":").append(kAclPasswordEncoded).append("@127.0.0.1:");
  url.append(std::to_string(redis.port())).append("/").append(std::to_string(db));
  url.append("?ssl_cert_reqs=required&ssl_ca_certs=").append(ca);
  return url;
}

SentinelSetup::SentinelSetup() : dead_sentinel_port_(FreePort()) {
  master_ = std::make_unique<RedisProcess>(RedisProcess::Kind::kPlain, std::vector<std::string>{});
  replica_ = std::make_unique<RedisProcess>(
      RedisProcess::Kind::kPlain,
      std::vector<std::string>{"--replicaof", "127.0.0.1", std::to_string(master_->port())});
  sentinel_ =
      std::make_unique<RedisProcess>(RedisProcess::Kind::kSentinel, std::vector<std::string>{});
  const std::string m = std::to_string(master_->port());
  sentinel_->Cli({"SENTINEL", "MONITOR", "mymaster", "127.0.0.1", m, "1"});
  sentinel_->Cli({"SENTINEL", "SET", "mymaster", "down-after-milliseconds", "1000"});
  sentinel_->Cli({"SENTINEL", "SET", "mymaster", "failover-timeout", "5000"});
  const std::string r = std::to_string(replica_->port());
  const bool ready = WaitFor(
      [&] {
        return replica_->Cli({"INFO", "replication"}).find("master_link_status:up") !=
                   std::string::npos &&
               sentinel_->Cli({"SENTINEL", "REPLICAS", "mymaster"}).find(r) != std::string::npos;
      },
      std::chrono::seconds(20));
  if (!ready) throw std::runtime_error("the Sentinel did not find the replica");
}

std::string SentinelSetup::Url(int db, bool with_master_name) const {
  std::string url = "sentinel://127.0.0.1:";
  url.append(std::to_string(dead_sentinel_port_)).append("/").append(std::to_string(db));
  url.append(";sentinel://127.0.0.1:").append(std::to_string(sentinel_->port()));
  if (with_master_name) url.append("?master_name=mymaster");
  return url;
}

bool SentinelSetup::WaitReplicated(std::chrono::milliseconds timeout) {
  // WAIT counts the replicas that acknowledged this connection's writes: write one, then wait.
  RedisEndpoint ep;
  ep.port = master_->port();
  ep.command_timeout = timeout + std::chrono::seconds(1);
  RedisConnection conn(ep);
  conn.Command({"SET", "warmpool:test:fence", "1"});
  return ReplyInteger(conn.Command({"WAIT", "1", std::to_string(timeout.count())}).get()) == 1;
}

bool SentinelSetup::KillMasterAndWaitFailover(std::chrono::milliseconds timeout) {
  master_->Kill();
  const std::string r = std::to_string(replica_->port());
  return WaitFor(
      [&] {
        return sentinel_->Cli({"SENTINEL", "get-master-addr-by-name", "mymaster"}).find(r) !=
                   std::string::npos &&
               replica_->Cli({"ROLE"}).rfind("master", 0) == 0;
      },
      timeout);
}

}  // namespace warmpool::testing
