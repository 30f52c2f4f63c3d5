// A broker with a password: a percent-encoded comma in the URL's password works (as redis-py and
// kombu read it), and a missing password is reported as NOAUTH, never as a reply type number,
// and never with the password.
#include <string>

#include <catch2/catch.hpp>

#include "redis/connection.h"
#include "redis/errors.h"
#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "s3cr,et";

TEST_CASE("Without the broker password the worker says NOAUTH, with it (%2C) tasks run",
          "[worker][integration][auth]") {
  TestRedisServer redis({"--requirepass", kPassword});
  const std::string dir = MakeTempDir("worker-auth");
  const std::string port = std::to_string(redis.port());
  const std::string plain = "redis://127.0.0.1:" + port;
  const std::string with_password = "redis://:s3cr%2Cet@127.0.0.1:" + port;
  {
    ChildProcess worker({WorkerBinary(), "--broker", plain + "/0", "--result-backend", plain + "/1",
                         "--hostname", "warmpool@noauth"},
                        dir + "/noauth.log");
    REQUIRE(WaitFor([&] { return worker.Log().find("NOAUTH") != std::string::npos; },
                    std::chrono::seconds(15)));
    std::string log = worker.Log();
    CHECK_THAT(log, Catch::Contains("Authentication required"));
    CHECK_THAT(log, !Catch::Contains("got type"));
    CHECK_THAT(log, !Catch::Contains("s3cr"));
    worker.Signal(SIGTERM);
    worker.Wait(std::chrono::seconds(10));
  }
  ChildProcess worker({WorkerBinary(), "--broker", with_password + "/0", "--result-backend",
                       with_password + "/1", "--hostname", "warmpool@auth"},
                      dir + "/auth.log");
  // Real Python Celery with the same URL: redis-py unquotes the password too.
  CommandResult r =
      RunCommand({PythonInterpreter(), ClientScript(), "--broker", with_password + "/0",
                  "--backend", with_password + "/1", "call", "warmpool.ping"},
                 std::chrono::seconds(60));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.output.substr(r.output.rfind('{')))["result"] == "pong");
  CHECK_THAT(worker.Log(), !Catch::Contains("s3cr"));
  CheckServingThenStopsCleanly(worker);
}

TEST_CASE("A typed read of an error reply gives the server's text (NOAUTH), not a type number",
          "[worker][integration][auth]") {
  TestRedisServer redis({"--requirepass", kPassword});
  RedisEndpoint ep;
  ep.port = redis.port();
  RedisConnection conn(ep);  // no AUTH: every command is refused
  auto replies = conn.Pipeline({{"GET", "k"}, {"LLEN", "celery"}, {"SMEMBERS", "s"}});
  REQUIRE(replies.size() == 3);
  CHECK_THROWS_AS(ReplyString(replies[0].get()), RedisReplyError);
  CHECK_THROWS_WITH(ReplyString(replies[0].get()),
                    "redis error reply: NOAUTH Authentication required.");
  CHECK_THROWS_WITH(ReplyInteger(replies[1].get()), Catch::Contains("NOAUTH"));
  CHECK_THROWS_WITH(ReplyElements(replies[2].get()), Catch::Contains("NOAUTH"));
  CHECK_THROWS_WITH(conn.Command({"PING"}), Catch::Contains("NOAUTH") && !Catch::Contains("s3cr"));
}

}  // namespace
}  // namespace warmpool::testing
