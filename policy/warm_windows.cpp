#include "policy/warm_windows.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace warmpool::policy {
namespace {

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) pos = s.size();
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  return out;
}

// Returns 0..6 (Sunday = 0) or -1.
int ParseDay(std::string_view s) {
  static constexpr std::array<const char*, 7> kDays = {"sun", "mon", "tue", "wed",
                                                       "thu", "fri", "sat"};
  if (s.size() != 3) return -1;
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (int d = 0; d < 7; ++d) {
    if (lower == kDays[d]) return d;
  }
  return -1;
}

bool ParseDays(std::string_view s, uint8_t* mask) {
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "daily") {
    *mask = 0x7f;
    return true;
  }
  uint8_t m = 0;
  for (std::string_view part : Split(s, ',')) {
    part = TrimView(part);
    size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      int d = ParseDay(part);
      if (d < 0) return false;
      m |= static_cast<uint8_t>(1u << d);
      continue;
    }
    int from = ParseDay(part.substr(0, dash));
    int to = ParseDay(part.substr(dash + 1));
    if (from < 0 || to < 0) return false;
    for (int d = from;; d = (d + 1) % 7) {
      m |= static_cast<uint8_t>(1u << d);
      if (d == to) break;
    }
  }
  *mask = m;
  return m != 0;
}

// "HH:MM" with HH 00..24 and MM 00..59; 24:00 only as an end.
bool ParseClock(std::string_view s, int* minute) {
  if (s.size() != 5 || s[2] != ':') return false;
  int h = 0, m = 0;
  auto r1 = std::from_chars(s.data(), s.data() + 2, h);
  auto r2 = std::from_chars(s.data() + 3, s.data() + 5, m);
  if (r1.ec != std::errc() || r1.ptr != s.data() + 2 || r2.ec != std::errc() ||
      r2.ptr != s.data() + 5) {
    return false;
  }
  if (h < 0 || h > 24 || m < 0 || m > 59 || (h == 24 && m != 0)) return false;
  *minute = h * 60 + m;
  return true;
}

// InvalidArgument says which part of the entry is wrong and the allowed form.
Status ParseEntry(std::string_view entry, WarmWindow* w) {
  size_t eq = entry.rfind('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument("missing \"=replicas\"");
  }
  std::string_view count = TrimView(entry.substr(eq + 1));
  int64_t replicas = 0;
  auto r = std::from_chars(count.data(), count.data() + count.size(), replicas);
  if (count.empty() || r.ec != std::errc() || r.ptr != count.data() + count.size() ||
      replicas < 0) {
    return Status::InvalidArgument("replicas after \"=\" must be an integer >= 0");
  }
  std::vector<std::string_view> words;
  for (std::string_view word : Split(TrimView(entry.substr(0, eq)), ' ')) {
    if (!TrimView(word).empty()) words.push_back(TrimView(word));
  }
  if (words.size() == 3) {
    std::string zone(words[2]);
    std::transform(zone.begin(), zone.end(), zone.begin(),
                   [](unsigned char c) { return std::toupper(c); });
    if (zone != "UTC") {
      std::string message = "time zone must be UTC (got \"";
      message.append(words[2]).append("\")");
      return Status::InvalidArgument(std::move(message));
    }
    words.pop_back();
  }
  if (words.size() != 2) {
    return Status::InvalidArgument("expected \"<days> HH:MM-HH:MM [UTC]=<replicas>\"");
  }
  if (!ParseDays(words[0], &w->weekdays)) {
    return Status::InvalidArgument(
        "days must be Mon..Sun, a range like Mon-Fri, a list like Mon,Wed, or Daily");
  }
  size_t dash = words[1].find('-');
  if (dash == std::string_view::npos || !ParseClock(words[1].substr(0, dash), &w->start_minute) ||
      !ParseClock(words[1].substr(dash + 1), &w->end_minute) || w->start_minute >= 1440) {
    return Status::InvalidArgument("time range must be HH:MM-HH:MM (00:00..24:00)");
  }
  if (w->start_minute >= w->end_minute) {
    return Status::InvalidArgument("start must be before end (split overnight windows in two)");
  }
  w->replicas = replicas;
  return Status::Ok();
}

}  // namespace

Status ParseWarmWindows(std::string_view text, std::vector<WarmWindow>* out) {
  std::vector<WarmWindow> windows;
  if (TrimView(text).empty()) {
    *out = std::move(windows);
    return Status::Ok();
  }
  for (std::string_view entry : Split(text, ';')) {
    entry = TrimView(entry);
    if (entry.empty()) continue;  // tolerate a trailing ';'
    WarmWindow w;
    if (Status s = ParseEntry(entry, &w); !s.ok()) {
      std::string message = "entry \"";
      message.append(entry).append("\": ").append(s.message());
      return Status::InvalidArgument(std::move(message));
    }
    windows.push_back(w);
  }
  *out = std::move(windows);
  return Status::Ok();
}

int64_t WarmFloorAt(const std::vector<WarmWindow>& windows,
                    std::chrono::system_clock::time_point now) {
  const auto day = std::chrono::floor<std::chrono::days>(now);
  const int wday = static_cast<int>(std::chrono::weekday(day).c_encoding());
  const int minute =
      static_cast<int>(std::chrono::duration_cast<std::chrono::minutes>(now - day).count());
  int64_t floor_replicas = 0;
  for (const auto& w : windows) {
    if ((w.weekdays & (1u << wday)) && minute >= w.start_minute && minute < w.end_minute) {
      floor_replicas = std::max(floor_replicas, w.replicas);
    }
  }
  return floor_replicas;
}

}  // namespace warmpool::policy
