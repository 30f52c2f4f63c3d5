// Benchmarks warmpool-scaler as KEDA uses it. All figures come from one run and are reported as
// ratios against a floor measured in the same run: an empty gRPC round trip (health Check) plus a
// raw Redis round trip (hiredis PING).
// Usage: warmpool-bench-scaler [--objects N] [--seconds S] [--in-flight N]
#include <absl/synchronization/mutex.h>
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "bench/scaler/soak_stats.h"
#include "externalscaler.grpc.pb.h"
#include "redis/connection.h"
#include "redis/url.h"
#include "tests/integration/scaler/grpc_probe.h"
#include "tests/integration/scaler/scaler_fixture.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using warmpool::testing::ChildProcess;
using warmpool::testing::TestRedisServer;

struct Config {
  int objects = 1000;     // distinct ScaledObjects
  int queue_sets = 50;    // distinct queues they poll (20 ScaledObjects per queue)
  int poll_seconds = 2;   // each ScaledObject's KEDA pollingInterval (KEDA default: 30)
  int keda_seconds = 20;  // length of the KEDA-like phase
  int peak_seconds = 10;  // length of the peak phase
  // Concurrent calls in the peak phase: KEDA polls every ScaledObject on its own goroutine, so
  // hundreds of calls can be in flight. On a quiet machine 64 and 256 peak alike; with another
  // process taking CPU, 256 kept the peak higher.
  int peak_outstanding = 256;
  int coalesce_ms = 200;
};

struct Percentiles {
  double p50_us = 0, p99_us = 0, max_us = 0;
  size_t n = 0;
};

Percentiles Summarize(std::vector<double> us) {
  Percentiles p;
  if (us.empty()) return p;
  std::sort(us.begin(), us.end());
  p.n = us.size();
  p.p50_us = us[us.size() / 2];
  p.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  p.max_us = us.back();
  return p;
}

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// CPU seconds (user + system) a process has used; -1 when unreadable (soak_stats' reader).
double ProcessCpuSeconds(pid_t pid) { return warmpool::bench::ReadProc(pid).cpu_s; }

// `prefix` then `n`, appended: GCC 12 -O3 misreads `"q" + std::to_string(n)` as an overlapping
// copy (-Werror=restrict, a GCC 12 false positive).
std::string Numbered(const char* prefix, int n) {
  std::string out(prefix);
  out.append(std::to_string(n));
  return out;
}

externalscaler::ScaledObjectRef Ref(int so, const Config& cfg) {
  externalscaler::ScaledObjectRef ref;
  ref.set_name(Numbered("so", so));
  ref.set_namespace_("bench");
  (*ref.mutable_scalermetadata())["queues"] = Numbered("q", so % cfg.queue_sets);
  // Plain backlog sizing, so every answer is known: ceil(3 pending / 1) = 3. (The default drain
  // target asks 1 replica for 3 tasks of unknown, short duration: policy/warm_policy.cpp.)
  (*ref.mutable_scalermetadata())["drainSeconds"] = "off";
  (*ref.mutable_scalermetadata())["scalerAddress"] = "warmpool-scaler:6000";
  return ref;
}

