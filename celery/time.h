#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace warmpool::celery {

// Celery's timestamps are ISO-8601 strings. All functions here are pure and work in Unix seconds
// (UTC, fractional), so callers pass in `now` instead of the code reading a clock.

// Parses "YYYY-MM-DDTHH:MM:SS[.ffffff][Z|+HH:MM|-HH:MM|+HHMM]" (also a space instead of 'T', and
// a date without a time). A naive time (no offset) is UTC, as Celery treats it
// (maybe_make_aware -> to_utc). Returns nullopt on anything else or an out-of-range field.
std::optional<double> ParseIso8601(std::string_view text);

// "2026-11-29T19:57:20.304333": naive UTC with microseconds, as Celery 5.2.6's date_done
// (datetime.utcnow().isoformat()).
std::string FormatIsoNaiveUtc(double unix_seconds);

// "2026-11-29T19:57:10.620453+00:00": aware UTC, as Celery 5.2.6 writes eta/expires headers.
std::string FormatIsoUtc(double unix_seconds);

}  // namespace warmpool::celery
