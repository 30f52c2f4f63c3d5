#!/usr/bin/python3
"""Checks of scripts/scaling_population.py (the report's population of real functions): the
selection rule, and the verdicts it reads back from run JSON. Run:
/usr/bin/python3 tests/unit/sim/scaling_population_test.py (ctest: sim_scaling_population).
"""
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import scaling_population as pop  # noqa: E402


def write_invocations(trace_dir, rows):
    """An invocations file laid out as the Azure Functions 2019 one: 3 hash columns, then 1440
    per-minute counts; rows = {hash: {minute index: count}}."""
    os.makedirs(os.path.join(trace_dir, "azure_functions_2019_fullday"))
    with open(os.path.join(trace_dir, pop.INVOCATIONS), "w") as f:
        f.write("HashFunction,HashOwner,HashApp," +
                ",".join(f"minute_{i}" for i in range(1, 1441)) + "\n")
        for h, counts in rows.items():
            f.write(f"{h},o,a," + ",".join(str(counts.get(i, 0)) for i in range(1440)) + "\n")


class Selection(unittest.TestCase):
    def test_counts_only_the_first_8_hours_and_keeps_8_to_20000(self):
        with tempfile.TemporaryDirectory() as d:
            write_invocations(d, {
                "a" * 64: {0: 8},                 # 8 calls in the window: kept
                "b" * 64: {0: 7, 480: 100},       # 7 in the window (minute 481 is outside)
                "c" * 64: {479: 20000},           # the upper edge is inclusive: kept
                "d" * 64: {0: 20000, 1: 1},       # 20,001: too many
            })
            self.assertEqual(pop.functions(d), ["a" * 12, "c" * 12])

    def test_a_held_out_window_counts_its_own_8_hours(self):
        with tempfile.TemporaryDirectory() as d:
            write_invocations(d, {
                "a" * 64: {0: 8},                 # only in the first window
                "b" * 64: {480: 8, 959: 1},       # minutes 481-960: the 8-16 h window
                "c" * 64: {960: 8},               # the 16-24 h window
            })
            self.assertEqual(pop.functions(d, 8), ["b" * 12])
            self.assertEqual(pop.functions(d, 16), ["c" * 12])
            self.assertEqual(pop.held_out_members(d), ["azf08-" + "b" * 12, "azf16-" + "c" * 12])
            self.assertTrue(pop.is_member("azf16-" + "c" * 12))
            self.assertFalse(pop.is_member("azf-b7cab8f7"))  # a report workload, not a member
            self.assertEqual(pop.function_of("azf08-" + "b" * 12), "b" * 12)

    def test_no_trace_no_population(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(pop.functions(d), [])


class Summary(unittest.TestCase):
    SWEEP = [("ka300", ["--meta", "keepAlive=300"])]

    @staticmethod
    def result(policy, gpuh, p95):
        return {"policy": policy, "billedGpuHours": gpuh, "waitP95": p95, "killedTasks": 0}

    @staticmethod
    def path(out_dir, kind, w, s):
        """Where the report keeps a run's JSON (its run_path)."""
        return os.path.join(out_dir, f"{kind}-{w}-{s}.json")

    def write_runs(self, out_dir, runs):
        """Writes {(kind, member): [policy results]} as seed-1 run JSON."""
        for (kind, w), policies in runs.items():
            with open(self.path(out_dir, kind, w, "1"), "w") as f:
                json.dump({"policies": policies}, f)

    def test_judges_each_member_at_equal_p95(self):
        with tempfile.TemporaryDirectory() as d:
            self.write_runs(d, {
                # On waits 100 s less than off for 5 % more; off with keepAlive 300 reaches 100 s
                # for 20 % more: a gain of 1.05 / 1.2.
                ("base", "azfpop-x"): [self.result("warmpool", 10.5, 100),
                                       self.result("warmpool-prewarm-off", 10, 200)],
                ("ka300", "azfpop-x"): [self.result("warmpool-prewarm-off", 12, 100)],
                # The same on both axes.
                ("base", "azfpop-y"): [self.result("warmpool", 5, 50),
                                       self.result("warmpool-prewarm-off", 5, 50)],
            })
            counts, judged = pop.summary(d, ["azfpop-x", "azfpop-y", "azfpop-missing"],
                                         self.SWEEP, self.path)
            self.assertEqual(dict(counts), {"gain": 1, "same": 1})
            self.assertEqual([(j[0], j[1]) for j in judged], [("x", "gain"), ("y", "same")])
            self.assertAlmostEqual(judged[0][2], 10.5 / 12)
            total, p95 = pop.totals(judged)
            self.assertAlmostEqual(total, 15.5 / 15)
            self.assertEqual(p95, -50)
            self.assertIn("| `x` | gain | 0.88× |", pop.table(judged))

    def test_judges_each_member_against_the_grid(self):
        with tempfile.TemporaryDirectory() as d:
            self.write_runs(d, {
                # x: ll10 is as fast for more (cost 0.8); ll5 bills 10 % less at the same p95:
                # it dominates by more than 2 %.
                ("base", "azfpop-x"): [self.result("warmpool", 10, 100),
                                       self.result("warmpool-prewarm-off", 9.5, 100)],
                ("grid", "azfpop-x"): [self.result("keda-ll10-cd60-pi10-g30", 12.5, 90),
                                       self.result("keda-ll5-cd60-pi10-g30", 9, 100)],
                # y: nothing as fast; ll1 is slower and dearer; dominated by nothing.
                ("base", "azfpop-y"): [self.result("warmpool", 5, 50) |
                                       {"reversalsPerHour": 2.5}],
                ("grid", "azfpop-y"): [self.result("keda-ll1-cd60-pi10-g30", 6, 70)],
                # z: dominated by 1 % only (within the margin); reverses at the bound, not over.
                ("base", "azfpop-z"): [self.result("warmpool", 10.1, 100) |
                                       {"reversalsPerHour": 2}],
                ("grid", "azfpop-z"): [self.result("keda-ll2-cd60-pi10-g30", 10, 100)],
                # w: no grid run (not judged).
                ("base", "azfpop-w"): [self.result("warmpool", 1, 1)],
            })
            rows = pop.grid_summary(d, ["azfpop-x", "azfpop-y", "azfpop-z", "azfpop-w"], self.path)
            self.assertEqual([r[0] for r in rows], ["x", "y", "z"])
            self.assertAlmostEqual(rows[0][2], 10 / 9)  # the cheapest as fast: ll5
            self.assertEqual(rows[0][3].name, "keda-ll5-cd60-pi10-g30")
            self.assertIsNone(rows[1][2])
            self.assertIsNone(rows[1][3])
            v = pop.grid_values(rows)
            self.assertEqual((v["pop_grid_n"], v["pop_grid_as_fast"], v["pop_grid_dominated"],
                              v["pop_grid_wide"], v["pop_grid_prewarm"]), ("3", "2", "2", "1", "1"))
            self.assertIn("| `x` | 10.00 / 100 | `keda-ll5-cd60-pi10-g30` | 9.00 / 100 | 1.11× "
                          "| 9.50 / 100 |", v["pop_grid_rows"])
            self.assertNotIn("`z`", v["pop_grid_rows"])
            self.assertEqual(v["pop_grid_churning"], "`y` (2.50)")
            self.assertEqual(pop.grid_values(rows[:1])["pop_grid_churning"], "none")

    def test_counts_dominated_members_with_one_arrival_pattern_once(self):
        with tempfile.TemporaryDirectory() as d:
            runs = {}
            for fn in ("p", "q", "r", "s"):
                # p, q and r: ll5 bills 20 % less at the same p95 (dominated); s: not.
                runs[("base", "azfpop-" + fn)] = [self.result("warmpool", 10, 100)]
                runs[("grid", "azfpop-" + fn)] = [
                    self.result("keda-ll5-cd60-pi10-g30", 8 if fn != "s" else 12, 100)]
            self.write_runs(d, runs)
            # p and q share one app's timer; r's import is missing (a pattern of its own); s
            # shares it too but is not dominated.
            for fn, arrivals in (("p", "60.0 120.5"), ("q", "60.0 120.5"), ("s", "60.0 120.5")):
                with open(pop.workload_csv(d, "azfpop-" + fn), "w") as f:
                    f.write("# imported\narrival_s,duration_s,eta_s,queue,task\n" +
                            "".join(f"{t},0.5,,q,t\n" for t in arrivals.split()))
            members = ["azfpop-" + fn for fn in "pqrs"]
            self.assertEqual(pop.dominated_patterns(d, members, self.path), 2)
            self.assertEqual(pop.arrival_pattern(d, "azfpop-p"), ("60.0", "120.5"))
            self.assertEqual(pop.arrival_pattern(d, "azfpop-r"), "azfpop-r")

    def test_judges_the_held_out_windows_as_the_population(self):
        with tempfile.TemporaryDirectory() as trace, tempfile.TemporaryDirectory() as d:
            write_invocations(trace, {"b" * 64: {480: 8}, "c" * 64: {960: 8}})
            b, c = "azf08-" + "b" * 12, "azf16-" + "c" * 12
            self.write_runs(d, {
                # b: ll5 bills 20 % less at the same p95 and dominates; c: nothing as fast.
                ("base", b): [self.result("warmpool", 10, 100)],
                ("grid", b): [self.result("keda-ll5-cd60-pi10-g30", 8, 100)],
                ("base", c): [self.result("warmpool", 2, 50)],
                ("grid", c): [self.result("keda-ll5-cd60-pi10-g30", 3, 70)],
            })
            v = pop.held_out_values(d, trace, self.path)
            self.assertEqual((v["held_grid_n"], v["held_grid_dominated"], v["held_grid_wide"],
                              v["held_grid_patterns"]), ("2", "1", "1", "1"))
            self.assertEqual(v["held_top"], "`bbbbbbbbbbbb` (1.25×)")
            self.assertEqual(v["held_windows"], "8–16 h and 16–24 h")
            self.assertEqual(v["held_fixed_cheapest"], "`keda-ll5-cd60-pi10-g30`")
            self.assertEqual(v["held_fixed_cheapest_ratio"], "0.92")  # 11 GPU-h against 12
            self.assertEqual(pop.held_out_values(d, d, self.path), {})  # no trace: no members

    def test_judges_one_configuration_for_every_member(self):
        with tempfile.TemporaryDirectory() as d:
            self.write_runs(d, {
                # x has a task past 30 s, so the grid also runs a long grace; ll5-g30 kills.
                ("base", "azfpop-x"): [self.result("warmpool", 10, 100),
                                       self.result("warmpool-prewarm-off", 9, 120)],
                ("grid", "azfpop-x"): [self.result("keda-ll5-cd60-pi10-g30", 8, 90) |
                                       {"killedTasks": 2},
                                       self.result("keda-ll5-cd60-pi10-g660", 9.5, 110),
                                       self.result("keda-ll10-cd60-pi10-g30", 12, 130) |
                                       {"reversalsPerHour": 3},
                                       self.result("keda-ll10-cd60-pi10-g660", 12, 130),
                                       self.result("keda-ll10-cd60-pi10-g660-cron3", 20, 200)],
                # y runs only the 30 s grace, which stands for -glongest there; ll5 dominates
                # warmpool on y by 1 % only, ll10 waits less for more.
                ("base", "azfpop-y"): [self.result("warmpool", 5.05, 50),
                                       self.result("warmpool-prewarm-off", 5.05, 50)],
                ("grid", "azfpop-y"): [self.result("keda-ll5-cd60-pi10-g30", 5, 50),
                                       self.result("keda-ll10-cd60-pi10-g30", 6, 40) |
                                       {"reversalsPerHour": 2.5}],
            })
            rows = pop.fixed_summary(d, ["azfpop-x", "azfpop-y"], self.path)
            by = {r.name: r for r in rows}
            # The cron floor ran on x only: left out.
            self.assertNotIn("keda-ll10-cd60-pi10-glongest-cron", by)
            self.assertEqual(set(by), {"warmpool", "warmpool-prewarm-off",
                                       "keda-ll5-cd60-pi10-g30", "keda-ll5-cd60-pi10-glongest",
                                       "keda-ll10-cd60-pi10-g30",
                                       "keda-ll10-cd60-pi10-glongest"})
            ll5 = by["keda-ll5-cd60-pi10-glongest"]
            self.assertAlmostEqual(ll5.gpuh, 14.5)  # 9.5 on x + the g30 run's 5 on y
            self.assertEqual((ll5.p95, ll5.killing, ll5.slower), (80, 0, 1))
            # On x, ll5-g30 kills, so it does not dominate it; nothing else does.
            self.assertEqual((ll5.dominated, ll5.wide), (0, 0))
            wp = by["warmpool"]
            # Not dominated on x (ll5-glongest is cheaper but slower); on y ll5 by 1 % only.
            self.assertEqual((wp.gpuh, wp.dominated, wp.wide, wp.slower), (15.05, 1, 0, 0))
            self.assertEqual(by["keda-ll5-cd60-pi10-g30"].killing, 1)
            # ll10-g30 reverses more than twice an hour on both; its long grace only on y.
            self.assertEqual((by["keda-ll10-cd60-pi10-g30"].churning,
                              by["keda-ll10-cd60-pi10-glongest"].churning, wp.churning), (2, 1, 0))
            self.assertEqual([r.name for r in rows][:2],
                             ["keda-ll5-cd60-pi10-g30", "warmpool-prewarm-off"])
            v = pop.fixed_values(rows)
            self.assertEqual(v["pop_fixed_n"], "4")
            self.assertEqual(v["pop_fixed_cheapest"], "`keda-ll5-cd60-pi10-glongest`")
            self.assertEqual(v["pop_fixed_cheapest_ratio"], f"{14.5 / 15.05:.2f}")
            self.assertEqual(v["pop_fixed_fastest"], "`keda-ll5-cd60-pi10-glongest`")
            self.assertEqual(v["pop_fixed_least"], "`keda-ll5-cd60-pi10-glongest`")  # kills none
            self.assertEqual(v["pop_fixed_clean"], "3")
            # ll5-glongest bills less (14.5) and waits longer (80 s); ll10 more at 85 s.
            self.assertEqual((v["pop_fixed_cheaper"], v["pop_fixed_faster"]), ("1", "none"))
            self.assertIn("| `warmpool` | 15.1 | 1.00× | 75 | 0 | 0 | 1 (0) | 0 |",
                          v["pop_fixed_rows"])
            self.assertEqual((v["pop_fixed_wp_churning"], v["pop_fixed_least_churning"]),
                             ("0", "0"))
            self.assertNotIn("`keda-ll5-cd60-pi10-g30`", v["pop_fixed_rows"])  # it kills

    def test_pairs_each_member_seed_by_seed(self):
        with tempfile.TemporaryDirectory() as d:
            # On 3 seeds ll5 bills 1 % less; warmpool waits less on 2 of them, and ll5's fast
            # seed is warmpool's slow one: the medians alone (100 < 110) would call ll5 dominant.
            for s, (wp_p95, ll5_p95) in zip("123", ((110, 120), (90, 100), (130, 100))):
                for kind, policies in (
                        ("base", [self.result("warmpool", 10, wp_p95),
                                  self.result("warmpool-prewarm-off", 10, wp_p95)]),
                        ("grid", [self.result("keda-ll5-cd60-pi10-g30", 9.9, ll5_p95)])):
                    with open(self.path(d, kind, "azfpop-x", s), "w") as f:
                        json.dump({"policies": policies}, f)
            rows = pop.grid_summary(d, ["azfpop-x"], self.path, seeds=("1", "2", "3"))
            self.assertEqual((rows[0][1].p95, rows[0][3]), (110, None))  # not dominated
            self.assertIsNone(rows[0][2])  # ll5 is not as fast: its p95 is 10 s longer
            # Judged on seed 1 alone it is slower too; on seed 3 alone it dominates.
            self.assertIsNone(pop.grid_summary(d, ["azfpop-x"], self.path, seeds=("1",))[0][3])
            self.assertEqual(pop.grid_summary(d, ["azfpop-x"], self.path,
                                              seeds=("3",))[0][3].name, "keda-ll5-cd60-pi10-g30")
            # A member missing a seed's run is not judged.
            self.assertEqual(pop.grid_summary(d, ["azfpop-x"], self.path, seeds=("1", "4")), [])

    def test_one_configuration_needs_warmpool_and_a_clean_config(self):
        self.assertEqual(pop.fixed_values([]), {})

    def test_judges_warmpool_told_each_mean_duration(self):
        with tempfile.TemporaryDirectory() as d:
            self.write_runs(d, {
                # x: told, it bills 8 instead of 10 and ll5 (9 GPU-h) no longer dominates it.
                ("base", "azfpop-x"): [self.result("warmpool", 10, 100)],
                ("stated", "azfpop-x"): [self.result("warmpool", 8, 100)],
                ("grid", "azfpop-x"): [self.result("keda-ll5-cd60-pi10-g30", 9, 100)],
                # y: told, it still loses to ll10 by 5 %.
                ("base", "azfpop-y"): [self.result("warmpool", 2, 40)],
                ("stated", "azfpop-y"): [self.result("warmpool", 2.1, 50)],
                ("grid", "azfpop-y"): [self.result("keda-ll10-cd60-pi10-g30", 2, 50)],
                # z: no told run (not judged).
                ("base", "azfpop-z"): [self.result("warmpool", 1, 1)],
                ("grid", "azfpop-z"): [self.result("keda-ll10-cd60-pi10-g30", 1, 1)],
            })
            v = pop.stated_values(d, ["azfpop-x", "azfpop-y", "azfpop-z"], self.path)
            self.assertEqual(v, {"pop_stated_n": "2", "pop_stated_ratio": f"{10.1 / 12:.2f}",
                                 "pop_stated_p95": "75", "pop_stated_shipped_p95": "70",
                                 "pop_stated_slower": "1", "pop_stated_faster": "0",
                                 "pop_stated_top": "`x`, `y`",
                                 "pop_stated_dominated": "1", "pop_stated_wide": "1"})
            self.assertEqual(pop.stated_values(d, ["azfpop-z"], self.path), {})

    def test_judges_warmpool_without_the_release_budget(self):
        with tempfile.TemporaryDirectory() as d:
            self.write_runs(d, {
                # x: the budget's hold costs 4 GPU-h; without it ll5 no longer dominates, but it
                # reverses 3 times an hour.
                ("base", "azfpop-x"): [self.result("warmpool", 10, 100)],
                ("unbudgeted", "azfpop-x"): [self.result("warmpool", 6, 100) |
                                             {"reversalsPerHour": 3}],
                ("grid", "azfpop-x"): [self.result("keda-ll5-cd60-pi10-g30", 8, 100)],
                # y: the same either way, dominated by 1 % only (within the margin).
                ("base", "azfpop-y"): [self.result("warmpool", 2.02, 50)],
                ("unbudgeted", "azfpop-y"): [self.result("warmpool", 2.02, 50) |
                                             {"reversalsPerHour": 1}],
                ("grid", "azfpop-y"): [self.result("keda-ll10-cd60-pi10-g30", 2, 50)],
                # z: no run without the budget (not judged).
                ("base", "azfpop-z"): [self.result("warmpool", 1, 1)],
                ("grid", "azfpop-z"): [self.result("keda-ll10-cd60-pi10-g30", 1, 1)],
            })
            v = pop.unbudgeted_values(d, ["azfpop-x", "azfpop-y", "azfpop-z"], self.path, "pop")
            self.assertEqual(v, {"pop_unbudgeted_n": "2",
                                 "pop_unbudgeted_ratio": f"{8.02 / 12.02:.2f}",
                                 "pop_unbudgeted_dominated": "1", "pop_unbudgeted_wide": "0",
                                 "pop_unbudgeted_churning": "1"})
            self.assertEqual(pop.unbudgeted_values(d, ["azfpop-z"], self.path, "held"), {})

    def test_mean_duration_reads_an_imported_csv(self):
        with tempfile.TemporaryDirectory() as d:
            path = pop.workload_csv(d, "azfpop-f")
            with open(path, "w") as f:
                f.write("# 400_inv.csv: 3 tasks\narrival_s,duration_s,eta_s,queue,task\n"
                        "1,0.5,,q,t\n2,1.5,,q,t\n3,4,,q,t\n")
            self.assertAlmostEqual(pop.mean_duration(path), 2.0)
            jobs = pop.jobs(["azfpop-f"], [], ["--grid", "keda"], d)
            self.assertIn(("stated", "azfpop-f", "1",
                           ["--policies", "warmpool", "--meta", "taskSeconds=2"]), jobs)
            # Each seed's own import: seed 2's tasks run 3 s on average.
            with open(pop.workload_csv(d, "azfpop-f", "2"), "w") as f:
                f.write("arrival_s,duration_s,eta_s,queue,task\n1,3,,q,t\n")
            jobs = pop.jobs(["azfpop-f"], [], ["--grid", "keda"], d, seeds=("1", "2"))
            self.assertIn(("stated", "azfpop-f", "2",
                           ["--policies", "warmpool", "--meta", "taskSeconds=3"]), jobs)
            self.assertIn(("grid", "azfpop-f", "2", ["--grid", "keda"]), jobs)
            self.assertIn(("unbudgeted", "azfpop-f", "2",
                           ["--policies", "warmpool", "--meta", "releasesPerHour=off"]), jobs)


if __name__ == "__main__":
    unittest.main()
