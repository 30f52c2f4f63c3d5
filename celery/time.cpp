#include "celery/time.h"

#include <cmath>
#include <cstdio>

namespace warmpool::celery {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
long long DaysFromCivil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

void CivilFromDays(long long z, int* y, unsigned* m, unsigned* d) {
  z += 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long long yy = static_cast<long long>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int>(yy + (*m <= 2));
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at *pos.
bool Digits(std::string_view s, size_t* pos, int n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

void Split(double unix_seconds, long long* secs, int* micros) {
  double whole = std::floor(unix_seconds);
  long long us = std::llround((unix_seconds - whole) * 1e6);
  *secs = static_cast<long long>(whole);
  if (us >= 1000000) {
    us -= 1000000;
    ++*secs;
  }
  *micros = static_cast<int>(us);
}

std::string FormatBase(double unix_seconds) {
  long long secs;
  int micros;
  Split(unix_seconds, &secs, &micros);
  long long days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  long long rem = secs - days * 86400;
  int y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02lld:%02lld:%02lld.%06d", y, m, d, rem / 3600,
                (rem / 60) % 60, rem % 60, micros);
  return buf;
}

}  // namespace

std::optional<double> ParseIso8601(std::string_view s) {
  size_t pos = 0;
  int year, month, day;
  if (!Digits(s, &pos, 4, &year) || !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &month) ||
      !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month)) return std::nullopt;
  int hour = 0, minute = 0, second = 0;
  double fraction = 0;
  int offset_seconds = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return std::nullopt;
    ++pos;
    if (!Digits(s, &pos, 2, &hour) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &minute)) {
      return std::nullopt;
    }
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!Digits(s, &pos, 2, &second)) return std::nullopt;
      if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
        ++pos;
        double scale = 0.1;
        size_t start = pos;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
          fraction += (s[pos] - '0') * scale;
          scale /= 10;
          ++pos;
        }
        if (pos == start) return std::nullopt;
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
    if (pos < s.size()) {
      char c = s[pos];
      if (c == 'Z' || c == 'z') {
        ++pos;
      } else if (c == '+' || c == '-') {
        ++pos;
        int oh, om = 0;
        if (!Digits(s, &pos, 2, &oh)) return std::nullopt;
        if (pos < s.size() && s[pos] == ':') ++pos;
        if (pos < s.size() && !Digits(s, &pos, 2, &om)) return std::nullopt;
        if (oh > 23 || om > 59) return std::nullopt;
        offset_seconds = (oh * 3600 + om * 60) * (c == '+' ? 1 : -1);
      } else {
        return std::nullopt;
      }
    }
  }
  if (pos != s.size()) return std::nullopt;
  long long days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  double t = static_cast<double>(days * 86400 + hour * 3600 + minute * 60 + second) + fraction;
  return t - offset_seconds;
}

std::string FormatIsoNaiveUtc(double unix_seconds) { return FormatBase(unix_seconds); }

std::string FormatIsoUtc(double unix_seconds) { return FormatBase(unix_seconds) + "+00:00"; }

}  // namespace warmpool::celery
