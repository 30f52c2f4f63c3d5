#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "celery/result.h"

namespace warmpool::celery {
namespace {

using nlohmann::json;

constexpr double kNow = 1795982240.304333;  // 2026-11-29T19:57:20.304333

TEST_CASE("EncodeResultMeta writes SUCCESS as Celery 5.2.6 does", "[celery][result]") {
  std::string text = EncodeResultMeta(SuccessMeta("id-1", 6, kNow));
  CHECK(text == R"({"status":"SUCCESS","result":6,"traceback":null,"children":[],)"
                R"("date_done":"2026-11-29T19:57:20.304333","task_id":"id-1"})");
  CHECK(StoredStatus(text) == std::optional<std::string>("SUCCESS"));
}

TEST_CASE("EncodeResultMeta writes exception states", "[celery][result]") {
  struct Case {
    const char* name;
    ResultMeta meta;
    const char* status;
    json result;
    bool has_date;
  };
  std::vector<Case> cases = {
      {"not registered",
       FailureMeta("i", NotRegistered("tasks.unknown"), std::nullopt, kNow),
       "FAILURE",
       {{"exc_type", "NotRegistered"},
        {"exc_message", {"tasks.unknown"}},
        {"exc_module", "celery.exceptions"}},
       true},
      {"expired",
       RevokedMeta("i", TaskRevokedExpired(), kNow),
       "REVOKED",
       {{"exc_type", "TaskRevokedError"},
        {"exc_message", {"expired"}},
        {"exc_module", "celery.exceptions"}},
       true},
      {"hard limit",
       FailureMeta("i", TimeLimitExceeded(2), "tb", kNow),
       "FAILURE",
       {{"exc_type", "TimeLimitExceeded"},
        {"exc_message", {2.0}},
        {"exc_module", "billiard.exceptions"}},
       true},
      {"retry",
       RetryMeta("i", {"KeyError", "builtins", {"again"}}, "tb"),
       "RETRY",
       {{"exc_type", "KeyError"}, {"exc_message", {"again"}}, {"exc_module", "builtins"}},
       false},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      json j = json::parse(EncodeResultMeta(c.meta));
      CHECK(j["status"] == c.status);
      CHECK(j["result"] == c.result);
      CHECK(j["task_id"] == "i");
      CHECK(j["children"] == json::array());
      CHECK(j["date_done"].is_null() == !c.has_date);
    }
  }
}

TEST_CASE("STARTED carries pid and hostname, optional ids appear only when set",
          "[celery][result]") {
  ResultMeta m = StartedMeta("i", 42, "w@h");
  m.parent_id.append("p");  // not operator=: GCC 12 -Wrestrict false positive
  json j = json::parse(EncodeResultMeta(m));
  CHECK(j["status"] == "STARTED");
  CHECK(j["result"] == json{{"pid", 42}, {"hostname", "w@h"}});
  CHECK(j["parent_id"] == "p");
  CHECK_FALSE(j.contains("group_id"));
  CHECK(ResultKey("abc") == "celery-task-meta-abc");
}

TEST_CASE("ExceptionInfo repr and StoredStatus on bad input", "[celery][result]") {
  CHECK(NotRegistered("x").Repr() == "NotRegistered('x')");
  CHECK(TaskRevoked().Repr() == "TaskRevokedError('revoked')");
  CHECK(TaskRevoked().module == "celery.exceptions");
  CHECK(ExceptionInfo{"ValueError", "builtins", {"boom", 42}}.Repr() == "ValueError('boom', 42)");
  CHECK_FALSE(StoredStatus("not json").has_value());
  CHECK_FALSE(StoredStatus("[]").has_value());
}

}  // namespace
}  // namespace warmpool::celery
