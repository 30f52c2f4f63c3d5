#include "worker/worker.h"

#include <sys/resource.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "celery/time.h"
#include "common/logging.h"
#include "redis/errors.h"
#include "worker/broker.h"
#include "worker/consumer.h"
#include "worker/events.h"
#include "worker/executor_pool.h"
#include "worker/finisher.h"
#include "worker/health_server.h"
#include "worker/remote_control.h"
#include "worker/result_store.h"
#include "worker/task_log.h"
#include "worker/worker_metrics.h"
#include "worker/worker_state.h"

namespace warmpool::worker {
namespace {

using Clock = std::chrono::steady_clock;

bool SameServer(const RedisEndpoint& a, const RedisEndpoint& b) {
  return a.host == b.host && a.port == b.port && a.username == b.username &&
         a.password == b.password && a.tls.enabled == b.tls.enabled &&
         a.master_name == b.master_name;
}

}  // namespace

Worker::Worker(WorkerOptions options, const TaskRegistry& registry)
    : options_(std::move(options)), registry_(registry) {
  state_ = std::make_unique<WorkerState>();
  state_->max_tasks = options_.max_tasks;
  metrics_ = std::make_unique<WorkerMetrics>();
  size_t conns = static_cast<size_t>(options_.concurrency) + 4;
  broker_ = std::make_unique<Broker>(
      options_.broker, options_.key_prefix, options_.hostname, options_.deadletter_key, conns,
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.visibility_timeout));
  results_ = std::make_unique<ResultStore>(options_.result_backend, options_.result_expires, conns);
  events_ = std::make_unique<EventDispatcher>(*broker_, options_.key_prefix, options_.broker.db,
                                              options_.hostname, options_.heartbeat,
                                              options_.task_events);
  // Result backend on the broker's server: one script per finish.
  const bool same_server = SameServer(options_.broker, options_.result_backend);
  FinishSettings settings{options_.hostname, options_.key_prefix, options_.acks_late, same_server};
  finisher_ = std::make_unique<Finisher>(settings, options_.result_backend.db,
                                         static_cast<long>(options_.result_expires.count()),
                                         *broker_, *results_, *events_, *metrics_, *state_);
  consumer_ = std::make_unique<Consumer>(options_, registry_, *broker_, *results_, *events_,
                                         *metrics_, *state_);
  pool_ = std::make_unique<ExecutorPool>(options_, registry_, same_server, *broker_, *results_,
                                         *events_, *metrics_, *state_, *consumer_, *finisher_);
  state_->last_tick.store(Clock::now().time_since_epoch().count());
  if (options_.health_listen != "off" && !options_.health_listen.empty()) {
    health_ = std::make_unique<HealthServer>(
        options_.health_listen,
        [this] {
          auto last = Clock::time_point(Clock::duration(state_->last_tick.load()));
          return Clock::now() - last < std::chrono::seconds(30);
        },
        [this] { return state_->ready.load() && !state_->shutdown.load(); }, metrics_->registry());
  }
}

Worker::~Worker() { JoinThreads(); }

void Worker::JoinThreads() {
  pool_->Join();
  finisher_->Stop();
}

bool Worker::HasAbandonedThreads() const { return state_->abandoned_threads.load() > 0; }

int Worker::health_port() const { return health_ ? health_->port() : 0; }

std::vector<Clock::time_point> Worker::RunningSince() const {
  std::vector<Clock::time_point> out;
  std::lock_guard lock(state_->mu);
  for (const auto& [slot, job] : state_->running) out.push_back(job->started);
  return out;
}

void Worker::RequestShutdown(bool cold) {
  if (cold) state_->cold.store(true);
  {
    std::lock_guard lock(state_->mu);
    state_->shutdown.store(true);
  }
  state_->main_cv.notify_all();
}

int Worker::Run() {
  pool_->Start();
  finisher_->Start();
  if (!consumer_->ConnectAndRecover()) {
    Shutdown();
    return 0;
  }
  state_->ready.store(true);
  events_->SendWorker("worker-online", options_.heartbeat_interval.count(), 0, 0);
  if (options_.remote_control) StartRemoteControl();
  consumer_->Loop([this] { pool_->CheckHardLimits(); });
  Shutdown();
  return 0;
}

