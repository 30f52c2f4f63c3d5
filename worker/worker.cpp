#include "worker/worker.h"

#include <algorithm>
#include <sys/resource.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "celery/message.h"
#include "celery/result.h"
#include "celery/time.h"
#include "celery/kombu_keys.h"
#include "common/logging.h"
#include "redis/errors.h"
#include "worker/canvas.h"
#include "worker/health_server.h"
#include "worker/remote_control.h"
#include "worker/uuid.h"

namespace warmpool::worker {

enum Phase : int { kQueued, kRunning, kFinishing, kDone, kAbandoned };

// One message this worker holds (ETA-held, ready, running or finishing).
struct Job {
  Fetched fetched;
  celery::TaskMessage msg;
  std::string task_name;  // resolved registered name
  const TaskFunction* fn = nullptr;
  double taken_at = 0;  // wall time taken (or ETA due)
  std::atomic<int> phase{kQueued};
  TaskContext ctx;
  std::chrono::steady_clock::time_point started{};                     // guarded by Worker::mu_
  std::optional<std::chrono::steady_clock::time_point> hard_deadline;  // guarded by mu_
  std::optional<double> hard_limit_seconds;
  int slot = -1;  // executor slot while running; guarded by Worker::mu_
};

struct Outcome {
  enum class Kind { kSuccess, kFailure, kRetry, kRevoked, kSkip };
  Kind kind = Kind::kSuccess;
  nlohmann::json value;
  celery::ExceptionInfo exc;
  std::optional<std::string> traceback;
  double countdown = 0;
  double runtime = 0;
  int signum = 0;  // kRevoked by revoke(terminate=True): the signal asked for
};

struct Finishing {
  std::shared_ptr<Job> job;
  Outcome outcome;
};

// A take piggy-backed on a finish (RunJob's inline path).
struct FetchRequest {
  std::vector<std::string> keys;    // consume order
  std::vector<std::string> queues;  // queue of each key
  int room = 0;
  std::vector<Fetched> fetched;
  bool attempted = false;                              // the combined pipeline was sent
  bool ok = false;                                     // ... and every reply was read without error
  std::unique_lock<std::mutex>* fetch_lock = nullptr;  // released when the attempt fails
};

namespace {

using Clock = std::chrono::steady_clock;

// How long the finisher gathers results before one write, and the most it writes at once.
constexpr auto kFinishLinger = std::chrono::milliseconds(1);
constexpr size_t kFinishBatchMax = 256;

std::string Traceback(const std::string& task, const celery::ExceptionInfo& exc) {
  return "Traceback (most recent call last):\n  File \"warmpool-worker\", in " + task + "\n" +
         exc.type + ": " + exc.Repr() + "\n";
}

std::string Truncate(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

nlohmann::json TimeOrNull(const std::optional<double>& t) {
  return t ? nlohmann::json(celery::FormatIsoUtc(*t)) : nlohmann::json(nullptr);
}

}  // namespace

Worker::Worker(WorkerOptions options, const TaskRegistry& registry)
    : options_(std::move(options)), registry_(registry) {
  metrics_ = std::make_unique<WorkerMetrics>();
  size_t conns = static_cast<size_t>(options_.concurrency) + 4;
  broker_ = std::make_unique<Broker>(
      options_.broker, options_.key_prefix, options_.hostname, options_.deadletter_key, conns,
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.visibility_timeout));
  results_ = std::make_unique<ResultStore>(options_.result_backend, options_.result_expires, conns);
  events_ = std::make_unique<EventDispatcher>(*broker_, options_.key_prefix, options_.broker.db,
                                              options_.hostname, options_.heartbeat,
                                              options_.task_events);
  queue_order_ = options_.queues;
  same_server_ = options_.broker.host == options_.result_backend.host &&
                 options_.broker.port == options_.result_backend.port &&
                 options_.broker.username == options_.result_backend.username &&
                 options_.broker.password == options_.result_backend.password;
  last_tick_.store(Clock::now().time_since_epoch().count());
  if (options_.health_listen != "off" && !options_.health_listen.empty()) {
    health_ = std::make_unique<HealthServer>(
        options_.health_listen,
        [this] {
          auto last = Clock::time_point(Clock::duration(last_tick_.load()));
          return Clock::now() - last < std::chrono::seconds(30);
        },
        [this] { return ready_.load() && !shutdown_.load(); }, metrics_->registry());
  }
}

Worker::~Worker() { JoinThreads(); }

void Worker::JoinThreads() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stop_executors_ = true;
    threads.swap(threads_);
  }
  work_cv_.notify_all();
  for (auto& t : threads) {
    if (t.joinable()) t.join();
  }
  {
    std::lock_guard lock(mu_);
    stop_finisher_ = true;
  }
  finish_cv_.notify_all();
  if (finisher_.joinable()) finisher_.join();
}

int Worker::health_port() const { return health_ ? health_->port() : 0; }

nlohmann::json Worker::RequestInfo(const Job& job, const nlohmann::json& time_start) const {
  const celery::TaskMessage& m = job.msg;
  return {
      {"id", m.id},
      {"name", job.task_name},
      {"args", m.args},
      {"kwargs", m.kwargs},
      {"type", job.task_name},
      {"hostname", options_.hostname},
      {"time_start", time_start},
      {"acknowledged", !options_.acks_late && !time_start.is_null()},
      {"delivery_info",
       {{"exchange", m.exchange},
        {"routing_key", m.routing_key},
        {"priority", m.priority},
        {"redelivered", m.redelivered}}},
      {"worker_pid", time_start.is_null() ? nlohmann::json(nullptr) : nlohmann::json(getpid())}};
}

nlohmann::json Worker::ActiveTasks() {
  const auto now_steady = Clock::now();
  const double now = Now();
  nlohmann::json out = nlohmann::json::array();
  std::lock_guard lock(mu_);
  for (const auto& [slot, job] : running_) {
    // time_start as Unix seconds.
    out.push_back(
        RequestInfo(*job, now - std::chrono::duration<double>(now_steady - job->started).count()));
  }
  return out;
}

