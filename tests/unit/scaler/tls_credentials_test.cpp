// The pure parts of the scaler's TLS configuration: flag combinations and PEM block detection.
#include "scaler/tls_credentials.h"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "scaler/scaler_options.h"

namespace warmpool::scaler {
namespace {

TEST_CASE("TLS flags go together", "[tls]") {
  CHECK(CheckTlsFlags({}).ok());
  CHECK(CheckTlsFlags({"c.pem", "k.pem", "", std::chrono::seconds(30)}).ok());
  CHECK(CheckTlsFlags({"c.pem", "k.pem", "ca.pem", std::chrono::seconds(30)}).ok());
  CHECK_FALSE(CheckTlsFlags({"c.pem", "", "", std::chrono::seconds(30)}).ok());
  CHECK_FALSE(CheckTlsFlags({"", "k.pem", "", std::chrono::seconds(30)}).ok());
  Status ca_only = CheckTlsFlags({"", "", "ca.pem", std::chrono::seconds(30)});
  CHECK(ca_only.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(ca_only.message(), Catch::Contains("--tls-cert"));
}

TEST_CASE("PEM blocks are found by label", "[tls]") {
  const std::string cert = "junk\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  CHECK(HasPemBlock(cert, "CERTIFICATE"));
  CHECK_FALSE(HasPemBlock(cert, "PRIVATE KEY"));
  CHECK(HasPemBlock("-----BEGIN EC PRIVATE KEY-----\n", "PRIVATE KEY"));
  CHECK(HasPemBlock("-----BEGIN RSA PRIVATE KEY-----\n", "PRIVATE KEY"));
  CHECK(HasPemBlock("-----BEGIN PRIVATE KEY-----\n", "PRIVATE KEY"));
  CHECK_FALSE(HasPemBlock("-----BEGIN CERTIFICATE REQUEST-----\n", "CERTIFICATE"));
  CHECK_FALSE(HasPemBlock("-----BEGIN CERTIF", "CERTIFICATE"));
  CHECK_FALSE(HasPemBlock("", "CERTIFICATE"));
}

TEST_CASE("The scaler's TLS flags parse, half a pair is a usage error", "[tls][options]") {
  auto parse = [](std::vector<std::string> args, int* code) {
    args.insert(args.begin(), "warmpool-scaler");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    ScalerOptions out;
    *code = 0;
    bool ok = ParseScalerOptions(static_cast<int>(argv.size()), argv.data(), &out, code);
    return ok ? std::optional<ScalerOptions>(out) : std::nullopt;
  };
  int code = 0;
  auto full = parse({"--tls-cert", "c", "--tls-key", "k", "--tls-client-ca", "ca", "--tls-reload-s",
                     "5", "--health-listen", "0.0.0.0:6001"},
                    &code);
  REQUIRE(full);
  CHECK(full->tls.cert == "c");
  CHECK(full->tls.client_ca == "ca");
  CHECK(full->tls.reload == std::chrono::seconds(5));
  CHECK(full->health_listen == "0.0.0.0:6001");
  CHECK_FALSE(parse({"--tls-cert", "c"}, &code));
  CHECK(code == 2);
  CHECK_FALSE(parse({"--tls-cert", "c", "--tls-key", "k", "--tls-reload-s", "0"}, &code));
  CHECK(code != 0);
}

}  // namespace
}  // namespace warmpool::scaler
