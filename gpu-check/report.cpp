#include "gpu-check/report.h"

#include <cmath>
#include <cstdio>

namespace warmpool::gpucheck {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

std::string Text(const Report::Value& v, bool json) {
  if (const double* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d)) {
      return json ? "null" : "-";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", *d);
    return buf;
  }
  if (const bool* b = std::get_if<bool>(&v)) {
    return *b ? "true" : "false";
  }
  const std::string& s = std::get<std::string>(v);
  return json ? Quote(s) : s;
}

}  // namespace

std::string Report::Json() const {
  std::string out = "{";
  for (size_t i = 0; i < rows_.size(); ++i) {
    out += (i == 0 ? "\n  " : ",\n  ") + Quote(rows_[i].key) + ": " + Text(rows_[i].value, true);
  }
  return out + "\n}\n";
}

std::string Report::Markdown() const {
  std::string out = "| measure | value | what |\n|---|---|---|\n";
  for (const Row& r : rows_) {
    out += "| " + r.key + " | " + Text(r.value, false) + " | " + r.note + " |\n";
  }
  return out;
}

}  // namespace warmpool::gpucheck
