#include "tests/integration/scaler/keda_client.h"

#include <algorithm>

namespace warmpool::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto kDeadline = 5s;  // KEDA's calls run under the caller's context; ours need one

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + kDeadline;
}

// pkg/scalers/scaler.go GenerateMetricNameWithIndex: "s<triggerIndex>-".
std::string IndexPrefix(int trigger_index) {
  std::string prefix = "s";
  prefix.append(std::to_string(trigger_index)).append("-");
  return prefix;
}

}  // namespace

KedaExternalTrigger::KedaExternalTrigger(std::string name, std::string ns,
                                         const std::map<std::string, std::string>& trigger_metadata,
                                         const std::map<std::string, std::string>& env,
                                         int trigger_index)
    : trigger_index_(trigger_index) {
  ref_.set_name(std::move(name));
  ref_.set_namespace_(std::move(ns));
  // external_scaler.go L132-142 (parseExternalScalerMetadata): every trigger metadata key is
  // sent; a key ending in "FromEnv" is sent under its own name with the variable's value, and
  // dropped when the variable is unset or empty.
  auto& md = *ref_.mutable_scalermetadata();
  for (const auto& [key, value] : trigger_metadata) {
    if (key.ends_with("FromEnv")) {
      auto it = env.find(value);
      if (it != env.end() && !it->second.empty()) md[key] = it->second;
    } else {
      md[key] = value;
    }
  }
  // external_scaler.go L62 (grpcConfig) and getClientForConnectionPool: one shared ClientConn
  // per scalerAddress and TLS settings, with the round_robin policy; plaintext unless enableTLS (or
  // TLS auth params) is set.
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(R"({"loadBalancingConfig": [{"round_robin":{}}]})");
  channel_ = grpc::CreateCustomChannel(trigger_metadata.at("scalerAddress"),
                                       grpc::InsecureChannelCredentials(), args);
  stub_ = externalscaler::ExternalScaler::NewStub(channel_);
}

std::vector<KedaExternalTrigger::MetricSpec> KedaExternalTrigger::GetMetricSpecForScaling(
    grpc::Status* status) {
  auto once = [&](grpc::Status* s) {
    // external_scaler.go L152-166: on an error KEDA logs it and returns no spec.
    externalscaler::GetMetricSpecResponse response;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    *s = stub_->GetMetricSpec(&ctx, ref_, &response);
    std::vector<MetricSpec> specs;
    if (!s->ok()) return specs;
    for (const auto& spec : response.metricspecs()) {
      MetricSpec out;
      // external_scaler.go L175 + pkg/scalers/scaler.go GenerateMetricNameWithIndex: the HPA
      // sees "s<triggerIndex>-<metricName>".
      out.name = IndexPrefix(trigger_index_) + spec.metricname();
      // external_scaler.go L178-182: targetSizeFloat when > 0, else targetSize.
      out.target = spec.targetsizefloat() > 0 ? spec.targetsizefloat()
                                              : static_cast<double>(spec.targetsize());
      specs.push_back(out);
    }
    return specs;
  };
  grpc::Status s;
  std::vector<MetricSpec> specs = once(&s);
  // scalers_cache.go L134-148: no spec -> refresh the scaler (same pooled connection) and ask
  // once more.
  if (specs.empty()) specs = once(&s);
  if (status) *status = s;
  return specs;
}

KedaExternalTrigger::MetricsAndActivity KedaExternalTrigger::GetMetricsAndActivityOnce(
    const std::string& metric_name) {
  MetricsAndActivity out;
  out.calls = 1;
  // external_scaler.go L199-203 + scaler.go RemoveIndexFromMetricName: strip "sN-"; a name
  // without this trigger's prefix is an error before any call.
  const std::string prefix = IndexPrefix(trigger_index_);
  if (!metric_name.starts_with(prefix)) {
    out.status = {grpc::StatusCode::INVALID_ARGUMENT, "metric name contains incorrect index"};
    out.calls = 0;
    return out;
  }
  externalscaler::GetMetricsRequest request;
  request.set_metricname(metric_name.substr(prefix.size()));
  *request.mutable_scaledobjectref() = ref_;
  externalscaler::GetMetricsResponse metrics;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    out.status = stub_->GetMetrics(&ctx, request, &metrics);  // external_scaler.go L210
    if (!out.status.ok()) return out;
  }
  // external_scaler.go L216-223: metricValueFloat when > 0, else metricValue.
  for (const auto& v : metrics.metricvalues()) {
    out.value +=
        v.metricvaluefloat() > 0 ? v.metricvaluefloat() : static_cast<double>(v.metricvalue());
  }
  // external_scaler.go L225-231: then IsActive on the same connection.
  externalscaler::IsActiveResponse active;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  out.status = stub_->IsActive(&ctx, ref_, &active);
  out.active = out.status.ok() && active.result();
  return out;
}