// Commands the scaler issued: everything but the benchmark's own PING/INFO/LPUSH.
long CommandCalls(TestRedisServer& redis) {
  std::string stats = redis.Cli({"INFO", "commandstats"});
  long total = 0;
  for (size_t pos = 0; (pos = stats.find("cmdstat_", pos)) != std::string::npos;) {
    size_t colon = stats.find(":calls=", pos);
    std::string name = stats.substr(pos + 8, colon - pos - 8);
    pos = colon + 7;
    if (name == "ping" || name == "info" || name == "lpush") continue;
    total += std::stol(stats.substr(pos));
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  // KEDA's client is Go; this C++ stand-in should not pay for Debian's Abseil deadlock detection
  // (a global lock graph updated by every gRPC mutex) on the cores it shares with the scaler.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--objects")) cfg.objects = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seconds")) cfg.keda_seconds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--in-flight")) cfg.peak_outstanding = std::atoi(argv[i + 1]);
  }
  TestRedisServer redis;
  for (int q = 0; q < cfg.queue_sets; ++q) {
    redis.Cli({"LPUSH", "q" + std::to_string(q), "a", "b", "c"});
  }
  const int port = warmpool::testing::FreePort();
  const std::string dir = warmpool::testing::MakeTempDir("bench-scaler");
  ChildProcess scaler(
      {warmpool::testing::ScalerBinary(), "--listen", "127.0.0.1:" + std::to_string(port),
       "--metrics-listen", "off", "--redis", "default=" + redis.url(), "--log-level", "warn",
       "--coalesce-ms", std::to_string(cfg.coalesce_ms)},
      dir + "/scaler.log");
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  if (!warmpool::testing::WaitFor([&] { return warmpool::testing::HealthCheck(channel, "") == 1; },
                                  15s)) {
    std::fprintf(stderr, "scaler did not start: %s\n", scaler.Log().c_str());
    return 1;
  }
  auto stub = externalscaler::ExternalScaler::NewStub(channel);

  // (a) Floor: empty gRPC round trip + raw Redis round trip, sequential, same client.
  auto health_rtt = [&] {
    std::vector<double> us;
    for (int i = 0; i < 3000; ++i) {
      auto t0 = Clock::now();
      warmpool::testing::HealthCheck(channel, "");
      us.push_back(Micros(Clock::now() - t0));
    }
    return Summarize(us);
  };
  std::string error;
  auto endpoint = *warmpool::ParseRedisUrl(redis.url(), &error);
  warmpool::RedisConnection conn(endpoint);
  auto redis_rtt = [&] {
    std::vector<double> us;
    for (int i = 0; i < 3000; ++i) {
      auto t0 = Clock::now();
      conn.Command({"PING"});
      us.push_back(Micros(Clock::now() - t0));
    }
    return Summarize(us);
  };
  // Warm up the channel and the generic stub path first.
  health_rtt();
  Percentiles grpc_floor = health_rtt();
  Percentiles redis_floor = redis_rtt();

  // Sequential GetMetrics on warm readings, same client, for a like-for-like idle comparison.
  std::vector<double> seq_us;
  for (int i = 0; i < 3000; ++i) {
    externalscaler::GetMetricsRequest req;
    *req.mutable_scaledobjectref() = Ref(i % cfg.objects, cfg);
    req.set_metricname("warmpool-q" + std::to_string(i % cfg.objects % cfg.queue_sets));
    externalscaler::GetMetricsResponse resp;
    grpc::ClientContext ctx;
    auto t0 = Clock::now();
    stub->GetMetrics(&ctx, req, &resp);
    seq_us.push_back(Micros(Clock::now() - t0));
  }
  Percentiles seq = Summarize(seq_us);

  // (b) KEDA-like: every ScaledObject calls GetMetricSpec, GetMetrics, IsActive once per
  // pollingInterval, phases spread evenly; 4 client threads.
  const long redis_before_keda = CommandCalls(redis);
  const int threads = 4;
  std::vector<std::vector<double>> lat(threads), floor_grpc(threads), floor_redis(threads);
  std::atomic<long> failures{0};
  const auto keda_start = Clock::now();
  const auto keda_end = keda_start + std::chrono::seconds(cfg.keda_seconds);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const auto period = std::chrono::seconds(cfg.poll_seconds);
      warmpool::RedisConnection own(endpoint);  // each KEDA-like thread measures the floor too
      std::vector<int> mine;
      for (int so = t; so < cfg.objects; so += threads) mine.push_back(so);
      for (int round = 0;; ++round) {
        for (size_t k = 0; k < mine.size(); ++k) {
          const auto due = keda_start + round * period + period * k / mine.size();
          if (due >= keda_end) return;
          std::this_thread::sleep_until(due);
          auto ref = Ref(mine[k], cfg);
          {
            grpc::ClientContext ctx;
            externalscaler::GetMetricSpecResponse spec;
            if (!stub->GetMetricSpec(&ctx, ref, &spec).ok()) ++failures;
          }
          {
            externalscaler::GetMetricsRequest req;
            *req.mutable_scaledobjectref() = ref;
            req.set_metricname("warmpool-q" + std::to_string(mine[k] % cfg.queue_sets));
            externalscaler::GetMetricsResponse resp;
            grpc::ClientContext ctx;
            auto t0 = Clock::now();
            if (!stub->GetMetrics(&ctx, req, &resp).ok() ||
                resp.metricvalues(0).metricvalue() != 3) {
              ++failures;
            }
            lat[t].push_back(Micros(Clock::now() - t0));
          }
          {
            grpc::ClientContext ctx;
            externalscaler::IsActiveResponse resp;
            if (!stub->IsActive(&ctx, ref, &resp).ok() || !resp.result()) ++failures;
          }
          // The floor under the same load and pacing: an empty gRPC call and a Redis PING.
          auto t0 = Clock::now();
          warmpool::testing::HealthCheck(channel, "");
          floor_grpc[t].push_back(Micros(Clock::now() - t0));
          t0 = Clock::now();
          own.Command({"PING"});
          floor_redis[t].push_back(Micros(Clock::now() - t0));
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  const double keda_elapsed = std::chrono::duration<double>(Clock::now() - keda_start).count();
  const long redis_keda = CommandCalls(redis) - redis_before_keda;
  auto merge = [](const std::vector<std::vector<double>>& parts) {
    std::vector<double> all;
    for (const auto& v : parts) all.insert(all.end(), v.begin(), v.end());
    return Summarize(all);
  };
  Percentiles keda = merge(lat);
  Percentiles load_grpc = merge(floor_grpc);
  Percentiles load_redis = merge(floor_redis);

  // (c) Peak GetMetrics/s: one completion-queue client keeping `peak_outstanding` calls in flight.
  const long redis_before_peak = CommandCalls(redis);
  grpc::CompletionQueue cq;
  struct Call {
    grpc::ClientContext ctx;
    externalscaler::GetMetricsRequest req;
    externalscaler::GetMetricsResponse resp;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<externalscaler::GetMetricsResponse>> rpc;
  };
  long done = 0, bad = 0;
  int next_so = 0;
  auto start_call = [&] {
    auto* c = new Call;
    *c->req.mutable_scaledobjectref() = Ref(next_so % cfg.objects, cfg);
    next_so++;
    c->rpc = stub->AsyncGetMetrics(&c->ctx, c->req, &cq);
    c->rpc->Finish(&c->resp, &c->status, c);
  };
  const double scaler_cpu_before = ProcessCpuSeconds(scaler.pid());
  const double client_cpu_before = ProcessCpuSeconds(getpid());
  const auto peak_start = Clock::now();
  const auto peak_end = peak_start + std::chrono::seconds(cfg.peak_seconds);
  for (int i = 0; i < cfg.peak_outstanding; ++i) start_call();
  int outstanding = cfg.peak_outstanding;
  void* tag;
  bool ok;
  while (outstanding > 0 && cq.Next(&tag, &ok)) {
    auto* c = static_cast<Call*>(tag);
    if (!ok || !c->status.ok()) ++bad;
    ++done;
    delete c;
    --outstanding;
    if (Clock::now() < peak_end) {
      start_call();
      ++outstanding;
    }
  }
  const double peak_elapsed = std::chrono::duration<double>(Clock::now() - peak_start).count();
  // Where the two cores went during (c): the scaler's and this client's CPU per call.
  const double scaler_cpu = ProcessCpuSeconds(scaler.pid()) - scaler_cpu_before;
  const double client_cpu = ProcessCpuSeconds(getpid()) - client_cpu_before;
  const long redis_peak = CommandCalls(redis) - redis_before_peak;
  cq.Shutdown();

  // Bound on Redis commands per window: per distinct queue set, the backlog pipeline (4 LLEN,
  // HVALS, 4 LRANGE for the pending sample's task names) and the shared-state transaction
  // (WATCH, GET, MULTI, SET, EXEC).
  const double per_read = 4 + 1 + 4 + 5;
  const double bound_per_s = cfg.queue_sets * per_read * 1000.0 / cfg.coalesce_ms;
  const double idle_floor_p99 = grpc_floor.p99_us + redis_floor.p99_us;
  const double floor_p50 = load_grpc.p50_us + load_redis.p50_us;
  const double floor_p99 = load_grpc.p99_us + load_redis.p99_us;
  const double keda_calls_per_s = 3.0 * keda.n / keda_elapsed;

  std::printf("## warmpool-scaler benchmark\n\n");
  std::printf(
      "Command: `build/bench/scaler/warmpool-bench-scaler` (spawns its own redis-server "
      "and warmpool-scaler; %d ScaledObjects over %d queues, coalescing window %d ms).\n\n",
      cfg.objects, cfg.queue_sets, cfg.coalesce_ms);
  std::printf("| measurement | p50 µs | p99 µs | n |\n|---|---:|---:|---:|\n");
  std::printf("| (a) gRPC round trip (health Check) | %.0f | %.0f | %zu |\n", grpc_floor.p50_us,
              grpc_floor.p99_us, grpc_floor.n);
  std::printf("| (a) Redis round trip (hiredis PING) | %.0f | %.0f | %zu |\n", redis_floor.p50_us,
              redis_floor.p99_us, redis_floor.n);
  std::printf("| GetMetrics, sequential, idle | %.0f | %.0f | %zu |\n", seq.p50_us, seq.p99_us,
              seq.n);
  std::printf("| (a) gRPC round trip during (b), same pacing | %.0f | %.0f | %zu |\n",
              load_grpc.p50_us, load_grpc.p99_us, load_grpc.n);
  std::printf("| (a) Redis round trip during (b), same pacing | %.0f | %.0f | %zu |\n",
              load_redis.p50_us, load_redis.p99_us, load_redis.n);
  std::printf("| (a) **floor** = gRPC + Redis, during (b) | %.0f | %.0f | |\n", floor_p50,
              floor_p99);
  std::printf(
      "| (b) GetMetrics, %d ScaledObjects polled as KEDA does (every %d s) | %.0f | %.0f | "
      "%zu |\n\n",
      cfg.objects, cfg.poll_seconds, keda.p50_us, keda.p99_us, keda.n);
  std::printf("| ratio | value | target |\n|---|---:|---:|\n");
  std::printf("| (b) GetMetrics p99 / floor p99 | **%.2fx** | <= 1.5x |\n",
              keda.p99_us / floor_p99);
  std::printf("| (b) GetMetrics p50 / floor p50 | %.2fx | |\n", keda.p50_us / floor_p50);
  std::printf("| (b) GetMetrics p99 / idle sequential floor p99 | %.2fx | |\n",
              keda.p99_us / idle_floor_p99);
  std::printf("| (c) peak GetMetrics/s (%d in flight, 1 client thread) | **%.0f** | >= 20,000 |\n",
              cfg.peak_outstanding, done / peak_elapsed);
  std::printf(
      "| (c) CPU during the peak: scaler / this client (cores busy) | %.2f / %.2f of 2 | |\n",
      scaler_cpu / peak_elapsed, client_cpu / peak_elapsed);
  std::printf("| (c) scaler CPU per GetMetrics | %.1f µs | |\n",
              1e6 * scaler_cpu / std::max(1L, done));
  const double windows_per_s = 1000.0 / cfg.coalesce_ms;
  std::printf("| (d) scaler's Redis commands/s during (b) (%.0f rpc/s) | %.0f | bound %.0f |\n",
              keda_calls_per_s, redis_keda / keda_elapsed, bound_per_s);
  std::printf("| (d) scaler's Redis commands/s during (c) (%.0f rpc/s) | %.0f | bound %.0f |\n",
              done / peak_elapsed, redis_peak / peak_elapsed, bound_per_s);
  std::printf("| (d) commands per queue set per window, (b) vs (c) | %.1f vs %.1f | <= %.0f |\n",
              redis_keda / keda_elapsed / cfg.queue_sets / windows_per_s,
              redis_peak / peak_elapsed / cfg.queue_sets / windows_per_s, per_read);
  std::printf("| (d) Redis commands per 1,000 GetMetrics during (c) | %.1f | |\n",
              1000.0 * redis_peak / std::max(1L, done));
  std::printf("\nfailures: keda=%ld peak=%ld\n", failures.load(), bad);
  scaler.Signal(SIGTERM);
  scaler.Wait(10s);
  return failures.load() == 0 && bad == 0 ? 0 : 1;
}
