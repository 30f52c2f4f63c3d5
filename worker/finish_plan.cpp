#include "worker/finish_plan.h"

#include "celery/message.h"

namespace warmpool::worker {
namespace {

std::string Truncate(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

// The canvas of a finished job (worker/canvas.h): messages to push go into the ack (sent in
// the script that acks), chain steps failed with it into `extra`, the chord step into `chord`
// (same-server backend only). Bad canvas data becomes a canvas_invalid note and is skipped.
void PlanJobCanvas(const Job& job, const Outcome& out, CanvasOutcome outcome,
                   const FinishSettings& settings, double now,
                   const std::function<std::string()>& new_id, FinishPlan* p) {
  const celery::TaskMessage& msg = job.msg;
  if (!msg.embed.is_object()) return;
  CanvasEnv env;
  env.hostname = settings.hostname;
  env.now = now;
  env.new_id = new_id;
  const nlohmann::json value = outcome == CanvasOutcome::kSuccess ? out.value : out.exc.ToJson();
  CanvasPlan plan;
  try {
    plan = PlanCanvas(msg, outcome, value, env);
  } catch (const std::exception& e) {  // a bug, never bad data: keep the result anyway
    plan.errors.push_back(std::string("canvas planning failed: ") + e.what());
  }
  for (const auto& error : plan.errors) {
    p->notes.push_back({spdlog::level::err,
                        "canvas_invalid",
                        {{"id", msg.id},
                         {"name", msg.task},
                         {"error", error},
                         {"note", "the task's own result is stored; this follow-up is not sent"}}});
  }
  for (const auto& m : plan.messages) {
    p->ack.pushes.push_back({KombuListKey(settings.key_prefix, m.queue, m.priority), m.envelope});
    p->notes.push_back({spdlog::level::debug,
                        "canvas_send",
                        {{"id", msg.id},
                         {"kind", m.kind},
                         {"task", m.task},
                         {"task_id", m.task_id},
                         {"queue", m.queue}}});
  }
  for (const auto& id : plan.failed_chain_ids) {
    p->extra.push_back(celery::FailureMeta(id, out.exc, out.traceback, now));
  }
  if (!plan.chord) return;
  if (settings.same_server) {
    p->chord = std::move(plan.chord);
    return;
  }
  p->notes.push_back({spdlog::level::err,
                      "canvas_invalid",
                      {{"id", msg.id},
                       {"name", msg.task},
                       {"group", msg.group},
                       {"error",
                        "chord needs the result backend on the broker's Redis server "
                        "(the body is sent in the script that acks)"}}});
}

// Retry: the message again, with the same id, retries + 1 and eta now + countdown.
BrokerPush RetryPush(const Job& job, const Outcome& out, const FinishSettings& settings, double now,
                     const std::function<std::string()>& new_id) {
  const celery::TaskMessage& msg = job.msg;
  celery::TaskMessage next = msg;
  next.retries = msg.retries + 1;
  next.eta = now + out.countdown;
  next.origin = settings.hostname;
  next.parent_id = msg.id;
  if (next.exchange.empty() && next.routing_key.empty()) next.routing_key = job.fetched.queue;
  return {KombuListKey(settings.key_prefix, job.fetched.queue, msg.priority),
          celery::EncodeTaskMessageV2(next, new_id())};
}

}  // namespace

FinishPlan PlanFinish(const Job& job, const Outcome& out, const FinishSettings& settings,
                      double now, const std::function<std::string()>& new_id) {
  const celery::TaskMessage& msg = job.msg;
  FinishPlan p;
  p.store = !msg.ignore_result && out.kind != Outcome::Kind::kSkip;
  p.ack.tag = job.fetched.tag;
  p.ack.force_push = !settings.acks_late;  // already acked at start
  std::optional<CanvasOutcome> canvas;
  switch (out.kind) {
    case Outcome::Kind::kSuccess:
      p.state = "SUCCESS";
      p.meta = celery::SuccessMeta(msg.id, out.value, now);
      p.detail = Truncate(out.value.dump(), 200);
      canvas = CanvasOutcome::kSuccess;
      break;
    case Outcome::Kind::kFailure:
      p.state = "FAILURE";
      p.meta = celery::FailureMeta(msg.id, out.exc, out.traceback, now);
      p.detail = out.exc.Repr();
      canvas = CanvasOutcome::kFailure;
      break;
    case Outcome::Kind::kRevoked:
      p.state = "REVOKED";
      p.meta = celery::RevokedMeta(msg.id, out.exc, now);
      p.detail = out.exc.message.dump();
      canvas = CanvasOutcome::kRevoked;
      break;
    case Outcome::Kind::kRetry:
      p.state = "RETRY";
      p.meta = celery::RetryMeta(msg.id, out.exc, out.traceback);
      p.ack.pushes.push_back(RetryPush(job, out, settings, now, new_id));
      p.detail = "retry in " + std::to_string(out.countdown) + "s: " + out.exc.Repr();
      break;
    case Outcome::Kind::kSkip:
      p.state = "SUCCESS";
      p.detail = "duplicate delivery skipped: SUCCESS already stored";
      break;
  }
  p.counts_in_totals = out.kind == Outcome::Kind::kSuccess || out.kind == Outcome::Kind::kFailure ||
                       out.kind == Outcome::Kind::kRetry;
  if (!msg.parent_id.empty()) p.meta.parent_id = msg.parent_id;
  if (!msg.group.empty()) p.meta.group_id = msg.group;
  if (canvas) PlanJobCanvas(job, out, *canvas, settings, now, new_id, &p);
  return p;
}

FinishOp ToFinishOp(const FinishPlan& p) {
  FinishOp op;
  op.ack = p.ack;
  op.result_key = celery::ResultKey(p.meta.task_id.empty() ? "-" : p.meta.task_id);
  if (p.store) op.result = celery::EncodeResultMeta(p.meta);
  for (const auto& m : p.extra) {
    op.extra_results.emplace_back(celery::ResultKey(m.task_id), celery::EncodeResultMeta(m));
  }
  op.chord = p.chord;
  return op;
}

std::optional<std::pair<std::string, nlohmann::json>> FinishEvent(const Job& job,
                                                                  const Outcome& out) {
  const std::string& id = job.msg.id;
  switch (out.kind) {
    case Outcome::Kind::kSuccess:
      return std::pair<std::string, nlohmann::json>{
          "task-succeeded",
          {{"uuid", id},
           {"result", Truncate(celery::PythonRepr(out.value), 1024)},
           {"runtime", out.runtime}}};
    case Outcome::Kind::kFailure:
      return std::pair<std::string, nlohmann::json>{
          "task-failed",
          {{"uuid", id}, {"exception", out.exc.Repr()}, {"traceback", out.traceback.value_or("")}}};
    case Outcome::Kind::kRetry:
      return std::pair<std::string, nlohmann::json>{
          "task-retried",
          {{"uuid", id}, {"exception", out.exc.Repr()}, {"traceback", out.traceback.value_or("")}}};
    case Outcome::Kind::kRevoked:
      return std::pair<std::string, nlohmann::json>{
          "task-revoked",
          {{"uuid", id},
           {"terminated", out.signum != 0},
           {"signum", out.signum != 0 ? nlohmann::json(out.signum) : nullptr},
           {"expired", out.exc.message == nlohmann::json::array({"expired"})}}};
    case Outcome::Kind::kSkip:
      break;
  }
  return std::nullopt;
}

Refusal PlanNotRegistered(const celery::TaskMessage& msg, double now) {
  const auto exc = celery::NotRegistered(msg.task);
  Refusal r;
  r.state = "FAILURE";
  r.detail = exc.Repr();
  if (!msg.ignore_result) r.meta = celery::FailureMeta(msg.id, exc, std::nullopt, now);
  r.event = "task-failed";
  r.event_fields = {{"uuid", msg.id}, {"exception", exc.Repr()}, {"traceback", nullptr}};
  return r;
}

Refusal PlanRevokedOnReceipt(const celery::TaskMessage& msg, bool revoked, double now) {
  const auto exc = revoked ? celery::TaskRevoked() : celery::TaskRevokedExpired();
  Refusal r;
  r.state = "REVOKED";
  r.detail = revoked ? "revoked" : "expired";
  if (!msg.ignore_result) r.meta = celery::RevokedMeta(msg.id, exc, now);
  r.event = "task-revoked";
  r.event_fields = {
      {"uuid", msg.id}, {"terminated", false}, {"signum", nullptr}, {"expired", !revoked}};
  return r;
}

}  // namespace warmpool::worker
