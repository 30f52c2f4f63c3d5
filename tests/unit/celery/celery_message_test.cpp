#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "celery/base64.h"
#include "celery/message.h"
#include "common/json_parse.h"

namespace warmpool::celery {
namespace {

using nlohmann::json;

// Captured from Celery 5.2.6 `send_task('tasks.add', (2, 3), {'z': 1})` through kombu 5.2.4.
constexpr const char* kRealV2 =
    R"json({"body": "W1syLCAzXSwgeyJ6IjogMX0sIHsiY2FsbGJhY2tzIjogbnVsbCwgImVycmJhY2tzIjogbnVsbCwgImNoYWluIjogbnVsbCwgImNob3JkIjogbnVsbH1d",
 "content-encoding": "utf-8", "content-type": "application/json",
 "headers": {"lang": "py", "task": "tasks.add", "id": "b60de80f-9120-4357-9c6b-9fbdb83d7189", "shadow": null,
   "eta": null, "expires": null, "group": null, "group_index": null, "retries": 0, "timelimit": [null, null],
   "root_id": "b60de80f-9120-4357-9c6b-9fbdb83d7189", "parent_id": null, "argsrepr": "(2, 3)",
   "kwargsrepr": "{'z': 1}", "origin": "gen12519@vm", "ignore_result": false},
 "properties": {"correlation_id": "b60de80f-9120-4357-9c6b-9fbdb83d7189", "reply_to": "e5b2f67b-f644-3f93-8938-70ce938828c6",
   "delivery_mode": 2, "delivery_info": {"exchange": "", "routing_key": "celery"}, "priority": 0,
   "body_encoding": "base64", "delivery_tag": "b7d5dd59-968b-4e91-8c1b-d0de51236c75"}})json";

std::string Envelope(const json& headers, const std::string& body, const json& props_extra = {}) {
  json props = {{"delivery_info", {{"exchange", ""}, {"routing_key", "celery"}}},
                {"priority", 0},
                {"body_encoding", "base64"},
                {"delivery_tag", "tag-1"}};
  if (props_extra.is_object()) props.update(props_extra);
  return json{{"body", Base64Encode(body)},
              {"content-encoding", "utf-8"},
              {"content-type", "application/json"},
              {"headers", headers},
              {"properties", props}}
      .dump();
}

TEST_CASE("DecodeTaskMessage reads a real protocol 2 message", "[celery][message]") {
  TaskMessage m;
  Status s = DecodeTaskMessage(kRealV2, &m);
  REQUIRE(s.ok());
  CHECK(m.protocol == 2);
  CHECK(m.task == "tasks.add");
  CHECK(m.id == "b60de80f-9120-4357-9c6b-9fbdb83d7189");
  CHECK(m.args == json::array({2, 3}));
  CHECK(m.kwargs == json{{"z", 1}});
  CHECK(m.delivery_tag == "b7d5dd59-968b-4e91-8c1b-d0de51236c75");
  CHECK(m.exchange.empty());
  CHECK(m.routing_key == "celery");
  CHECK(m.retries == 0);
  CHECK_FALSE(m.eta.has_value());
  CHECK_FALSE(m.expires.has_value());
  CHECK_FALSE(m.time_limit.has_value());
  CHECK_FALSE(m.ignore_result);
  CHECK_FALSE(m.redelivered);
  CHECK(m.argsrepr == "(2, 3)");
  CHECK(m.root_id == m.id);
  CHECK(m.origin == "gen12519@vm");
}

TEST_CASE("DecodeTaskMessage reads eta, expires, timelimit, priority", "[celery][message]") {
  json headers = {{"task", "t"},
                  {"id", "id-1"},
                  {"eta", "2026-11-29T19:57:10.620453+00:00"},
                  {"expires", "2026-11-29T20:07:08Z"},
                  {"timelimit", {30, 20}},
                  {"retries", 2},
                  {"ignore_result", true},
                  {"redelivered", true}};
  TaskMessage m;
  REQUIRE(DecodeTaskMessage(Envelope(headers, "[[], {}, {}]", {{"priority", 5}}), &m).ok());
  REQUIRE(m.eta.has_value());
  CHECK(*m.eta == Approx(1795982230.620453).margin(1e-6));
  REQUIRE(m.expires.has_value());
  CHECK(*m.expires == Approx(1795982828.0));
  CHECK(m.time_limit == std::optional<double>(30));
  CHECK(m.soft_time_limit == std::optional<double>(20));
  CHECK(m.retries == 2);
  CHECK(m.ignore_result);
  CHECK(m.redelivered);
  CHECK(m.priority == 5);
}

