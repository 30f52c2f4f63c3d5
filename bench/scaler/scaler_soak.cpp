// Soak of warmpool-scaler under KEDA's rhythm: N ScaledObjects over S queue sets on one Redis,
// each checked by the operator every pollingInterval and queried by the HPA every sync period
// (see keda_like_client.h), while tasks are pushed, taken and acked in the background as kombu
// lays them out (kombu_traffic.h). Samples the scaler's RSS, fds, threads and CPU, Redis's command
// rate, and the scaler's /metrics size; prints one JSON line and one human line.
// Usage: warmpool-scaler-soak [--duration S] [--objects N] [--queue-sets S] ... (see --help)
#include <absl/synchronization/mutex.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <signal.h>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "bench/scaler/keda_like_client.h"
#include "bench/scaler/kombu_traffic.h"
#include "bench/scaler/soak_stats.h"
#include "redis/connection.h"
#include "redis/url.h"
#include "tests/integration/scaler/grpc_probe.h"
#include "tests/integration/scaler/scaler_fixture.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace std::chrono_literals;
using namespace warmpool::bench;

struct Config {
  int duration_s = 600;
  int objects = 5000;
  int queue_sets = 50;
  int poll_s = 30;  // KEDA defaultPollingInterval
  int hpa_s = 15;   // --horizontal-pod-autoscaler-sync-period default
  bool activity_chain = false;
  int warmup_s = -1;  // -1: max(two polling intervals, duration / 4), at most 2/3 of the run
  int sample_s = 5;
  int window_s = 60;
  int scrape_s = 30;  // Prometheus scraping the scaler's /metrics
  double traffic_ops = 20;
  int coalesce_ms = 200;
  int deadline_ms = 5000;
  double max_rss_ratio = 1.10;
  double max_p99_ms = 50;
  double max_floor_ratio = 2.0;  // p99 after warm-up / (gRPC + Redis floor p99, same load)
  std::string json_out;
  std::vector<std::string> scaler_args;
};

void Usage() {
  std::fprintf(
      stderr,
      "warmpool-scaler-soak [--duration S=600] [--objects N=5000] [--queue-sets S=50]\n"
      "  [--poll-seconds 30] [--hpa-seconds 15] [--chain "
      "spec-active|metrics-and-activity] [--warmup S]\n"
      "  [--sample-seconds 5] [--window-seconds 60] [--scrape-seconds 30 (0: off)]\n"
      "  [--traffic-ops 20] [--coalesce-ms 200] [--deadline-ms 5000]\n"
      "  [--max-rss-ratio 1.10] [--max-p99-ms 50] [--max-floor-ratio 2]\n  [--json-out FILE]\n"
      "  [--scaler-arg ARG]...  (extra warmpool-scaler arguments)\n");
}

bool ParseArgs(int argc, char** argv, Config* cfg) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (flag == "--duration")
      cfg->duration_s = std::atoi(v);
    else if (flag == "--objects")
      cfg->objects = std::atoi(v);
    else if (flag == "--queue-sets")
      cfg->queue_sets = std::atoi(v);
    else if (flag == "--poll-seconds")
      cfg->poll_s = std::atoi(v);
    else if (flag == "--hpa-seconds")
      cfg->hpa_s = std::atoi(v);
    else if (flag == "--chain" &&
             (std::string(v) == "spec-active" || std::string(v) == "metrics-and-activity"))
      cfg->activity_chain = std::string(v) == "metrics-and-activity";
    else if (flag == "--warmup")
      cfg->warmup_s = std::atoi(v);
    else if (flag == "--sample-seconds")
      cfg->sample_s = std::atoi(v);
    else if (flag == "--window-seconds")
      cfg->window_s = std::atoi(v);
    else if (flag == "--scrape-seconds")
      cfg->scrape_s = std::atoi(v);
    else if (flag == "--traffic-ops")
      cfg->traffic_ops = std::atof(v);
    else if (flag == "--coalesce-ms")
      cfg->coalesce_ms = std::atoi(v);
    else if (flag == "--deadline-ms")
      cfg->deadline_ms = std::atoi(v);
    else if (flag == "--max-rss-ratio")
      cfg->max_rss_ratio = std::atof(v);
    else if (flag == "--max-floor-ratio")
      cfg->max_floor_ratio = std::atof(v);
    else if (flag == "--max-p99-ms")
      cfg->max_p99_ms = std::atof(v);
    else if (flag == "--json-out")
      cfg->json_out = v;
    else if (flag == "--scaler-arg")
      cfg->scaler_args.push_back(v);
    else
      return false;
  }
  // Every ScaledObject is first seen within one polling interval, but its per-reason decision
  // counters keep appearing for minutes (bounded by objects x reasons): memory is compared from
  // the later of two polling intervals and a quarter of the run (150 s of a 600 s run).
  if (cfg->warmup_s < 0) {
    cfg->warmup_s = std::min(std::max(2 * std::max(cfg->poll_s, cfg->hpa_s), cfg->duration_s / 4),
                             cfg->duration_s * 2 / 3);
  }
  return cfg->duration_s > 0 && cfg->objects > 0 && cfg->queue_sets > 0 && cfg->poll_s > 0 &&
         cfg->hpa_s > 0 && cfg->sample_s > 0 && cfg->window_s > 0 &&
         cfg->warmup_s < cfg->duration_s;
}

