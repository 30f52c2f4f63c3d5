#include "celery/kombu_keys.h"

#include <catch2/catch.hpp>

namespace warmpool::kombu {
namespace {

const std::vector<int> kSteps = {0, 3, 6, 9};

TEST_CASE("Priority sub-lists are named as kombu names them", "[kombu]") {
  CHECK(PriorityListKey("", "gpu", 0) == "gpu");
  CHECK(PriorityListKey("", "gpu", 3) == std::string("gpu\x06\x16"
                                                     "3"));
  CHECK(PriorityListKey("p:", "gpu", 9) == std::string("p:gpu\x06\x16"
                                                       "9"));
  CHECK(PriorityListKeys("", "celery", kSteps) == std::vector<std::string>{"celery",
                                                                           "celery\x06\x16"
                                                                           "3",
                                                                           "celery\x06\x16"
                                                                           "6",
                                                                           "celery\x06\x16"
                                                                           "9"});
}

TEST_CASE("Message priority maps to kombu's step (bisect)", "[kombu]") {
  // clang-format off
  const std::pair<int, int> cases[] = {{0, 0}, {2, 0}, {3, 3}, {5, 3}, {6, 6}, {8, 6}, {9, 9},
                                       {12, 9}, {-1, 0}};
  // clang-format on
  for (auto [priority, step] : cases) {
    DYNAMIC_SECTION("priority " << priority) { CHECK(PriorityStep(priority, kSteps) == step); }
  }
  CHECK(PriorityStep(7, {0, 5}) == 5);
}

TEST_CASE("Consume order is every queue per step, lowest step first", "[kombu]") {
  auto keys = ConsumeOrder("", {"a", "b"}, {0, 3});
  CHECK(keys == std::vector<std::string>{"a", "b",
                                         "a\x06\x16"
                                         "3",
                                         "b\x06\x16"
                                         "3"});
}

TEST_CASE("QueueFromListKey strips prefix and priority suffix", "[kombu]") {
  CHECK(QueueFromListKey("p:",
                         "p:gpu\x06\x16"
                         "6") == "gpu");
  CHECK(QueueFromListKey("", "celery") == "celery");
}

TEST_CASE("Fanout channels carry the DB number", "[kombu]") {
  CHECK(FanoutChannel("", 0, "celeryev", "worker.heartbeat") == "/0.celeryev/worker.heartbeat");
  CHECK(FanoutChannel("x", 2, "celery.pidbox", "") == "x/2.celery.pidbox");
}

}  // namespace
}  // namespace warmpool::kombu

namespace warmpool::kombu {
namespace {

TEST_CASE("Direct-exchange lookup finds the queue bound with a routing key", "[kombu]") {
  const std::vector<std::string> members = {
      "celery\x06\x16\x06\x16"
      "celery",
      "gpu.high\x06\x16\x06\x16"
      "gpu",
      "broken"};
  CHECK(QueueForRoutingKey(members, "gpu.high") == "gpu");
  CHECK(QueueForRoutingKey(members, "celery") == "celery");
  CHECK_FALSE(QueueForRoutingKey(members, "gpu").has_value());
  CHECK_FALSE(QueueForRoutingKey({}, "celery").has_value());
}

}  // namespace
}  // namespace warmpool::kombu
