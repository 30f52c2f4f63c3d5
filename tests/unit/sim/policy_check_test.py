#!/usr/bin/python3
"""Checks of scripts/policy_check.py (a changed policy judged against a finished report's grid
runs): what it reads back from run JSON and prints. Run:
/usr/bin/python3 tests/unit/sim/policy_check_test.py (ctest: sim_policy_check).
"""
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import policy_check  # noqa: E402
import scaling_population as population  # noqa: E402
import scaling_report as report  # noqa: E402


def result(policy, gpuh, p95, killed=0, reversals=0.5):
    return {"policy": policy, "billedGpuHours": gpuh, "waitP95": p95, "killedTasks": killed,
            "requeuedTasks": 0, "reversalsPerHour": reversals}


def write(out_dir, kind, w, seed, policies):
    with open(report.run_path(out_dir, kind, w, seed), "w") as f:
        json.dump({"seed": int(seed), "policies": policies}, f)


class PolicyCheck(unittest.TestCase):
    def test_workload_line_judges_seed_by_seed(self):
        with tempfile.TemporaryDirectory() as rep, tempfile.TemporaryDirectory() as out:
            # ll5 bills 10 % less on both seeds and waits no longer on either: it dominates.
            # ll10 bills 20 % less but waits 50 s longer on seed 2: not as fast.
            for s, p95 in (("1", 100), ("2", 200)):
                write(out, "base", "W1", s, [result("warmpool", 10, p95, reversals=1.5)])
                write(rep, "grid", "W1", s, [result("keda-ll5-cd60-pi10-g30", 9, p95),
                                              result("keda-ll10-cd60-pi10-g30", 8,
                                                     p95 + 50 * (s == "2"))])
            lines = policy_check.workload_lines(out, rep, ["1", "2"])
            self.assertEqual(len(lines), 2)  # the header and W1 (the others did not run)
            self.assertEqual(lines[1].split(), ["W1", "10.0", "150", "0", "1.50", "1.11",
                                                "keda-ll5-cd60-pi10-g30"])

    def test_population_lists_the_wide_dominations(self):
        with tempfile.TemporaryDirectory() as trace, tempfile.TemporaryDirectory() as rep, \
                tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(trace, "azure_functions_2019_fullday"))
            with open(os.path.join(trace, population.INVOCATIONS), "w") as f:
                f.write("HashFunction,HashOwner,HashApp," +
                        ",".join(f"minute_{i}" for i in range(1, 1441)) + "\n")
                for h in ("a" * 64, "b" * 64, "d" * 64):
                    f.write(f"{h},o,a,10" + ",0" * 1439 + "\n")
                f.write("c" * 64 + ",o,a" + ",0" * 500 + ",10" + ",0" * 939 + "\n")  # held out
            saved, report.TRACE_DATA = report.TRACE_DATA, trace
            try:
                for s in ("1", "2"):
                    # a: ll2 bills 25 % less at the same p95; b: nothing as cheap.
                    write(out, "base", "azfpop-" + "a" * 12, s, [result("warmpool", 5, 400)])
                    write(rep, "grid", "azfpop-" + "a" * 12, s,
                          [result("keda-ll2-cd60-pi10-g30", 4, 400)])
                    # d: a's arrivals (one app's timer), dominated the same way.
                    write(out, "base", "azfpop-" + "d" * 12, s, [result("warmpool", 5, 400)])
                    write(rep, "grid", "azfpop-" + "d" * 12, s,
                          [result("keda-ll2-cd60-pi10-g30", 4, 400)])
                    write(out, "base", "azfpop-" + "b" * 12, s, [result("warmpool", 1, 30)])
                    write(rep, "grid", "azfpop-" + "b" * 12, s,
                          [result("keda-ll2-cd60-pi10-g30", 4, 400)])
                    # c (minute 501: the 8-16 h window): ll2 bills 10 % less, 1 s faster.
                    write(out, "base", "azf08-" + "c" * 12, s, [result("warmpool", 2, 100)])
                    write(rep, "grid", "azf08-" + "c" * 12, s,
                          [result("keda-ll2-cd60-pi10-g30", 1.8, 99)])
                # The patterns are read from the first seed's imports.
                for w, arrivals in (("a", "60.0 120.5"), ("d", "60.0 120.5"), ("c", "30000.0")):
                    with open(population.workload_csv(rep, ("azf08-" if w == "c" else "azfpop-")
                                                      + w * 12, "1"), "w") as f:
                        f.write("# imported\narrival_s,duration_s,eta_s,queue,task\n" +
                                "".join(f"{t},0.5,,q,t\n" for t in arrivals.split()))
                lines = policy_check.population_lines(out, rep, ["1", "2"])
            finally:
                report.TRACE_DATA = saved
            self.assertEqual(lines, [
                "population: 3 functions, 11.0 GPU-h, median p95 400 s, dominated on 2 (2 by "
                "more than 2 % of GPU-h; 1 distinct arrival patterns)",
                "  dddddddddddd 1.25x keda-ll2-cd60-pi10-g30",
                "  aaaaaaaaaaaa 1.25x keda-ll2-cd60-pi10-g30",
                "held out: 1 functions, 2.0 GPU-h, median p95 100 s, dominated on 1 (1 by "
                "more than 2 % of GPU-h; 1 distinct arrival patterns)",
                "  cccccccccccc 1.11x keda-ll2-cd60-pi10-g30"])

    def test_runs_held_out_members_only_where_the_report_imported_them(self):
        with tempfile.TemporaryDirectory() as trace, tempfile.TemporaryDirectory() as rep:
            os.makedirs(os.path.join(trace, "azure_functions_2019_fullday"))
            with open(os.path.join(trace, population.INVOCATIONS), "w") as f:
                f.write("HashFunction,HashOwner,HashApp," +
                        ",".join(f"minute_{i}" for i in range(1, 1441)) + "\n")
                f.write("c" * 64 + ",o,a" + ",0" * 500 + ",10" + ",0" * 939 + "\n")
            open(population.workload_csv(rep, "azf08-" + "c" * 12, "1"), "w").close()
            saved, report.TRACE_DATA = report.TRACE_DATA, trace
            try:
                held = [(w, s) for k, w, s, _ in policy_check.jobs(["1", "2"], [], rep)
                        if w.startswith("azf08-")]
            finally:
                report.TRACE_DATA = saved
            self.assertEqual(held, [("azf08-" + "c" * 12, "1")])

    def test_passes_metadata_and_kubernetes_settings_to_every_run(self):
        with tempfile.TemporaryDirectory() as trace, tempfile.TemporaryDirectory() as rep:
            saved, report.TRACE_DATA = report.TRACE_DATA, trace
            try:
                runs = policy_check.jobs(["1"], ["keepAlive=300"], rep,
                                         ["scaleDownStabilizationSeconds=300"])
            finally:
                report.TRACE_DATA = saved
            self.assertTrue(runs)
            for _, _, _, extra in runs:
                self.assertEqual(extra, ["--policies", "warmpool", "--meta", "keepAlive=300",
                                         "--scaledobject", "scaleDownStabilizationSeconds=300"])


if __name__ == "__main__":
    unittest.main()
