// The worker's --broker / --result-backend with rediss:// and sentinel:// URLs.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "worker/worker_options.h"

namespace warmpool::worker {
namespace {

const char* NoEnv(const char*) { return nullptr; }
const char* MasterEnv(const char* name) {
  return std::strcmp(name, "WARMPOOL_REDIS_MASTER_NAME") == 0 ? "envmaster" : nullptr;
}

ParsedCommandLine Parse(std::vector<std::string> args, const char* (*env)(const char*) = NoEnv) {
  args.insert(args.begin(), "warmpool-worker");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseWorkerCommandLine(static_cast<int>(argv.size()), argv.data(), env);
}

TEST_CASE("The worker takes rediss:// and sentinel:// broker URLs", "[worker][options]") {
  auto tls =
      Parse({"--broker",
             "rediss://celery:k%2Fy%3D@h:6380/0?ssl_cert_reqs=required&ssl_ca_certs=/ca.pem"});
  REQUIRE(tls.options);
  CHECK(tls.options->broker.tls.enabled);
  CHECK(tls.options->broker.tls.ca_file == "/ca.pem");
  CHECK(tls.options->broker.password == "k/y=");
  CHECK(tls.options->result_backend.tls.enabled);  // the backend defaults to the broker

  auto no_name = Parse({"--broker", "sentinel://s1:26379;sentinel://s2:26379"});
  CHECK_FALSE(no_name.options);
  CHECK(no_name.exit_code == 2);
  CHECK_THAT(no_name.message, Catch::Contains("--broker") && Catch::Contains("master_name"));

  auto flag =
      Parse({"--broker", "sentinel://s1/0;sentinel://s2", "--result-backend",
             "sentinel://s1/1;sentinel://s2?master_name=other", "--redis-master-name", "mymaster"});
  REQUIRE(flag.options);
  CHECK(flag.options->broker.master_name == "mymaster");
  CHECK(flag.options->result_backend.master_name == "other");
  CHECK(flag.options->result_backend.db == 1);

  auto env = Parse({"--broker", "sentinel://s1"}, MasterEnv);
  REQUIRE(env.options);
  CHECK(env.options->broker.master_name == "envmaster");

  auto http = Parse({"--broker", "http://x:1"});
  CHECK_FALSE(http.options);
  CHECK_THAT(http.message, Catch::Contains("--broker: unsupported scheme 'http'"));
}

}  // namespace
}  // namespace warmpool::worker
