#pragma once

#include <chrono>
#include <mutex>

#include "externalscaler.grpc.pb.h"
#include "scaler/scaler_core.h"

namespace warmpool::scaler {

class StreamHub;

// One StreamIsActive call (external-push). Sends the current state as soon as it opens, then
// whenever it changes, and again every `resend` when that is not 0. A repeated `true` refreshes
// KEDA's lastActiveTime between its polls, so it moves each scale to zero up to a pollingInterval
// later than the cooldown counted from the last poll that saw work, as KEDA's own scalers have it
// (warmpool-sim on 180 real Azure functions: a KEDA configuration dominates warmpool on 31
// instead of 41, none newly). Polled by StreamHub; ends cleanly when the client cancels or the
// server shuts down. Deletes itself in OnDone.
class IsActiveStream final : public grpc::ServerWriteReactor<externalscaler::IsActiveResponse> {
 public:
  IsActiveStream(ScalerCore* core, StreamHub* hub, ScaledObjectKey key,
                 std::map<std::string, std::string> metadata, std::chrono::seconds resend);

  // Evaluates once and writes if due; never waits for Redis. False when the reading is not ready
  // yet (poll again after a read completes). Called by the hub thread only.
  bool Poll();
  // The server is stopping: finish with OK (a clean EOF, after a write in flight completes), so
  // KEDA reconnects after 2 s instead of doubling its retry wait (kedacore/keda
  // pkg/scalers/external_scaler.go, runStreamIsActive). Idempotent. Called by the hub thread.
  void FinishForShutdown();

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void FinishLocked(const grpc::Status& status);

  ScalerCore* const core_;
  StreamHub* const hub_;
  const ScaledObjectKey key_;
  const std::map<std::string, std::string> metadata_;
  const std::chrono::seconds resend_;

  std::mutex mu_;
  externalscaler::IsActiveResponse out_;                  // guarded by mu_ (in flight)
  bool write_in_flight_ = false;                          // guarded by mu_
  bool finished_ = false;                                 // guarded by mu_
  bool cancelled_ = false;                                // guarded by mu_
  bool shutting_down_ = false;                            // guarded by mu_
  bool has_sent_ = false;                                 // guarded by mu_
  bool last_sent_ = false;                                // guarded by mu_
  std::chrono::steady_clock::time_point last_send_time_;  // guarded by mu_
  bool last_poll_failed_ = false;                         // hub thread only
};

}  // namespace warmpool::scaler
