#!/usr/bin/python3
"""`warmpool-sim run --grid keda` adds the KEDA grid, and `--policies` still filters it (exact
names and `prefix*`). Run: sim_grid_cli_test.py PATH/TO/warmpool-sim (ctest: sim_grid_cli).
"""
import json
import subprocess
import sys
import unittest

SIM = None


def run(*args):
    out = subprocess.run([SIM, "run", "--workload", "W1", "--seed", "1", "--format", "json",
                          *args], capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout, out.stderr


def names(stdout):
    return [p["policy"] for p in json.loads(stdout)["policies"]]


class Grid(unittest.TestCase):
    def test_prefix_selects_the_grid(self):
        rc, out, err = run("--grid", "keda", "--policies", "keda-ll5*")
        self.assertEqual(rc, 0, err)
        # W1: tasks of at most 30 s (one grace), 4 hours from Monday 00:00 (no cron floor).
        self.assertEqual(names(out), ["keda-ll5-cd60-pi10-g30", "keda-ll5-cd60-pi30-g30",
                                      "keda-ll5-cd300-pi10-g30", "keda-ll5-cd300-pi30-g30",
                                      "keda-ll5-cd900-pi10-g30", "keda-ll5-cd900-pi30-g30"])

    def test_exact_names_mix_grid_and_defaults(self):
        rc, out, err = run("--grid", "keda", "--policies", "warmpool,keda-ll1-cd60-pi10-g30")
        self.assertEqual(rc, 0, err)
        self.assertEqual(names(out), ["warmpool", "keda-ll1-cd60-pi10-g30"])

    def test_no_grid_without_the_flag(self):
        rc, out, err = run("--policies", "keda-ll*,oracle-durations")
        self.assertEqual(rc, 0, err)
        self.assertEqual(names(out), ["oracle-durations"])

    def test_unknown_grid_is_a_usage_error(self):
        rc, _, err = run("--grid", "hpa")
        self.assertEqual(rc, 2)
        self.assertIn("--grid", err)


if __name__ == "__main__":
    SIM = sys.argv.pop(1)
    unittest.main()
