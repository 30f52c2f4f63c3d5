#include "scaler/tools/probe_stream.h"

#include <atomic>
#include <csignal>
#include <ctime>
#include <iostream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "scaler/tools/probe_channel.h"

namespace warmpool::probe {
namespace {

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

double MillisBetween(std::chrono::steady_clock::time_point a,
                     std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

void BlockStopSignals() {
  sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int ProbeStream(externalscaler::ExternalScaler::Stub& stub,
                const externalscaler::ScaledObjectRef& ref, double seconds) {
  grpc::ClientContext ctx;
  if (seconds > 0) ctx.set_deadline(DeadlineIn(seconds));
  std::atomic<bool> done{false}, interrupted{false};
  // Ctrl-C cancels the stream; polled so the thread ends when the stream ends by itself.
  std::thread watcher([&] {
    const sigset_t set = StopSignals();
    const timespec tick{0, 100 * 1000 * 1000};
    while (!done) {
      if (sigtimedwait(&set, nullptr, &tick) > 0) {
        interrupted = true;
        ctx.TryCancel();
        return;
      }
    }
  });

  const auto opened = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> previous;
  auto reader = stub.StreamIsActive(&ctx, ref);
  externalscaler::IsActiveResponse msg;
  while (reader->Read(&msg)) {
    const auto now = std::chrono::steady_clock::now();
    nlohmann::ordered_json line;
    line["isActive"] = msg.result();
    line["sinceOpenMs"] = MillisBetween(opened, now);
    line["sincePreviousMs"] = previous ? nlohmann::json(MillisBetween(*previous, now)) : nullptr;
    std::cout << line.dump() << std::endl;
    previous = now;
  }
  const grpc::Status status = reader->Finish();
  done = true;
  watcher.join();

  nlohmann::ordered_json end;
  end["sinceOpenMs"] = MillisBetween(opened, std::chrono::steady_clock::now());
  int code = 0;
  if (interrupted) {
    end["end"] = "interrupted";
  } else if (status.ok()) {
    end["end"] = "eof";  // the server finished the stream cleanly (e.g. SIGTERM)
  } else if (seconds > 0 && status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    end["end"] = "time limit";
  } else {
    end["end"] = "error";
    end["status"] = {{"code", static_cast<int>(status.error_code())},
                     {"message", status.error_message()}};
    code = 1;
  }
  std::cout << end.dump() << std::endl;
  return code;
}

}  // namespace warmpool::probe
