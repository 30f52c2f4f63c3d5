#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/common.h>

#include "celery/result.h"
#include "worker/broker_api.h"
#include "worker/canvas.h"
#include "worker/job.h"

namespace warmpool::worker {

// What a finish plan needs of the worker's configuration.
struct FinishSettings {
  std::string hostname;      // origin of a republished retry; canvas messages' hostname
  std::string key_prefix;    // global key prefix of the queue lists
  bool acks_late = true;     // false: the message was acked at start, so pushes are forced
  bool same_server = false;  // result backend on the broker's server: chords can be joined
};

// A log line a plan asks for (canvas problems and sends), written before the results are.
struct LogNote {
  spdlog::level::level_enum level;
  std::string event;
  nlohmann::json fields;
};

// Everything one finished task writes, decided without I/O: the result document, the ack with
// the messages pushed in the same script (retry republish, canvas callbacks and chain steps),
// the results of chain steps failed with it, the chord step, and the task log line.
struct FinishPlan {
  std::string state;   // logged state: SUCCESS, FAILURE, RETRY, REVOKED
  std::string detail;  // logged detail (value, exception, "retry in ...")
  bool store = false;  // write `meta` (false: ignore_result, or a skipped duplicate)
  celery::ResultMeta meta;
  AckOp ack;
  std::vector<celery::ResultMeta> extra;  // chain steps failed with this task
  std::optional<ChordPart> chord;         // only with FinishSettings::same_server
  bool counts_in_totals = false;          // Celery's total_count: the task ran
  std::vector<LogNote> notes;             // canvas_invalid / canvas_send lines
};

// The plan for `job` ending with `out` at wall time `now`. `new_id` makes the uuid4s of
// republished and canvas messages (delivery tags, task ids).
//   kSuccess  SUCCESS result; canvas links/chain/chord part on success.
//   kFailure  FAILURE with exception and traceback; errbacks; chain steps failed with it.
//   kRetry    RETRY result; the message republished with retries + 1, eta now + countdown,
//             the same id, in the script that acks the original.
//   kRevoked  REVOKED (revoked, expired or terminated); canvas as a failure.
//   kSkip     (redelivered, SUCCESS already stored): ack only.
FinishPlan PlanFinish(const Job& job, const Outcome& out, const FinishSettings& settings,
                      double now, const std::function<std::string()>& new_id);

// The same-server write of a plan (Broker::FinishMany).
FinishOp ToFinishOp(const FinishPlan& plan);

// The task-* event sent once the outcome is written (Celery's names and fields); nullopt for
// a skipped duplicate.
std::optional<std::pair<std::string, nlohmann::json>> FinishEvent(const Job& job,
                                                                  const Outcome& out);

// A message refused when received: FAILURE NotRegistered (Celery rejects it, which on Redis
// is an ack), or REVOKED when its id was revoked or it expired before it started. The worker
// stores `meta` (when set), acks, logs `state`/`detail` and sends the event.
struct Refusal {
  std::string state;
  std::string detail;
  std::optional<celery::ResultMeta> meta;  // nullopt with ignore_result
  std::string event;
  nlohmann::json event_fields;
};
Refusal PlanNotRegistered(const celery::TaskMessage& msg, double now);
Refusal PlanRevokedOnReceipt(const celery::TaskMessage& msg, bool revoked, double now);

}  // namespace warmpool::worker