nlohmann::json Worker::ReservedTasks() {
  nlohmann::json out = nlohmann::json::array();
  std::lock_guard lock(mu_);
  for (const auto& job : ready_jobs_) out.push_back(RequestInfo(*job, nullptr));
  return out;
}

nlohmann::json Worker::ScheduledTasks() {
  nlohmann::json out = nlohmann::json::array();
  std::lock_guard fetch_lock(fetch_mu_);  // eta_ is consumer state
  for (const auto& [eta, job] : eta_) {
    out.push_back({{"eta", celery::FormatIsoUtc(eta)},
                   {"priority", job->msg.priority},
                   {"request", RequestInfo(*job, nullptr)}});
  }
  return out;
}

nlohmann::json Worker::Stats() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  nlohmann::json totals = nlohmann::json::object();
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, count] : totals_) totals[name] = count;
  }
  // The fields of Celery's `inspect stats` that apply here (no credentials).
  return {
      {"total", totals},
      {"pid", getpid()},
      {"uptime",
       static_cast<long>(std::chrono::duration<double>(Clock::now() - started_at_).count())},
      {"pool",
       {{"implementation", "warmpool-worker threads"}, {"max-concurrency", options_.concurrency}}},
      {"broker",
       {{"hostname", options_.broker.host},
        {"port", options_.broker.port},
        {"transport", "redis"},
        {"virtual_host", std::to_string(options_.broker.db)}}},
      {"prefetch_count", options_.prefetch_limit()},
      {"rusage",
       {{"utime", seconds(usage.ru_utime)},
        {"stime", seconds(usage.ru_stime)},
        {"maxrss", usage.ru_maxrss}}}};
}

