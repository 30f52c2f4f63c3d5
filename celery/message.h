#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace warmpool::celery {

// A Celery task message as a worker needs it, from either protocol (v2: headers; v1: body dict),
// after the kombu envelope (kombu/transport/redis.py, Channel._put: JSON with body, headers,
// properties, content-encoding) and the body are decoded.
// Times are Unix seconds (UTC). Empty strings stand for JSON null.
struct TaskMessage {
  int protocol = 2;                               // 1 or 2
  std::string id;                                 // task id (also the result key suffix)
  std::string task;                               // registered task name the worker dispatches on
  nlohmann::json args = nlohmann::json::array();  // positional arguments (array)
  nlohmann::json kwargs = nlohmann::json::object();  // keyword arguments (object)
  nlohmann::json embed = nlohmann::json::object();   // callbacks/errbacks/chain/chord (v2)
  int retries = 0;
  std::optional<double> eta;              // run not before this time
  std::optional<double> expires;          // revoke as 'expired' after this time
  std::optional<double> time_limit;       // hard limit, seconds (timelimit[0])
  std::optional<double> soft_time_limit;  // soft limit, seconds (timelimit[1])
  bool ignore_result = false;
  std::string root_id;
  std::string parent_id;
  std::string group;
  std::optional<int> group_index;  // position in the group (chord header order), v2 only
  std::string argsrepr;            // Python repr of args (for events); built from JSON if absent
  std::string kwargsrepr;          // Python repr of kwargs
  std::string origin;

  // kombu envelope facts.
  std::string delivery_tag;  // properties.delivery_tag (key in the `unacked` hash)
  std::string exchange;      // properties.delivery_info.exchange ("" = anonymous)
  std::string routing_key;   // properties.delivery_info.routing_key (the queue for exchange "")
  int priority = 0;          // properties.priority (0..9, 0 when absent)
  bool redelivered = false;  // headers.redelivered or delivery_info.redelivered
  nlohmann::json headers = nlohmann::json::object();     // as received
  nlohmann::json properties = nlohmann::json::object();  // as received
};

// Decodes one list element (the JSON envelope a Python client LPUSHes). Order as kombu: JSON
// envelope, base64 body when properties.body_encoding == "base64", then the body as JSON
// (content-type application/json only). Protocol v2 is chosen when headers.task exists, else v1
// when the body is a dict with "task" (as Celery's worker does). kombu 5.3+ {"__type__",
// "__value__"} wrappers in arguments are unwrapped to their value.
// Returns InvalidArgument with the reason (for the dead-letter list) when the message cannot be
// decoded; `out` is then partially filled (delivery_tag/id when they could be read). Pure.
Status DecodeTaskMessage(std::string_view envelope, TaskMessage* out);

// Reads obj[key] as a Celery time (eta, expires): ISO-8601 text, or Unix seconds as v1 clients
// send. Absent or null leaves `out` unset. InvalidArgument names `label` (e.g. "options.eta").
Status ReadCeleryTime(const nlohmann::json& obj, const char* key, std::string_view label,
                      std::optional<double>* out);

// Encodes `msg` as a protocol v2 envelope exactly as Celery 5.2.6 + kombu 5.2.4 publish it (body
// [args, kwargs, embed] as base64 JSON; delivery_info {exchange, routing_key}). Used to republish
// retries and by tests. `delivery_tag` is the new message's tag (a uuid4 for kombu).
std::string EncodeTaskMessageV2(const TaskMessage& msg, std::string_view delivery_tag);

// The envelope with headers.redelivered = true and properties.delivery_info.redelivered = true,
// as kombu's restore does. nullopt when `envelope` is not a JSON object.
std::optional<std::string> MarkRedelivered(std::string_view envelope);

// Name of kombu's routing key for an event type: "worker-heartbeat" -> "worker.heartbeat".
std::string EventRoutingKey(std::string_view type);

// A celeryev fanout envelope as Celery's EventDispatcher publishes it (delivery_mode 1, headers
// {"hostname"}, base64 JSON body). `body` is one event object or a list of them.
std::string EncodeEventEnvelope(const nlohmann::json& body, std::string_view hostname,
                                std::string_view routing_key, std::string_view delivery_tag);

// A kombu envelope as Channel.prepare_message + basic_publish build it: base64 JSON `body`,
// `headers`, properties {delivery_mode, delivery_info {exchange, routing_key}, priority 0,
// body_encoding base64, delivery_tag}. Used for pidbox replies.
std::string EncodeEnvelope(const nlohmann::json& body, const nlohmann::json& headers,
                           std::string_view exchange, std::string_view routing_key,
                           int delivery_mode, std::string_view delivery_tag);

// A Python-style repr of a JSON value, close to what saferepr gives for the same data (for
// argsrepr/kwargsrepr and event fields): strings in single quotes, None/True/False, lists in [],
// args as a tuple when `as_tuple`.
std::string PythonRepr(const nlohmann::json& value, bool as_tuple = false);

}  // namespace warmpool::celery
