// libFuzzer harness: a broker list element as the worker reads it (kombu envelope, base64 body,
// Celery protocol 1/2 body), plus the unacked-hash value and the redelivery rewrite.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "celery/message.h"
#include "celery/unacked.h"
#include "common/json_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warmpool::celery;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  TaskMessage msg;
  if (DecodeTaskMessage(input, &msg).ok()) {
    // A decoded message re-encoded as v2 (the retry path) must decode again to the same task.
    TaskMessage again;
    if (!DecodeTaskMessage(EncodeTaskMessageV2(msg, "fuzz-tag"), &again).ok() ||
        again.id != msg.id || again.task != msg.task) {
      std::abort();
    }
  }
  if (auto entry = ParseUnackedValue(input)) {
    // The envelope is the value's first element, cut from the text: it parses to that element.
    if (warmpool::ParseJson(entry->envelope) != warmpool::ParseJson(input)[0]) std::abort();
  }
  if (auto marked = MarkRedelivered(input)) {
    TaskMessage redelivered;
    if (DecodeTaskMessage(*marked, &redelivered).ok() && !redelivered.redelivered) std::abort();
  }
  return 0;
}
