#include "worker/outcome.h"

#include <algorithm>
#include <chrono>

namespace warmpool::worker {
namespace {

// Maps a TaskRetry: retry while retries remain, else fail with its cause.
void MapRetry(const TaskRetry& r, const celery::TaskMessage& msg, Outcome* out) {
  out->kind = Outcome::Kind::kRetry;
  out->countdown = std::max(0.0, r.countdown().count());
  if (msg.retries >= r.max_retries()) {
    out->kind = Outcome::Kind::kFailure;
    out->exc = r.cause() ? celery::ExceptionInfo{r.cause()->exc_type(), r.cause()->exc_module(),
                                                 r.cause()->exc_args()}
                         : celery::MaxRetriesExceeded("Can't retry " + msg.task + "[" + msg.id +
                                                      "] args:" + msg.argsrepr +
                                                      " kwargs:" + msg.kwargsrepr);
  } else if (r.cause()) {
    out->exc = {r.cause()->exc_type(), r.cause()->exc_module(), r.cause()->exc_args()};
  } else {
    out->exc = {"Retry", "celery.exceptions",
                nlohmann::json::array({"Retry in " + std::to_string(out->countdown) + "s"})};
  }
}

}  // namespace

std::string Traceback(const std::string& task, const celery::ExceptionInfo& exc) {
  return "Traceback (most recent call last):\n  File \"warmpool-worker\", in " + task + "\n" +
         exc.type + ": " + exc.Repr() + "\n";
}

Outcome CallTask(const TaskFunction& fn, const celery::TaskMessage& msg,
                 const std::string& task_name, TaskContext& ctx) {
  Outcome out;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    out.value = fn(msg.args, msg.kwargs, ctx);
    out.kind = Outcome::Kind::kSuccess;
  } catch (const TaskRetry& r) {
    MapRetry(r, msg, &out);
  } catch (const TaskError& e) {
    out.kind = Outcome::Kind::kFailure;
    out.exc = {e.exc_type(), e.exc_module(), e.exc_args()};
  } catch (const nlohmann::json::exception& e) {
    out.kind = Outcome::Kind::kFailure;
    out.exc = {"TypeError", "builtins", nlohmann::json::array({std::string(e.what())})};
  } catch (const std::exception& e) {
    out.kind = Outcome::Kind::kFailure;
    out.exc = {"RuntimeError", "builtins", nlohmann::json::array({std::string(e.what())})};
  } catch (...) {
    out.kind = Outcome::Kind::kFailure;
    out.exc = {"RuntimeError", "builtins", nlohmann::json::array({"unknown C++ exception"})};
  }
  out.runtime = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (out.kind == Outcome::Kind::kFailure || out.kind == Outcome::Kind::kRetry) {
    out.traceback = Traceback(task_name, out.exc);
  }
  return out;
}

Outcome TimeLimitOutcome(const std::string& task_name, double limit_seconds) {
  Outcome out;
  out.kind = Outcome::Kind::kFailure;
  out.exc = celery::TimeLimitExceeded(limit_seconds);
  out.traceback = Traceback(task_name, out.exc);
  out.runtime = limit_seconds;
  return out;
}

Outcome TerminatedOutcome(int signum, double runtime) {
  Outcome out;
  out.kind = Outcome::Kind::kRevoked;
  out.exc = celery::TaskRevokedTerminated();
  out.signum = signum;
  out.runtime = runtime;
  return out;
}

}  // namespace warmpool::worker