KedaExternalTrigger::MetricsAndActivity KedaExternalTrigger::GetMetricsAndActivity(
    const std::string& metric_name) {
  // scalers_cache.go L165-187 (GetMetricsAndActivityForScaler): on an error, refresh the scaler
  // and try exactly once more.
  MetricsAndActivity first = GetMetricsAndActivityOnce(metric_name);
  if (first.status.ok()) return first;
  MetricsAndActivity second = GetMetricsAndActivityOnce(metric_name);
  second.calls += first.calls;
  return second;
}

KedaExternalTrigger::MetricSpecStream KedaExternalTrigger::StreamMetricSpecOnce(
    std::chrono::milliseconds timeout) {
  // external_scaler.go streamMetricSpecOnce: open, then Recv until the stream ends.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  auto reader = stub_->StreamMetricSpec(&ctx, ref_);
  MetricSpecStream out;
  externalscaler::GetMetricSpecResponse msg;
  while (reader->Read(&msg)) ++out.updates;
  out.status = reader->Finish();
  return out;
}

void KedaExternalTrigger::Record(StreamEvent event) {
  std::lock_guard lock(mu_);
  events_.push_back(std::move(event));
  cv_.notify_all();
}

grpc::Status KedaExternalTrigger::RunStreamOnce() {
  // external_scaler.go handleIsActiveStream: read until the stream ends, forwarding each result.
  grpc::ClientContext ctx;
  {
    std::lock_guard lock(mu_);
    if (stop_) return grpc::Status::CANCELLED;
    open_ = &ctx;
  }
  auto reader = stub_->StreamIsActive(&ctx, ref_);
  externalscaler::IsActiveResponse msg;
  int messages = 0;
  while (reader->Read(&msg)) {
    ++messages;
    Record({StreamEvent::kMessage, std::chrono::steady_clock::now(), msg.result(), {}, 0, {}});
  }
  grpc::Status status = reader->Finish();
  {
    std::lock_guard lock(mu_);
    open_ = nullptr;
  }
  Record({StreamEvent::kEnded, std::chrono::steady_clock::now(), false, status, messages, {}});
  return status;
}

void KedaExternalTrigger::RunStream() {
  // external_scaler.go L242-265 (runStreamIsActive): start with 2 s; a clean EOF (status OK
  // here) resets the wait to 2 s, an error keeps it; each wait doubles the next, up to 1 min.
  std::chrono::milliseconds retry = 2s;
  auto run_once = [&] {
    if (RunStreamOnce().ok()) retry = 2s;
  };
  run_once();
  while (true) {
    std::unique_lock lock(mu_);
    if (stop_) return;  // StopStream ended the stream: KEDA's ctx.Done()
    events_.push_back(
        {StreamEvent::kRetryWait, std::chrono::steady_clock::now(), false, {}, 0, retry});
    cv_.notify_all();
    if (cv_.wait_for(lock, retry, [&] { return stop_; })) return;
    retry = std::min<std::chrono::milliseconds>(retry * 2, 60s);
    lock.unlock();
    run_once();
  }
}

void KedaExternalTrigger::StartStream() {
  stream_thread_ = std::thread([this] { RunStream(); });
}

void KedaExternalTrigger::StopStream() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    if (open_) open_->TryCancel();
    cv_.notify_all();
  }
  if (stream_thread_.joinable()) stream_thread_.join();
}

std::vector<KedaExternalTrigger::StreamEvent> KedaExternalTrigger::StreamEvents() {
  std::lock_guard lock(mu_);
  return events_;
}

bool KedaExternalTrigger::WaitForEvents(StreamEvent::Kind kind, size_t count,
                                        std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    return static_cast<size_t>(std::count_if(events_.begin(), events_.end(), [&](const auto& e) {
             return e.kind == kind;
           })) >= count;
  });
}

}  // namespace warmpool::testing
