// libFuzzer harness: the policy step the scaler takes per Redis reading (policy::Observe, then
// policy::Decide), over a run of readings. The input is a ScaledObject's metadata, one
// `key=value` per line, then a line `--`, then 36-byte readings (little-endian):
//   u16 seconds since the previous reading (0: the same instant again)   u8 flags   u8 name
//   u64 pending   u64 in flight   u32 scheduled   i32 earliest eta (seconds from now)
//   u32 mean run time of the tasks finished (ms)   u16 how many   u16 oldest in flight (s)
// flags: 1 durations measured; 2 etas (the scheduled tasks', a second apart from the earliest);
// 4 the finished tasks by name; 8 the state goes through EncodeState/DecodeState first (as the
// scaler keeps it in Redis). The name byte's upper six bits say how many of the sampled pending
// messages are ETA tasks not yet due. Counts are masked to 2^40: a Redis list or hash holds at
// most 2^32 - 1 elements, summed over priority lists and queues.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz/metadata_lines.h"
#include "policy/policy_state.h"
#include "policy/scaler_metadata.h"
#include "policy/warm_policy.h"

namespace {

constexpr size_t kRecordSize = 36;
constexpr uint64_t kCountMask = (uint64_t{1} << 40) - 1;
const char* const kNames[] = {"app.detect", "app.tile", "app.report", ""};

template <typename T>
T Read(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warmpool::policy;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find("\n--\n");
  if (split == std::string_view::npos) return 0;
  ParsedMetadata parsed;
  if (!ParseScalerMetadata(warmpool::fuzz::ParseMetadataLines(input.substr(0, split)), &parsed)
           .ok())
    return 0;
  const ScalerMetadata& spec = parsed.metadata;

  PolicyState state;
  auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'799'020'800));
  for (size_t at = split + 4; at + kRecordSize <= size; at += kRecordSize) {
    const uint8_t* r = data + at;
    now += std::chrono::seconds(Read<uint16_t>(r));
    const uint8_t flags = r[2];
    const std::string name = kNames[r[3] % 4];
    Observation obs;
    obs.pending = static_cast<int64_t>(Read<uint64_t>(r + 4) & kCountMask);
    obs.in_flight = static_cast<int64_t>(Read<uint64_t>(r + 12) & kCountMask);
    obs.scheduled = static_cast<int64_t>(Read<uint32_t>(r + 20));
    if (flags & 2) {
      // The scheduled tasks' etas: from the earliest, a second apart (at most kUpcomingEtas).
      obs.earliest_eta = now + std::chrono::seconds(Read<int32_t>(r + 24));
      const auto n = std::min<int64_t>(obs.scheduled, static_cast<int64_t>(kUpcomingEtas));
      for (int64_t i = 0; i < n; ++i) {
        obs.upcoming_etas.push_back(*obs.earliest_eta + std::chrono::seconds(i));
      }
    }
    if (flags & 1) {
      obs.measured_task_seconds = Read<uint32_t>(r + 28) / 1000.0;
      obs.measured_task_count = Read<uint16_t>(r + 32);
      if ((flags & 4) && obs.measured_task_count > 0) {
        obs.finished_by_task.push_back(
            {name, *obs.measured_task_seconds * static_cast<double>(obs.measured_task_count),
             obs.measured_task_count});
      }
    }
    obs.oldest_in_flight_seconds = Read<uint16_t>(r + 34);
    if (obs.pending > 0 && !name.empty()) obs.pending_sample[name] = 1 + r[3] % kPendingSample;
    // The sample that read them: up to kPendingSample messages, some ETA tasks not yet due.
    obs.pending_sampled = std::min<int64_t>(obs.pending, kPendingSample);
    obs.pending_sample_not_due = std::min<int64_t>(obs.pending_sampled, r[3] >> 2);
    if (flags & 8) {
      PolicyState decoded;
      if (!DecodeState(EncodeState(state), &decoded).ok()) std::abort();  // its own output
      state = decoded;
    }
    Decision d;
    state = Observe(state, spec, obs, now, &d);
    // What KEDA is told: a replica count >= 0, active with at least one, and a reason.
    if (d.desired_replicas < 0 || (d.active && d.desired_replicas < 1) || d.reason.empty()) {
      std::abort();
    }
  }
  return 0;
}
