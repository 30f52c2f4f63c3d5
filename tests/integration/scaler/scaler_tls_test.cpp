// warmpool-scaler over TLS and mTLS: the real binary, a real redis-server, real gRPC clients, and
// certificates made by the openssl CLI at test time (make_test_certs.sh). The scaler reads its
// certificate from a Kubernetes-style Secret volume (tls.crt -> ..data/tls.crt, ..data -> a
// timestamped folder), which rotation swaps atomically as the kubelet does.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include "externalscaler.grpc.pb.h"
#include "tests/integration/scaler/grpc_probe.h"
#include "tests/integration/scaler/scaler_fixture.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/skip_test.h"

namespace fs = std::filesystem;
using namespace warmpool::testing;

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// The certificates, or a skip when openssl is missing here.
std::string MakeCerts() {
  if (!fs::exists("/usr/bin/openssl")) SkipTest("the openssl CLI is not installed");
  std::string dir = MakeTempDir("tls-certs");
  auto made = RunCommand(
      {"/bin/sh", std::string(WARMPOOL_SOURCE_DIR) + "/tests/integration/scaler/make_test_certs.sh",
       dir});
  if (made.exit_code != 0) FAIL("make_test_certs.sh failed: " << made.output);
  return dir;
}

// A Secret volume as the kubelet writes it: DIR/..data -> DIR/<version>, DIR/tls.* -> ..data/.
void WriteSecret(const std::string& dir, const std::string& version, const std::string& cert,
                 const std::string& key) {
  fs::create_directories(dir + "/" + version);
  fs::copy_file(cert, dir + "/" + version + "/tls.crt");
  fs::copy_file(key, dir + "/" + version + "/tls.key");
  fs::create_directory_symlink(version, dir + "/..data_tmp");
  fs::rename(dir + "/..data_tmp", dir + "/..data");  // atomic, like the kubelet's swap
  for (const char* name : {"tls.crt", "tls.key"}) {
    if (!fs::is_symlink(dir + "/" + name)) {
      fs::create_symlink(std::string("..data/") + name, dir + "/" + name);
    }
  }
}

struct ClientFiles {
  std::string ca, cert, key;
};

// A channel of its own (no subchannel shared with other channels): its own connection.
std::shared_ptr<grpc::Channel> Channel(int port, const ClientFiles& files) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::string target = "127.0.0.1:" + std::to_string(port);
  if (files.ca.empty()) {
    return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadAll(files.ca);
  if (!files.cert.empty()) {
    ssl.pem_cert_chain = ReadAll(files.cert);
    ssl.pem_private_key = ReadAll(files.key);
  }
  return grpc::CreateCustomChannel(target, grpc::SslCredentials(ssl), args);
}

externalscaler::ScaledObjectRef Ref() {
  externalscaler::ScaledObjectRef ref;
  ref.set_name("tls");
  ref.set_namespace_("test");
  return ref;
}

// IsActive over `channel`; *peer_cert gets the PEM certificate the server presented.
grpc::Status Call(const std::shared_ptr<grpc::Channel>& channel, std::string* peer_cert = nullptr) {
  auto stub = externalscaler::ExternalScaler::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  externalscaler::IsActiveResponse resp;
  grpc::Status s = stub->IsActive(&ctx, Ref(), &resp);
  if (s.ok() && peer_cert != nullptr) {
    auto values = ctx.auth_context()->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
    *peer_cert = values.empty() ? "" : std::string(values[0].data(), values[0].size());
  }
  return s;
}

