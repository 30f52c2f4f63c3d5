#include "celery/task_name.h"

#include <string>

#include <catch2/catch.hpp>

#include "celery/message.h"

namespace warmpool::celery {
namespace {

TEST_CASE("TaskNameOfEnvelope reads headers.task of a protocol 2 message", "[celery][task_name]") {
  TaskMessage m;
  m.id = "b60d";
  m.task = "app.detect_change";
  m.routing_key = "gpu";
  const std::string envelope = EncodeTaskMessageV2(m, "tag-1");  // as Celery 5.2.6 publishes it
  CHECK(TaskNameOfEnvelope(envelope) == "app.detect_change");
  // kombu's own spacing, unicode escapes included.
  CHECK(TaskNameOfEnvelope(
            R"({"body": "W1tdLCB7fSwge31d", "headers": {"lang": "py", "task": "t\u00e9.add"}, )"
            R"("properties": {"delivery_tag": "t1"}})") == "t\xC3\xA9.add");
  CHECK(TaskNameOfEnvelope(R"({"headers": {"task": ""}})") == "");  // present, if empty
}

TEST_CASE("TaskNameOfEnvelope is nullopt without a string headers.task", "[celery][task_name]") {
  const std::string deep =
      std::string("{\"headers\": ") + std::string(50000, '[') + std::string(50000, ']') + "}";
  for (const std::string& bad : {
           std::string(R"({"body": "e30=", "properties": {}})"),  // no headers
           std::string(R"({"headers": null})"),
           std::string(R"({"headers": {"id": "x"}})"),  // protocol 1: name in the body
           std::string(R"({"headers": {"task": 5}})"),  // not a string
           std::string(R"({"headers": {"task": null}})"),
           std::string(R"({"headers": {"task": ["a"]}})"),
           std::string(R"({"headers": "task"})"),
           std::string(R"(["headers", {"task": "a"}])"),  // not an object
           std::string(R"("app.short")"),
           std::string(""),
           std::string("garbage"),
           std::string("\xFF\xFE{"),
           std::string(R"({"headers": {"task": "app.sh)"),  // truncated
           std::string(R"({"headers": {"task": "app.short"})"),
           std::string(R"({"headers": {"task": "app.short"}}})"),
           deep,
       }) {
    DYNAMIC_SECTION(bad.substr(0, 40)) { CHECK_FALSE(TaskNameOfEnvelope(bad).has_value()); }
  }
}

TEST_CASE("TaskNameOfEnvelope survives every prefix of a real message", "[celery][task_name]") {
  TaskMessage m;
  m.id = "id";
  m.task = "app.short";
  const std::string envelope = EncodeTaskMessageV2(m, "tag");
  for (size_t n = 0; n < envelope.size(); ++n) {
    CHECK_FALSE(TaskNameOfEnvelope(std::string_view(envelope).substr(0, n)).has_value());
  }
  CHECK(TaskNameOfEnvelope(envelope) == "app.short");
}

}  // namespace
}  // namespace warmpool::celery