// Queue set s: "q<s>", and every fifth set a second queue "q<s>b" (one trigger, two queues).
std::vector<std::string> QueuesOf(int set) {
  // append, not "lit" + string: GCC 12 at -O3 misreads the latter (-Werror=restrict).
  std::vector<std::string> q{std::string("q").append(std::to_string(set))};
  if (set % 5 == 0) q.push_back(q.front() + "b");
  return q;
}

// ScaledObject i polls set i % S. Seven in ten share their set's metadata exactly; the other
// three carry one distinct policy key each (same Redis reads, a separate parsed plan).
externalscaler::ScaledObjectRef RefOf(int i, const Config& cfg) {
  const int set = i % cfg.queue_sets;
  externalscaler::ScaledObjectRef ref;
  ref.set_name("so" + std::to_string(i));
  ref.set_namespace_("soak" + std::to_string(i % 4));
  auto& md = *ref.mutable_scalermetadata();
  md["scalerAddress"] = "warmpool-scaler.keda:6000";
  std::string queues;
  for (const auto& q : QueuesOf(set)) queues += (queues.empty() ? "" : ",") + q;
  md["queues"] = queues;
  switch ((i / cfg.queue_sets) % 10) {
    case 7:
      md["tasksPerReplica"] = "2";
      break;
    case 8:
      md["minWarmReplicas"] = "1";
      break;
    case 9:
      md["activationBacklog"] = "3";
      break;
    default:
      break;
  }
  return ref;
}

// A Celery protocol-2 message exactly as Python's send_task writes it (Debian's Celery 5.2.6).
std::string TemplateMessage(warmpool::testing::TestRedisServer& redis, const std::string& queue) {
  auto r =
      warmpool::testing::RunCommand({warmpool::testing::PythonInterpreter(),
                                     warmpool::testing::PythonScriptsDir() + "/celery_send.py",
                                     "--broker", redis.url(), "--queue", queue, "--count", "1"},
                                    60s);
  if (r.exit_code != 0) throw std::runtime_error("celery_send.py failed: " + r.output);
  return redis.Cli({"RPOP", queue});
}

struct Sample {
  ProcSample scaler, redis, self;
  long long redis_commands = -1, redis_inst_ops = -1;
};