// warmpool-scaler serving TLS from a Secret-like folder, with a plaintext health listener.
class TlsScaler {
 public:
  explicit TlsScaler(bool mtls, const std::vector<std::string>& extra = {})
      : certs(MakeCerts()), secret(certs + "/secret"), port(FreePort()), health_port(FreePort()) {
    WriteSecret(secret, "..2026_12_01_v1", certs + "/server.pem", certs + "/server.key");
    std::vector<std::string> argv = {ScalerBinary(),
                                     "--listen",
                                     "127.0.0.1:" + std::to_string(port),
                                     "--health-listen",
                                     "127.0.0.1:" + std::to_string(health_port),
                                     "--metrics-listen",
                                     "off",
                                     "--redis",
                                     "default=" + redis.url(),
                                     "--tls-cert",
                                     secret + "/tls.crt",
                                     "--tls-key",
                                     secret + "/tls.key",
                                     "--tls-reload-s",
                                     "1",
                                     "--stream-resend-s",
                                     "1"};
    if (mtls) argv.insert(argv.end(), {"--tls-client-ca", certs + "/ca.pem"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    process = std::make_unique<ChildProcess>(argv, certs + "/scaler.log");
    health = Channel(health_port, {});
    if (!WaitFor([&] { return HealthCheck(health, "readiness") == 1; }, std::chrono::seconds(15))) {
      FAIL("warmpool-scaler did not become ready: " << process->Log());
    }
  }

  ClientFiles Client() const {
    return {certs + "/ca.pem", certs + "/client.pem", certs + "/client.key"};
  }

  std::string certs;  // first: a skip (no openssl) happens before anything is started
  TestRedisServer redis;
  std::string secret;
  int port, health_port;
  std::unique_ptr<ChildProcess> process;
  std::shared_ptr<grpc::Channel> health;
};

}  // namespace

TEST_CASE("mTLS: the right CA and client certificate succeed", "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  std::string peer;
  grpc::Status s = Call(Channel(scaler.port, scaler.Client()), &peer);
  INFO(s.error_message() << "\n" << scaler.process->Log());
  REQUIRE(s.ok());
  CHECK(peer == ReadAll(scaler.certs + "/server.pem"));
}

TEST_CASE("mTLS: a client without a certificate is refused", "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  grpc::Status s = Call(Channel(scaler.port, {scaler.certs + "/ca.pem", "", ""}));
  CHECK(s.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(Call(Channel(scaler.port, scaler.Client())).ok());  // and the right one still works
}

TEST_CASE("mTLS: a client certificate from another CA is refused", "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  grpc::Status s =
      Call(Channel(scaler.port, {scaler.certs + "/ca.pem", scaler.certs + "/client-other.pem",
                                 scaler.certs + "/client-other.key"}));
  CHECK(s.error_code() == grpc::StatusCode::UNAVAILABLE);
}

TEST_CASE("TLS: a client that does not trust the server's CA fails", "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  ClientFiles files = scaler.Client();
  files.ca = scaler.certs + "/ca2.pem";
  CHECK(Call(Channel(scaler.port, files)).error_code() == grpc::StatusCode::UNAVAILABLE);
}

TEST_CASE("TLS: plaintext fails on the TLS port", "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/false);
  CHECK(Call(Channel(scaler.port, {})).error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(HealthCheck(Channel(scaler.port, {}), "") < 0);
}

TEST_CASE("TLS without a client CA: server-authenticated TLS, no client certificate needed",
          "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/false);
  CHECK(Call(Channel(scaler.port, {scaler.certs + "/ca.pem", "", ""})).ok());
}

TEST_CASE("TLS: the port negotiates ALPN h2, which grpc-go clients (KEDA) require",
          "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  // openssl s_client reads stdin until EOF; /dev/null ends the session after the handshake.
  auto hello =
      RunCommand({"/bin/sh", "-c",
                  "openssl s_client -alpn h2 -connect 127.0.0.1:" + std::to_string(scaler.port) +
                      " -servername localhost -CAfile " + scaler.certs + "/ca.pem -cert " +
                      scaler.certs + "/client.pem -key " + scaler.certs + "/client.key </dev/null"},
                 std::chrono::seconds(20));
  INFO(hello.output);
  CHECK_THAT(hello.output, Catch::Contains("ALPN protocol: h2"));
  CHECK_THAT(hello.output, Catch::Contains("Verify return code: 0 (ok)"));
}

TEST_CASE("The plaintext health listener serves health only", "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  CHECK(HealthCheck(scaler.health, "") == 1);
  CHECK(HealthCheck(scaler.health, "liveness") == 1);
  CHECK(HealthCheck(scaler.health, "readiness") == 1);
  // The scaler's API is not on it: no way around the client certificate.
  CHECK(Call(scaler.health).error_code() == grpc::StatusCode::UNIMPLEMENTED);
  // Readiness follows Redis there too.
  scaler.redis.Stop();
  CHECK(WaitFor([&] { return HealthCheck(scaler.health, "readiness") == 2; },
                std::chrono::seconds(10)));
}

TEST_CASE("warmpool-keda-probe speaks TLS with --tls-ca --tls-cert --tls-key", "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  const std::string probe = std::string(WARMPOOL_BINARY_DIR) + "/scaler/warmpool-keda-probe";
  const std::string address = "127.0.0.1:" + std::to_string(scaler.port);
  auto ok = RunCommand({probe, "--scaler", address, "--tls-ca", scaler.certs + "/ca.pem",
                        "--tls-cert", scaler.certs + "/client.pem", "--tls-key",
                        scaler.certs + "/client.key", "--tls-server-name", "localhost"});
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
  CHECK(ok.output.find("\"isActive\":false") != std::string::npos);
  auto no_cert = RunCommand(
      {probe, "--scaler", address, "--tls-ca", scaler.certs + "/ca.pem", "--timeout", "2"});
  CHECK(no_cert.exit_code == 1);
  auto plaintext = RunCommand({probe, "--scaler", address, "--timeout", "2"});
  CHECK(plaintext.exit_code == 1);
  auto half = RunCommand({probe, "--scaler", address, "--tls-cert", scaler.certs + "/client.pem"});
  CHECK(half.exit_code == 2);
}

TEST_CASE("Rotation: new connections get the new certificate, open ones keep working",
          "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  // Trusts both CAs, so it connects before and after the rotation.
  const std::string both = scaler.certs + "/both-cas.pem";
  std::ofstream(both) << ReadAll(scaler.certs + "/ca.pem") << ReadAll(scaler.certs + "/ca2.pem");
  ClientFiles files = scaler.Client();
  files.ca = both;
  const std::string old_cert = ReadAll(scaler.certs + "/server.pem");
  const std::string new_cert = ReadAll(scaler.certs + "/server2.pem");

  auto open_channel = Channel(scaler.port, files);
  std::string peer;
  REQUIRE(Call(open_channel, &peer).ok());
  REQUIRE(peer == old_cert);
  auto stub = externalscaler::ExternalScaler::NewStub(open_channel);
  grpc::ClientContext stream_ctx;
  stream_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto stream = stub->StreamIsActive(&stream_ctx, Ref());
  externalscaler::IsActiveResponse msg;
  REQUIRE(stream->Read(&msg));

  // cert-manager renews; the kubelet swaps the Secret volume's ..data link.
  WriteSecret(scaler.secret, "..2026_12_01_v2", scaler.certs + "/server2.pem",
              scaler.certs + "/server2.key");
  bool rotated = WaitFor(
      [&] {
        std::string now;
        return Call(Channel(scaler.port, files), &now).ok() && now == new_cert;
      },
      std::chrono::seconds(15));
  INFO(scaler.process->Log());
  REQUIRE(rotated);
  // A client that trusts only the old CA cannot connect any more: the old certificate is gone.
  CHECK(Call(Channel(scaler.port, scaler.Client())).error_code() == grpc::StatusCode::UNAVAILABLE);
  // The connection opened before the rotation is still up, with the old certificate...
  REQUIRE(Call(open_channel, &peer).ok());
  CHECK(peer == old_cert);
  // ... and so is its stream (the scaler re-sends its state every second).
  CHECK(stream->Read(&msg));
  stream_ctx.TryCancel();
}

TEST_CASE("Rotation to a key that does not match: not ready until a matching pair arrives",
          "[scaler][tls]") {
  TlsScaler scaler(/*mtls=*/true);
  const std::string both = scaler.certs + "/both-cas.pem";
  std::ofstream(both) << ReadAll(scaler.certs + "/ca.pem") << ReadAll(scaler.certs + "/ca2.pem");
  ClientFiles files = scaler.Client();
  files.ca = both;
  // A half-done rotation: the new certificate with the old key. gRPC loads it and every new
  // handshake fails, so the replica must leave the Service (readiness) and say why.
  WriteSecret(scaler.secret, "..v2", scaler.certs + "/server2.pem", scaler.certs + "/server.key");
  CHECK(WaitFor([&] { return HealthCheck(scaler.health, "readiness") == 2; },
                std::chrono::seconds(10)));
  CHECK_THAT(scaler.process->Log(), Catch::Contains("tls_files_invalid"));
  CHECK_THAT(scaler.process->Log(), Catch::Contains("does not match"));
  CHECK(HealthCheck(scaler.health, "liveness") == 1);
  // The matching key arrives: ready again, serving the new certificate.
  WriteSecret(scaler.secret, "..v3", scaler.certs + "/server2.pem", scaler.certs + "/server2.key");
  CHECK(WaitFor([&] { return HealthCheck(scaler.health, "readiness") == 1; },
                std::chrono::seconds(10)));
  std::string peer;
  CHECK(WaitFor([&] { return Call(Channel(scaler.port, files), &peer).ok(); },
                std::chrono::seconds(10)));
  CHECK(peer == ReadAll(scaler.certs + "/server2.pem"));
  CHECK_THAT(scaler.process->Log(), Catch::Contains("tls_reloaded"));
}

TEST_CASE("TLS misconfiguration stops the scaler at startup, naming the file", "[scaler][tls]") {
  std::string certs = MakeCerts();
  TestRedisServer redis;
  auto run = [&](std::vector<std::string> tls) {
    std::vector<std::string> argv = {
        ScalerBinary(),          "--listen", "127.0.0.1:" + std::to_string(FreePort()),
        "--metrics-listen",      "off",      "--redis",
        "default=" + redis.url()};
    argv.insert(argv.end(), tls.begin(), tls.end());
    return RunCommand(argv, std::chrono::seconds(20));
  };
  auto mismatch = run({"--tls-cert", certs + "/server.pem", "--tls-key", certs + "/server2.key"});
  CHECK(mismatch.exit_code == 1);
  CHECK(mismatch.output.find("does not match") != std::string::npos);
  auto missing = run({"--tls-cert", certs + "/nope.pem", "--tls-key", certs + "/server.key"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find("nope.pem") != std::string::npos);
  auto not_pem = run({"--tls-cert", certs + "/server.key", "--tls-key", certs + "/server.key"});
  CHECK(not_pem.exit_code == 1);
  CHECK(not_pem.output.find("no PEM CERTIFICATE") != std::string::npos);
  auto half = run({"--tls-cert", certs + "/server.pem"});
  CHECK(half.exit_code == 2);
  CHECK(half.output.find("--tls-key") != std::string::npos);
}
