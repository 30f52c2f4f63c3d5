#!/usr/bin/python3
"""Hand-computed checks of scripts/scaling_equal_service.py (the report's judgement at equal
service). Run: /usr/bin/python3 tests/unit/sim/scaling_equal_service_test.py
(ctest: sim_scaling_equal_service).
"""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import scaling_pareto as sp  # noqa: E402
import scaling_equal_service as sr  # noqa: E402


def point(name, *gpuh_p95):
    """A Point of runs on seeds 1, 2, ... with these (GPU-h, p95)."""
    return sp.summarize({name: [{"billedGpuHours": g, "waitP95": p, "killedTasks": 0, "seed": i + 1}
                                for i, (g, p) in enumerate(gpuh_p95)]})[name]


class StatedRuns:
    """Runs.by_policy for the "stated" kind alone: warmpool told the durations, per workload."""

    def __init__(self, told):
        self.told = told

    def by_policy(self, kind, w):
        assert kind == "stated"
        return {"warmpool": self.told[w]} if w in self.told else {}


def entry(warmpool, od, od_at_p95=None):
    return {"warmpool": warmpool, "oracle-durations": od, "od-at-p95": od_at_p95}


class OracleBoundRows(unittest.TestCase):
    def test_only_workloads_over_the_target_with_their_told_ratio(self):
        es = {
            # 30 / 10 = 3x the oracle; told: 12 GPU-h at 600 s on both seeds -> 1.2x.
            "burst": entry(point("warmpool", (30, 450), (30, 450)),
                           point("oracle-durations", (10, 650), (10, 650)),
                           point("oracle-durations, `targetWaitSeconds 301`", (29, 440), (31, 440))),
            # 14 / 10 = 1.4x: within the target, left out.
            "steady": entry(point("warmpool", (14, 100), (14, 100)),
                            point("oracle-durations", (10, 300), (10, 300))),
        }
        told = {"burst": [{"billedGpuHours": 12, "waitP95": 600, "killedTasks": 0, "seed": s}
                          for s in (1, 2)]}
        rows = sr.oracle_bound_rows(es, StatedRuns(told)).splitlines()
        self.assertEqual(rows, ["| burst | 30.0 / 450 | 10.0 / 650 | 3.00× | 1.00× | 12.0 / 600 "
                                "| 1.20× |"])

    def test_no_oracle_as_fast_and_no_told_run_show_dashes(self):
        es = {"w": entry(point("warmpool", (20, 400)), point("oracle-durations", (5, 700)))}
        self.assertEqual(sr.oracle_bound_rows(es, StatedRuns({})),
                         "| w | 20.0 / 400 | 5.0 / 700 | 4.00× | - | - | - |")

    def test_every_workload_within_the_target_says_so(self):
        es = {"w": entry(point("warmpool", (10, 400)), point("oracle-durations", (10, 700)))}
        self.assertEqual(sr.oracle_bound_rows(es, StatedRuns({})), "| (none) | | | | | | |")


if __name__ == "__main__":
    unittest.main()
