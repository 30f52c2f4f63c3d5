#!/usr/bin/python3
"""Every warmpool binary's command-line conventions (common/cli.h): a usage error exits 2 with
a message on stderr, `--version` prints "NAME VERSION" and exits 0, `--help` exits 0. Values out
of an option's range are usage errors too, not wrapped or taken as another value (CLI11 reads
"-1" into an unsigned option as 2^64 - 1, and its Range lets "nan" through).

usage: check_cli.py VERSION NAME=PATH...
"""
import subprocess
import sys


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


# Per binary: (the option at fault, an argument list with it) that must be refused as a usage
# error (exit 2, the option named on stderr), before any work.
OUT_OF_RANGE = {
    "warmpool-change": [("--threads", ["--threads", "-5", "{}"]),
                        ("--threads", ["--threads", "100000", "{}"]),
                        ("--strip-rows", ["--strip-rows", "0", "{}"]),
                        ("--decode-budget-mb", ["--decode-budget-mb", "-1", "{}"])],
    "warmpool-synth": [("--seed", ["--seed", "-1"]),
                       ("--seed", ["--seed", "18446744073709551616"]),
                       ("--noise", ["--noise", "nan"])],
    # CLI::Range lets NaN through: floating-point options use FiniteRange.
    "warmpool-worker": [("--grace-seconds", ["--grace-seconds", "nan"]),
                        ("--time-limit", ["--time-limit", "inf"]),
                        ("--visibility-timeout", ["--visibility-timeout", "nan"])],
    "warmpool-keda-probe": [("--timeout", ["--timeout", "nan"]),
                            ("--timeout", ["--timeout", "-5"]),
                            ("--stream-seconds", ["--stream", "--stream-seconds", "nan"])],
    "warmpool-sim": [("--seed", ["run", "--workload", "W1", "--seed", "-1"]),
                     ("--seed", ["generate", "--workload", "W1", "--seed", "99999999999999999999"])],
}


def check(name, path, version):
    problems = []
    for option, argv in OUT_OF_RANGE.get(name, []):
        refused = run([path, *argv])
        if refused.returncode != 2 or option not in refused.stderr:
            problems.append(f"{' '.join(argv)}: exited {refused.returncode} with stderr "
                            f"{refused.stderr.strip()[:200]!r}, want 2 naming {option}")
    bogus = run([path, "--no-such-flag"])
    if bogus.returncode != 2:
        problems.append(f"--no-such-flag exited {bogus.returncode}, want 2")
    if not bogus.stderr.strip() or bogus.stdout.strip():
        problems.append(f"--no-such-flag: want a message on stderr only, got stdout "
                        f"{bogus.stdout!r} stderr {bogus.stderr!r}")
    shown = run([path, "--version"])
    want = f"{name} {version}"
    if shown.returncode != 0 or shown.stdout.strip() != want:
        problems.append(f"--version exited {shown.returncode} printing {shown.stdout!r}, "
                        f"want 0 and {want!r}")
    helped = run([path, "--help"])
    if helped.returncode != 0 or "--version" not in helped.stdout:
        problems.append(f"--help exited {helped.returncode}, or does not list --version")
    return problems


def main():
    version, pairs = sys.argv[1], sys.argv[2:]
    if not pairs:
        print("no binaries given", file=sys.stderr)
        return 1
    failed = False
    for pair in pairs:
        name, path = pair.split("=", 1)
        problems = check(name, path, version)
        for p in problems:
            print(f"FAIL {name}: {p}")
        if not problems:
            print(f"ok   {name}")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
