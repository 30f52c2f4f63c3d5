#include "worker/remote_control.h"

#include <chrono>
#include <csignal>

#include <hiredis/hiredis.h>

#include "celery/base64.h"
#include "celery/kombu_keys.h"
#include "celery/message.h"
#include "common/json_parse.h"
#include "common/logging.h"
#include "redis/connection.h"
#include "redis/errors.h"
#include "worker/uuid.h"

namespace warmpool::worker {
namespace {

// Wakes our subscriber at Stop(): a well-formed pidbox message addressed to no node, so Python
// workers on the same channel ignore it quietly (a non-JSON payload would make kombu warn).
std::string StopPayload(const std::string& hostname) {
  nlohmann::json body = {{"method", "ping"},
                         {"arguments", nlohmann::json::object()},
                         {"destination", {hostname + "/warmpool-stop"}},
                         {"pattern", nullptr},
                         {"matcher", nullptr},
                         {"ticket", NewUuid4()},
                         {"reply_to", nullptr}};
  return celery::EncodeEnvelope(body, {{"clock", 0}}, "celery.pidbox", "", 1, NewUuid4());
}

// Celery's revoke(signal=...): a name ("SIGKILL", "KILL") or a number; SIGTERM when absent.
int SignalNumber(const nlohmann::json& signal) {
  if (signal.is_number_integer()) return signal.get<int>();
  if (!signal.is_string()) return SIGTERM;
  std::string name = signal.get<std::string>();
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  static constexpr std::pair<std::string_view, int> kSignals[] = {
      {"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT},   {"HUP", SIGHUP},
      {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"ABRT", SIGABRT}};
  for (const auto& [n, v] : kSignals) {
    if (n == name) return v;
  }
  return SIGTERM;
}

}  // namespace

RemoteControl::RemoteControl(RedisEndpoint broker, std::string prefix, std::string hostname,
                             Hooks hooks)
    : broker_(std::move(broker)),
      prefix_(std::move(prefix)),
      hostname_(std::move(hostname)),
      channel_(kombu::FanoutChannel(prefix_, broker_.db, "celery.pidbox", "")),
      hooks_(std::move(hooks)) {
  thread_ = std::thread([this] { Loop(); });
}

RemoteControl::~RemoteControl() { Stop(); }

void RemoteControl::Stop() {
  if (stop_.exchange(true)) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  try {
    RedisConnection conn(broker_);
    conn.Command({"PUBLISH", channel_, StopPayload(hostname_)});
  } catch (const RedisError&) {
    // Redis is down: the subscriber's read fails too and it sees stop_.
  }
  if (thread_.joinable()) thread_.join();
}

nlohmann::json RemoteControl::Reply(const std::string& method, const nlohmann::json& arguments,
                                    const Hooks& hooks) {
  if (method == "ping") return {{"ok", "pong"}};
  if (method == "revoke") {
    std::vector<std::string> ids;
    const auto& ids_arg =
        arguments.is_object() ? arguments.value("task_id", nlohmann::json()) : nlohmann::json();
    if (ids_arg.is_string()) ids.push_back(ids_arg.get<std::string>());
    if (ids_arg.is_array()) {
      for (const auto& id : ids_arg) {
        if (id.is_string()) ids.push_back(id.get<std::string>());
      }
    }
    const bool terminate = arguments.is_object() && arguments.value("terminate", false) == true;
    const int signum = SignalNumber(
        arguments.is_object() ? arguments.value("signal", nlohmann::json()) : nlohmann::json());
    std::vector<std::string> terminated;
    if (hooks.revoke) terminated = hooks.revoke(ids, terminate, signum);
    const auto join = [](const std::vector<std::string>& v) {
      std::string joined;
      for (const auto& id : v) joined += (joined.empty() ? "" : ", ") + id;
      return joined;
    };
    // Celery's replies (celery/worker/control.py _revoke).
    if (terminate) {
      return {{"ok",
               terminated.empty() ? "terminate: tasks unknown" : "terminate: " + join(terminated)}};
    }
    return {{"ok", "tasks " + join(ids) + " flagged as revoked"}};
  }
  if (method == "enable_events") {
    if (hooks.set_task_events) hooks.set_task_events(true);
    return {{"ok", "task events enabled"}};
  }
  if (method == "disable_events") {
    if (hooks.set_task_events) hooks.set_task_events(false);
    return {{"ok", "task events disabled"}};
  }
  if (method == "heartbeat") {
    if (hooks.send_heartbeat) hooks.send_heartbeat();
    return {{"ok", "heartbeat sent"}};
  }
  if (method == "active") return hooks.active ? hooks.active() : nlohmann::json::array();
  if (method == "reserved") return hooks.reserved ? hooks.reserved() : nlohmann::json::array();
  if (method == "scheduled") return hooks.scheduled ? hooks.scheduled() : nlohmann::json::array();
  if (method == "stats") return hooks.stats ? hooks.stats() : nlohmann::json::object();
  if (method == "registered") {
    return hooks.registered ? nlohmann::json(hooks.registered()) : nlohmann::json::array();
  }
  return {{"error", "warmpool-worker does not implement remote control command '" + method + "'"}};
}

void RemoteControl::Loop() {
  auto backoff = std::chrono::milliseconds(200);
  while (!stop_.load()) {
    try {
      RedisEndpoint ep = broker_;
      ep.command_timeout = std::chrono::milliseconds(0);  // the read blocks until a message
      RedisConnection conn(ep);
      std::string member(kombu::kPrioritySep);
      member.append(kombu::kPrioritySep).append(hostname_ + ".celery.pidbox");
      conn.Command({"SADD", kombu::PrefixedKey(prefix_, "_kombu.binding.celery.pidbox"), member});
      conn.Send({"PSUBSCRIBE", channel_});
      conn.ReadReply();  // subscription confirmation
      backoff = std::chrono::milliseconds(200);
      while (!stop_.load()) {
        RedisReplyPtr msg = conn.ReadReply();
        auto elems = ReplyElements(msg.get());
        if (elems.size() != 4 || ReplyString(elems[0]) != "pmessage") continue;
        if (stop_.load()) break;
        Handle(ReplyString(elems[3]));
      }
    } catch (const RedisError& e) {
      if (stop_.load()) return;
      LogEvent(spdlog::level::debug, "remote_control_unavailable", {{"error", e.what()}});
      for (auto waited = std::chrono::milliseconds(0); waited < backoff && !stop_.load();
           waited += std::chrono::milliseconds(50)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    }
  }
}

void RemoteControl::Handle(const std::string& payload) {
  // ParseJson bounds the nesting depth: the copies below (value()) recurse once per level.
  auto env = ParseJson(payload);
  if (env.is_discarded() || !env.is_object() || !env.contains("body") || !env["body"].is_string()) {
    return;
  }
  auto body_text = celery::Base64Decode(env["body"].get<std::string>());
  if (!body_text) return;
  auto body = ParseJson(*body_text);
  if (body.is_discarded() || !body.is_object()) return;
  const auto& dest = body.value("destination", nlohmann::json());
  if (dest.is_array()) {
    bool mine = false;
    for (const auto& d : dest) mine = mine || (d.is_string() && d.get<std::string>() == hostname_);
    if (!mine) return;
  } else if (!dest.is_null()) {
    return;
  }
  std::string method = body.value("method", std::string());
  nlohmann::json reply = Reply(method, body.value("arguments", nlohmann::json::object()), hooks_);
  LogEvent(spdlog::level::info, "remote_control", {{"method", method}});
  const auto& reply_to = body.value("reply_to", nlohmann::json());
  if (!reply_to.is_object() || !reply_to.contains("routing_key")) return;  // a cast
  std::string exchange = reply_to.value("exchange", std::string("reply.celery.pidbox"));
  std::string rk = reply_to.value("routing_key", std::string());
  try {
    RedisConnection conn(broker_);
    // Direct exchange: the bound queue whose routing key matches (kombu _lookup).
    std::string queue = rk + ".reply.celery.pidbox";
    auto members =
        conn.Command({"SMEMBERS", kombu::PrefixedKey(prefix_, "_kombu.binding." + exchange)});
    std::vector<std::string> bound;
    for (const auto* m : ReplyElements(members.get())) bound.push_back(ReplyString(m));
    if (auto q = kombu::QueueForRoutingKey(bound, rk)) queue = *q;
    nlohmann::json headers = {{"ticket", body.value("ticket", nlohmann::json())},
                              {"clock", ++clock_}};
    std::string envelope = celery::EncodeEnvelope(nlohmann::json{{hostname_, reply}}, headers,
                                                  exchange, rk, 1, NewUuid4());
    conn.Command({"LPUSH", kombu::PrefixedKey(prefix_, queue), envelope});
  } catch (const RedisError& e) {
    LogEvent(spdlog::level::warn, "remote_control_reply_failed",
             {{"method", method}, {"error", e.what()}});
  }
}

}  // namespace warmpool::worker
