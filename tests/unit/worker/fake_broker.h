#pragma once

// In-memory BrokerApi and ResultStoreApi for tests of the worker's parts without Redis: they
// record every call and can be told to fail the next calls with a RedisIoError.
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redis/errors.h"
#include "worker/broker_api.h"
#include "worker/result_store.h"

namespace warmpool::worker::testing {

class FakeBroker : public BrokerApi {
 public:
  struct FinishCall {
    std::vector<FinishOp> ops;
    int backend_db = 0;
    long expires = 0;
    bool with_fetch = false;
  };
  struct AckCall {
    std::string tag, push_key, push_value;
  };

  // Calls of FinishMany/FinishManyThenFetch (and AckMany) that throw before succeeding.
  int fail_finishes = 0;
  int fail_ack_many = 0;
  std::vector<Fetched> to_fetch;  // what the next Fetch / FinishManyThenFetch returns

  std::vector<FinishCall> finish_calls;            // the ones that succeeded
  int finish_attempts = 0;                         // including failed ones
  std::vector<std::vector<AckOp>> ack_many_calls;  // succeeded
  int ack_many_attempts = 0;
  std::vector<AckCall> acks;
  std::vector<std::string> restored;
  std::vector<std::pair<std::string, std::string>> published;

  std::vector<Fetched> Fetch(const std::vector<std::string>&, const std::vector<std::string>&, int,
                             double) override {
    std::lock_guard lock(mu_);
    return std::exchange(to_fetch, {});
  }
  void Ack(const std::string& tag, const std::string& push_key,
           const std::string& push_value) override {
    std::lock_guard lock(mu_);
    acks.push_back({tag, push_key, push_value});
  }
  void AckMany(const std::vector<AckOp>& ops) override {
    std::lock_guard lock(mu_);
    ++ack_many_attempts;
    if (fail_ack_many > 0) {
      --fail_ack_many;
      throw RedisIoError("fake: connection reset");
    }
    ack_many_calls.push_back(ops);
  }
  void FinishMany(const std::vector<FinishOp>& ops, int backend_db, long expires) override {
    std::lock_guard lock(mu_);
    RecordFinish(ops, backend_db, expires, false);
  }
  void FinishManyThenFetch(const std::vector<FinishOp>& ops, int backend_db, long expires,
                           const std::vector<std::string>&, const std::vector<std::string>&, int,
                           double, std::vector<Fetched>* fetched) override {
    std::lock_guard lock(mu_);
    *fetched = std::exchange(to_fetch, {});
    RecordFinish(ops, backend_db, expires, true);
  }
  RestoreResult Restore(const std::string& tag) override {
    std::lock_guard lock(mu_);
    restored.push_back(tag);
    return RestoreResult::kRestored;
  }
  void RefreshScores(const std::vector<std::string>&, double) override {}
  int SweepStale(double, double, const std::function<bool(const std::string&)>&) override {
    return 0;
  }
  int RecoverOwn(const std::function<bool(const std::string&)>&) override { return 0; }
  void Publish(const std::string& channel, const std::string& payload) override {
    std::lock_guard lock(mu_);
    published.emplace_back(channel, payload);
  }
  void DeclareQueues(const std::vector<std::string>&) override {}
  const std::string& deadletter_key() const override { return deadletter_key_; }

  size_t finished() {
    std::lock_guard lock(mu_);
    return finish_calls.size();
  }

 private:
  void RecordFinish(const std::vector<FinishOp>& ops, int backend_db, long expires, bool fetch) {
    ++finish_attempts;
    if (fail_finishes > 0) {
      --fail_finishes;
      throw RedisIoError("fake: connection reset");
    }
    finish_calls.push_back({ops, backend_db, expires, fetch});
  }

  std::mutex mu_;
  const std::string deadletter_key_ = "warmpool.deadletter";
};

class FakeResults : public ResultStoreApi {
 public:
  int fail_store_many = 0;
  std::vector<celery::ResultMeta> stored;  // Store and StoreMany, in order
  int store_many_calls = 0;

  bool Store(const celery::ResultMeta& meta) override {
    std::lock_guard lock(mu_);
    stored.push_back(meta);
    return true;
  }
  void StoreMany(const std::vector<const celery::ResultMeta*>& metas) override {
    std::lock_guard lock(mu_);
    if (fail_store_many > 0) {
      --fail_store_many;
      throw RedisIoError("fake: connection reset");
    }
    ++store_many_calls;
    for (const auto* m : metas) stored.push_back(*m);
  }
  std::optional<std::string> Status(const std::string&) override { return std::nullopt; }

 private:
  std::mutex mu_;
};

}  // namespace warmpool::worker::testing