double Worker::Now() const {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Worker::RequestShutdown(bool cold) {
  if (cold) cold_.store(true);
  {
    std::lock_guard lock(mu_);
    shutdown_.store(true);
  }
  main_cv_.notify_all();
}

bool Worker::Revoked(const std::string& id) {
  std::lock_guard lock(mu_);
  return revoked_.count(id) > 0;
}

bool Worker::Held(const std::string& tag) {
  std::lock_guard lock(mu_);
  return held_.count(tag) > 0;
}

void Worker::LogTask(const Job& job, const std::string& state, double runtime,
                     const std::string& detail) {
  metrics_->CountTask(state);
  auto level = state == "SUCCESS" || state == "RETRY" ? spdlog::level::info : spdlog::level::warn;
  if (!spdlog::should_log(level)) return;
  nlohmann::json fields = {
      {"id", job.msg.id},     {"name", job.msg.task},       {"state", state},
      {"runtime_s", runtime}, {"queue", job.fetched.queue}, {"retries", job.msg.retries}};
  if (!detail.empty()) fields["detail"] = detail;
  LogEvent(level, "task", fields);
}

// --- main loop ----------------------------------------------------------------------------

bool Worker::ConnectAndRecover() {
  auto backoff = std::chrono::milliseconds(100);
  while (!shutdown_.load()) {
    try {
      broker_->DeclareQueues(options_.queues);
      int own = broker_->RecoverOwn([this](const std::string& t) { return Held(t); });
      int stale = broker_->SweepStale(Now(), options_.visibility_timeout.count(),
                                      [this](const std::string& t) { return Held(t); });
      LogEvent(spdlog::level::info, "worker_ready",
               {{"hostname", options_.hostname},
                {"broker", options_.broker.Redacted()},
                {"result_backend", options_.result_backend.Redacted()},
                {"queues", options_.queues},
                {"concurrency", options_.concurrency},
                {"prefetch_limit", options_.prefetch_limit()},
                {"restored_own", own},
                {"restored_stale", stale}});
      return true;
    } catch (const RedisError& e) {
      metrics_->CountRedisError();
      LogEvent(spdlog::level::warn, "redis_unavailable",
               {{"error", e.what()}, {"retry_in_ms", backoff.count()}});
      std::unique_lock lock(mu_);
      main_cv_.wait_for(lock, backoff, [this] { return shutdown_.load(); });
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
  }
  return false;
}

int Worker::Run() {
  {
    std::lock_guard lock(mu_);
    for (int i = 0; i < options_.concurrency; ++i) {
      threads_.emplace_back([this, i] { ExecutorLoop(i); });
    }
    finisher_ = std::thread([this] { FinisherLoop(); });
  }
  if (!ConnectAndRecover()) {
    Shutdown();
    return 0;
  }
  ready_.store(true);
  events_->SendWorker("worker-online", options_.heartbeat_interval.count(), 0, 0);
  if (options_.remote_control) {
    RemoteControl::Hooks hooks;
    hooks.set_task_events = [this](bool on) { events_->SetTaskEvents(on); };
    hooks.revoke = [this](const std::vector<std::string>& ids, bool terminate, int signum) {
      std::vector<std::string> running;
      {
        std::lock_guard lock(mu_);
        for (const auto& id : ids) {
          if (revoked_.size() < 50000) revoked_.insert(id);  // Celery keeps a bounded set too
        }
        if (!terminate) return running;
        const std::unordered_set<std::string> wanted(ids.begin(), ids.end());
        for (const auto& [slot, job] : running_) {
          if (wanted.count(job->msg.id)) {
            terminate_[job->msg.id] = signum;  // the consumer loop stops it (CheckHardLimits)
            running.push_back(job->msg.id);
          }
        }
      }
      if (!running.empty()) KickConsumer();
      return running;
    };
    hooks.send_heartbeat = [this] {
      events_->SendWorker("worker-heartbeat", 5.0, 0, processed_.load());
    };
    hooks.active = [this] { return ActiveTasks(); };
    hooks.reserved = [this] { return ReservedTasks(); };
    hooks.scheduled = [this] { return ScheduledTasks(); };
    hooks.stats = [this] { return Stats(); };
    hooks.registered = [this] { return registry_.Names(); };
    control_ = std::make_unique<RemoteControl>(options_.broker, options_.key_prefix,
                                               options_.hostname, std::move(hooks));
  }

  const auto refresh_every = std::min<std::chrono::duration<double>>(
      options_.heartbeat_interval, options_.visibility_timeout / 3);
  const auto sweep_every = std::clamp<std::chrono::duration<double>>(
      options_.visibility_timeout / 2, std::chrono::seconds(1), std::chrono::seconds(60));
  auto next_heartbeat = Clock::now() + std::chrono::duration_cast<Clock::duration>(refresh_every);
  auto next_sweep = Clock::now() + std::chrono::duration_cast<Clock::duration>(sweep_every);
  auto idle_wait = std::chrono::microseconds(500);
  auto error_backoff = std::chrono::milliseconds(100);

  while (!shutdown_.load()) {
    last_tick_.store(Clock::now().time_since_epoch().count());
    bool got_any = false;
    int room = 0;
    uint64_t kicks_seen;
    {
      std::lock_guard lock(mu_);
      kicks_seen = kicks_;
    }
    try {
      std::lock_guard fetch_lock(fetch_mu_);
      if (need_recover_) {
        broker_->RecoverOwn([this](const std::string& t) { return Held(t); });
        need_recover_ = false;
      }
      CheckHardLimits();
      PromoteDueEta(Now());
      if (Clock::now() >= next_heartbeat) {
        Heartbeat(Now());
        next_heartbeat = Clock::now() + std::chrono::duration_cast<Clock::duration>(refresh_every);
      }
      if (Clock::now() >= next_sweep) {
        broker_->SweepStale(Now(), options_.visibility_timeout.count(),
                            [this](const std::string& t) { return Held(t); });
        next_sweep = Clock::now() + std::chrono::duration_cast<Clock::duration>(sweep_every);
      }
      {
        std::lock_guard lock(mu_);
        room = options_.prefetch_limit() - reserved_;
      }
      if (room > 0) got_any = FetchAndHandle(room) > 0;
      ready_.store(true);
      error_backoff = std::chrono::milliseconds(100);
    } catch (const RedisError& e) {
      metrics_->CountRedisError();
      need_recover_ = true;
      ready_.store(false);
      LogEvent(spdlog::level::warn, "redis_unavailable",
               {{"error", e.what()}, {"retry_in_ms", error_backoff.count()}});
      std::unique_lock lock(mu_);
      main_cv_.wait_for(lock, error_backoff, [this] { return shutdown_.load(); });
      error_backoff = std::min(error_backoff * 2, std::chrono::milliseconds(2000));
      continue;
    }
    if (got_any) {
      idle_wait = std::chrono::microseconds(500);
      continue;
    }
    // Nothing taken: wait for a finished job (room), the next ETA/heartbeat, or the poll pause.
    auto wait = room > 0
                    ? std::chrono::duration_cast<Clock::duration>(idle_wait)
                    : std::chrono::duration_cast<Clock::duration>(std::chrono::milliseconds(50));
    if (room > 0) idle_wait = std::min(idle_wait * 2, std::chrono::microseconds(50000));
    std::optional<double> next_eta;
    {
      std::lock_guard fetch_lock(fetch_mu_);
      if (!eta_.empty()) next_eta = eta_.begin()->first;
    }
    if (next_eta) {
      double until = *next_eta - Now();
      wait = std::min(wait, std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(std::max(until, 0.0))));
    }
    std::unique_lock lock(mu_);
    main_cv_.wait_for(lock, wait, [&] { return shutdown_.load() || kicks_ != kicks_seen; });
  }
  Shutdown();
  return 0;
}

std::vector<std::string> Worker::ConsumeKeys(std::vector<std::string>* key_queues) const {
  auto keys = kombu::ConsumeOrder(options_.key_prefix, queue_order_, {0, 3, 6, 9});
  for (const auto& k : keys) key_queues->push_back(kombu::QueueFromListKey(options_.key_prefix, k));
  return keys;
}

int Worker::FetchAndHandle(int room) {
  std::vector<std::string> key_queues;
  auto keys = ConsumeKeys(&key_queues);
  return HandleFetchedBatch(broker_->Fetch(keys, key_queues, room, Now()));
}

int Worker::HandleFetchedBatch(std::vector<Fetched> fetched) {
  if (fetched.empty()) return 0;
  // kombu round_robin: the queue just consumed goes to the end.
  const std::string last = fetched.back().queue;
  auto it = std::find(queue_order_.begin(), queue_order_.end(), last);
  if (it != queue_order_.end() && queue_order_.size() > 1)
    std::rotate(it, it + 1, queue_order_.end());
  int n = static_cast<int>(fetched.size());
  for (auto& f : fetched) {
    try {
      HandleFetched(std::move(f));
    } catch (const RedisError&) {
      need_recover_ = true;  // the rest are in our in-flight set: recovered next pass
      throw;
    }
  }
  return n;
}

int Worker::TryFetchInline() {
  std::unique_lock fetch_lock(fetch_mu_, std::try_to_lock);
  if (!fetch_lock.owns_lock() || shutdown_.load() || need_recover_) return 0;
  int room;
  {
    std::lock_guard lock(mu_);
    if (!ready_jobs_.empty()) return 1;  // more work queued: nothing to take yet
    room = options_.prefetch_limit() - reserved_;
  }
  if (room <= 0) return 1;  // full; a finishing job will kick the consumer loop
  try {
    return FetchAndHandle(room);
  } catch (const RedisError&) {
    // The consumer loop sees the same error on its next pass, logs it and backs off.
    metrics_->CountRedisError();
    need_recover_ = true;
    return 0;
  }
}

void Worker::Heartbeat(double now) {
  std::vector<std::string> tags;
  int active;
  {
    std::lock_guard lock(mu_);
    tags.reserve(held_.size());
    for (const auto& [tag, job] : held_) tags.push_back(tag);
    active = static_cast<int>(running_.size());
    metrics_->SetRunning(active);
    metrics_->SetReserved(reserved_);
  }
  metrics_->SetEtaHeld(static_cast<double>(eta_.size()));
  events_->SendWorker("worker-heartbeat", options_.heartbeat_interval.count(), active,
                      processed_.load());
  broker_->RefreshScores(tags, now);
}

void Worker::DeadLetter(const Fetched& fetched, const celery::TaskMessage& partial,
                        const std::string& reason) {
  nlohmann::json entry = {
      {"reason", reason}, {"queue", fetched.queue}, {"worker", options_.hostname}, {"time", Now()},
      {"id", partial.id}, {"task", partial.task},   {"message", fetched.envelope}};
  broker_->Ack(fetched.tag, broker_->deadletter_key(), entry.dump());
  LogEvent(spdlog::level::err, "message_deadlettered",
           {{"queue", fetched.queue},
            {"tag", fetched.tag},
            {"id", partial.id},
            {"name", partial.task},
            {"reason", reason},
            {"deadletter_key", broker_->deadletter_key()}});
  metrics_->CountTask("DEADLETTER");
}

void Worker::HandleFetched(Fetched fetched) {
  if (fetched.kind == Fetched::Kind::kDeadLettered) {
    LogEvent(spdlog::level::err, "message_deadlettered",
             {{"queue", fetched.queue},
              {"reason", fetched.reason},
              {"deadletter_key", broker_->deadletter_key()}});
    metrics_->CountTask("DEADLETTER");
    return;
  }
  auto job = std::make_shared<Job>();
  job->taken_at = Now();
  Status status = celery::DecodeTaskMessage(fetched.envelope, &job->msg);
  job->fetched = std::move(fetched);
  if (!status.ok()) {
    DeadLetter(job->fetched, job->msg, status.message());
    return;
  }
  const celery::TaskMessage& msg = job->msg;
  job->fn = registry_.Find(msg.task, &job->task_name);
  if (job->fn == nullptr) {
    // Celery: error log, reject (= ack on Redis), FAILURE NotRegistered, task-failed.
    auto exc = celery::NotRegistered(msg.task);
    if (!msg.ignore_result) results_->Store(celery::FailureMeta(msg.id, exc, std::nullopt, Now()));
    broker_->Ack(job->fetched.tag);
    LogEvent(spdlog::level::err, "task_not_registered",
             {{"id", msg.id}, {"name", msg.task}, {"queue", job->fetched.queue}});
    LogTask(*job, "FAILURE", 0, exc.Repr());
    events_->SendTask("task-failed",
                      {{"uuid", msg.id}, {"exception", exc.Repr()}, {"traceback", nullptr}});
    return;
  }
  events_->SendTask("task-received",
                    {{"uuid", msg.id},
                     {"name", msg.task},
                     {"args", msg.argsrepr},
                     {"kwargs", msg.kwargsrepr},
                     {"root_id", msg.root_id},
                     {"parent_id", msg.parent_id.empty() ? nlohmann::json(nullptr)
                                                         : nlohmann::json(msg.parent_id)},
                     {"retries", msg.retries},
                     {"eta", TimeOrNull(msg.eta)},
                     {"expires", TimeOrNull(msg.expires)}});
  double now = Now();
  const bool revoked = Revoked(msg.id);
  if (revoked || (msg.expires && now >= *msg.expires)) {
    auto exc = revoked ? celery::TaskRevoked() : celery::TaskRevokedExpired();
    if (!msg.ignore_result) results_->Store(celery::RevokedMeta(msg.id, exc, now));
    broker_->Ack(job->fetched.tag);
    LogTask(*job, "REVOKED", 0, revoked ? "revoked" : "expired");
    events_->SendTask(
        "task-revoked",
        {{"uuid", msg.id}, {"terminated", false}, {"signum", nullptr}, {"expired", !revoked}});
    return;
  }
  {
    std::lock_guard lock(mu_);
    held_[job->fetched.tag] = job;
  }
  if (msg.eta && *msg.eta > now) {
    // Held in memory, still in unacked (scores refreshed by Heartbeat); not counted as reserved.
    LogEvent(spdlog::level::debug, "task_eta_held", {{"id", msg.id}, {"eta", *msg.eta}});
    eta_.emplace(*msg.eta, std::move(job));
    return;
  }
  EnqueueReady(std::move(job));
}

void Worker::EnqueueReady(std::shared_ptr<Job> job) {
  {
    std::lock_guard lock(mu_);
    ++reserved_;
    ready_jobs_.push_back(std::move(job));
  }
  work_cv_.notify_one();
}

void Worker::PromoteDueEta(double now) {
  while (!eta_.empty() && eta_.begin()->first <= now) {
    auto job = std::move(eta_.begin()->second);
    eta_.erase(eta_.begin());
    job->taken_at = now;
    EnqueueReady(std::move(job));
  }
}

bool Worker::Abandon(const std::shared_ptr<Job>& job) {
  int expected = kRunning;
  if (!job->phase.compare_exchange_strong(expected, kAbandoned)) return false;
  job->ctx.RequestCancelForWorker();
  // The executor thread is stuck in the task: detach it and start a replacement in its slot.
  std::lock_guard lock(mu_);
  int slot = job->slot;
  running_.erase(slot);
  threads_[slot].detach();
  threads_[slot] = std::thread([this, slot] { ExecutorLoop(slot); });
  abandoned_threads_.fetch_add(1);
  return true;
}

void Worker::CheckHardLimits() {
  std::vector<std::shared_ptr<Job>> expired;
  std::vector<std::pair<std::shared_ptr<Job>, int>> terminate;
  auto now = Clock::now();
  {
    std::lock_guard lock(mu_);
    for (auto& [slot, job] : running_) {
      if (auto it = terminate_.find(job->msg.id); it != terminate_.end()) {
        terminate.emplace_back(job, it->second);
      } else if (job->hard_deadline && now >= *job->hard_deadline) {
        expired.push_back(job);
      }
    }
    terminate_.clear();
  }
  for (auto& [job, signum] : terminate) {
    if (!Abandon(job)) continue;
    LogEvent(spdlog::level::warn, "task_terminated",
             {{"id", job->msg.id}, {"name", job->msg.task}, {"signum", signum}});
    Outcome out;
    out.kind = Outcome::Kind::kRevoked;
    out.exc = celery::TaskRevokedTerminated();
    out.signum = signum;
    out.runtime = std::chrono::duration<double>(now - job->started).count();
    Finish(job, out);
  }
  for (auto& job : expired) {
    if (!Abandon(job)) continue;
    double limit = job->hard_limit_seconds.value_or(0);
    LogEvent(spdlog::level::err, "task_hard_time_limit",
             {{"id", job->msg.id}, {"name", job->msg.task}, {"limit_s", limit}});
    Outcome out;
    out.kind = Outcome::Kind::kFailure;
    out.exc = celery::TimeLimitExceeded(limit);
    out.traceback = Traceback(job->task_name, out.exc);
    out.runtime = limit;
    Finish(job, out);
  }
}

// --- executors ----------------------------------------------------------------------------

void Worker::ExecutorLoop(int slot) {
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [this] { return stop_executors_ || !ready_jobs_.empty(); });
      if (stop_executors_) return;
      job = std::move(ready_jobs_.front());
      ready_jobs_.pop_front();
      int expected = kQueued;
      if (!job->phase.compare_exchange_strong(expected, kRunning)) continue;
      job->slot = slot;
      job->started = Clock::now();
      running_[slot] = job;
    }
    int took = RunJob(job);
    if (job->phase.load() == kAbandoned) return;  // replaced in this slot; we were detached
    // Take the next messages here rather than waking the consumer loop: no thread hop between
    // tasks when the queue is busy.
    if (took < 0) took = TryFetchInline();
    if (took == 0) KickConsumer();
  }
}

