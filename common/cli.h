#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

// Command-line conventions of every warmpool binary (link warmpool_cli):
// - `--version` prints "NAME VERSION" on stdout and exits 0; VERSION is CMake's
//   project(VERSION), passed as WARMPOOL_VERSION;
// - `--help` exits 0; a usage error (unknown flag, bad value, missing argument) prints CLI11's
//   message on stderr and exits 2, as getopt tools do (CLI11's own codes are 105-109).

namespace warmpool {

inline std::string VersionString(const std::string& name) {
  std::string out = name;
  out.append(" ").append(WARMPOOL_VERSION);
  return out;
}

inline void AddVersionFlag(CLI::App& app, const std::string& name) {
  app.set_version_flag("--version", VersionString(name), "print the version and exit");
}

// What main returns for an exception from app.parse: 0 for --help/--version (printed here), 2
// for a usage error (its message printed on stderr).
inline int CliExitCode(const CLI::App& app, const CLI::ParseError& e) {
  return app.exit(e) == static_cast<int>(CLI::ExitCodes::Success) ? 0 : 2;
}

// For an unsigned 64-bit option (a seed): digits only, at most 2^64 - 1. CLI11 reads "-1" and
// anything past 2^64 - 1 into an unsigned option as 2^64 - 1 without a word, so different bad
// values would all run as one.
inline CLI::Validator Uint64Text() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
        const std::string max = "18446744073709551615";
        if (!digits || s.size() > max.size() || (s.size() == max.size() && s > max)) {
          return "must be a whole number from 0 to " + max;
        }
        return "";
      },
      "UINT64");
}

// For a floating-point option: a finite number from `lo` to `hi`. CLI::Range lets "nan" through
// (every comparison with NaN is false), and the option then holds NaN.
inline CLI::Validator FiniteRange(double lo, double hi) {
  const auto text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  const std::string range = text(lo) + " to " + text(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < lo || v > hi) {
          return "must be a number from " + range;
        }
        return "";
      },
      "FLOAT in " + range);
}

}  // namespace warmpool

// CLI11_PARSE with warmpool's exit codes.
#define WARMPOOL_CLI_PARSE(app, argc, argv)                 \
  try {                                                     \
    (app).parse((argc), (argv));                            \
  } catch (const CLI::ParseError& cli_parse_error) {        \
    return ::warmpool::CliExitCode((app), cli_parse_error); \
  }