void Worker::StartRemoteControl() {
  RemoteControl::Hooks hooks;
  hooks.set_task_events = [this](bool on) { events_->SetTaskEvents(on); };
  hooks.revoke = [this](const std::vector<std::string>& ids, bool terminate, int signum) {
    return Revoke(ids, terminate, signum);
  };
  hooks.send_heartbeat = [this] {
    events_->SendWorker("worker-heartbeat", 5.0, 0, state_->processed.load());
  };
  hooks.active = [this] { return ActiveTasks(); };
  hooks.reserved = [this] { return ReservedTasks(); };
  hooks.scheduled = [this] { return ScheduledTasks(); };
  hooks.stats = [this] { return Stats(); };
  hooks.registered = [this] { return registry_.Names(); };
  control_ = std::make_unique<RemoteControl>(options_.broker, options_.key_prefix,
                                             options_.hostname, std::move(hooks));
}

std::vector<std::string> Worker::Revoke(const std::vector<std::string>& ids, bool terminate,
                                        int signum) {
  std::vector<std::string> running;
  {
    std::lock_guard lock(state_->mu);
    for (const auto& id : ids) {
      if (state_->revoked.size() < 50000) state_->revoked.insert(id);  // Celery bounds it too
    }
    if (!terminate) return running;
    const std::unordered_set<std::string> wanted(ids.begin(), ids.end());
    for (const auto& [slot, job] : state_->running) {
      if (wanted.count(job->msg.id)) {
        state_->terminate[job->msg.id] = signum;  // the consumer loop stops it (CheckHardLimits)
        running.push_back(job->msg.id);
      }
    }
  }
  if (!running.empty()) state_->Kick();
  return running;
}

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
  const double now = WallNow();
  nlohmann::json out = nlohmann::json::array();
  std::lock_guard lock(state_->mu);
  for (const auto& [slot, job] : state_->running) {
    // time_start as Unix seconds.
    out.push_back(
        RequestInfo(*job, now - std::chrono::duration<double>(now_steady - job->started).count()));
  }
  return out;
}

nlohmann::json Worker::ReservedTasks() {
  nlohmann::json out = nlohmann::json::array();
  std::lock_guard lock(state_->mu);
  for (const auto& job : state_->ready_jobs) out.push_back(RequestInfo(*job, nullptr));
  return out;
}

nlohmann::json Worker::ScheduledTasks() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [eta, job] : consumer_->EtaHeld()) {
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
    std::lock_guard lock(state_->mu);
    for (const auto& [name, count] : state_->totals) totals[name] = count;
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

void Worker::Requeue(const std::shared_ptr<Job>& job, const char* reason) {
  auto deadline = Clock::now() + std::chrono::seconds(10);
  auto backoff = std::chrono::milliseconds(50);
  while (true) {
    try {
      broker_->Restore(job->fetched.tag);
      LogTask(*metrics_, *job, "REQUEUED", 0, reason);
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
  std::lock_guard lock(state_->mu);
  state_->held.erase(job->fetched.tag);
}

void Worker::Shutdown() {
  state_->ready.store(false);
  LogEvent(spdlog::level::info, "worker_shutdown",
           {{"mode", state_->cold.load() ? "cold" : "warm"},
            {"grace_s", options_.grace.count()},
            {"note", "no blocking pop is ever in flight: messages are taken by a Lua script"}});
  // 1. Requeue everything not started: ETA-held and ready jobs.
  std::vector<std::shared_ptr<Job>> requeue = consumer_->TakeEtaHeld();
  for (auto& job : pool_->TakeQueued()) requeue.push_back(std::move(job));
  for (auto& job : requeue) Requeue(job, "shutdown: not started");

  // 2. Wait for running tasks up to the grace period (a cold shutdown does not wait).
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(options_.grace);
  {
    std::unique_lock lock(state_->mu);
    state_->main_cv.wait_until(lock, deadline,
                               [this] { return state_->reserved == 0 || state_->cold.load(); });
  }
  // 3. Requeue what still runs; it restarts on another worker.
  for (auto& job : pool_->Running()) {
    if (pool_->AbandonForShutdown(job)) Requeue(job, "shutdown: grace period over");
  }
  // 4. Jobs writing their results get a little longer, then stop retrying.
  {
    std::unique_lock lock(state_->mu);
    state_->main_cv.wait_for(lock, std::chrono::seconds(5),
                             [this] { return state_->reserved == 0; });
  }
  state_->hard_exit.store(true);
  JoinThreads();
  if (control_) control_->Stop();
  events_->SendWorker("worker-offline", options_.heartbeat_interval.count(), 0,
                      state_->processed.load());
  LogEvent(spdlog::level::info, "worker_stopped", {{"processed", state_->processed.load()}});
}

}  // namespace warmpool::worker
