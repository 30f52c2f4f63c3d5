#include "sim/trace_import.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "sim/csv_lines.h"

namespace warmpool::sim {
namespace {

constexpr double kHour = 3600;
constexpr double kMinDuration = 0.001;  // FormatWorkloadCsv keeps milliseconds

bool ToInt(std::string_view s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

int Column(const std::vector<std::string_view>& header, std::string_view name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Where(const std::string& name, int line_no) {
  std::string s = name;
  s.append(" line ").append(std::to_string(line_no)).append(": ");
  return s;
}

Status BadField(const std::string& name, int line_no, std::string_view field,
                std::string_view value, std::string_view want) {
  std::string msg = Where(name, line_no);
  msg.append(field).append("=\"").append(value).append("\": ").append(want);
  return Status::InvalidArgument(msg);
}

// Reads the header line and finds the required columns (in order of `names`).
Status ReadHeader(CsvLines& lines, const std::string& name,
                  const std::vector<std::string_view>& names, std::vector<std::string_view>* header,
                  std::vector<int>* cols) {
  std::string_view line;
  if (!lines.Next(&line)) return Status::InvalidArgument(name + ": empty file (no header)");
  *header = SplitCsvFields(line);
  cols->clear();
  for (std::string_view n : names) {
    const int c = Column(*header, n);
    if (c < 0) {
      std::string msg = Where(name, lines.line_no());
      msg.append("header lacks column ").append(n);
      return Status::InvalidArgument(msg);
    }
    cols->push_back(c);
  }
  return Status::Ok();
}

Status CheckFieldCount(const std::string& name, int line_no, size_t got, size_t want) {
  if (got == want) return Status::Ok();
  std::string msg = Where(name, line_no);
  msg.append("expected ")
      .append(std::to_string(want))
      .append(" fields (as the header), got ")
      .append(std::to_string(got));
  return Status::InvalidArgument(msg);
}

Status TooManyTasks(const std::string& name, int64_t tasks) {
  return Status::InvalidArgument(name + ": " + std::to_string(tasks) + " tasks, more than " +
                                 std::to_string(kMaxWorkloadTasks) + " (narrow the window)");
}

Status CheckOptions(const std::string& name, const ImportOptions& opt) {
  // A window is at most a workload's longest span (the per-minute counts are kept per minute).
  const double max_hours = kMaxWorkloadSeconds / kHour;
  if (!(opt.hours > 0) || !(opt.hours <= max_hours) || !(opt.start_hour >= 0) ||
      !(opt.start_hour <= max_hours) || !(opt.duration_scale > 0)) {
    return Status::InvalidArgument(
        name + ": want 0 < hours <= 8784 (366 days), 0 <= start_hour <= 8784, duration_scale > 0");
  }
  return Status::Ok();
}

// Sorted by arrival; horizon as ParseWorkloadCsv computes it (last arrival + longest + 2 h).
// InvalidArgument where a window or a scaled run time takes a task past kMaxWorkloadSeconds.
Status Finish(Workload* w) {
  if (Status s = CheckWorkloadLimits(*w); !s.ok()) return s;
  std::stable_sort(w->tasks.begin(), w->tasks.end(),
                   [](const Task& a, const Task& b) { return a.arrival_s < b.arrival_s; });
  double last = 0, longest = 0;
  for (const Task& t : w->tasks) {
    last = std::max(last, t.arrival_s);
    longest = std::max(longest, t.duration_s);
  }
  w->horizon_s = static_cast<int64_t>(std::ceil(last + longest + 2 * kHour));
  return Status::Ok();
}

double BusyHours(const Workload& w) {
  double s = 0;
  for (const Task& t : w.tasks) s += t.duration_s;
  return s / kHour;
}

std::string Fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

std::string WindowText(const ImportOptions& opt, const Workload& w) {
  std::string s = std::to_string(w.tasks.size());
  s.append(" tasks, ")
      .append(Fmt("%.1f busy GPU-h, window %g h + %g h", BusyHours(w), opt.start_hour, opt.hours));
  return s;
}

// ---- Azure Functions 2019 -------------------------------------------------------------------

struct AzureFunction {
  std::string hash, trigger;
  std::vector<int64_t> counts;  // invocations per minute of the window
  int64_t total = 0;
};

Status ParseInvocations(std::string_view text, const std::string& name, const ImportOptions& opt,
                        std::vector<AzureFunction>* out, bool* has_trigger) {
  CsvLines lines(text);
  std::vector<std::string_view> header;
  std::vector<int> cols;
  if (Status s = ReadHeader(lines, name, {"HashFunction"}, &header, &cols); !s.ok()) return s;
  const int trigger_col = Column(header, "Trigger");
  *has_trigger = trigger_col >= 0;
  // Minute columns: "minute_K" (the sampled 400-function files) or "K" (the full dataset).
  std::vector<std::pair<int, int>> minute_cols;  // (column, minute index from 0)
  for (size_t i = 0; i < header.size(); ++i) {
    std::string_view h = header[i];
    if (h.starts_with("minute_")) h.remove_prefix(7);
    int64_t k = 0;
    if (ToInt(h, &k) && k >= 1) minute_cols.emplace_back(static_cast<int>(i), k - 1);
  }
  if (minute_cols.empty()) {
    return Status::InvalidArgument(name + " line 1: header has no minute columns (1..1440)");
  }
  const int64_t first = static_cast<int64_t>(std::ceil(opt.start_hour * 60));
  const int64_t end = static_cast<int64_t>(std::ceil((opt.start_hour + opt.hours) * 60));
  std::string_view line;
  while (lines.Next(&line)) {
    auto f = SplitCsvFields(line);
    if (Status s = CheckFieldCount(name, lines.line_no(), f.size(), header.size()); !s.ok()) {
      return s;
    }
    AzureFunction fn;
    fn.hash = std::string(f[cols[0]]);
    if (fn.hash.empty()) return BadField(name, lines.line_no(), "HashFunction", "", "is empty");
    if (trigger_col >= 0) fn.trigger = std::string(f[trigger_col]);
    fn.counts.assign(static_cast<size_t>(std::max<int64_t>(0, end - first)), 0);
    for (auto [col, minute] : minute_cols) {
      int64_t n = 0;
      if (!ToInt(f[col], &n) || n < 0 || n > kMaxWorkloadTasks) {
        return BadField(
            name, lines.line_no(), header[col], f[col],
            "must be a whole number of invocations from 0 to " + std::to_string(kMaxWorkloadTasks));
      }
      if (minute >= first && minute < end) {
        fn.counts[minute - first] += n;
        fn.total += n;
      }
    }
    out->push_back(std::move(fn));
  }
  return Status::Ok();
}

constexpr const char* kPercentiles[] = {"0", "1", "25", "50", "75", "99", "100"};
constexpr double kPercentileP[] = {0, 0.01, 0.25, 0.5, 0.75, 0.99, 1};

using Knots = std::vector<std::pair<double, double>>;  // (probability, duration ms)

// Duration knots per function hash, from the durations-percentiles file.
Status ParseDurations(std::string_view text, const std::string& name,
                      std::map<std::string, Knots>* out) {
  CsvLines lines(text);
  std::vector<std::string_view> names = {"HashFunction"};
  std::vector<std::string> pct_names;
  for (const char* p : kPercentiles) pct_names.push_back(std::string("percentile_Average_") + p);
  for (const auto& n : pct_names) names.push_back(n);
  std::vector<std::string_view> header;
  std::vector<int> cols;
  if (Status s = ReadHeader(lines, name, names, &header, &cols); !s.ok()) return s;
  std::string_view line;
  while (lines.Next(&line)) {
    auto f = SplitCsvFields(line);
    if (Status s = CheckFieldCount(name, lines.line_no(), f.size(), header.size()); !s.ok()) {
      return s;
    }
    Knots k;
    for (size_t i = 0; i < pct_names.size(); ++i) {
      std::string_view v = f[cols[i + 1]];
      double ms = 0;
      if (!ParseFiniteDouble(v, &ms) || ms < 0) {
        return BadField(name, lines.line_no(), pct_names[i], v, "must be a duration (ms) >= 0");
      }
      if (!k.empty() && ms < k.back().second) {
        return BadField(name, lines.line_no(), pct_names[i], v, "percentiles must not decrease");
      }
      k.emplace_back(kPercentileP[i], ms);
    }
    (*out)[std::string(f[cols[0]])] = std::move(k);
  }
  return Status::Ok();
}

Status SelectFunctions(const std::vector<AzureFunction>& all, bool has_trigger,
                       const std::string& name, const ImportOptions& opt,
                       std::vector<const AzureFunction*>* out) {
  if (!opt.functions.empty()) {
    for (const std::string& want : opt.functions) {
      const AzureFunction* hit = nullptr;
      for (const auto& fn : all) {
        const bool match = fn.hash == want || (want.size() >= 8 && fn.hash.starts_with(want));
        if (!match) continue;
        if (hit != nullptr) {
          return Status::InvalidArgument(name + ": function \"" + want + "\" is ambiguous");
        }
        hit = &fn;
      }
      if (hit == nullptr) {
        return Status::InvalidArgument(name + ": no function \"" + want +
                                       "\" (a HashFunction or a unique prefix of >= 8 chars)");
      }
      out->push_back(hit);
    }
    return Status::Ok();
  }
  if (opt.top <= 0) {
    return Status::InvalidArgument(name + ": choose functions (--function HASH) or --top N");
  }
  if (!opt.trigger.empty() && !has_trigger) {
    return Status::InvalidArgument(name + ": --trigger needs a Trigger column, which it lacks");
  }
  for (const auto& fn : all) {
    if (fn.total > 0 && (opt.trigger.empty() || fn.trigger == opt.trigger)) out->push_back(&fn);
  }
  std::stable_sort(out->begin(), out->end(), [](const AzureFunction* a, const AzureFunction* b) {
    return a->total != b->total ? a->total > b->total : a->hash < b->hash;
  });
  if (out->size() > static_cast<size_t>(opt.top)) out->resize(static_cast<size_t>(opt.top));
  return Status::Ok();
}

// ---- Azure LLM 2023 -------------------------------------------------------------------------

// "YYYY-MM-DD HH:MM:SS[.fraction]" (UTC) -> seconds since the Unix epoch.
bool ParseTimestamp(std::string_view s, double* out) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return false;
  }
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double sec = 0;
  if (!ToInt(s.substr(0, 4), &y) || !ToInt(s.substr(5, 2), &mo) || !ToInt(s.substr(8, 2), &d) ||
      !ToInt(s.substr(11, 2), &h) || !ToInt(s.substr(14, 2), &mi) ||
      !ParseFiniteDouble(s.substr(17), &sec) || h > 23 || mi > 59 || sec < 0 || sec >= 61) {
    return false;
  }
  using namespace std::chrono;
  const year_month_day ymd{year(static_cast<int>(y)), month(static_cast<unsigned>(mo)),
                           day(static_cast<unsigned>(d))};
  if (!ymd.ok()) return false;
  const double days = static_cast<double>(sys_days(ymd).time_since_epoch().count());
  *out = days * 86400 + static_cast<double>(h * 3600 + mi * 60) + sec;
  return true;
}

}  // namespace

bool ParseTraceFormat(std::string_view name, TraceFormat* out) {
  if (name == "alibaba-gpu-2023") {
    *out = TraceFormat::kAlibabaGpu2023;
  } else if (name == "azure-functions-2019") {
    *out = TraceFormat::kAzureFunctions2019;
  } else if (name == "azure-llm-2023") {
    *out = TraceFormat::kAzureLlm2023;
  } else {
    return false;
  }
  return true;
}

double PiecewiseLinearQuantile(const std::vector<std::pair<double, double>>& knots, double u) {
  if (knots.empty()) return 0;
  if (u <= knots.front().first) return knots.front().second;
  for (size_t i = 1; i < knots.size(); ++i) {
    const auto [p0, v0] = knots[i - 1];
    const auto [p1, v1] = knots[i];
    if (u <= p1) return p1 > p0 ? v0 + (v1 - v0) * (u - p0) / (p1 - p0) : v1;
  }
  return knots.back().second;
}

Status ImportAzureFunctions2019(std::string_view invocations_csv, std::string_view durations_csv,
                                const std::string& name, const ImportOptions& opt, Workload* out,
                                std::string* summary) {
  if (Status s = CheckOptions(name, opt); !s.ok()) return s;
  std::vector<AzureFunction> all;
  bool has_trigger = false;
  if (Status s = ParseInvocations(invocations_csv, name + " invocations", opt, &all, &has_trigger);
      !s.ok()) {
    return s;
  }
  std::map<std::string, Knots> durations;
  if (Status s = ParseDurations(durations_csv, name + " durations", &durations); !s.ok()) return s;
  std::vector<const AzureFunction*> chosen;
  if (Status s = SelectFunctions(all, has_trigger, name, opt, &chosen); !s.ok()) return s;
  if (chosen.empty()) return Status::InvalidArgument(name + ": no function has invocations");

  std::mt19937_64 rng(opt.seed * 0x9E3779B97F4A7C15ull + 0xA2F1);
  std::uniform_real_distribution<double> unit(0, 1);
  // Counted before any task is made: a hostile count must not exhaust memory first.
  int64_t planned = 0;
  for (const AzureFunction* fn : chosen) {
    planned += fn->total;  // each total is at most 527,040 minutes x kMaxWorkloadTasks
    if (planned > kMaxWorkloadTasks) return TooManyTasks(name, planned);
  }
  Workload w;
  w.name = name;
  std::string picked;
  for (const AzureFunction* fn : chosen) {
    auto it = durations.find(fn->hash);
    if (it == durations.end()) {
      return Status::InvalidArgument(name + ": function " + fn->hash +
                                     " has no row in the durations file");
    }
    const std::string queue = fn->hash.substr(0, 12);
    if (!picked.empty()) picked.append(" ");
    picked.append(queue).append("(").append(std::to_string(fn->total)).append(")");
    for (size_t m = 0; m < fn->counts.size(); ++m) {
      const int64_t n = fn->counts[m];
      for (int64_t j = 0; j < n; ++j) {
        const double within = opt.even_spread
                                  ? (static_cast<double>(j) + 0.5) * 60.0 / static_cast<double>(n)
                                  : 60.0 * unit(rng);
        Task t;
        t.arrival_s = static_cast<double>(m) * 60.0 + within;
        const double ms = PiecewiseLinearQuantile(it->second, unit(rng));
        t.duration_s = std::max(kMinDuration, ms / 1000.0 * opt.duration_scale);
        t.queue = queue;
        t.task = queue;  // one Celery task per function: durations are learned per function
        w.tasks.push_back(std::move(t));
      }
    }
  }
  if (Status s = Finish(&w); !s.ok()) return s;
  if (summary != nullptr) {
    *summary = name + ": " + WindowText(opt, w) + ", functions " + picked;
  }
  *out = std::move(w);
  return Status::Ok();
}

Status ImportAlibabaGpu2023(std::string_view pods_csv, const std::string& name,
                            const ImportOptions& opt, Workload* out, std::string* summary) {
  if (Status s = CheckOptions(name, opt); !s.ok()) return s;
  if (!(opt.max_duration_h > 0)) return Status::InvalidArgument(name + ": max_duration_h <= 0");
  CsvLines lines(pods_csv);
  std::vector<std::string_view> header;
  std::vector<int> c;
  if (Status s =
          ReadHeader(lines, name, {"num_gpu", "creation_time", "scheduled_time", "deletion_time"},
                     &header, &c);
      !s.ok()) {
    return s;
  }
  const double start = opt.start_hour * kHour, end = start + opt.hours * kHour;
  const double cap = opt.max_duration_h * kHour;
  int64_t cpu_only = 0, never_ran = 0, clipped = 0, pods = 0;
  Workload w;
  w.name = name;
  std::string_view line;
  while (lines.Next(&line)) {
    auto f = SplitCsvFields(line);
    const int ln = lines.line_no();
    if (Status s = CheckFieldCount(name, ln, f.size(), header.size()); !s.ok()) return s;
    int64_t gpus = 0;
    double created = 0, scheduled = 0, deleted = 0;
    if (!ToInt(f[c[0]], &gpus) || gpus < 0) {
      return BadField(name, ln, "num_gpu", f[c[0]], "must be a whole number >= 0");
    }
    if (!ParseFiniteDouble(f[c[1]], &created) || created < 0) {
      return BadField(name, ln, "creation_time", f[c[1]], "must be seconds >= 0");
    }
    if (created < start || created >= end) continue;
    if (gpus == 0) {
      ++cpu_only;
      continue;
    }
    if (f[c[2]].empty()) {  // never scheduled (Pending): it never held a GPU
      ++never_ran;
      continue;
    }
    if (!ParseFiniteDouble(f[c[2]], &scheduled) || scheduled < created) {
      return BadField(name, ln, "scheduled_time", f[c[2]], "must be empty or >= creation_time");
    }
    if (!ParseFiniteDouble(f[c[3]], &deleted) || deleted < scheduled) {
      return BadField(name, ln, "deletion_time", f[c[3]], "must be >= scheduled_time");
    }
    double run = deleted - scheduled;
    if (run <= 0) {
      ++never_ran;
      continue;
    }
    if (run > cap) {
      run = cap;
      ++clipped;
    }
    ++pods;
    const int64_t n = opt.one_task_per_gpu ? gpus : 1;
    if (static_cast<int64_t>(w.tasks.size()) + n > kMaxWorkloadTasks) {
      return TooManyTasks(name, static_cast<int64_t>(w.tasks.size()) + n);
    }
    for (int64_t i = 0; i < n; ++i) {
      Task t;
      t.arrival_s = created - start;
      t.duration_s = std::max(kMinDuration, run * opt.duration_scale);
      t.queue = "gpu";
      w.tasks.push_back(std::move(t));
    }
  }
  if (Status s = Finish(&w); !s.ok()) return s;
  if (summary != nullptr) {
    *summary = name + ": " + WindowText(opt, w) + " from " + std::to_string(pods) +
               " GPU pods; dropped " + std::to_string(cpu_only) + " CPU-only and " +
               std::to_string(never_ran) + " never-run pods; clipped " + std::to_string(clipped) +
               " run times to " + Fmt("%g h", opt.max_duration_h);
  }
  *out = std::move(w);
  return Status::Ok();
}

Status ImportAzureLlm2023(std::string_view requests_csv, const std::string& name,
                          const ImportOptions& opt, Workload* out, std::string* summary) {
  if (Status s = CheckOptions(name, opt); !s.ok()) return s;
  if (opt.prefill_s_per_token < 0 || opt.decode_s_per_token < 0 || opt.request_overhead_s < 0 ||
      opt.prefill_s_per_token + opt.decode_s_per_token + opt.request_overhead_s <= 0) {
    return Status::InvalidArgument(name + ": per-token times must be >= 0, not all 0");
  }
  CsvLines lines(requests_csv);
  std::vector<std::string_view> header;
  std::vector<int> c;
  if (Status s =
          ReadHeader(lines, name, {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}, &header, &c);
      !s.ok()) {
    return s;
  }
  struct Request {
    double at;
    int64_t context, generated;
  };
  std::vector<Request> reqs;
  std::string_view line;
  while (lines.Next(&line)) {
    auto f = SplitCsvFields(line);
    const int ln = lines.line_no();
    if (Status s = CheckFieldCount(name, ln, f.size(), header.size()); !s.ok()) return s;
    Request r{};
    if (!ParseTimestamp(f[c[0]], &r.at)) {
      return BadField(name, ln, "TIMESTAMP", f[c[0]], "want YYYY-MM-DD HH:MM:SS[.fraction]");
    }
    if (!ToInt(f[c[1]], &r.context) || r.context < 0) {
      return BadField(name, ln, "ContextTokens", f[c[1]], "must be a whole number >= 0");
    }
    if (!ToInt(f[c[2]], &r.generated) || r.generated < 0) {
      return BadField(name, ln, "GeneratedTokens", f[c[2]], "must be a whole number >= 0");
    }
    reqs.push_back(r);
  }
  if (reqs.empty()) return Status::InvalidArgument(name + ": no requests");
  double t0 = reqs.front().at;
  for (const Request& r : reqs) t0 = std::min(t0, r.at);
  const double start = t0 + opt.start_hour * kHour, end = start + opt.hours * kHour;
  Workload w;
  w.name = name;
  for (const Request& r : reqs) {
    if (r.at < start || r.at >= end) continue;
    Task t;
    t.arrival_s = r.at - start;
    const double s = opt.request_overhead_s +
                     static_cast<double>(r.context) * opt.prefill_s_per_token +
                     static_cast<double>(r.generated) * opt.decode_s_per_token;
    t.duration_s = std::max(kMinDuration, s * opt.duration_scale);
    t.queue = "llm";
    w.tasks.push_back(std::move(t));
  }
  if (Status s = Finish(&w); !s.ok()) return s;
  if (summary != nullptr) *summary = name + ": " + WindowText(opt, w);
  *out = std::move(w);
  return Status::Ok();
}

}  // namespace warmpool::sim
