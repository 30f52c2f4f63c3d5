#include "scaler/is_active_stream.h"

#include <spdlog/spdlog.h>

#include "common/logging.h"
#include "scaler/scaler_service.h"
#include "scaler/stream_hub.h"

namespace warmpool::scaler {

IsActiveStream::IsActiveStream(ScalerCore* core, StreamHub* hub, ScaledObjectKey key,
                               std::map<std::string, std::string> metadata,
                               std::chrono::seconds resend)
    : core_(core),
      hub_(hub),
      key_(std::move(key)),
      metadata_(std::move(metadata)),
      resend_(resend) {}

bool IsActiveStream::Poll() {
  Evaluation eval;
  std::optional<Status> result = core_->TryEvaluate(key_, ViewOf(metadata_), &eval);
  if (!result) return false;
  const Status& s = *result;
  std::unique_lock lock(mu_);
  if (finished_ || cancelled_ || shutting_down_) return true;
  if (s.code() == Status::Code::kInvalidArgument) {
    FinishLocked(ToGrpc(s));  // bad metadata will not fix itself
    return true;
  }
  if (!s.ok()) {
    // Redis down: send nothing (never a made-up false); KEDA's polling path reports the error.
    if (!last_poll_failed_) {
      LogEvent(spdlog::level::warn, "stream_poll_failed",
               {{"scaledObject", key_.ToString()}, {"error", s.message()}});
    }
    last_poll_failed_ = true;
    return true;
  }
  last_poll_failed_ = false;
  const bool active = eval.decision.active;
  const auto now = std::chrono::steady_clock::now();
  const bool resend = resend_.count() > 0 && now - last_send_time_ >= resend_;
  const bool due = !has_sent_ || active != last_sent_ || resend;
  if (!due || write_in_flight_) return true;
  out_.set_result(active);
  write_in_flight_ = true;
  has_sent_ = true;
  last_sent_ = active;
  last_send_time_ = now;
  lock.unlock();  // write_in_flight_ keeps Finish away until OnWriteDone
  StartWrite(&out_);
  return true;
}

void IsActiveStream::FinishForShutdown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  if (!write_in_flight_ && !finished_) FinishLocked(grpc::Status::OK);
}

void IsActiveStream::OnWriteDone(bool ok) {
  std::lock_guard lock(mu_);
  write_in_flight_ = false;
  if (!ok) cancelled_ = true;
  if ((cancelled_ || shutting_down_) && !finished_) FinishLocked(grpc::Status::OK);
}

void IsActiveStream::OnCancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  if (!write_in_flight_ && !finished_) FinishLocked(grpc::Status::OK);
}

void IsActiveStream::FinishLocked(const grpc::Status& status) {
  finished_ = true;
  Finish(status);
}

void IsActiveStream::OnDone() {
  hub_->Unregister(this);
  delete this;
}

}  // namespace warmpool::scaler