TEST_CASE("DecodeTaskMessage reads protocol 1", "[celery][message]") {
  json body = {{"task", "tasks.add"},    {"id", "v1-id"}, {"args", {1, 2}},
               {"kwargs", {{"k", "v"}}}, {"retries", 1},  {"eta", nullptr},
               {"expires", nullptr},     {"utc", true},   {"timelimit", {nullptr, 5}}};
  TaskMessage m;
  REQUIRE(DecodeTaskMessage(Envelope(json::object(), body.dump()), &m).ok());
  CHECK(m.protocol == 1);
  CHECK(m.task == "tasks.add");
  CHECK(m.id == "v1-id");
  CHECK(m.args == json::array({1, 2}));
  CHECK(m.kwargs == json{{"k", "v"}});
  CHECK(m.retries == 1);
  CHECK_FALSE(m.time_limit.has_value());
  CHECK(m.soft_time_limit == std::optional<double>(5));
}

TEST_CASE("DecodeTaskMessage unwraps kombu 5.3 typed values", "[celery][message]") {
  json wrapped = {{"__type__", "datetime"}, {"__value__", "2026-01-01T00:00:00Z"}};
  json body = json::array({json::array({wrapped}), json{{"when", wrapped}}, json::object()});
  TaskMessage m;
  REQUIRE(DecodeTaskMessage(Envelope({{"task", "t"}, {"id", "i"}}, body.dump()), &m).ok());
  CHECK(m.args[0] == "2026-01-01T00:00:00Z");
  CHECK(m.kwargs["when"] == "2026-01-01T00:00:00Z");
}

TEST_CASE("DecodeTaskMessage reports undecodable messages", "[celery][message][negative]") {
  json ok_headers = {{"task", "t"}, {"id", "i"}};
  struct Case {
    const char* name;
    std::string envelope;
  };
  std::vector<Case> cases = {
      {"not json", "{not json"},
      {"not an object", "[1, 2]"},
      {"no body", json{{"headers", ok_headers}, {"properties", json::object()}}.dump()},
      {"bad base64",
       json{{"body", "!!!"}, {"headers", ok_headers}, {"properties", {{"body_encoding", "base64"}}}}
           .dump()},
      {"body not json", Envelope(ok_headers, "{oops")},
      {"body wrong shape", Envelope(ok_headers, "{\"a\": 1}")},
      {"no task name", Envelope(json::object(), "[[], {}, {}]")},
      {"no id", Envelope({{"task", "t"}}, "[[], {}, {}]")},
      {"bad eta", Envelope({{"task", "t"}, {"id", "i"}, {"eta", "soon"}}, "[[], {}, {}]")},
      {"pickle", json{{"body", Base64Encode("x")},
                      {"content-type", "application/x-python-serialize"},
                      {"headers", ok_headers},
                      {"properties", {{"body_encoding", "base64"}}}}
                     .dump()},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      TaskMessage m;
      Status s = DecodeTaskMessage(c.envelope, &m);
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK_FALSE(s.message().empty());
    }
  }
}

// The body Celery 5.2.6 writes for send_task(name, args=[<args_json>]) (json.dumps separators).
std::string BodyWithArgs(const std::string& args_json) {
  return "[[" + args_json +
         "], {}, {\"callbacks\": null, \"errbacks\": null, \"chain\": null, \"chord\": null}]";
}

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST_CASE("DecodeTaskMessage refuses a body nested 50,000 deep, naming the limit and the task",
          "[celery][message][negative]") {
  // Before the depth limit this overflowed the stack (SIGSEGV) in the recursive walks.
  TaskMessage m;
  Status s = DecodeTaskMessage(
      Envelope({{"task", "warmpool.ping"}, {"id", "poison-1"}}, BodyWithArgs(Nested(50000))), &m);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message() == "body nests arrays/objects deeper than 1024 levels");
  CHECK(m.id == "poison-1");
  CHECK(m.task == "warmpool.ping");
  CHECK(m.delivery_tag == "tag-1");
}

TEST_CASE("DecodeTaskMessage refuses an envelope nested too deep in its headers",
          "[celery][message][negative]") {
  std::string envelope = Envelope({{"task", "t"}, {"id", "i"}}, "[[], {}, {}]");
  // Splice a deep value into the headers object: {"headers": {"deep": [[[...]]], ...
  const std::string marker = "\"headers\":{";
  const size_t at = envelope.find(marker);
  REQUIRE(at != std::string::npos);
  envelope.insert(at + marker.size(), "\"deep\":" + Nested(50000) + ",");
  TaskMessage m;
  Status s = DecodeTaskMessage(envelope, &m);
  CHECK(s.message() == "envelope nests arrays/objects deeper than 1024 levels");
  CHECK_FALSE(MarkRedelivered(envelope).has_value());
}