int Worker::RunJob(const std::shared_ptr<Job>& job) {
  const celery::TaskMessage& msg = job->msg;
  Outcome out;
  metrics_->ObserveQueued(std::max(0.0, Now() - job->taken_at));
  try {
    if (Revoked(msg.id)) {
      out.kind = Outcome::Kind::kRevoked;
      out.exc = celery::TaskRevoked();
    } else if (msg.expires && Now() >= *msg.expires) {
      out.kind = Outcome::Kind::kRevoked;
      out.exc = celery::TaskRevokedExpired();
    } else if (msg.redelivered &&
               results_->Status(msg.id) == std::optional<std::string>("SUCCESS")) {
      // Redelivered after a crash between storing SUCCESS and the ack: do not run it twice.
      out.kind = Outcome::Kind::kSkip;
    }
  } catch (const RedisError& e) {
    metrics_->CountRedisError();  // pre-checks are optimisations; run the task anyway
  }
  if (out.kind == Outcome::Kind::kSuccess) {
    // The message's limit, else the task's own default (imagery), else --time-limit.
    auto hard = msg.time_limit ? msg.time_limit : registry_.DefaultTimeLimit(job->task_name);
    if (!hard) hard = options_.time_limit;
    auto soft = msg.soft_time_limit ? msg.soft_time_limit : options_.soft_time_limit;
    job->ctx.id = msg.id;
    job->ctx.name = job->task_name;
    job->ctx.hostname = options_.hostname;
    job->ctx.queue = job->fetched.queue;
    job->ctx.data_root = options_.data_root;
    job->ctx.retries = msg.retries;
    if (soft && *soft > 0) {
      job->ctx.soft_limit_seconds = *soft;
      job->ctx.soft_deadline = job->started + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(*soft));
    }
    if (hard && *hard > 0) {
      std::lock_guard lock(mu_);
      job->hard_limit_seconds = *hard;
      job->hard_deadline = job->started + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(*hard));
    }
    try {
      if (!options_.acks_late) broker_->Ack(job->fetched.tag);
      if (options_.track_started && !msg.ignore_result) {
        results_->Store(
            celery::StartedMeta(msg.id, static_cast<long>(getpid()), options_.hostname));
      }
    } catch (const RedisError& e) {
      metrics_->CountRedisError();
      LogEvent(spdlog::level::warn, "task_start_write_failed",
               {{"id", msg.id}, {"error", e.what()}});
    }
    events_->SendTask("task-started", {{"uuid", msg.id}});
    auto t0 = Clock::now();
    try {
      out.value = (*job->fn)(msg.args, msg.kwargs, job->ctx);
      out.kind = Outcome::Kind::kSuccess;
    } catch (const TaskRetry& r) {
      out.kind = Outcome::Kind::kRetry;
      out.countdown = std::max(0.0, r.countdown().count());
      if (msg.retries >= r.max_retries()) {
        out.kind = Outcome::Kind::kFailure;
        out.exc = r.cause() ? celery::ExceptionInfo{r.cause()->exc_type(), r.cause()->exc_module(),
                                                    r.cause()->exc_args()}
                            : celery::MaxRetriesExceeded("Can't retry " + msg.task + "[" + msg.id +
                                                         "] args:" + msg.argsrepr +
                                                         " kwargs:" + msg.kwargsrepr);
      } else if (r.cause()) {
        out.exc = {r.cause()->exc_type(), r.cause()->exc_module(), r.cause()->exc_args()};
      } else {
        out.exc = {"Retry", "celery.exceptions",
                   nlohmann::json::array({"Retry in " + std::to_string(out.countdown) + "s"})};
      }
    } catch (const TaskError& e) {
      out.kind = Outcome::Kind::kFailure;
      out.exc = {e.exc_type(), e.exc_module(), e.exc_args()};
    } catch (const nlohmann::json::exception& e) {
      out.kind = Outcome::Kind::kFailure;
      out.exc = {"TypeError", "builtins", nlohmann::json::array({std::string(e.what())})};
    } catch (const std::exception& e) {
      out.kind = Outcome::Kind::kFailure;
      out.exc = {"RuntimeError", "builtins", nlohmann::json::array({std::string(e.what())})};
    } catch (...) {
      out.kind = Outcome::Kind::kFailure;
      out.exc = {"RuntimeError", "builtins", nlohmann::json::array({"unknown C++ exception"})};
    }
    out.runtime = std::chrono::duration<double>(Clock::now() - t0).count();
    if (out.kind == Outcome::Kind::kFailure || out.kind == Outcome::Kind::kRetry) {
      out.traceback = Traceback(job->task_name, out.exc);
    }
  }
  int expected = kRunning;
  if (!job->phase.compare_exchange_strong(expected, kFinishing)) return 1;  // abandoned
  {
    std::lock_guard lock(mu_);
    running_.erase(job->slot);
  }
  metrics_->ObserveRuntime(out.runtime);
  // Nothing else queued for the executors: write now on this thread (with whatever already waits
  // for the finisher), saving a thread hop per task; otherwise let the finisher batch it.
  std::vector<Finishing> batch;
  {
    std::lock_guard lock(mu_);
    if (!ready_jobs_.empty()) {
      // Only the first waiting result wakes the finisher; it lingers for the rest (see
      // FinisherLoop), so short tasks cost no thread wake each.
      const bool first = finish_queue_.empty();
      finish_queue_.push_back({job, std::move(out)});
      if (first) finish_cv_.notify_one();
      return 1;
    }
    batch.swap(finish_queue_);
  }
  batch.push_back({job, std::move(out)});
  // With the result backend on the broker's server, finishing and taking the next messages go
  // in one pipeline: one round trip per task.
  std::unique_lock fetch_lock(fetch_mu_, std::defer_lock);
  FetchRequest request;
  FetchRequest* fetch = nullptr;
  if (same_server_ && !shutdown_.load() && !need_recover_ && fetch_lock.try_lock() &&
      !shutdown_.load()) {
    std::lock_guard lock(mu_);
    request.room = options_.prefetch_limit() - reserved_ + static_cast<int>(batch.size());
    if (ready_jobs_.empty() && request.room > 0) fetch = &request;
  }
  if (fetch == nullptr) {
    if (fetch_lock.owns_lock()) fetch_lock.unlock();
    WriteBatch(batch, /*kick=*/false, nullptr);  // ExecutorLoop takes the next or kicks
    return -1;
  }
  request.keys = ConsumeKeys(&request.queues);
  request.fetch_lock = &fetch_lock;
  WriteBatch(batch, /*kick=*/false, fetch);
  if (request.attempted && !request.ok) need_recover_ = true;  // the take may have happened
  if (!fetch_lock.owns_lock()) {
    fetch_lock.lock();
    if (shutdown_.load()) {
      // Shutdown already requeued what it holds; give these back too.
      for (const auto& f : request.fetched) {
        if (f.kind != Fetched::Kind::kMessage) continue;
        try {
          broker_->Restore(f.tag);
        } catch (const RedisError&) {
          metrics_->CountRedisError();  // stays in unacked and the in-flight set: recovered later
        }
      }
      return 1;
    }
  }
  try {
    return HandleFetchedBatch(std::move(request.fetched));
  } catch (const RedisError&) {
    metrics_->CountRedisError();
    need_recover_ = true;
    return 0;
  }
}

