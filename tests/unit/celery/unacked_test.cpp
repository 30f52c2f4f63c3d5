#include "celery/unacked.h"

#include <string>

#include <catch2/catch.hpp>

namespace warmpool::celery {
namespace {

constexpr double k2000Utc = 1795982400;  // 2026-11-29T20:00:00Z

// A real envelope as kombu 5.2.4 writes it into the unacked hash (kombu/transport/redis.py,
// QoS.append), its eta set by countdown.
std::string Envelope(const std::string& routing_key, const std::string& eta_json,
                     const std::string& priority = "0") {
  std::string e =
      R"({"body": "W1tdLCB7fSwge31d", "content-encoding": "utf-8", "content-type": "application/json", )"
      R"("headers": {"lang": "py", "task": "tasks.add", "id": "b60d", "eta": )";
  e.append(eta_json);
  e.append(
      R"(, "expires": null, "retries": 0, "timelimit": [null, null]}, )"
      R"("properties": {"delivery_tag": "t1", "delivery_info": {"exchange": "", "routing_key": ")");
  e.append(routing_key).append(R"("}, "priority": )").append(priority);
  e.append(R"(, "body_encoding": "base64"}})");
  return e;
}

// kombu's QoS.append: dumps([message._raw, exchange, routing_key]).
std::string Value(const std::string& envelope, const std::string& routing_key) {
  std::string v = "[";
  return v.append(envelope).append(R"(, "", ")").append(routing_key).append(R"("])");
}

TEST_CASE("ParseUnackedValue reads kombu's unacked value", "[celery][unacked]") {
  const std::string envelope = Envelope("gpu", R"("2026-11-29T21:30:00+01:00")", "6");
  auto entry = ParseUnackedValue(Value(envelope, "gpu"));
  REQUIRE(entry.has_value());
  CHECK(entry->envelope == envelope);  // kombu's bytes, to restore them
  CHECK(entry->exchange.empty());
  CHECK(entry->routing_key == "gpu");
  CHECK(entry->priority == 6);
  CHECK(entry->delivery_tag == "t1");
  CHECK(entry->task == "tasks.add");  // headers.task
  REQUIRE(entry->eta.has_value());
  CHECK(*entry->eta == Approx(k2000Utc + 1800));  // 20:30 UTC
}

TEST_CASE("ParseUnackedValue leaves absent or unreadable fields unset", "[celery][unacked]") {
  auto entry = ParseUnackedValue(Value(Envelope("cpu", "null"), "cpu"));
  REQUIRE(entry.has_value());
  CHECK_FALSE(entry->eta.has_value());
  entry = ParseUnackedValue(Value(Envelope("cpu", R"("next tuesday")"), "cpu"));
  REQUIRE(entry.has_value());
  CHECK_FALSE(entry->eta.has_value());
  entry = ParseUnackedValue(R"([{}, "ex", "q"])");
  REQUIRE(entry.has_value());
  CHECK(entry->envelope == "{}");
  CHECK(entry->exchange == "ex");
  CHECK(entry->priority == 0);
  CHECK(entry->delivery_tag.empty());
  CHECK_FALSE(entry->eta.has_value());
  CHECK(entry->task.empty());
}

TEST_CASE("ParseUnackedValue leaves the task name empty unless headers.task is a string",
          "[celery][unacked]") {
  for (const std::string& envelope :
       {std::string(R"({"headers": {"task": 5}})"), std::string(R"({"headers": {"task": null}})"),
        std::string(R"({"headers": "tasks.add"})"), std::string(R"({"body": "tasks.add"})")}) {
    DYNAMIC_SECTION(envelope) {
      auto entry = ParseUnackedValue(Value(envelope, "q"));
      REQUIRE(entry.has_value());
      CHECK(entry->task.empty());
    }
  }
  auto entry = ParseUnackedValue(Value(R"({"headers": {"task": "app.long"}})", "q"));
  REQUIRE(entry.has_value());
  CHECK(entry->task == "app.long");
}

TEST_CASE("ParseUnackedValue cuts the envelope exactly, whatever its strings hold",
          "[celery][unacked]") {
  const std::string envelope =
      R"({"a": "}]{[", "b": "quote \" } brace", "c": [{"d": "\\"}, [1, 2]], "e": "\\\""})";
  auto entry = ParseUnackedValue(" \n[ " + envelope + R"( , "", "q" ] )");
  REQUIRE(entry.has_value());
  CHECK(entry->envelope == envelope);
  entry = ParseUnackedValue("\xEF\xBB\xBF[{\"x\": 1},\"\",\"q\"]");  // UTF-8 byte order mark
  REQUIRE(entry.has_value());
  CHECK(entry->envelope == R"({"x": 1})");
}

TEST_CASE("ParseUnackedValue rejects values that are not kombu's shape", "[celery][unacked]") {
  const std::string deep =
      "[{\"deep\": " + std::string(50000, '[') + std::string(50000, ']') + "}, \"\", \"celery\"]";
  for (const std::string& bad :
       {std::string(""), std::string("{}"), std::string("[1,2,3]"), std::string(R"([{}, ""])"),
        std::string("not json"), std::string(R"([{}, "", 5])"), std::string("[1, 2]"),
        std::string("garbage"), std::string(R"([{}, 5, "q"])"),
        std::string(R"([{}, "", "q", "extra"])"), std::string(R"(["{}", "", "q"])"), deep}) {
    DYNAMIC_SECTION(bad.substr(0, 40)) { CHECK_FALSE(ParseUnackedValue(bad).has_value()); }
  }
}

}  // namespace
}  // namespace warmpool::celery
