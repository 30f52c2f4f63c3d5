// The finish plan: what each task outcome writes (result document, ack, pushed messages,
// events), without Redis.
#include "worker/finish_plan.h"

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "celery/message.h"
#include "celery/result.h"
#include "worker/outcome.h"

namespace warmpool::worker {
namespace {

using nlohmann::json;

constexpr double kNow = 1'700'000'000.0;

FinishSettings Settings() { return {"warmpool@test", "", /*acks_late=*/true, true}; }

std::function<std::string()> Ids() {
  auto counter = std::make_shared<int>(0);
  return [counter] { return "new-" + std::to_string(++*counter); };
}

std::unique_ptr<Job> MakeJob() {
  auto job = std::make_unique<Job>();
  job->fetched.tag = "tag-1";
  job->fetched.queue = "celery";
  job->msg.id = "task-1";
  job->msg.root_id = "task-1";
  job->msg.task = "warmpool.add";
  job->msg.args = json::array({1, 2});
  job->msg.argsrepr = "(1, 2)";
  job->msg.kwargsrepr = "{}";
  job->msg.routing_key = "celery";
  job->task_name = "warmpool.add";
  return job;
}

json Stored(const FinishPlan& plan) { return json::parse(celery::EncodeResultMeta(plan.meta)); }

celery::TaskMessage Decode(const std::string& envelope) {
  celery::TaskMessage out;
  Status s = celery::DecodeTaskMessage(envelope, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

// An outcome the way the executor gets it: by calling a task.
Outcome Call(const TaskFunction& fn, const Job& job) {
  TaskContext ctx;
  return CallTask(fn, job.msg, job.task_name, ctx);
}

TEST_CASE("Success stores SUCCESS with the value, acks and sends task-succeeded",
          "[worker][finish_plan]") {
  auto job = MakeJob();
  Outcome out =
      Call([](const json& a, const json&, TaskContext&) { return a[0].get<int>() + 2; }, *job);
  REQUIRE(out.kind == Outcome::Kind::kSuccess);
  FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
  CHECK(plan.state == "SUCCESS");
  CHECK(plan.detail == "3");
  CHECK(plan.store);
  CHECK(plan.counts_in_totals);
  json meta = Stored(plan);
  CHECK(meta["status"] == "SUCCESS");
  CHECK(meta["result"] == 3);
  CHECK(meta["task_id"] == "task-1");
  CHECK(plan.ack.tag == "tag-1");
  CHECK(plan.ack.pushes.empty());
  CHECK_FALSE(plan.ack.force_push);  // acks_late: pushes only while the tag is still unacked
  CHECK_FALSE(plan.chord.has_value());

  FinishOp op = ToFinishOp(plan);
  CHECK(op.result_key == "celery-task-meta-task-1");
  CHECK(json::parse(op.result) == meta);
  CHECK(op.ack.tag == "tag-1");

  auto event = FinishEvent(*job, out);
  REQUIRE(event.has_value());
  CHECK(event->first == "task-succeeded");
  CHECK(event->second["uuid"] == "task-1");
  CHECK(event->second["result"] == "3");
}

TEST_CASE("A task's exception becomes FAILURE with its class, module and traceback",
          "[worker][finish_plan]") {
  auto job = MakeJob();
  struct Case {
    const char* name;
    TaskFunction fn;
    const char* type;
    const char* module;
  };
  const std::vector<Case> cases = {
      {"TaskError",
       [](const json&, const json&, TaskContext&) -> json {
         throw TaskError("KeyError", "builtins", "missing");
       },
       "KeyError", "builtins"},
      {"std::exception",
       [](const json&, const json&, TaskContext&) -> json { throw std::runtime_error("boom"); },
       "RuntimeError", "builtins"},
      {"json type error",
       [](const json&, const json&, TaskContext&) -> json { return json("x").get<int>(); },
       "TypeError", "builtins"},
      {"anything else", [](const json&, const json&, TaskContext&) -> json { throw 42; },
       "RuntimeError", "builtins"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      Outcome out = Call(c.fn, *job);
      REQUIRE(out.kind == Outcome::Kind::kFailure);
      FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
      CHECK(plan.state == "FAILURE");
      CHECK(plan.counts_in_totals);
      json meta = Stored(plan);
      CHECK(meta["status"] == "FAILURE");
      CHECK(meta["result"]["exc_type"] == c.type);
      CHECK(meta["result"]["exc_module"] == c.module);
      CHECK_THAT(meta["traceback"].get<std::string>(), Catch::Contains(c.type));
      CHECK(plan.ack.pushes.empty());
      auto event = FinishEvent(*job, out);
      REQUIRE(event.has_value());
      CHECK(event->first == "task-failed");
      CHECK_THAT(event->second["exception"].get<std::string>(), Catch::StartsWith(c.type));
    }
  }
}

TEST_CASE("Retry stores RETRY and republishes the message with retries + 1 and its eta",
          "[worker][finish_plan]") {
  auto job = MakeJob();
  job->msg.retries = 1;
  Outcome out = Call(
      [](const json&, const json&, TaskContext&) -> json {
        throw TaskRetry(std::chrono::seconds(5), TaskError::ValueError("again"), 3);
      },
      *job);
  REQUIRE(out.kind == Outcome::Kind::kRetry);
  FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
  CHECK(plan.state == "RETRY");
  CHECK_THAT(plan.detail, Catch::StartsWith("retry in 5.000000s: ValueError("));
  CHECK(plan.counts_in_totals);
  json meta = Stored(plan);
  CHECK(meta["status"] == "RETRY");
  CHECK(meta["result"]["exc_type"] == "ValueError");
  REQUIRE(plan.ack.pushes.size() == 1);
  CHECK(plan.ack.pushes[0].key == "celery");  // kombu's list of queue celery, priority 0
  celery::TaskMessage next = Decode(plan.ack.pushes[0].value);
  CHECK(next.id == "task-1");  // same id: the client's AsyncResult follows it
  CHECK(next.retries == 2);
  REQUIRE(next.eta.has_value());
  CHECK(*next.eta == Approx(kNow + 5).margin(0.01));
  CHECK(next.parent_id == "task-1");
  CHECK(next.origin == "warmpool@test");
  CHECK(next.delivery_tag == "new-1");  // a fresh delivery tag
  auto event = FinishEvent(*job, out);
  REQUIRE(event.has_value());
  CHECK(event->first == "task-retried");

  SECTION("no retries left: FAILURE with the cause, nothing republished") {
    job->msg.retries = 3;
    Outcome last = Call(
        [](const json&, const json&, TaskContext&) -> json {
          throw TaskRetry(std::chrono::seconds(5), TaskError::ValueError("again"), 3);
        },
        *job);
    FinishPlan failed = PlanFinish(*job, last, Settings(), kNow, Ids());
    CHECK(failed.state == "FAILURE");
    CHECK(Stored(failed)["result"]["exc_type"] == "ValueError");
    CHECK(failed.ack.pushes.empty());
  }
  SECTION("no retries left and no cause: MaxRetriesExceededError") {
    job->msg.retries = 3;
    Outcome last = Call([](const json&, const json&,
                           TaskContext&) -> json { throw TaskRetry(std::chrono::seconds(1)); },
                        *job);
    CHECK(Stored(PlanFinish(*job, last, Settings(), kNow, Ids()))["result"]["exc_type"] ==
          "MaxRetriesExceededError");
  }
}

TEST_CASE("A hard time limit stores FAILURE TimeLimitExceeded", "[worker][finish_plan]") {
  auto job = MakeJob();
  Outcome out = TimeLimitOutcome(job->task_name, 2.5);
  CHECK(out.runtime == 2.5);
  FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
  CHECK(plan.state == "FAILURE");
  json meta = Stored(plan);
  CHECK(meta["result"]["exc_type"] == "TimeLimitExceeded");
  CHECK(meta["result"]["exc_module"] == "billiard.exceptions");
  CHECK_THAT(meta["traceback"].get<std::string>(), Catch::Contains("warmpool.add"));
}

TEST_CASE("Revoked tasks store REVOKED and say how in task-revoked", "[worker][finish_plan]") {
  auto job = MakeJob();
  SECTION("terminated while running") {
    Outcome out = TerminatedOutcome(15, 0.5);
    FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
    CHECK(plan.state == "REVOKED");
    CHECK_FALSE(plan.counts_in_totals);
    CHECK(Stored(plan)["status"] == "REVOKED");
    CHECK(Stored(plan)["result"]["exc_message"] == json::array({"terminated"}));
    auto event = FinishEvent(*job, out);
    REQUIRE(event.has_value());
    CHECK(event->second["terminated"] == true);
    CHECK(event->second["signum"] == 15);
    CHECK(event->second["expired"] == false);
  }
  SECTION("expired before it started") {
    Outcome out;
    out.kind = Outcome::Kind::kRevoked;
    out.exc = celery::TaskRevokedExpired();
    FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
    CHECK(plan.detail == R"(["expired"])");
    auto event = FinishEvent(*job, out);
    REQUIRE(event.has_value());
    CHECK(event->second["terminated"] == false);
    CHECK(event->second["signum"].is_null());
    CHECK(event->second["expired"] == true);
  }
}

TEST_CASE("A skipped duplicate only acks", "[worker][finish_plan]") {
  auto job = MakeJob();
  Outcome out;
  out.kind = Outcome::Kind::kSkip;
  FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
  CHECK(plan.state == "SUCCESS");
  CHECK(plan.detail == "duplicate delivery skipped: SUCCESS already stored");
  CHECK_FALSE(plan.store);
  CHECK_FALSE(plan.counts_in_totals);
  FinishOp op = ToFinishOp(plan);
  CHECK(op.result.empty());
  CHECK(op.ack.tag == "tag-1");
  CHECK_FALSE(FinishEvent(*job, out).has_value());
}

TEST_CASE("ignore_result, early ack and the parent and group ids shape the plan",
          "[worker][finish_plan]") {
  auto job = MakeJob();
  Outcome out;
  out.value = 1;
  SECTION("ignore_result: nothing stored, still acked") {
    job->msg.ignore_result = true;
    FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
    CHECK_FALSE(plan.store);
    CHECK(ToFinishOp(plan).result.empty());
    CHECK(plan.ack.tag == "tag-1");
  }
  SECTION("acked at start (no acks_late): pushes are forced") {
    FinishSettings s = Settings();
    s.acks_late = false;
    CHECK(PlanFinish(*job, out, s, kNow, Ids()).ack.force_push);
  }
  SECTION("parent and group ids go into the result") {
    job->msg.parent_id = "parent-1";
    job->msg.group = "group-1";
    json meta = Stored(PlanFinish(*job, out, Settings(), kNow, Ids()));
    CHECK(meta["parent_id"] == "parent-1");
    CHECK(meta["group_id"] == "group-1");
  }
}

json Sig(const std::string& task, json options = json::object()) {
  return {{"task", task},       {"args", json::array()},   {"kwargs", json::object()},
          {"options", options}, {"subtask_type", nullptr}, {"immutable", false}};
}

TEST_CASE("Canvas follow-ups go out in the ack, and a chord needs the same server",
          "[worker][finish_plan][canvas]") {
  auto job = MakeJob();
  SECTION("link on success: pushed to its queue's list") {
    job->msg.embed = {{"callbacks", json::array({Sig("warmpool.echo")})},
                      {"errbacks", nullptr},
                      {"chain", nullptr},
                      {"chord", nullptr}};
    Outcome out;
    out.value = 3;
    FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
    REQUIRE(plan.ack.pushes.size() == 1);
    CHECK(plan.ack.pushes[0].key == "celery");
    CHECK(Decode(plan.ack.pushes[0].value).task == "warmpool.echo");
    REQUIRE(plan.notes.size() == 1);
    CHECK(plan.notes[0].event == "canvas_send");
  }
  SECTION("failure: the rest of the chain fails with it") {
    job->msg.embed = {{"callbacks", nullptr},
                      {"errbacks", nullptr},
                      {"chain", json::array({Sig("warmpool.add", {{"task_id", "next-id"}})})},
                      {"chord", nullptr}};
    Outcome out = TimeLimitOutcome(job->task_name, 1);
    FinishPlan plan = PlanFinish(*job, out, Settings(), kNow, Ids());
    CHECK(plan.ack.pushes.empty());
    REQUIRE(plan.extra.size() == 1);
    CHECK(plan.extra[0].task_id == "next-id");
    FinishOp op = ToFinishOp(plan);
    REQUIRE(op.extra_results.size() == 1);
    CHECK(op.extra_results[0].first == "celery-task-meta-next-id");
    CHECK(json::parse(op.extra_results[0].second)["result"]["exc_type"] == "TimeLimitExceeded");
  }
  SECTION("chord part") {
    job->msg.group = "g-1";
    job->msg.group_index = 0;
    job->msg.embed = {{"callbacks", nullptr},
                      {"errbacks", nullptr},
                      {"chain", nullptr},
                      {"chord", Sig("warmpool.xsum", {{"task_id", "body-id"}})}};
    Outcome out;
    out.value = 3;
    FinishPlan same = PlanFinish(*job, out, Settings(), kNow, Ids());
    REQUIRE(same.chord.has_value());
    CHECK(same.chord->group_id == "g-1");
    CHECK(ToFinishOp(same).chord.has_value());
    FinishSettings other = Settings();
    other.same_server = false;
    FinishPlan apart = PlanFinish(*job, out, other, kNow, Ids());
    CHECK_FALSE(apart.chord.has_value());
    REQUIRE(apart.notes.size() == 1);
    CHECK(apart.notes[0].event == "canvas_invalid");
    CHECK(apart.notes[0].level == spdlog::level::err);
    CHECK(apart.store);  // the task's own result is stored anyway
  }
}

TEST_CASE("Messages refused on receipt store FAILURE NotRegistered or REVOKED",
          "[worker][finish_plan]") {
  auto job = MakeJob();
  Refusal unknown = PlanNotRegistered(job->msg, kNow);
  CHECK(unknown.state == "FAILURE");
  REQUIRE(unknown.meta.has_value());
  json meta = json::parse(celery::EncodeResultMeta(*unknown.meta));
  CHECK(meta["result"]["exc_type"] == "NotRegistered");
  CHECK(meta["traceback"].is_null());
  CHECK(unknown.event == "task-failed");
  CHECK(unknown.event_fields["traceback"].is_null());

  Refusal revoked = PlanRevokedOnReceipt(job->msg, /*revoked=*/true, kNow);
  CHECK(revoked.state == "REVOKED");
  CHECK(revoked.detail == "revoked");
  CHECK(revoked.event == "task-revoked");
  CHECK(revoked.event_fields["expired"] == false);
  Refusal expired = PlanRevokedOnReceipt(job->msg, /*revoked=*/false, kNow);
  CHECK(expired.detail == "expired");
  CHECK(expired.event_fields["expired"] == true);
  CHECK(json::parse(celery::EncodeResultMeta(*expired.meta))["result"]["exc_message"] ==
        json::array({"expired"}));

  job->msg.ignore_result = true;
  CHECK_FALSE(PlanNotRegistered(job->msg, kNow).meta.has_value());
  CHECK_FALSE(PlanRevokedOnReceipt(job->msg, true, kNow).meta.has_value());
}

}  // namespace
}  // namespace warmpool::worker