void Worker::Finish(const std::shared_ptr<Job>& job, const Outcome& out) {
  {
    std::lock_guard lock(mu_);
    finish_queue_.push_back({job, out});
  }
  finish_cv_.notify_one();
}

void Worker::FinisherLoop() {
  while (true) {
    std::vector<Finishing> batch;
    {
      std::unique_lock lock(mu_);
      finish_cv_.wait(lock, [this] { return stop_finisher_ || !finish_queue_.empty(); });
      if (finish_queue_.empty()) return;  // stop_finisher_
      // Linger: executors running short tasks add more results within microseconds, and one
      // that runs out of queued work writes them all inline with its next take (RunJob). A
      // result waits at most kFinishLinger for this.
      finish_cv_.wait_for(lock, kFinishLinger, [this] {
        return stop_finisher_ || finish_queue_.size() >= kFinishBatchMax;
      });
      if (finish_queue_.empty()) continue;  // written inline meanwhile
      size_t n = std::min(finish_queue_.size(), kFinishBatchMax);
      batch.assign(std::make_move_iterator(finish_queue_.begin()),
                   std::make_move_iterator(finish_queue_.begin() + static_cast<long>(n)));
      finish_queue_.erase(finish_queue_.begin(), finish_queue_.begin() + static_cast<long>(n));
    }
    WriteBatch(batch, /*kick=*/true, nullptr);
  }
}

