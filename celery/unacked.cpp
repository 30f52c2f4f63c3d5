#include "celery/unacked.h"

#include <nlohmann/json.hpp>

#include "celery/task_name.h"
#include "celery/time.h"
#include "common/json_parse.h"

namespace warmpool::celery {
namespace {

// The text of the object that opens the JSON array `text`. Exact for valid JSON (which the
// caller has parsed already): braces and brackets are counted outside strings only.
std::string_view FirstObjectText(std::string_view text) {
  const size_t start = text.find('{', text.find('['));
  int depth = 0;
  bool in_string = false;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return text.substr(start, i + 1 - start);
    }
  }
  return {};
}

}  // namespace

std::optional<UnackedEntry> ParseUnackedValue(std::string_view value) {
  // Once per unacked task on every scaler probe: ParseJson lexes with simdjson, and the envelope
  // is kept as kombu wrote it rather than re-serialised (three times the parse's cost).
  const nlohmann::json v = ParseJson(value);
  if (v.is_discarded() || !v.is_array() || v.size() != 3 || !v[0].is_object() ||
      !v[1].is_string() || !v[2].is_string()) {
    return std::nullopt;
  }
  UnackedEntry entry;
  const auto& envelope = v[0];
  entry.envelope = FirstObjectText(value);
  entry.exchange = v[1].get<std::string>();
  entry.routing_key = v[2].get<std::string>();
  if (auto p = envelope.find("properties"); p != envelope.end() && p->is_object()) {
    if (auto it = p->find("priority"); it != p->end() && it->is_number_integer()) {
      entry.priority = it->get<int>();
    }
    if (auto it = p->find("delivery_tag"); it != p->end() && it->is_string()) {
      entry.delivery_tag = it->get<std::string>();
    }
  }
  if (auto h = envelope.find("headers"); h != envelope.end() && h->is_object()) {
    if (auto it = h->find("eta"); it != h->end() && it->is_string()) {
      entry.eta = ParseIso8601(it->get<std::string>());
    }
  }
  entry.task = TaskNameOfParsedEnvelope(envelope).value_or("");
  return entry;
}

}  // namespace warmpool::celery
