#include "celery/message.h"

#include <cmath>
#include <cstdio>

#include "celery/base64.h"
#include "celery/time.h"
#include "common/json_parse.h"

namespace warmpool::celery {
namespace {

using nlohmann::json;

std::string StringOrEmpty(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

bool TrueValue(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

std::optional<double> OptionalSeconds(const json& v) {
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

// Reads timelimit [hard, soft] (v2 header or v1 body field).
Status ReadTimeLimit(const json& obj, TaskMessage* out) {
  auto it = obj.find("timelimit");
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (!it->is_array() || it->size() != 2) {
    return Status::InvalidArgument("timelimit must be [hard, soft]");
  }
  out->time_limit = OptionalSeconds((*it)[0]);
  out->soft_time_limit = OptionalSeconds((*it)[1]);
  return Status::Ok();
}

// kombu 5.3+ wraps datetimes, UUIDs, ... as {"__type__": t, "__value__": v}; keep the value.
void Unwrap(json* v) {
  if (v->is_object()) {
    if (v->size() == 2 && v->contains("__type__") && v->contains("__value__")) {
      json inner = (*v)["__value__"];
      *v = std::move(inner);
      return;
    }
    for (auto& [k, child] : v->items()) Unwrap(&child);
  } else if (v->is_array()) {
    for (auto& child : *v) Unwrap(&child);
  }
}

void FillCommon(const json& src, TaskMessage* out) {
  out->root_id = StringOrEmpty(src, "root_id");
  out->parent_id = StringOrEmpty(src, "parent_id");
  out->group = StringOrEmpty(src, "group");
  out->origin = StringOrEmpty(src, "origin");
  if (auto it = src.find("retries"); it != src.end() && it->is_number_integer()) {
    out->retries = it->get<int>();
  }
  out->ignore_result = TrueValue(src, "ignore_result");
}

std::string ReprString(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    switch (c) {
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out + "'";
}

}  // namespace

Status ReadCeleryTime(const json& obj, const char* key, std::string_view label,
                      std::optional<double>* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (it->is_number()) {
    *out = it->get<double>();
    return Status::Ok();
  }
  if (it->is_string()) {
    auto t = ParseIso8601(it->get<std::string>());
    if (!t) {
      return Status::InvalidArgument(std::string(label) + " '" + it->get<std::string>() +
                                     "' is not an ISO-8601 time");
    }
    *out = t;
    return Status::Ok();
  }
  return Status::InvalidArgument(std::string(label) + " must be an ISO-8601 string or null");
}

namespace {

// The kombu envelope's properties and headers; the task name and id from the headers first, so a
// message refused for its body is still dead-lettered and logged under its task id.
void ReadEnvelopeFields(json& env, TaskMessage* out) {
  if (auto it = env.find("properties"); it != env.end() && it->is_object()) {
    out->properties = std::move(*it);
  }
  if (auto it = env.find("headers"); it != env.end() && it->is_object()) {
    out->headers = std::move(*it);
  }
  const json& props = out->properties;
  out->delivery_tag = StringOrEmpty(props, "delivery_tag");
  if (auto it = props.find("priority"); it != props.end() && it->is_number_integer()) {
    out->priority = it->get<int>();
  }
  if (auto it = props.find("delivery_info"); it != props.end() && it->is_object()) {
    out->exchange = StringOrEmpty(*it, "exchange");
    out->routing_key = StringOrEmpty(*it, "routing_key");
    out->redelivered = TrueValue(*it, "redelivered");
  }
  out->redelivered = out->redelivered || TrueValue(out->headers, "redelivered");
  out->task = StringOrEmpty(out->headers, "task");
  out->id = StringOrEmpty(out->headers, "id");
}

// The body string, base64-decoded when the properties say so, parsed as JSON.
Status DecodeBody(json& env, const json& props, json* payload) {
  auto body_it = env.find("body");
  if (body_it == env.end() || !body_it->is_string()) {
    return Status::InvalidArgument("envelope has no string 'body'");
  }
  std::string body = std::move(body_it->get_ref<std::string&>());
  if (StringOrEmpty(props, "body_encoding") == "base64") {
    auto decoded = Base64Decode(body);
    if (!decoded) return Status::InvalidArgument("body is not valid base64");
    body = std::move(*decoded);
  }
  std::string content_type = StringOrEmpty(env, "content-type");
  if (!content_type.empty() && content_type != "application/json") {
    return Status::InvalidArgument("content-type '" + content_type +
                                   "' is not supported (use the json serializer)");
  }
  std::string parse_error;
  *payload = ParseJson(body, &parse_error);
  if (payload->is_discarded()) return Status::InvalidArgument("body " + parse_error);
  return Status::Ok();
}

// The times and limits both protocols carry, in `src` (v2: headers; v1: the body dict).
Status ReadTimes(const json& src, TaskMessage* out) {
  if (Status s = ReadCeleryTime(src, "eta", "eta", &out->eta); !s.ok()) return s;
  if (Status s = ReadCeleryTime(src, "expires", "expires", &out->expires); !s.ok()) return s;
  return ReadTimeLimit(src, out);
}

// Protocol 2: the task in the headers, the body [args, kwargs, embed].
Status ReadProtocol2(json& payload, TaskMessage* out) {
  const json& headers = out->headers;
  out->protocol = 2;
  out->task = headers.at("task").get<std::string>();
  out->id = StringOrEmpty(headers, "id");
  if (!payload.is_array() || payload.size() < 2 || !payload[0].is_array() ||
      !payload[1].is_object()) {
    return Status::InvalidArgument("protocol 2 body must be [args, kwargs, embed]");
  }
  out->args = std::move(payload[0]);
  out->kwargs = std::move(payload[1]);
  out->embed = payload.size() > 2 ? std::move(payload[2]) : json::object();
  FillCommon(headers, out);
  if (auto gi = headers.find("group_index"); gi != headers.end() && gi->is_number_integer()) {
    out->group_index = gi->get<int>();
  }
  out->argsrepr = StringOrEmpty(headers, "argsrepr");
  out->kwargsrepr = StringOrEmpty(headers, "kwargsrepr");
  return ReadTimes(headers, out);
}

// Protocol 1: everything in the body dict.
Status ReadProtocol1(json& payload, TaskMessage* out) {
  out->protocol = 1;
  out->task = payload["task"].get<std::string>();
  out->id = StringOrEmpty(payload, "id");
  json args = payload.value("args", json::array());
  json kwargs = payload.value("kwargs", json::object());
  if (args.is_null()) args = json::array();
  if (kwargs.is_null()) kwargs = json::object();
  if (!args.is_array()) return Status::InvalidArgument("protocol 1 'args' must be a list");
  if (!kwargs.is_object()) return Status::InvalidArgument("protocol 1 'kwargs' must be a dict");
  out->args = std::move(args);
  out->kwargs = std::move(kwargs);
  out->embed = json{{"callbacks", payload.value("callbacks", json())},
                    {"errbacks", payload.value("errbacks", json())},
                    {"chain", nullptr},
                    {"chord", payload.value("chord", json())}};
  FillCommon(payload, out);
  return ReadTimes(payload, out);
}

}  // namespace

Status DecodeTaskMessage(std::string_view envelope, TaskMessage* out) {
  std::string parse_error;
  json env = ParseJson(envelope, &parse_error);
  if (env.is_discarded()) return Status::InvalidArgument("envelope " + parse_error);
  if (!env.is_object()) return Status::InvalidArgument("envelope is not a JSON object");
  ReadEnvelopeFields(env, out);
  json payload;
  if (Status s = DecodeBody(env, out->properties, &payload); !s.ok()) return s;

  Status read;
  if (auto t = out->headers.find("task"); t != out->headers.end() && t->is_string()) {
    read = ReadProtocol2(payload, out);
  } else if (payload.is_object() && payload.contains("task") && payload["task"].is_string()) {
    read = ReadProtocol1(payload, out);
  } else {
    return Status::InvalidArgument("no task name: neither headers.task nor body.task");
  }
  if (!read.ok()) return read;
  if (out->id.empty()) return Status::InvalidArgument("task message has no id");
  if (out->task.empty()) return Status::InvalidArgument("task name is empty");
  Unwrap(&out->args);
  Unwrap(&out->kwargs);
  if (out->root_id.empty()) out->root_id = out->id;
  if (out->argsrepr.empty()) out->argsrepr = PythonRepr(out->args, /*as_tuple=*/true);
  if (out->kwargsrepr.empty()) out->kwargsrepr = PythonRepr(out->kwargs);
  return Status::Ok();
}

std::string EncodeTaskMessageV2(const TaskMessage& msg, std::string_view delivery_tag) {
  auto opt_time = [](const std::optional<double>& t) -> json {
    return t ? json(FormatIsoUtc(*t)) : json(nullptr);
  };
  auto opt_num = [](const std::optional<double>& v) -> json {
    if (!v) return nullptr;
    double whole;
    if (std::modf(*v, &whole) == 0.0 && std::fabs(*v) < 1e15) {
      return static_cast<long long>(*v);
    }
    return *v;
  };
  auto opt_str = [](const std::string& s) -> json { return s.empty() ? json(nullptr) : json(s); };
  nlohmann::ordered_json headers = {
      {"lang", "py"},
      {"task", msg.task},
      {"id", msg.id},
      {"shadow", nullptr},
      {"eta", opt_time(msg.eta)},
      {"expires", opt_time(msg.expires)},
      {"group", opt_str(msg.group)},
      {"group_index", msg.group_index ? json(*msg.group_index) : json(nullptr)},
      {"retries", msg.retries},
      {"timelimit", {opt_num(msg.time_limit), opt_num(msg.soft_time_limit)}},
      {"root_id", msg.root_id.empty() ? msg.id : msg.root_id},
      {"parent_id", opt_str(msg.parent_id)},
      {"argsrepr", msg.argsrepr.empty() ? PythonRepr(msg.args, true) : msg.argsrepr},
      {"kwargsrepr", msg.kwargsrepr.empty() ? PythonRepr(msg.kwargs) : msg.kwargsrepr},
      {"origin", opt_str(msg.origin)},
      {"ignore_result", msg.ignore_result}};
  json embed = msg.embed.is_object() ? msg.embed
                                     : json{{"callbacks", nullptr},
                                            {"errbacks", nullptr},
                                            {"chain", nullptr},
                                            {"chord", nullptr}};
  std::string body = json::array({msg.args, msg.kwargs, embed}).dump();
  nlohmann::ordered_json env = {
      {"body", Base64Encode(body)},
      {"content-encoding", "utf-8"},
      {"content-type", "application/json"},
      {"headers", headers},
      {"properties",
       {{"correlation_id", msg.id},
        {"reply_to", nullptr},
        {"delivery_mode", 2},
        {"delivery_info", {{"exchange", msg.exchange}, {"routing_key", msg.routing_key}}},
        {"priority", msg.priority},
        {"body_encoding", "base64"},
        {"delivery_tag", std::string(delivery_tag)}}}};
  return env.dump();
}

std::optional<std::string> MarkRedelivered(std::string_view envelope) {
  nlohmann::ordered_json env = ParseOrderedJson(envelope);
  if (env.is_discarded() || !env.is_object()) return std::nullopt;
  if (!env.contains("headers") || !env["headers"].is_object()) {
    env["headers"] = nlohmann::ordered_json::object();
  }
  env["headers"]["redelivered"] = true;
  if (!env.contains("properties") || !env["properties"].is_object()) {
    env["properties"] = nlohmann::ordered_json::object();
  }
  auto& props = env["properties"];
  if (!props.contains("delivery_info") || !props["delivery_info"].is_object()) {
    props["delivery_info"] = nlohmann::ordered_json::object();
  }
  props["delivery_info"]["redelivered"] = true;
  return env.dump();
}

std::string EventRoutingKey(std::string_view type) {
  std::string rk(type);
  for (char& c : rk) {
    if (c == '-') c = '.';
  }
  return rk;
}

std::string EncodeEventEnvelope(const nlohmann::json& body, std::string_view hostname,
                                std::string_view routing_key, std::string_view delivery_tag) {
  nlohmann::ordered_json env = {
      {"body", Base64Encode(body.dump())},
      {"content-encoding", "utf-8"},
      {"content-type", "application/json"},
      {"headers", {{"hostname", std::string(hostname)}}},
      {"properties",
       {{"delivery_mode", 1},
        {"delivery_info", {{"exchange", "celeryev"}, {"routing_key", std::string(routing_key)}}},
        {"priority", 0},
        {"body_encoding", "base64"},
        {"delivery_tag", std::string(delivery_tag)}}}};
  return env.dump();
}

std::string EncodeEnvelope(const nlohmann::json& body, const nlohmann::json& headers,
                           std::string_view exchange, std::string_view routing_key,
                           int delivery_mode, std::string_view delivery_tag) {
  nlohmann::ordered_json env = {
      {"body", Base64Encode(body.dump())},
      {"content-encoding", "utf-8"},
      {"content-type", "application/json"},
      {"headers", headers},
      {"properties",
       {{"delivery_mode", delivery_mode},
        {"delivery_info",
         {{"exchange", std::string(exchange)}, {"routing_key", std::string(routing_key)}}},
        {"priority", 0},
        {"body_encoding", "base64"},
        {"delivery_tag", std::string(delivery_tag)}}}};
  return env.dump();
}

std::string PythonRepr(const nlohmann::json& v, bool as_tuple) {
  switch (v.type()) {
    case json::value_t::null:
      return "None";
    case json::value_t::boolean:
      return v.get<bool>() ? "True" : "False";
    case json::value_t::string:
      return ReprString(v.get<std::string>());
    case json::value_t::array: {
      std::string out = as_tuple ? "(" : "[";
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ", ";
        first = false;
        out += PythonRepr(e);
      }
      if (as_tuple && v.size() == 1) out += ",";
      return out + (as_tuple ? ")" : "]");
    }
    case json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, e] : v.items()) {
        if (!first) out += ", ";
        first = false;
        out += ReprString(k) + ": " + PythonRepr(e);
      }
      return out + "}";
    }
    default:
      return v.dump();
  }
}

}  // namespace warmpool::celery