void Worker::PlanJobCanvas(const Job& job, const Outcome& out, CanvasOutcome outcome, double now,
                           Broker::AckOp* ack, std::vector<celery::ResultMeta>* extra,
                           std::optional<ChordPart>* chord) {
  const celery::TaskMessage& msg = job.msg;
  if (!msg.embed.is_object()) return;
  CanvasEnv env;
  env.hostname = options_.hostname;
  env.now = now;
  env.new_id = NewUuid4;
  const nlohmann::json value = outcome == CanvasOutcome::kSuccess ? out.value : out.exc.ToJson();
  CanvasPlan plan;
  try {
    plan = PlanCanvas(msg, outcome, value, env);
  } catch (const std::exception& e) {  // a bug, never bad data: keep the result anyway
    plan.errors.push_back(std::string("canvas planning failed: ") + e.what());
  }
  for (const auto& error : plan.errors) {
    LogEvent(spdlog::level::err, "canvas_invalid",
             {{"id", msg.id},
              {"name", msg.task},
              {"error", error},
              {"note", "the task's own result is stored; this follow-up is not sent"}});
  }
  for (const auto& m : plan.messages) {
    ack->pushes.push_back({broker_->ListKey(m.queue, m.priority), m.envelope});
    LogEvent(spdlog::level::debug, "canvas_send",
             {{"id", msg.id},
              {"kind", m.kind},
              {"task", m.task},
              {"task_id", m.task_id},
              {"queue", m.queue}});
  }
  for (const auto& id : plan.failed_chain_ids) {
    extra->push_back(celery::FailureMeta(id, out.exc, out.traceback, now));
  }
  if (plan.chord) {
    if (same_server_) {
      *chord = std::move(plan.chord);
    } else {
      LogEvent(spdlog::level::err, "canvas_invalid",
               {{"id", msg.id},
                {"name", msg.task},
                {"group", msg.group},
                {"error",
                 "chord needs the result backend on the broker's Redis server "
                 "(the body is sent in the script that acks)"}});
    }
  }
}

