#!/usr/bin/python3
"""`warmpool-sim` refuses hostile input with a clear message and exit code 2, instead of wrapping
it into another value, simulating for days or exhausting memory: seeds that are not a uint64
(CLI11 would read "-1" and 2^64 as 2^64 - 1), workloads with a time past a year, import windows
past a year, `tune --seeds` past a hundred.
Run: sim_bad_input_cli_test.py PATH/TO/warmpool-sim (ctest: sim_bad_input_cli).
"""
import os
import subprocess
import sys
import tempfile
import unittest

SIM = None


def sim(*args):
    out = subprocess.run([SIM, *args], capture_output=True, text=True, timeout=60)
    return out.returncode, out.stdout, out.stderr


class BadInput(unittest.TestCase):
    def test_a_seed_must_be_a_uint64(self):
        for bad in ["-1", "18446744073709551616", "99999999999999999999", "1e3", ""]:
            for cmd in (["run", "--workload", "W1"], ["generate", "--workload", "W1"]):
                with self.subTest(cmd=cmd[0], seed=bad):
                    rc, _, err = sim(*cmd, "--seed", bad)
                    self.assertEqual(rc, 2)
                    self.assertIn("--seed", err)
        rc, out, err = sim("generate", "--workload", "W1", "--seed", "18446744073709551615")
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("arrival_s,duration_s"))

    def test_a_workload_past_a_year_is_refused_with_its_line(self):
        rows = {"arrival_s": "9e15,1", "duration_s": "1,1e12", "eta_s": "1,1,-1e300"}
        with tempfile.TemporaryDirectory() as d:
            for field, row in rows.items():
                with self.subTest(field=field):
                    path = os.path.join(d, field + ".csv")
                    header = "arrival_s,duration_s" + (",eta_s" if field == "eta_s" else "")
                    with open(path, "w") as f:
                        f.write(header + "\n" + row + "\n")
                    rc, out, err = sim("run", "--workload", path, "--policies", "warmpool")
                    self.assertEqual(rc, 2)
                    self.assertEqual(out, "")
                    self.assertIn("line 2: " + field, err)
                    self.assertIn("366 days", err)

    def test_tune_takes_at_most_a_hundred_seeds(self):
        for bad in ["0", "101", "1000000000"]:
            with self.subTest(seeds=bad):
                rc, _, err = sim("tune", "--workload", "W1", "--seeds", bad)
                self.assertEqual(rc, 2)
                self.assertIn("--seeds must be from 1 to 100", err)

    def test_a_negative_timeline_step_is_a_usage_error(self):
        rc, _, err = sim("run", "--workload", "W1", "--timeline", "-5")
        self.assertEqual(rc, 2)
        self.assertIn("--timeline", err)

    def test_an_import_window_past_a_year_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            inv = os.path.join(d, "inv.csv")
            with open(inv, "w") as f:
                f.write("HashOwner,HashApp,HashFunction,Trigger,1,2\no,a,f1,queue,3,1\n")
            dur = os.path.join(d, "dur.csv")
            with open(dur, "w") as f:
                f.write("HashOwner,HashApp,HashFunction,Average,Count,Minimum,Maximum,"
                        "percentile_Average_0,percentile_Average_1,percentile_Average_25,"
                        "percentile_Average_50,percentile_Average_75,percentile_Average_99,"
                        "percentile_Average_100\no,a,f1,10,4,1,20,1,1,5,10,15,20,20\n")
            out_csv = os.path.join(d, "out.csv")
            base = ["import", "--format", "azure-functions-2019", "--in", inv, "--durations", dur,
                    "--function", "f1", "--out", out_csv]
            rc, _, err = sim(*base)
            self.assertEqual(rc, 0, err)
            for extra in (["--hours", "1e9"], ["--start-hour", "1e300"]):
                with self.subTest(extra=extra):
                    if os.path.exists(out_csv):
                        os.remove(out_csv)
                    rc, _, err = sim(*base, *extra)
                    self.assertEqual(rc, 2)
                    self.assertIn("hours <= 8784", err)
                    self.assertFalse(os.path.exists(out_csv))  # nothing written


if __name__ == "__main__":
    SIM = sys.argv.pop(1)
    unittest.main()
