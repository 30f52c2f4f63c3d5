#include "worker/canvas.h"

#include "celery/base64.h"

namespace warmpool::worker {
namespace {

using nlohmann::json;

// Placeholders of the chord templates: JSON strings no real task data carries.
constexpr const char* kResultsMark = "__warmpool_chord_results__";
constexpr const char* kBodyMark = "__warmpool_chord_body__";
constexpr const char* kErrorMark = "__warmpool_chord_error__";

// kombu's maybe_list for link/link_error: one signature or a list of them.
json MaybeList(const json& v) {
  if (v.is_null()) return nullptr;
  if (v.is_array()) return v;
  return json::array({v});
}

Status ReadSeconds(const json& options, const char* key, std::optional<double>* out) {
  auto it = options.find(key);
  if (it == options.end() || it->is_null()) return Status::Ok();
  if (!it->is_number()) {
    return Status::InvalidArgument(std::string("options.") + key + " must be a number, got " +
                                   it->dump());
  }
  *out = it->get<double>();
  return Status::Ok();
}

std::string StringOption(const json& options, const char* key) {
  auto it = options.find(key);
  return it != options.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Where Celery's router sends a signature without task_routes: its `queue` option (a name or a
// serialised kombu Queue), else the default queue; published through the anonymous exchange.
Status TargetQueue(const json& options, const CanvasEnv& env, std::string* queue) {
  auto it = options.find("queue");
  if (it == options.end() || it->is_null()) {
    std::string rk = StringOption(options, "routing_key");
    std::string ex = StringOption(options, "exchange");
    *queue = !rk.empty() && ex.empty() ? rk : env.default_queue;
    return Status::Ok();
  }
  if (it->is_string() && !it->get<std::string>().empty()) {
    *queue = it->get<std::string>();
    return Status::Ok();
  }
  if (it->is_object() && it->contains("name") && (*it)["name"].is_string()) {
    *queue = (*it)["name"].get<std::string>();
    return Status::Ok();
  }
  return Status::InvalidArgument("options.queue must be a queue name, got " + it->dump());
}

std::string ResultRepr(const json& args) {
  std::string repr = celery::PythonRepr(args, /*as_tuple=*/true);
  const std::string mark = std::string("'") + kResultsMark + "'";
  if (auto pos = repr.find(mark); pos != std::string::npos) repr.replace(pos, mark.size(), "[...]");
  return repr;
}

// Splits `text` around the first JSON string `"<mark>"`.
Status SplitAt(const std::string& text, const char* mark, std::string* head, std::string* tail) {
  const std::string quoted = std::string("\"") + mark + "\"";
  auto pos = text.find(quoted);
  if (pos == std::string::npos) return Status::Internal(std::string("no ") + mark + " in template");
  *head = text.substr(0, pos);
  *tail = text.substr(pos + quoted.size());
  return Status::Ok();
}

CanvasMessage ToMessage(const celery::TaskMessage& m, std::string kind, const CanvasEnv& env) {
  CanvasMessage out;
  out.kind = std::move(kind);
  out.task = m.task;
  out.task_id = m.id;
  out.queue = m.routing_key;
  out.priority = m.priority;
  out.envelope = celery::EncodeTaskMessageV2(m, env.new_id());
  return out;
}

// Applies `sigs` as Celery's group(sigs).apply_async(prepend, **overrides): one new group id.
void ApplyGroup(const json& sigs, const json& prepend, ApplyOverrides overrides, const char* kind,
                const CanvasEnv& env, std::vector<CanvasMessage>* out,
                std::vector<std::string>* errors) {
  overrides.group_id = env.new_id();
  for (size_t i = 0; i < sigs.size(); ++i) {
    celery::TaskMessage m;
    Status s = BuildSignatureMessage(sigs[i], prepend, overrides, env, &m);
    if (!s.ok()) {
      errors->push_back(std::string(kind) + " signature " + std::to_string(i) + ": " + s.message());
      continue;
    }
    out->push_back(ToMessage(m, kind, env));
  }
}

Status BuildChordPart(const celery::TaskMessage& msg, const std::string& state, const json& value,
                      const CanvasEnv& env, ChordPart* part) {
  const json& body = msg.embed["chord"];
  part->group_id = msg.group;
  part->score = msg.group_index ? std::to_string(*msg.group_index) : "+inf";
  part->member =
      "[1, " + json(msg.id).dump() + ", " + json(state).dump() + ", " + value.dump() + "]";
  if (!body.is_object()) return Status::InvalidArgument("embed.chord must be a signature");
  // callback.delay(results): parent/root from the header task unless the body has its own.
  json sig = body;
  if (!sig.contains("options") || sig["options"].is_null()) sig["options"] = json::object();
  if (!sig["options"].is_object()) return Status::InvalidArgument("options must be an object");
  json& opts = sig["options"];
  if (StringOption(opts, "parent_id").empty()) opts["parent_id"] = msg.id;
  if (StringOption(opts, "root_id").empty()) opts["root_id"] = msg.root_id;
  celery::TaskMessage cb;
  Status s = BuildSignatureMessage(sig, json::array({kResultsMark}), {}, env, &cb);
  if (!s.ok()) return s;
  part->callback_immutable = sig.value("immutable", false) == true;
  if (!part->callback_immutable) cb.argsrepr = ResultRepr(cb.args);
  part->callback_id = cb.id;
  part->callback_task = cb.task;
  part->callback_queue = cb.routing_key;
  part->callback_priority = cb.priority;

  nlohmann::ordered_json env_json =
      nlohmann::ordered_json::parse(celery::EncodeTaskMessageV2(cb, env.new_id()));
  auto body_text = celery::Base64Decode(env_json["body"].get<std::string>());
  if (!body_text) return Status::Internal("chord body template is not base64");
  env_json["body"] = kBodyMark;
  if (s = SplitAt(env_json.dump(), kBodyMark, &part->envelope_head, &part->envelope_tail);
      !s.ok()) {
    return s;
  }
  if (part->callback_immutable) {
    part->body_head = *body_text;
  } else if (s = SplitAt(*body_text, kResultsMark, &part->body_head, &part->body_tail); !s.ok()) {
    return s;
  }

  celery::ExceptionInfo chord_error{"ChordError", "celery.exceptions", json::array({kErrorMark})};
  std::string meta =
      celery::EncodeResultMeta(celery::FailureMeta(cb.id, chord_error, std::nullopt, env.now));
  if (s = SplitAt(meta, kErrorMark, &part->error_meta_head, &part->error_meta_tail); !s.ok()) {
    return s;
  }
  // chord_error_from_stack: the body's link_error, as a group called with (body id,).
  json errbacks = MaybeList(opts.value("link_error", json()));
  if (errbacks.is_array() && !errbacks.empty()) {
    ApplyOverrides o;
    o.parent_id = cb.id;
    o.root_id = cb.root_id.empty() ? cb.id : cb.root_id;
    std::vector<std::string> errors;
    ApplyGroup(errbacks, json::array({cb.id}), o, "chord_errback", env, &part->errbacks, &errors);
    if (!errors.empty()) return Status::InvalidArgument(errors.front());
  }
  return Status::Ok();
}

}  // namespace

Status BuildSignatureMessage(const json& sig, const json& prepend, const ApplyOverrides& overrides,
                             const CanvasEnv& env, celery::TaskMessage* out) {
  if (!sig.is_object()) return Status::InvalidArgument("signature must be an object");
  auto task = sig.find("task");
  if (task == sig.end() || !task->is_string() || task->get<std::string>().empty()) {
    return Status::InvalidArgument("signature has no task name");
  }
  const std::string name = task->get<std::string>();
  auto type = sig.find("subtask_type");
  if (type != sig.end() && !type->is_null()) {
    return Status::InvalidArgument("signature '" + name + "' is a " + type->dump() +
                                   ": only plain task signatures are applied");
  }
  json args = sig.value("args", json::array());
  json kwargs = sig.value("kwargs", json::object());
  json options = sig.value("options", json::object());
  if (args.is_null()) args = json::array();
  if (kwargs.is_null()) kwargs = json::object();
  if (options.is_null()) options = json::object();
  if (!args.is_array()) return Status::InvalidArgument("args of '" + name + "' must be a list");
  if (!kwargs.is_object())
    return Status::InvalidArgument("kwargs of '" + name + "' must be a dict");
  if (!options.is_object()) {
    return Status::InvalidArgument("options of '" + name + "' must be a dict");
  }
  const bool immutable = sig.value("immutable", false) == true;

  celery::TaskMessage m;
  m.task = name;
  m.id = StringOption(options, "task_id");
  if (m.id.empty()) m.id = env.new_id();
  if (!immutable && prepend.is_array() && !prepend.empty()) {
    json merged = prepend;
    merged.insert(merged.end(), args.begin(), args.end());
    args = std::move(merged);
  }
  m.args = std::move(args);
  m.kwargs = std::move(kwargs);
  if (Status s = TargetQueue(options, env, &m.routing_key); !s.ok()) return s;
  m.exchange = "";
  if (auto p = options.find("priority"); p != options.end() && p->is_number_integer()) {
    m.priority = p->get<int>();
  }
  std::optional<double> countdown;
  if (Status s = ReadSeconds(options, "countdown", &countdown); !s.ok()) return s;
  if (Status s = celery::ReadCeleryTime(options, "eta", "options.eta", &m.eta); !s.ok()) {
    return s;
  }
  if (countdown && *countdown != 0) m.eta = env.now + *countdown;
  if (auto e = options.find("expires"); e != options.end() && e->is_number()) {
    m.expires = env.now + e->get<double>();  // relative seconds, as as_task_v2
  } else if (Status s = celery::ReadCeleryTime(options, "expires", "options.expires", &m.expires);
             !s.ok()) {
    return s;
  }
  if (Status s = ReadSeconds(options, "time_limit", &m.time_limit); !s.ok()) return s;
  if (Status s = ReadSeconds(options, "soft_time_limit", &m.soft_time_limit); !s.ok()) return s;
  m.group = StringOption(options, "group_id");
  if (m.group.empty()) m.group = overrides.group_id;
  if (auto gi = options.find("group_index"); gi != options.end() && gi->is_number_integer()) {
    m.group_index = gi->get<int>();
  }
  m.ignore_result = options.value("ignore_result", false) == true;
  m.parent_id =
      overrides.parent_id.empty() ? StringOption(options, "parent_id") : overrides.parent_id;
  m.root_id = overrides.root_id.empty() ? StringOption(options, "root_id") : overrides.root_id;
  if (m.root_id.empty()) m.root_id = m.id;
  m.origin = env.hostname;
  m.embed = json{{"callbacks", MaybeList(options.value("link", json()))},
                 {"errbacks", MaybeList(options.value("link_error", json()))},
                 {"chain", overrides.chain ? *overrides.chain : json(nullptr)},
                 {"chord", options.value("chord", json())}};
  m.argsrepr = celery::PythonRepr(m.args, /*as_tuple=*/true);
  m.kwargsrepr = celery::PythonRepr(m.kwargs);
  *out = std::move(m);
  return Status::Ok();
}

CanvasPlan PlanCanvas(const celery::TaskMessage& msg, CanvasOutcome outcome, const json& value,
                      const CanvasEnv& env) {
  CanvasPlan plan;
  const json& embed = msg.embed;
  if (!embed.is_object()) return plan;
  auto field = [&](const char* key) -> const json& {
    static const json kNull;
    auto it = embed.find(key);
    return it == embed.end() ? kNull : *it;
  };
  const std::string root_id = msg.root_id.empty() ? msg.id : msg.root_id;
  ApplyOverrides overrides;
  overrides.parent_id = msg.id;
  overrides.root_id = root_id;

  if (outcome == CanvasOutcome::kSuccess) {
    const json& callbacks = field("callbacks");
    if (!callbacks.is_null() && !callbacks.is_array()) {
      plan.errors.push_back("embed.callbacks must be a list, got " + callbacks.dump());
    } else if (callbacks.is_array() && callbacks.size() == 1) {
      celery::TaskMessage m;
      Status s = BuildSignatureMessage(callbacks[0], json::array({value}), overrides, env, &m);
      if (s.ok()) {
        plan.messages.push_back(ToMessage(m, "link", env));
      } else {
        plan.errors.push_back("link signature 0: " + s.message());
      }
    } else if (callbacks.is_array() && callbacks.size() > 1) {
      ApplyGroup(callbacks, json::array({value}), overrides, "link", env, &plan.messages,
                 &plan.errors);
    }
    const json& chain = field("chain");
    if (!chain.is_null() && !chain.is_array()) {
      plan.errors.push_back("embed.chain must be a list, got " + chain.dump());
    } else if (chain.is_array() && !chain.empty()) {
      json rest = chain;
      json next = rest.back();  // stored reversed: the next step is last
      rest.erase(rest.end() - 1);
      ApplyOverrides o = overrides;
      o.chain = std::move(rest);
      celery::TaskMessage m;
      Status s = BuildSignatureMessage(next, json::array({value}), o, env, &m);
      if (s.ok()) {
        plan.messages.push_back(ToMessage(m, "chain", env));
      } else {
        plan.errors.push_back("chain step: " + s.message());
      }
    }
  } else if (outcome == CanvasOutcome::kFailure) {
    const json& chain = field("chain");
    if (chain.is_array()) {
      for (const auto& step : chain) {
        if (!step.is_object()) continue;
        auto opts = step.find("options");
        if (opts == step.end() || !opts->is_object()) continue;
        std::string id = StringOption(*opts, "task_id");
        if (!id.empty()) plan.failed_chain_ids.push_back(id);
      }
    }
  }

  // on_chord_part_return: SUCCESS, FAILURE and REVOKED parts (not RETRY).
  const json& chord = field("chord");
  if (!chord.is_null() && !msg.group.empty()) {
    const char* state = outcome == CanvasOutcome::kSuccess   ? "SUCCESS"
                        : outcome == CanvasOutcome::kFailure ? "FAILURE"
                                                             : "REVOKED";
    ChordPart part;
    Status s = BuildChordPart(msg, state, value, env, &part);
    if (s.ok()) {
      plan.chord = std::move(part);
    } else {
      plan.errors.push_back("chord body: " + s.message());
    }
  }

  if (outcome == CanvasOutcome::kFailure) {
    const json& errbacks = field("errbacks");
    if (!errbacks.is_null() && !errbacks.is_array()) {
      plan.errors.push_back("embed.errbacks must be a list, got " + errbacks.dump());
    } else if (errbacks.is_array() && !errbacks.empty()) {
      ApplyGroup(errbacks, json::array({msg.id}), overrides, "link_error", env, &plan.messages,
                 &plan.errors);
    }
  }
  return plan;
}

}  // namespace warmpool::worker
