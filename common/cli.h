#pragma once

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

}  // namespace warmpool

// CLI11_PARSE with warmpool's exit codes.
#define WARMPOOL_CLI_PARSE(app, argc, argv)                 \
  try {                                                     \
    (app).parse((argc), (argv));                            \
  } catch (const CLI::ParseError& cli_parse_error) {        \
    return ::warmpool::CliExitCode((app), cli_parse_error); \
  }
