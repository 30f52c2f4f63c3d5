#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "celery/message.h"
#include "celery/result.h"
#include "common/status.h"

namespace warmpool::worker {

// The Celery canvas (chain, link, link_error, chord) of a finished task, computed as Celery
// 5.2.6's worker does it: app/trace.py (callbacks, then the next chain step, on SUCCESS),
// backends/base.py (mark_as_failure: FAILURE copied to the rest of the chain, errbacks called
// as tasks with (task_id,)) and backends/redis.py (on_chord_part_return). Pure: no I/O, and ids
// and the time come in through CanvasEnv. The worker writes what a plan asks for in the same Lua
// script that stores the result and acks the message (worker/broker.cpp).

// Facts a plan needs from outside. `new_id` must be set.
struct CanvasEnv {
  std::string hostname;                  // `origin` header of the messages sent
  double now = 0;                        // Unix seconds: countdown -> eta, relative expires
  std::function<std::string()> new_id;   // a fresh uuid4 (task ids, delivery tags, group ids)
  std::string default_queue = "celery";  // Celery's task_default_queue (no `queue` option)
};

// One task message to publish: LPUSH `envelope` onto the priority list of `queue`.
struct CanvasMessage {
  std::string kind;  // "chain", "link", "link_error" or "chord_errback" (for logs)
  std::string task;
  std::string task_id;
  std::string queue;
  int priority = 0;
  std::string envelope;  // kombu envelope, protocol v2, as EncodeTaskMessageV2
};

// Options the worker passes to Signature.apply_async (they override the signature's own
// options, except `group_id`, which Celery never overrides once set).
struct ApplyOverrides {
  std::string parent_id;                // empty: keep the signature's
  std::string root_id;                  // empty: keep the signature's
  std::optional<nlohmann::json> chain;  // embed.chain of the new message (the chain's rest)
  std::string group_id;                 // the group the message joins (link/errback groups)
};

// Celery's Signature.apply_async(args, **overrides) for a plain task signature (a JSON object
// {"task", "args", "kwargs", "options", "subtask_type", "immutable"}): `prepend` goes before the
// signature's args unless it is immutable; the message gets the signature's task_id (or a new
// id), queue (default env.default_queue, anonymous exchange), priority, countdown/eta, expires,
// time limits, link/link_error/chord, group_id/group_index and ignore_result.
// Returns InvalidArgument naming the field for bad canvas data (not an object, no task name,
// args not a list, a group/chain/chord signature, ...); `out` is then unspecified.
Status BuildSignatureMessage(const nlohmann::json& sig, const nlohmann::json& prepend,
                             const ApplyOverrides& overrides, const CanvasEnv& env,
                             celery::TaskMessage* out);

// The chord step of a header task (Redis backend, result_chord_ordered, Celery 5.2.6):
//   ZADD celery-taskset-meta-<group>.j <score> <member>; ZCOUNT; GET .t; GET .s; EXPIRE each.
//   When .s is set and ZCOUNT == .s + .t: the members in score order are the header results.
//   All SUCCESS: the body is sent with [results] prepended (unless immutable) and .j/.t/.s are
//   deleted. A FAILURE/REVOKED member: the body's errbacks are sent with (body id,) and
//   FAILURE ChordError('Dependency <id> raised <repr>') is stored for the body.
// The callback message depends on the other parts' results, so it is assembled inside the Lua
// script from the templates below.
struct ChordPart {
  std::string group_id;
  std::string score;   // group_index, or "+inf" when the message had none (as 5.2.6)
  std::string member;  // [1, "<task id>", "<state>", <result or exception dict>]
  // The body (callback).
  std::string callback_id;
  std::string callback_task;
  std::string callback_queue;
  int callback_priority = 0;
  bool callback_immutable = false;
  // body JSON text = body_head + "[" + raw results joined by ", " + "]" + body_tail; when the
  // callback is immutable the body is body_head alone.
  std::string body_head;
  std::string body_tail;
  // envelope = envelope_head + "\"" + base64(body) + "\"" + envelope_tail
  std::string envelope_head;
  std::string envelope_tail;
  // result meta of the body on a failed part = error_meta_head + JSON string + error_meta_tail
  std::string error_meta_head;
  std::string error_meta_tail;
  std::vector<CanvasMessage> errbacks;  // the body's link_error, called with (body id,)
};

// Everything a finished task's canvas asks for. Messages are in Celery's publish order.
struct CanvasPlan {
  std::vector<CanvasMessage> messages;
  std::vector<std::string> failed_chain_ids;  // chain steps whose result gets this FAILURE too
  std::optional<ChordPart> chord;
  std::vector<std::string> errors;  // bad canvas data that was skipped, one line each (to log)
};

enum class CanvasOutcome { kSuccess, kFailure, kRevoked };

// The plan for `msg` (decoded) finished with `outcome`. `value` is the return value (kSuccess)
// or the exception dict {"exc_type", "exc_message", "exc_module"} (kFailure, kRevoked).
//   kSuccess: each embed.callbacks signature with (value,) (several: as one group), then the
//             last embed.chain signature with (value,) carrying the rest of the chain; chord part.
//   kFailure: the rest of the chain's ids (failed_chain_ids), chord part, then the errbacks as
//             one group with (msg.id,).
//   kRevoked: chord part only.
// Bad signatures are skipped and described in `errors`; the rest of the plan stands.
CanvasPlan PlanCanvas(const celery::TaskMessage& msg, CanvasOutcome outcome,
                      const nlohmann::json& value, const CanvasEnv& env);

}  // namespace warmpool::worker
