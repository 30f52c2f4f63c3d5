#include "worker/canvas.h"

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "celery/base64.h"
#include "celery/time.h"

namespace warmpool::worker {
namespace {

using nlohmann::json;

constexpr double kNow = 1'700'000'000.0;

CanvasEnv Env() {
  CanvasEnv env;
  env.hostname = "warmpool@test";
  env.now = kNow;
  auto counter = std::make_shared<int>(0);
  env.new_id = [counter] { return "id-" + std::to_string(++*counter); };
  return env;
}

json Sig(const std::string& task, json args = json::array(), json options = json::object(),
         bool immutable = false) {
  return {{"task", task},
          {"args", args},
          {"kwargs", json::object()},
          {"options", options},
          {"subtask_type", nullptr},
          {"immutable", immutable}};
}

celery::TaskMessage Message(json embed) {
  celery::TaskMessage m;
  m.id = "task-1";
  m.root_id = "root-1";
  m.task = "warmpool.sleep";
  m.embed = std::move(embed);
  return m;
}

json Embed(json callbacks = nullptr, json errbacks = nullptr, json chain = nullptr,
           json chord = nullptr) {
  return {{"callbacks", callbacks}, {"errbacks", errbacks}, {"chain", chain}, {"chord", chord}};
}

celery::TaskMessage Decode(const std::string& envelope) {
  celery::TaskMessage out;
  Status s = celery::DecodeTaskMessage(envelope, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

TEST_CASE("A chain's next step gets the result, the rest of the chain and pre-assigned id",
          "[worker][canvas]") {
  json last = Sig("warmpool.add", json::array({1}), {{"task_id", "c-id"}, {"countdown", 2}});
  json next = Sig("warmpool.sleep", json::array(),
                  {{"task_id", "b-id"}, {"queue", "gpu"}, {"priority", 5}, {"expires", 60}});
  auto msg = Message(Embed(nullptr, nullptr, json::array({last, next})));
  CanvasPlan plan = PlanCanvas(msg, CanvasOutcome::kSuccess, 0.5, Env());
  CHECK(plan.errors.empty());
  REQUIRE(plan.messages.size() == 1);
  const CanvasMessage& m = plan.messages[0];
  CHECK(m.kind == "chain");
  CHECK(m.task_id == "b-id");
  CHECK(m.queue == "gpu");
  CHECK(m.priority == 5);
  celery::TaskMessage d = Decode(m.envelope);
  CHECK(d.task == "warmpool.sleep");
  CHECK(d.id == "b-id");
  CHECK(d.args == json::array({0.5}));
  CHECK(d.parent_id == "task-1");
  CHECK(d.root_id == "root-1");
  CHECK(d.origin == "warmpool@test");
  CHECK(d.routing_key == "gpu");
  CHECK(d.exchange.empty());
  CHECK(d.priority == 5);
  CHECK(d.embed["chain"] == json::array({last}));
  REQUIRE(d.expires.has_value());
  CHECK(*d.expires == Approx(kNow + 60).margin(1e-3));
  CHECK_FALSE(d.eta.has_value());

  // The last step: countdown becomes an ETA; the chain is then empty.
  auto step2 = Message(d.embed);
  CanvasPlan plan2 = PlanCanvas(step2, CanvasOutcome::kSuccess, 7, Env());
  REQUIRE(plan2.messages.size() == 1);
  celery::TaskMessage d2 = Decode(plan2.messages[0].envelope);
  CHECK(d2.id == "c-id");
  CHECK(d2.args == json::array({7, 1}));
  CHECK(d2.routing_key == "celery");
  REQUIRE(d2.eta.has_value());
  CHECK(*d2.eta == Approx(kNow + 2).margin(1e-3));
  CHECK(d2.embed["chain"] == json::array());
}

TEST_CASE("Immutable signatures keep their own args, a missing task_id gets a new id",
          "[worker][canvas]") {
  auto msg = Message(Embed(json::array({Sig("warmpool.echo", json::array({"x"}), {}, true)})));
  CanvasPlan plan = PlanCanvas(msg, CanvasOutcome::kSuccess, 3, Env());
  REQUIRE(plan.messages.size() == 1);
  celery::TaskMessage d = Decode(plan.messages[0].envelope);
  CHECK(d.args == json::array({"x"}));
  CHECK(d.id == plan.messages[0].task_id);
  CHECK(d.id.rfind("id-", 0) == 0);
  CHECK(d.group.empty());  // one callback: no group
}

TEST_CASE("Several link callbacks go out as one group, each with the result", "[worker][canvas]") {
  auto msg = Message(Embed(json::array({Sig("warmpool.echo"), Sig("warmpool.add", {1})})));
  CanvasPlan plan = PlanCanvas(msg, CanvasOutcome::kSuccess, 4, Env());
  REQUIRE(plan.messages.size() == 2);
  celery::TaskMessage a = Decode(plan.messages[0].envelope);
  celery::TaskMessage b = Decode(plan.messages[1].envelope);
  CHECK(a.args == json::array({4}));
  CHECK(b.args == json::array({4, 1}));
  CHECK_FALSE(a.group.empty());
  CHECK(a.group == b.group);
  CHECK(a.parent_id == "task-1");
  // Callbacks are not applied on failure.
  CHECK(PlanCanvas(msg, CanvasOutcome::kFailure, json::object(), Env()).messages.empty());
}

TEST_CASE("On failure errbacks get the task id and the rest of the chain fails too",
          "[worker][canvas]") {
  json chain = json::array({Sig("warmpool.add", {1}, {{"task_id", "c-id"}}),
                            Sig("warmpool.add", {2}, {{"task_id", "b-id"}})});
  auto msg = Message(Embed(nullptr, json::array({Sig("warmpool.echo")}), chain));
  json exc = {{"exc_type", "ValueError"}, {"exc_message", {"bad"}}, {"exc_module", "builtins"}};
  CanvasPlan plan = PlanCanvas(msg, CanvasOutcome::kFailure, exc, Env());
  CHECK(plan.errors.empty());
  REQUIRE(plan.messages.size() == 1);
  CHECK(plan.messages[0].kind == "link_error");
  celery::TaskMessage d = Decode(plan.messages[0].envelope);
  CHECK(d.task == "warmpool.echo");
  CHECK(d.args == json::array({"task-1"}));
  CHECK(d.parent_id == "task-1");
  CHECK(d.root_id == "root-1");
  CHECK_FALSE(d.group.empty());  // errbacks are applied as a group
  CHECK(plan.failed_chain_ids == std::vector<std::string>{"c-id", "b-id"});
  // Revoked: neither errbacks nor chain propagation.
  CanvasPlan revoked = PlanCanvas(msg, CanvasOutcome::kRevoked, exc, Env());
  CHECK(revoked.messages.empty());
  CHECK(revoked.failed_chain_ids.empty());
}

TEST_CASE("Bad canvas data is reported and skipped, good signatures still go out",
          "[worker][canvas][negative]") {
  struct Case {
    const char* name;
    json embed;
    size_t messages;
    const char* error;
  };
  // clang-format off
  std::vector<Case> cases = {
      {"no task name",        Embed(json::array({json{{"args", json::array()}}, Sig("warmpool.echo")})), 1, "no task name"},
      {"args not a list",     Embed(json::array({json{{"task", "t"}, {"args", 3}}})),                    0, "must be a list"},
      {"callbacks not list",  Embed(json("oops")),                                                       0, "embed.callbacks"},
      {"chain not a list",    Embed(nullptr, nullptr, json{{"task", "t"}}),                              0, "embed.chain"},
      {"group signature",     Embed(nullptr, nullptr, json::array({json{{"task", "celery.group"}, {"subtask_type", "group"}}})), 0, "only plain task"},
      {"signature not object", Embed(nullptr, nullptr, json::array({42})),                               0, "must be an object"},
      {"bad countdown",       Embed(json::array({Sig("t", json::array(), {{"countdown", "soon"}})})),     0, "countdown"},
      {"bad eta",             Embed(json::array({Sig("t", json::array(), {{"eta", "tomorrow"}})})),       0, "eta"},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      CanvasPlan plan = PlanCanvas(Message(c.embed), CanvasOutcome::kSuccess, 1, Env());
      CHECK(plan.messages.size() == c.messages);
      REQUIRE(plan.errors.size() == 1);
      CHECK_THAT(plan.errors[0], Catch::Contains(c.error));
    }
  }
}

TEST_CASE("A chord header part carries the Redis backend step and the body template",
          "[worker][canvas][chord]") {
  json body = Sig("warmpool.xsum", json::array({"extra"}),
                  {{"task_id", "body-id"}, {"link_error", Sig("warmpool.echo")}});
  auto msg = Message(Embed(nullptr, nullptr, nullptr, body));
  msg.group = "g-1";
  msg.group_index = 1;
  CanvasPlan plan = PlanCanvas(msg, CanvasOutcome::kSuccess, 3, Env());
  CHECK(plan.errors.empty());
  CHECK(plan.messages.empty());
  REQUIRE(plan.chord.has_value());
  const ChordPart& part = *plan.chord;
  CHECK(part.group_id == "g-1");
  CHECK(part.score == "1");
  CHECK(part.member == R"([1, "task-1", "SUCCESS", 3])");
  CHECK(part.callback_id == "body-id");
  CHECK(part.callback_queue == "celery");
  CHECK_FALSE(part.callback_immutable);

  // What the Lua script assembles from the parts' results.
  std::string body_json = part.body_head + "[4, 3]" + part.body_tail;
  json parsed = json::parse(body_json);
  CHECK(parsed[0] == json::array({json::array({4, 3}), "extra"}));
  std::string envelope =
      part.envelope_head + "\"" + celery::Base64Encode(body_json) + "\"" + part.envelope_tail;
  celery::TaskMessage d = Decode(envelope);
  CHECK(d.id == "body-id");
  CHECK(d.task == "warmpool.xsum");
  CHECK(d.args == json::array({json::array({4, 3}), "extra"}));
  CHECK(d.parent_id == "task-1");
  CHECK(d.root_id == "root-1");

  json meta = json::parse(part.error_meta_head + json("Dependency x raised E()").dump() +
                          part.error_meta_tail);
  CHECK(meta["status"] == "FAILURE");
  CHECK(meta["task_id"] == "body-id");
  CHECK(meta["result"]["exc_type"] == "ChordError");
  CHECK(meta["result"]["exc_module"] == "celery.exceptions");
  CHECK(meta["result"]["exc_message"] == json::array({"Dependency x raised E()"}));
  REQUIRE(part.errbacks.size() == 1);
  CHECK(Decode(part.errbacks[0].envelope).args == json::array({"body-id"}));

  SECTION("a failed part carries the exception dict; no group index scores +inf") {
    msg.group_index.reset();
    json exc = {{"exc_message", {"bad"}}, {"exc_module", "builtins"}, {"exc_type", "ValueError"}};
    CanvasPlan failed = PlanCanvas(msg, CanvasOutcome::kFailure, exc, Env());
    REQUIRE(failed.chord.has_value());
    CHECK(failed.chord->score == "+inf");
    CHECK(failed.chord->member == "[1, \"task-1\", \"FAILURE\", " + exc.dump() + "]");
  }
  SECTION("no group id: no chord step (as 5.2.6)") {
    msg.group.clear();
    CHECK_FALSE(PlanCanvas(msg, CanvasOutcome::kSuccess, 3, Env()).chord.has_value());
  }
  SECTION("an immutable body is sent whole") {
    msg.embed["chord"]["immutable"] = true;
    CanvasPlan imm = PlanCanvas(msg, CanvasOutcome::kSuccess, 3, Env());
    REQUIRE(imm.chord.has_value());
    CHECK(imm.chord->callback_immutable);
    CHECK(json::parse(imm.chord->body_head)[0] == json::array({"extra"}));
  }
}

}  // namespace
}  // namespace warmpool::worker
