#include "common/json_parse.h"

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace warmpool {
namespace {

using nlohmann::json;

// Same value, same number types, same text when dumped, as nlohmann's own parser.
void RequireSameAsNlohmann(const std::string& text) {
  INFO(text);
  const json ours = ParseJson(text);
  const json theirs = json::parse(text, nullptr, false);
  REQUIRE(ours.is_discarded() == theirs.is_discarded());
  if (theirs.is_discarded()) return;
  CHECK(ours == theirs);
  CHECK(ours.dump() == theirs.dump());
  // Types leaf by leaf (== treats 5 and 5u as equal).
  if (!theirs.is_structured()) {
    CHECK(ours.type() == theirs.type());
    return;
  }
  const json flat_ours = ours.flatten();
  const json flat_theirs = theirs.flatten();
  for (auto it = flat_theirs.begin(); it != flat_theirs.end(); ++it) {
    INFO(it.key());
    CHECK(flat_ours.at(it.key()).type() == it->type());
  }
}

TEST_CASE("ParseJson gives nlohmann's value for a Celery envelope", "[json]") {
  RequireSameAsNlohmann(
      R"js({"body": "W1tdLCB7fSwgeyJjYWxsYmFja3MiOiBudWxsLCAiZXJyYmFja3MiOiBudWxsfV0=", )js"
      R"js("content-encoding": "utf-8", "content-type": "application/json", "headers": )js"
      R"js({"lang": "py", "task": "warmpool.ping", "id": "0d5c", "shadow": null, "eta": null, )js"
      R"js("expires": null, "group": null, "group_index": null, "retries": 0, "timelimit": )js"
      R"js([null, null], "root_id": "0d5c", "parent_id": null, "argsrepr": "()", "kwargsrepr": )js"
      R"js("{}", "origin": "gen1@host", "ignore_result": false}, "properties": )js"
      R"js({"correlation_id": "0d5c", "reply_to": "8f1e", "delivery_mode": 2, "delivery_info": )js"
      R"js({"exchange": "", "routing_key": "celery"}, "priority": 0, "body_encoding": )js"
      R"js("base64", "delivery_tag": "a3c1"}})js");
}

TEST_CASE("ParseJson keeps nlohmann's number types and edge cases", "[json]") {
  for (const char* text : {
           R"js([0, 5, -5, 9223372036854775807, 9223372036854775808, 18446744073709551615])js",
           R"js([-9223372036854775808, 1.5, -2.25e-3, 1e308, 0.1, 3.0, 1E2])js",
           R"js(18446744073709551616)js",  // beyond 64 bits: nlohmann makes it a double
           R"js([1e400])js",
           R"js({"a": 1, "a": 2})js",  // a repeated key: the last wins
           R"js({"s": "caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t", "u": "été"})js",
           R"js([[], {}, [[[[]]]], {"x": {"y": {"z": null}}}, true, false, null])js",
           R"js("just a string")js",
           R"js(  {"pad": "  "}  )js",
       }) {
    RequireSameAsNlohmann(text);
  }
}

TEST_CASE("ParseJson parses documents over 1 MiB (nlohmann's path) the same way", "[json]") {
  std::string big = R"js({"args": [")js" + std::string(3 << 20, 'x') + R"js("], "n": 1})js";
  RequireSameAsNlohmann(big);
  RequireSameAsNlohmann(big.substr(0, big.size() - 1));  // cut short: discarded
}

TEST_CASE("ParseJson reads -0 as 0 (unsigned here, signed in nlohmann)", "[json]") {
  // simdjson does not keep the sign of an integer zero; the value and its text are the same.
  const json ours = ParseJson("[-0]");
  CHECK(ours == json::parse("[-0]"));
  CHECK(ours.dump() == "[0]");
}

TEST_CASE("ParseJson discards what nlohmann discards", "[json]") {
  for (const std::string& text : {
           std::string("{this is not json"),
           std::string(R"js({"a": 1,})js"),
           std::string(R"js(["unterminated)js"),
           std::string("\"\xff\xfe\""),  // invalid UTF-8
           std::string(""),
           std::string("[1] [2]"),
       }) {
    RequireSameAsNlohmann(text);
  }
}

std::string Nested(int depth, const std::string& inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

// The three ways into the parser: simdjson, nlohmann for documents over 1 MiB, and nlohmann for
// what simdjson refuses (here an integer beyond 64 bits).
std::vector<std::pair<std::string, std::string>> ThreePaths(int depth) {
  return {{"simdjson", Nested(depth, "1")},
          {"over 1 MiB", Nested(depth, "\"" + std::string(2 << 20, 'x') + "\"")},
          {"big integer", Nested(depth, "18446744073709551616")}};
}

TEST_CASE("ParseJson takes documents nested up to kMaxJsonDepth on every path", "[json]") {
  for (const auto& [path, text] : ThreePaths(kMaxJsonDepth)) {
    INFO(path);
    std::string error = "untouched";
    const json j = ParseJson(text, &error);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(error == "untouched");
    CHECK(j == json::parse(text));  // walks the whole tree, as the worker does
  }
}

TEST_CASE("ParseJson refuses documents nested deeper, naming the limit", "[json][negative]") {
  for (int depth : {kMaxJsonDepth + 1, 50000}) {
    for (const auto& [path, text] : ThreePaths(depth)) {
      INFO(path << " depth " << depth);
      std::string error;
      CHECK(ParseJson(text, &error).is_discarded());
      CHECK(error == "nests arrays/objects deeper than 1024 levels");
      error.clear();
      CHECK(ParseOrderedJson(text, &error).is_discarded());
      CHECK(error == "nests arrays/objects deeper than 1024 levels");
    }
  }
  // Objects count as arrays do.
  std::string objects;
  for (int i = 0; i < kMaxJsonDepth + 1; ++i) objects += "{\"a\": ";
  objects += "1" + std::string(kMaxJsonDepth + 1, '}');
  std::string error;
  CHECK(ParseJson(objects, &error).is_discarded());
  CHECK(error == "nests arrays/objects deeper than 1024 levels");
}

TEST_CASE("ParseJson says when a document is not JSON", "[json][negative]") {
  std::string error;
  CHECK(ParseJson("{oops", &error).is_discarded());
  CHECK(error == "is not valid JSON");
  error.clear();
  CHECK(ParseOrderedJson("[1,", &error).is_discarded());
  CHECK(error == "is not valid JSON");
}

TEST_CASE("JsonDepthWithin counts brackets outside strings only", "[json]") {
  CHECK(JsonDepthWithin("1", 0));
  CHECK(JsonDepthWithin("[]", 1));
  CHECK_FALSE(JsonDepthWithin("[]", 0));
  CHECK(JsonDepthWithin("[[], [[]], {}]", 3));
  CHECK_FALSE(JsonDepthWithin("[[], [[]], {}]", 2));
  CHECK(JsonDepthWithin(R"js(["[[[[{{{{"])js", 1));
  CHECK(JsonDepthWithin(R"js(["\"[[[[", "\\"])js", 1));    // escaped quote stays in the string
  CHECK_FALSE(JsonDepthWithin(R"js(["\\", [[]]])js", 2));  // escaped backslash ends nothing
  const nlohmann::ordered_json ordered = ParseOrderedJson(R"js({"b": 1, "a": [2]})js");
  CHECK(ordered.dump() == R"js({"b":1,"a":[2]})js");
}

}  // namespace
}  // namespace warmpool