TEST_CASE("DecodeTaskMessage takes the deepest args Python's json can write", "[celery][message]") {
  // Python's json.loads stops near depth 1000: an argument nested 1000 deep (body depth 1002).
  TaskMessage m;
  REQUIRE(DecodeTaskMessage(Envelope({{"task", "t"}, {"id", "i"}}, BodyWithArgs(Nested(1000))), &m)
              .ok());
  CHECK(m.argsrepr.size() > 2000);  // PythonRepr walked all of it
  TaskMessage again;
  REQUIRE(DecodeTaskMessage(EncodeTaskMessageV2(m, "tag-2"), &again).ok());
  CHECK(again.args == m.args);
  // One level more than the limit, at the limit's edge: body depth 1025.
  Status s = DecodeTaskMessage(
      Envelope({{"task", "t"}, {"id", "i"}}, BodyWithArgs(Nested(kMaxJsonDepth - 1))), &m);
  CHECK(s.message() == "body nests arrays/objects deeper than 1024 levels");
}

TEST_CASE("EncodeTaskMessageV2 round-trips through DecodeTaskMessage", "[celery][message]") {
  TaskMessage in;
  in.id = "abc";
  in.task = "warmpool.sleep";
  in.args = json::array({0.5});
  in.kwargs = json{{"x", "y"}};
  in.retries = 3;
  in.eta = 1795982230.5;
  in.time_limit = 30;
  in.routing_key = "gpu";
  in.priority = 6;
  in.parent_id = "parent";
  std::string env = EncodeTaskMessageV2(in, "new-tag");
  TaskMessage out;
  REQUIRE(DecodeTaskMessage(env, &out).ok());
  CHECK(out.id == "abc");
  CHECK(out.task == "warmpool.sleep");
  CHECK(out.args == in.args);
  CHECK(out.kwargs == in.kwargs);
  CHECK(out.retries == 3);
  REQUIRE(out.eta.has_value());
  CHECK(*out.eta == Approx(1795982230.5));
  CHECK(out.time_limit == std::optional<double>(30));
  CHECK(out.delivery_tag == "new-tag");
  CHECK(out.routing_key == "gpu");
  CHECK(out.priority == 6);
  CHECK(out.parent_id == "parent");
  CHECK(out.root_id == "abc");
  CHECK(json::parse(env)["headers"]["timelimit"] == json::array({30, nullptr}));
}

TEST_CASE("MarkRedelivered follows kombu", "[celery][message]") {
  auto marked = MarkRedelivered(kRealV2);
  REQUIRE(marked.has_value());
  json j = json::parse(*marked);
  CHECK(j["headers"]["redelivered"] == true);
  CHECK(j["properties"]["delivery_info"]["redelivered"] == true);
  CHECK(j["properties"]["delivery_tag"] == "b7d5dd59-968b-4e91-8c1b-d0de51236c75");
  CHECK_FALSE(MarkRedelivered("nope").has_value());
}

TEST_CASE("Event envelopes match Celery's dispatcher", "[celery][message]") {
  CHECK(EventRoutingKey("worker-heartbeat") == "worker.heartbeat");
  CHECK(EventRoutingKey("task-succeeded") == "task.succeeded");
  std::string env =
      EncodeEventEnvelope(json{{"type", "worker-online"}}, "w@h", "worker.online", "tag");
  json j = json::parse(env);
  CHECK(j["headers"]["hostname"] == "w@h");
  CHECK(j["properties"]["delivery_mode"] == 1);
  CHECK(j["properties"]["delivery_info"]["exchange"] == "celeryev");
  CHECK(j["properties"]["delivery_info"]["routing_key"] == "worker.online");
  auto body = Base64Decode(j["body"].get<std::string>());
  REQUIRE(body.has_value());
  CHECK(json::parse(*body)["type"] == "worker-online");
}

TEST_CASE("PythonRepr writes Python literals", "[celery][message]") {
  CHECK(PythonRepr(json::array({2, 3}), true) == "(2, 3)");
  CHECK(PythonRepr(json::array({1}), true) == "(1,)");
  CHECK(PythonRepr(json{{"z", 1}}) == "{'z': 1}");
  CHECK(PythonRepr(json::array({nullptr, true, "it's"})) == "[None, True, 'it\\'s']");
}

}  // namespace
}  // namespace warmpool::celery