void Worker::WriteBatch(std::vector<Finishing>& batch, bool kick, FetchRequest* fetch) {
  const double now = Now();
  struct Prepared {
    std::string state;
    std::string detail;
    celery::ResultMeta meta;
    bool store = false;
    Broker::AckOp ack;
    std::vector<celery::ResultMeta> extra;  // chain steps failed with this task
    std::optional<ChordPart> chord;
  };
  std::vector<Prepared> prepared(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const Job& job = *batch[i].job;
    const Outcome& out = batch[i].outcome;
    const celery::TaskMessage& msg = job.msg;
    Prepared& p = prepared[i];
    p.store = !msg.ignore_result && out.kind != Outcome::Kind::kSkip;
    p.ack.tag = job.fetched.tag;
    p.ack.force_push = !options_.acks_late;  // already acked at start
    std::optional<CanvasOutcome> canvas;
    switch (out.kind) {
      case Outcome::Kind::kSuccess:
        p.state = "SUCCESS";
        p.meta = celery::SuccessMeta(msg.id, out.value, now);
        p.detail = Truncate(out.value.dump(), 200);
        canvas = CanvasOutcome::kSuccess;
        break;
      case Outcome::Kind::kFailure:
        p.state = "FAILURE";
        p.meta = celery::FailureMeta(msg.id, out.exc, out.traceback, now);
        p.detail = out.exc.Repr();
        canvas = CanvasOutcome::kFailure;
        break;
      case Outcome::Kind::kRevoked:
        p.state = "REVOKED";
        p.meta = celery::RevokedMeta(msg.id, out.exc, now);
        p.detail = out.exc.message.dump();
        canvas = CanvasOutcome::kRevoked;
        break;
      case Outcome::Kind::kRetry: {
        p.state = "RETRY";
        p.meta = celery::RetryMeta(msg.id, out.exc, out.traceback);
        celery::TaskMessage next = msg;
        next.retries = msg.retries + 1;
        next.eta = now + out.countdown;
        next.origin = options_.hostname;
        next.parent_id = msg.id;
        if (next.exchange.empty() && next.routing_key.empty()) {
          next.routing_key = job.fetched.queue;
        }
        // Republished with the same id in the same script that acks the original.
        p.ack.pushes.push_back({broker_->ListKey(job.fetched.queue, msg.priority),
                                celery::EncodeTaskMessageV2(next, NewUuid4())});
        p.detail = "retry in " + std::to_string(out.countdown) + "s: " + out.exc.Repr();
        break;
      }
      case Outcome::Kind::kSkip:
        p.state = "SUCCESS";
        p.detail = "duplicate delivery skipped: SUCCESS already stored";
        break;
    }
    if (!msg.parent_id.empty()) p.meta.parent_id = msg.parent_id;
    if (!msg.group.empty()) p.meta.group_id = msg.group;
    if (canvas) PlanJobCanvas(job, out, *canvas, now, &p.ack, &p.extra, &p.chord);
  }

  // Results first, then acks: a crash in between redelivers a task whose SUCCESS is stored,
  // which RunJob then skips.
  bool stored = false, acked = false;
  auto backoff = std::chrono::milliseconds(50);
  while (!(stored && acked)) {
    try {
      if (same_server_) {
        // One script per task (result, then ack), all in one round trip.
        std::vector<Broker::FinishOp> ops;
        ops.reserve(prepared.size());
        for (const auto& p : prepared) {
          Broker::FinishOp op;
          op.ack = p.ack;
          op.result_key = celery::ResultKey(p.meta.task_id.empty() ? "-" : p.meta.task_id);
          if (p.store) op.result = celery::EncodeResultMeta(p.meta);
          for (const auto& m : p.extra) {
            op.extra_results.emplace_back(celery::ResultKey(m.task_id),
                                          celery::EncodeResultMeta(m));
          }
          op.chord = p.chord;
          ops.push_back(std::move(op));
        }
        const long expires = static_cast<long>(options_.result_expires.count());
        if (fetch != nullptr && !fetch->attempted) {
          fetch->attempted = true;
          broker_->FinishManyThenFetch(ops, options_.result_backend.db, expires, fetch->keys,
                                       fetch->queues, fetch->room, Now(), &fetch->fetched);
          fetch->ok = true;
        } else {
          broker_->FinishMany(ops, options_.result_backend.db, expires);
        }
        stored = acked = true;
      }
      if (!stored) {
        std::vector<const celery::ResultMeta*> metas;
        for (const auto& p : prepared) {
          if (p.store) metas.push_back(&p.meta);
          for (const auto& m : p.extra) metas.push_back(&m);
        }
        results_->StoreMany(metas);
        stored = true;
      }
      if (!acked) {
        std::vector<Broker::AckOp> ops;
        for (const auto& p : prepared) ops.push_back(p.ack);
        broker_->AckMany(ops);
        acked = true;
      }
    } catch (const RedisError& e) {
      metrics_->CountRedisError();
      // Never retry while holding the consumer lock: the loop and shutdown must go on.
      if (fetch != nullptr && fetch->fetch_lock != nullptr && fetch->fetch_lock->owns_lock()) {
        fetch->fetch_lock->unlock();
      }
      if (hard_exit_.load()) {
        for (auto& f : batch) {
          LogEvent(spdlog::level::warn, "task_left_unacked",
                   {{"id", f.job->msg.id},
                    {"error", e.what()},
                    {"note", "restored on restart or by a visibility sweep"}});
          Forget(f.job, kick);
        }
        return;
      }
      LogEvent(spdlog::level::warn, "redis_unavailable",
               {{"error", e.what()}, {"retry_in_ms", backoff.count()}, {"tasks", batch.size()}});
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
  }

  {
    std::lock_guard lock(mu_);
    for (const auto& f : batch) {
      // As Celery's total_count: tasks that ran (not revoked or skipped duplicates).
      const auto kind = f.outcome.kind;
      if (kind == Outcome::Kind::kSuccess || kind == Outcome::Kind::kFailure ||
          kind == Outcome::Kind::kRetry) {
        ++totals_[f.job->task_name];
      }
    }
  }
  std::vector<std::pair<std::string, nlohmann::json>> events;
  for (size_t i = 0; i < batch.size(); ++i) {
    const Job& job = *batch[i].job;
    const Outcome& out = batch[i].outcome;
    const std::string& id = job.msg.id;
    processed_.fetch_add(1);
    LogTask(job, prepared[i].state, out.runtime, prepared[i].detail);
    if (!events_->task_events()) continue;
    switch (out.kind) {
      case Outcome::Kind::kSuccess:
        events.push_back({"task-succeeded",
                          {{"uuid", id},
                           {"result", Truncate(celery::PythonRepr(out.value), 1024)},
                           {"runtime", out.runtime}}});
        break;
      case Outcome::Kind::kFailure:
        events.push_back({"task-failed",
                          {{"uuid", id},
                           {"exception", out.exc.Repr()},
                           {"traceback", out.traceback.value_or("")}}});
        break;
      case Outcome::Kind::kRetry:
        events.push_back({"task-retried",
                          {{"uuid", id},
                           {"exception", out.exc.Repr()},
                           {"traceback", out.traceback.value_or("")}}});
        break;
      case Outcome::Kind::kRevoked:
        events.push_back({"task-revoked",
                          {{"uuid", id},
                           {"terminated", out.signum != 0},
                           {"signum", out.signum != 0 ? nlohmann::json(out.signum) : nullptr},
                           {"expired", out.exc.message == nlohmann::json::array({"expired"})}}});
        break;
      case Outcome::Kind::kSkip:
        break;
    }
  }
  for (auto& [type, fields] : events) events_->SendTask(type, std::move(fields));
  for (auto& f : batch) Forget(f.job, kick);
}

void Worker::Forget(const std::shared_ptr<Job>& job, bool kick) {
  job->phase.store(job->phase.load() == kAbandoned ? kAbandoned : kDone);
  {
    std::lock_guard lock(mu_);
    held_.erase(job->fetched.tag);
    --reserved_;
    if (kick) ++kicks_;
  }
  if (kick || shutdown_.load()) main_cv_.notify_all();
}

void Worker::KickConsumer() {
  {
    std::lock_guard lock(mu_);
    ++kicks_;
  }
  main_cv_.notify_all();
}

void Worker::Requeue(const std::shared_ptr<Job>& job, const char* reason) {
  auto deadline = Clock::now() + std::chrono::seconds(10);
  auto backoff = std::chrono::milliseconds(50);
  while (true) {
    try {
      broker_->Restore(job->fetched.tag);
      LogTask(*job, "REQUEUED", 0, reason);
      break;
    } catch (const RedisError& e) {
      metrics_->CountRedisError();
      if (Clock::now() > deadline) {
        LogEvent(
            spdlog::level::warn, "task_left_unacked",
            {{"id", job->msg.id}, {"error", e.what()}, {"note", "restored on restart or sweep"}});
        break;
      }
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
    }
  }
  std::lock_guard lock(mu_);
  held_.erase(job->fetched.tag);
}

// --- shutdown -----------------------------------------------------------------------------

void Worker::Shutdown() {
  ready_.store(false);
  LogEvent(spdlog::level::info, "worker_shutdown",
           {{"mode", cold_.load() ? "cold" : "warm"},
            {"grace_s", options_.grace.count()},
            {"note", "no blocking pop is ever in flight: messages are taken by a Lua script"}});
  // 1. Requeue everything not started: ETA-held and ready jobs.
  std::vector<std::shared_ptr<Job>> requeue;
  {
    std::lock_guard fetch_lock(fetch_mu_);  // no executor takes messages from now on
    for (auto& [t, job] : eta_) requeue.push_back(job);
    eta_.clear();
  }
  {
    std::lock_guard lock(mu_);
    for (auto& job : ready_jobs_) {
      int expected = kQueued;
      if (job->phase.compare_exchange_strong(expected, kAbandoned)) {
        requeue.push_back(job);
        --reserved_;
      }
    }
    ready_jobs_.clear();
  }
  for (auto& job : requeue) Requeue(job, "shutdown: not started");

  // 2. Wait for running tasks up to the grace period (a cold shutdown does not wait).
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(options_.grace);
  {
    std::unique_lock lock(mu_);
    main_cv_.wait_until(lock, deadline, [this] { return reserved_ == 0 || cold_.load(); });
  }
  // 3. Requeue what still runs; it restarts on another worker.
  std::vector<std::shared_ptr<Job>> running;
  {
    std::lock_guard lock(mu_);
    for (auto& [slot, job] : running_) running.push_back(job);
  }
  for (auto& job : running) {
    int expected = kRunning;
    if (!job->phase.compare_exchange_strong(expected, kAbandoned)) continue;
    job->ctx.RequestCancelForWorker();
    {
      std::lock_guard lock(mu_);
      running_.erase(job->slot);
      threads_[job->slot].detach();
      abandoned_threads_.fetch_add(1);
      --reserved_;
    }
    Requeue(job, "shutdown: grace period over");
  }
  // 4. Jobs writing their results get a little longer, then stop retrying.
  {
    std::unique_lock lock(mu_);
    main_cv_.wait_for(lock, std::chrono::seconds(5), [this] { return reserved_ == 0; });
  }
  hard_exit_.store(true);
  JoinThreads();
  if (control_) control_->Stop();
  events_->SendWorker("worker-offline", options_.heartbeat_interval.count(), 0, processed_.load());
  LogEvent(spdlog::level::info, "worker_stopped", {{"processed", processed_.load()}});
}

}  // namespace warmpool::worker