double R3(double x) { return std::round(x * 1000) / 1000; }  // compact JSON

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string LoadAverage() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  char buf[128] = {0};
  if (f) {
    if (!std::fgets(buf, sizeof buf, f)) buf[0] = 0;
    std::fclose(f);
  }
  std::string s(buf);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // as bench_scaler.cpp
  Config cfg;
  if (!ParseArgs(argc, argv, &cfg)) {
    Usage();
    return 2;
  }
  std::string command = "build/bench/scaler/warmpool-scaler-soak";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];

  warmpool::testing::TestRedisServer redis;
  std::string error;
  const auto endpoint = *warmpool::ParseRedisUrl(redis.url(), &error);
  warmpool::RedisConnection info_conn(endpoint);
  const pid_t redis_pid =
      static_cast<pid_t>(InfoField(redis.Cli({"INFO", "server"}), "process_id"));
  const std::string template_queue = "soak-template";
  const std::string template_message = TemplateMessage(redis, template_queue);

  const int port = warmpool::testing::FreePort();
  const int metrics_port = cfg.scrape_s > 0 ? warmpool::testing::FreePort() : 0;
  const std::string dir = warmpool::testing::MakeTempDir("scaler-soak");
  std::vector<std::string> scaler_argv = {
      warmpool::testing::ScalerBinary(),
      "--listen",
      "127.0.0.1:" + std::to_string(port),
      "--metrics-listen",
      metrics_port ? "127.0.0.1:" + std::to_string(metrics_port) : "off",
      "--redis",
      "default=" + redis.url(),
      "--log-level",
      "warn",
      "--coalesce-ms",
      std::to_string(cfg.coalesce_ms)};
  scaler_argv.insert(scaler_argv.end(), cfg.scaler_args.begin(), cfg.scaler_args.end());
  warmpool::testing::ChildProcess scaler(scaler_argv, dir + "/scaler.log");
  // Two connections, as KEDA's operator and its metrics adapter each hold their own.
  grpc::ChannelArguments op_args, adapter_args;
  op_args.SetString("warmpool.soak.role", "operator");
  adapter_args.SetString("warmpool.soak.role", "metrics-adapter");
  const std::string target = "127.0.0.1:" + std::to_string(port);
  auto op_channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), op_args);
  auto adapter_channel =
      cfg.activity_chain
          ? op_channel  // newer KEDA: the adapter asks the operator
          : grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), adapter_args);
  if (!warmpool::testing::WaitFor(
          [&] { return warmpool::testing::HealthCheck(op_channel, "") == 1; }, 15s)) {
    std::fprintf(stderr, "scaler did not start: %s\n", scaler.Log().c_str());
    return 1;
  }
  const ProcSample before_load = ReadProc(scaler.pid());

  // KEDA builds each ScaledObject's HPA from GetMetricSpec before the HPA asks for the metric.
  std::vector<SoakObject> objects(static_cast<size_t>(cfg.objects));
  auto stub = externalscaler::ExternalScaler::NewStub(op_channel);
  for (int i = 0; i < cfg.objects; ++i) {
    objects[i].ref = RefOf(i, cfg);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    externalscaler::GetMetricSpecResponse spec;
    auto s = stub->GetMetricSpec(&ctx, objects[i].ref, &spec);
    if (!s.ok() || spec.metricspecs_size() != 1) {
      std::fprintf(stderr, "GetMetricSpec for so%d failed: %s\n", i, s.error_message().c_str());
      return 1;
    }
    objects[i].metric_name = spec.metricspecs(0).metricname();
  }

  KedaRhythm rhythm;
  rhythm.poll = std::chrono::seconds(cfg.poll_s);
  rhythm.hpa = std::chrono::seconds(cfg.hpa_s);
  rhythm.call_deadline = std::chrono::milliseconds(cfg.deadline_ms);
  rhythm.window = std::chrono::seconds(cfg.window_s);
  rhythm.warmup = std::chrono::seconds(cfg.warmup_s);
  if (cfg.activity_chain) {  // GetMetricsAndActivity: GetMetrics then IsActive on both paths
    rhythm.operator_chain = {Method::kGetMetricSpec, Method::kGetMetrics, Method::kIsActive};
    rhythm.adapter_chain = {Method::kGetMetrics, Method::kIsActive};
  }
  const auto start = Clock::now() + 100ms;
  const auto end = start + std::chrono::seconds(cfg.duration_s);

  KombuTraffic::Options traffic_opts;
  traffic_opts.endpoint = endpoint;
  for (int s = 0; s < cfg.queue_sets; ++s) {
    for (const auto& q : QueuesOf(s)) traffic_opts.queues.push_back(q);
  }
  traffic_opts.template_message = template_message;
  traffic_opts.template_queue = template_queue;
  traffic_opts.operations_per_s = cfg.traffic_ops;
  traffic_opts.deadline = end;
  KombuTraffic traffic(traffic_opts);

  KedaLikeClient client(op_channel, adapter_channel, &objects, rhythm);
  std::thread client_thread([&] { client.Run(start, end); });
  // The floor under the same load: an empty gRPC call (health Check, no Redis) to the scaler and
  // a Redis PING, every 50 ms on their own connections. When these are slow too, the machine
  // (not the scaler's logic) is slow.
  std::vector<float> floor_grpc_ms, floor_redis_ms;
  std::thread floor_thread([&] {
    grpc::ChannelArguments floor_args;
    floor_args.SetString("warmpool.soak.role", "floor");
    auto channel =
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), floor_args);
    warmpool::RedisConnection ping_conn(endpoint);
    const auto warm_start = start + std::chrono::seconds(cfg.warmup_s);
    std::this_thread::sleep_until(warm_start);
    for (long k = 0; k < 20L * cfg.duration_s; ++k) {
      const auto due = warm_start + k * 50ms;
      if (due >= end) break;
      std::this_thread::sleep_until(due);
      auto t0 = Clock::now();
      warmpool::testing::HealthCheck(channel, "");
      floor_grpc_ms.push_back(
          static_cast<float>(std::chrono::duration<double, std::milli>(Clock::now() - t0).count()));
      t0 = Clock::now();
      try {
        ping_conn.Command({"PING"});
      } catch (const std::exception&) {
        break;
      }
      floor_redis_ms.push_back(
          static_cast<float>(std::chrono::duration<double, std::milli>(Clock::now() - t0).count()));
    }
  });

  // Sampling: /proc and Redis INFO every sample_s, /metrics every scrape_s. Bounded by `end`.
  std::vector<double> t_s;
  std::vector<Sample> samples;
  long info_calls = 0, scrapes = 0, scrape_failures = 0, scrape_first = -1, scrape_last = -1;
  double scrape_max_ms = 0;
  auto take_sample = [&](double t) {
    Sample s;
    s.scaler = ReadProc(scaler.pid());
    s.redis = ReadProc(redis_pid);
    s.self = ReadProc(getpid());
    try {
      auto reply = info_conn.Command({"INFO", "stats"});
      ++info_calls;
      const std::string info = warmpool::ReplyString(reply.get());
      s.redis_commands = InfoField(info, "total_commands_processed");
      s.redis_inst_ops = InfoField(info, "instantaneous_ops_per_sec");
    } catch (const std::exception&) {
    }
    t_s.push_back(t);
    samples.push_back(s);
  };
  std::this_thread::sleep_until(start);
  take_sample(0);
  auto next_scrape = start;
  for (int k = 1; Clock::now() < end && k <= cfg.duration_s / cfg.sample_s + 1; ++k) {
    const auto due = start + std::chrono::seconds(k * cfg.sample_s);
    while (metrics_port && next_scrape < std::min(due, end)) {
      std::this_thread::sleep_until(next_scrape);
      const auto t0 = Clock::now();
      const long size = HttpGetSize(metrics_port, "/metrics", 5000);
      scrape_max_ms = std::max(
          scrape_max_ms, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      ++scrapes;
      if (size < 0) ++scrape_failures;
      if (size >= 0 && scrape_first < 0) scrape_first = size;
      if (size >= 0) scrape_last = size;
      next_scrape += std::chrono::seconds(cfg.scrape_s);
    }
    if (due > end) break;
    std::this_thread::sleep_until(due);
    take_sample(k * cfg.sample_s);
  }
  client_thread.join();
  floor_thread.join();
  traffic.Stop();
  const ProcSample after = ReadProc(scaler.pid());
  const std::string load_end = LoadAverage();

  // ---- figures ----
  size_t warm = 0;  // the first sample at or after the warm-up
  while (warm + 1 < samples.size() && t_s[warm] < cfg.warmup_s) ++warm;
  const Sample& w = samples[warm];
  const Sample& last = samples.back();
  const Sample& first = samples.front();
  std::vector<double> xs, rss;
  for (size_t i = warm; i < samples.size(); ++i) {
    xs.push_back(t_s[i] / 60.0);
    rss.push_back(static_cast<double>(samples[i].scaler.rss_kib));
  }
  const double slope_kib_min = Slope(xs, rss);
  json rss_per_window = json::array();  // the scaler's RSS, fds, threads at each window's end
  json fds_per_window = json::array(), threads_per_window = json::array();
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i > 0 && static_cast<long>(t_s[i]) % cfg.window_s == 0) {
      rss_per_window.push_back(samples[i].scaler.rss_kib);
      fds_per_window.push_back(samples[i].scaler.fds);
      threads_per_window.push_back(samples[i].scaler.threads);
    }
  }
  const double elapsed = t_s.back() - t_s.front();
  const long long redis_total = last.redis_commands - first.redis_commands;
  const long long redis_scaler = redis_total - traffic.commands() - info_calls;
  std::vector<double> inst;
  double inst_max = 0;
  for (const auto& s : samples) {
    inst.push_back(static_cast<double>(s.redis_inst_ops));
    inst_max = std::max(inst_max, static_cast<double>(s.redis_inst_ops));
  }

  json methods = json::object();
  long errors = 0, bad = 0, calls = 0;
  double worst_p99 = 0;
  long min_steady_calls = std::numeric_limits<long>::max();
  for (int m = 0; m < kMethodCount; ++m) {
    const MethodStats& st = client.stats(static_cast<Method>(m));
    std::vector<float> all;
    json per_window = json::array();
    for (const auto& win : st.window_ms) {
      all.insert(all.end(), win.begin(), win.end());
      per_window.push_back(std::round(Summarize(win).p99_ms * 100) / 100);
    }
    const Percentiles p = Summarize(all);
    const Percentiles steady = Summarize(st.steady_ms);
    worst_p99 = std::max(worst_p99, steady.p99_ms);
    errors += st.errors;
    bad += st.bad;
    calls += st.calls;
    json codes = json::object();
    for (auto [code, n] : st.codes) codes[std::to_string(code)] = n;
    methods[MethodName(static_cast<Method>(m))] = {{"calls", st.calls},
                                                   {"p50_ms", R3(p.p50_ms)},
                                                   {"p99_ms", R3(p.p99_ms)},
                                                   {"max_ms", R3(p.max_ms)},
                                                   {"errors", st.errors},
                                                   {"bad", st.bad},
                                                   {"error_codes", codes},
                                                   {"p99_ms_per_window", per_window},
                                                   {"after_warmup",
                                                    {{"calls", steady.n},
                                                     {"p50_ms", R3(steady.p50_ms)},
                                                     {"p99_ms", R3(steady.p99_ms)},
                                                     {"max_ms", R3(steady.max_ms)}}}};
    min_steady_calls = std::min(min_steady_calls, static_cast<long>(steady.n));
  }
  const Percentiles floor_grpc = Summarize(floor_grpc_ms);
  const Percentiles floor_redis = Summarize(floor_redis_ms);
  const double scaler_cpu = last.scaler.cpu_s - first.scaler.cpu_s;
  const double rss_ratio = static_cast<double>(last.scaler.rss_kib) /
                           static_cast<double>(std::max(1L, w.scaler.rss_kib));
  struct stat log_stat {};
  const long log_bytes =
      stat((dir + "/scaler.log").c_str(), &log_stat) == 0 ? log_stat.st_size : -1;

  json checks = {
      {"no_errors", errors == 0 && bad == 0 && traffic.errors() == 0},
      {"none_skipped", client.chains_skipped() == 0},
      {"scaler_alive", after.rss_kib > 0},
      {"rss_end_over_warm", rss_ratio <= cfg.max_rss_ratio},
      {"fds_flat", last.scaler.fds <= w.scaler.fds},
      {"threads_flat", last.scaler.threads <= w.scaler.threads},
      {"p99", min_steady_calls > 0 && worst_p99 <= cfg.max_p99_ms},
      // As bench_scaler.cpp's target, with headroom for the shared VM's spikes.
      {"p99_vs_floor", worst_p99 <= cfg.max_floor_ratio * (floor_grpc.p99_ms + floor_redis.p99_ms)},
      {"scrapes_ok", scrape_failures == 0}};
  bool pass = true;
  for (auto& [k, v] : checks.items()) pass = pass && v.get<bool>();

  json out = {
      {"bench", "scaler_soak"},
      {"date", UtcNow()},
      {"command", command},
      {"config",
       {{"objects", cfg.objects},
        {"queue_sets", cfg.queue_sets},
        {"distinct_metadata", cfg.queue_sets * 4},
        {"duration_s", cfg.duration_s},
        {"poll_s", cfg.poll_s},
        {"hpa_s", cfg.hpa_s},
        {"chain", cfg.activity_chain ? "metrics-and-activity" : "spec-active"},
        {"warmup_s", cfg.warmup_s},
        {"coalesce_ms", cfg.coalesce_ms},
        {"traffic_ops_per_s", cfg.traffic_ops}}},
      {"methods", methods},
      {"rpc_per_s", static_cast<double>(calls) / std::max(1.0, elapsed)},
      {"chains_started", client.chains_started()},
      {"chains_skipped", client.chains_skipped()},
      {"schedule_lag_max_ms", R3(client.max_schedule_lag_ms())},
      {"first_error", client.first_error()},
      {"floor_after_warmup",
       {{"grpc_health",
         {{"p50_ms", R3(floor_grpc.p50_ms)},
          {"p99_ms", R3(floor_grpc.p99_ms)},
          {"max_ms", R3(floor_grpc.max_ms)},
          {"n", floor_grpc.n}}},
        {"redis_ping",
         {{"p50_ms", R3(floor_redis.p50_ms)},
          {"p99_ms", R3(floor_redis.p99_ms)},
          {"max_ms", R3(floor_redis.max_ms)},
          {"n", floor_redis.n}}}}},
      {"rss_kib",
       {{"before_load", before_load.rss_kib},
        {"warm", w.scaler.rss_kib},
        {"end", last.scaler.rss_kib},
        {"end_over_warm", R3(rss_ratio)},
        {"slope_kib_per_min_after_warmup", R3(slope_kib_min)},
        {"per_window", rss_per_window}}},
      {"fds",
       {{"before_load", before_load.fds},
        {"warm", w.scaler.fds},
        {"end", last.scaler.fds},
        {"per_window", fds_per_window}}},
      {"threads",
       {{"before_load", before_load.threads},
        {"warm", w.scaler.threads},
        {"end", last.scaler.threads},
        {"per_window", threads_per_window}}},
      {"cpu_s",
       {{"scaler", R3(scaler_cpu)},
        {"redis", R3(last.redis.cpu_s - first.redis.cpu_s)},
        {"bench_client", R3(last.self.cpu_s - first.self.cpu_s)}}},
      {"scaler_cpu_us_per_rpc", 1e6 * scaler_cpu / static_cast<double>(std::max(1L, calls))},
      {"redis",
       {{"commands_per_s", static_cast<double>(redis_total) / std::max(1.0, elapsed)},
        {"scaler_commands_per_s", static_cast<double>(redis_scaler) / std::max(1.0, elapsed)},
        {"instantaneous_ops_per_sec_median", Median(inst)},
        {"instantaneous_ops_per_sec_max", inst_max},
        {"traffic_commands", traffic.commands()}}},
      {"traffic",
       {{"pushed", traffic.pushed()}, {"popped", traffic.popped()}, {"errors", traffic.errors()}}},
      {"metrics_scrape",
       {{"scrapes", scrapes},
        {"failures", scrape_failures},
        {"bytes_first", scrape_first},
        {"bytes_last", scrape_last},
        {"max_ms", R3(scrape_max_ms)}}},
      {"scaler_log_bytes", log_bytes},
      {"load_average_end", load_end},
      {"checks", checks},
      {"pass", pass}};
  const std::string line = out.dump();
  std::printf("%s\n", line.c_str());
  if (!cfg.json_out.empty()) {
    if (std::FILE* f = std::fopen(cfg.json_out.c_str(), "w")) {
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
  }
  const auto& gm = methods["GetMetrics"];
  std::printf(
      "scaler soak %d s, %d ScaledObjects / %d queue sets: GetMetrics p50 %.2f p99 %.2f max %.1f "
      "ms (worst p99 after warm-up %.2f ms; floor p99 gRPC %.2f, Redis %.2f ms), %.0f rpc/s, "
      "errors %ld, skipped %ld; RSS %.1f -> %.1f "
      "MiB "
      "(x%.3f, %+.1f KiB/min); fds %ld -> %ld; threads %ld -> %ld; Redis %.0f cmd/s (scaler "
      "%.0f); scaler CPU %.1f s (%.1f%% of a core): %s\n",
      cfg.duration_s, cfg.objects, cfg.queue_sets, gm["p50_ms"].get<double>(),
      gm["p99_ms"].get<double>(), gm["max_ms"].get<double>(), worst_p99, floor_grpc.p99_ms,
      floor_redis.p99_ms, out["rpc_per_s"].get<double>(), errors + bad, client.chains_skipped(),
      static_cast<double>(w.scaler.rss_kib) / 1024, static_cast<double>(last.scaler.rss_kib) / 1024,
      rss_ratio, slope_kib_min, w.scaler.fds, last.scaler.fds, w.scaler.threads,
      last.scaler.threads, out["redis"]["commands_per_s"].get<double>(),
      out["redis"]["scaler_commands_per_s"].get<double>(), scaler_cpu,
      100 * scaler_cpu / std::max(1.0, elapsed), pass ? "PASS" : "FAIL");
  std::printf("reproduce: %s\n", command.c_str());
  scaler.Signal(SIGTERM);
  scaler.Wait(10s);
  return pass ? 0 : 1;
}
