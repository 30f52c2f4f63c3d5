#include "bench/scaler/keda_like_client.h"

#include <mutex>
#include <numeric>
#include <thread>

namespace warmpool::bench {

namespace {

using Clock = std::chrono::steady_clock;

// A stride coprime with n, near n/2: object order for the HPA stream, so an object's HPA query
// does not always follow its operator check by the same offset.
size_t CoprimeStride(size_t n) {
  for (size_t s = n / 2 + 1; s < 2 * n + 2; ++s) {
    if (std::gcd(s, n) == 1) return s % std::max<size_t>(n, 1);
  }
  return 1;
}

}  // namespace

const char* MethodName(Method m) {
  switch (m) {
    case Method::kGetMetricSpec:
      return "GetMetricSpec";
    case Method::kGetMetrics:
      return "GetMetrics";
    case Method::kIsActive:
      return "IsActive";
  }
  return "?";
}

struct KedaLikeClient::Call {
  int object = 0;
  bool from_operator = true;
  size_t step = 0;
  Method method = Method::kGetMetricSpec;
  Clock::time_point t0;
  grpc::ClientContext ctx;
  grpc::Status status;
  externalscaler::GetMetricsRequest metrics_request;
  externalscaler::GetMetricSpecResponse spec;
  externalscaler::GetMetricsResponse metrics;
  externalscaler::IsActiveResponse active;
  std::unique_ptr<grpc::ClientAsyncResponseReader<externalscaler::GetMetricSpecResponse>> spec_rpc;
  std::unique_ptr<grpc::ClientAsyncResponseReader<externalscaler::GetMetricsResponse>> metrics_rpc;
  std::unique_ptr<grpc::ClientAsyncResponseReader<externalscaler::IsActiveResponse>> active_rpc;
};

KedaLikeClient::KedaLikeClient(std::shared_ptr<grpc::Channel> operator_channel,
                               std::shared_ptr<grpc::Channel> adapter_channel,
                               const std::vector<SoakObject>* objects, KedaRhythm rhythm)
    : operator_stub_(externalscaler::ExternalScaler::NewStub(operator_channel)),
      adapter_stub_(externalscaler::ExternalScaler::NewStub(adapter_channel)),
      objects_(objects),
      rhythm_(std::move(rhythm)) {}

void KedaLikeClient::Start(int object, bool from_operator, size_t step) {
  const auto& chain = from_operator ? rhythm_.operator_chain : rhythm_.adapter_chain;
  auto* stub = from_operator ? operator_stub_.get() : adapter_stub_.get();
  const SoakObject& so = (*objects_)[static_cast<size_t>(object)];
  auto* call = new Call;
  call->object = object;
  call->from_operator = from_operator;
  call->step = step;
  call->method = chain[step];
  call->t0 = Clock::now();
  call->ctx.set_deadline(std::chrono::system_clock::now() + rhythm_.call_deadline);
  switch (call->method) {
    case Method::kGetMetricSpec:
      call->spec_rpc = stub->AsyncGetMetricSpec(&call->ctx, so.ref, &cq_);
      call->spec_rpc->Finish(&call->spec, &call->status, call);
      break;
    case Method::kGetMetrics:
      *call->metrics_request.mutable_scaledobjectref() = so.ref;
      call->metrics_request.set_metricname(so.metric_name);
      call->metrics_rpc = stub->AsyncGetMetrics(&call->ctx, call->metrics_request, &cq_);
      call->metrics_rpc->Finish(&call->metrics, &call->status, call);
      break;
    case Method::kIsActive:
      call->active_rpc = stub->AsyncIsActive(&call->ctx, so.ref, &cq_);
      call->active_rpc->Finish(&call->active, &call->status, call);
      break;
  }
}

void KedaLikeClient::Complete(Call* call, bool ok) {
  std::unique_ptr<Call> owned(call);
  const auto now = Clock::now();
  MethodStats& st = stats_[static_cast<int>(call->method)];
  ++st.calls;
  if (!ok || !call->status.ok()) {
    ++st.errors;
    ++st.codes[ok ? static_cast<int>(call->status.error_code()) : -1];
    if (first_error_.empty()) {
      first_error_ = std::string(MethodName(call->method)) + ": " + call->status.error_message();
    }
  } else {
    bool usable = true;
    const SoakObject& so = (*objects_)[static_cast<size_t>(call->object)];
    if (call->method == Method::kGetMetricSpec) {
      usable = call->spec.metricspecs_size() == 1 && call->spec.metricspecs(0).targetsize() == 1;
    } else if (call->method == Method::kGetMetrics) {
      usable = call->metrics.metricvalues_size() == 1 &&
               call->metrics.metricvalues(0).metricvalue() >= 0 &&
               call->metrics.metricvalues(0).metricname() == so.metric_name;
    }
    if (!usable) {
      ++st.bad;
      if (first_error_.empty()) first_error_ = std::string(MethodName(call->method)) + ": bad";
    }
    const size_t window = static_cast<size_t>((call->t0 - start_) / rhythm_.window);
    if (st.window_ms.size() <= window) st.window_ms.resize(window + 1);
    const auto ms =
        static_cast<float>(std::chrono::duration<double, std::milli>(now - call->t0).count());
    st.window_ms[window].push_back(ms);
    if (call->t0 >= start_ + rhythm_.warmup) st.steady_ms.push_back(ms);
  }
  const auto& chain = call->from_operator ? rhythm_.operator_chain : rhythm_.adapter_chain;
  std::lock_guard<std::mutex> lock(shutdown_mu_);  // no call may start on a shut-down queue
  if (call->step + 1 < chain.size() && !shut_down_) {
    Start(call->object, call->from_operator, call->step + 1);  // the goroutine's next call
  } else {
    --in_flight_;
  }
}

void KedaLikeClient::Run(Clock::time_point start, Clock::time_point end) {
  start_ = start;
  std::thread completions([this] {
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) Complete(static_cast<Call*>(tag), ok);
  });
  const size_t n = objects_->size();
  const size_t stride = CoprimeStride(n);
  using Ns = std::chrono::duration<double, std::nano>;
  const Ns op_spacing = Ns(rhythm_.poll) / static_cast<double>(n);
  const Ns hpa_spacing = Ns(rhythm_.hpa) / static_cast<double>(n);
  const Ns hpa_offset = hpa_spacing / 2;  // interleave the two streams
  const double span_ns = Ns(end - start).count();
  const long cap = static_cast<long>(span_ns / op_spacing.count() + span_ns / hpa_spacing.count()) +
                   16;  // every due chain, and not one loop more
  long j_op = 0, j_hpa = 0;
  for (long iter = 0; iter < cap; ++iter) {
    const auto t_op = start + std::chrono::duration_cast<Clock::duration>(op_spacing * j_op);
    const auto t_hpa =
        start + std::chrono::duration_cast<Clock::duration>(hpa_offset + hpa_spacing * j_hpa);
    const bool from_operator = t_op <= t_hpa;
    const auto due = from_operator ? t_op : t_hpa;
    if (due >= end) break;
    std::this_thread::sleep_until(due);
    max_lag_ms_ = std::max(max_lag_ms_,
                           std::chrono::duration<double, std::milli>(Clock::now() - due).count());
    const int object = static_cast<int>(from_operator ? static_cast<size_t>(j_op) % n
                                                      : static_cast<size_t>(j_hpa) * stride % n);
    (from_operator ? j_op : j_hpa)++;
    if (in_flight_.load() >= rhythm_.max_in_flight) {
      ++chains_skipped_;
      continue;
    }
    ++in_flight_;
    ++chains_started_;
    Start(object, from_operator, 0);
  }
  // Every call carries a deadline, so the calls still out finish within the longest chain.
  const size_t longest = std::max(rhythm_.operator_chain.size(), rhythm_.adapter_chain.size());
  const auto drain_until =
      Clock::now() + rhythm_.call_deadline * static_cast<long>(longest) + std::chrono::seconds(1);
  while (in_flight_.load() > 0 && Clock::now() < drain_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard<std::mutex> lock(shutdown_mu_);
    shut_down_ = true;
    cq_.Shutdown();
  }
  completions.join();
}

}  // namespace warmpool::bench
