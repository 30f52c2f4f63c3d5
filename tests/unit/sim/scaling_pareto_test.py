#!/usr/bin/python3
"""Hand-computed checks of scripts/scaling_pareto.py (the report's Pareto front and cost at equal
SLO). Run: /usr/bin/python3 tests/unit/sim/scaling_pareto_test.py (ctest: sim_scaling_pareto).
"""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import scaling_pareto as sp  # noqa: E402

P = sp.Point


def run(gpuh, p95, killed=0, seed=None):
    out = {"billedGpuHours": gpuh, "waitP95": p95, "killedTasks": killed}
    return out if seed is None else dict(out, seed=seed)


def seeded(name, *gpuh_p95):
    """A Point of runs on seeds 1, 2, ... with these (GPU-h, p95)."""
    return sp.summarize({name: [run(g, p, seed=i + 1) for i, (g, p) in enumerate(gpuh_p95)]})[name]


class Summarize(unittest.TestCase):
    def test_median_gpuh_and_p95_most_kills(self):
        pts = sp.summarize({"a": [run(10, 100), run(30, 300, 2), run(20, 50)], "none": []})
        self.assertEqual(pts, {"a": P("a", 20, 100, 2)})

    def test_grid_names_pool_across_seeds(self):
        self.assertEqual(sp.grid_key("keda-ll5-cd60-pi30-g660-cron58"),
                         "keda-ll5-cd60-pi30-glongest-cron")
        self.assertEqual(sp.grid_key("keda-ll5-cd300-pi30-g30"), "keda-ll5-cd300-pi30-g30")
        self.assertEqual(sp.grid_key("keda-ll1-cd60-pi10-g300"), "keda-ll1-cd60-pi10-glongest")
        self.assertEqual(sp.grid_key("oracle"), "oracle")
        pts = sp.summarize({"keda-ll1-cd60-pi10-g540": [run(10, 100)],
                            "keda-ll1-cd60-pi10-g660": [run(20, 300)]}, sp.grid_key)
        self.assertEqual(pts, {"keda-ll1-cd60-pi10-glongest":
                               P("keda-ll1-cd60-pi10-glongest", 15, 200, 0)})


class PairedBySeed(unittest.TestCase):
    # warmpool waits less than KEDA on 4 of 5 seeds; KEDA's one fast seed is warmpool's slow one,
    # so the medians of the p95s say the opposite (790 < 826).
    WP = seeded("warmpool", (2.70, 848), (2.64, 719), (2.65, 635), (3.08, 1031), (2.75, 826))
    KEDA = seeded("keda", (2.65, 858), (2.53, 749), (2.61, 655), (2.97, 1051), (2.62, 790))

    def test_medians_alone_would_call_keda_dominant(self):
        self.assertEqual((self.WP.p95, self.KEDA.p95), (826, 790))
        self.assertEqual(self.KEDA.seeds[0], (1, 2.65, 858))

    def test_differences_are_taken_seed_by_seed(self):
        dg, dp = sp.difference(self.KEDA, self.WP)
        self.assertAlmostEqual(dg, -0.11)  # of -0.05, -0.11, -0.04, -0.11, -0.13
        self.assertEqual(dp, 20)  # the median of +10, +30, +20, +20, -36
        self.assertFalse(sp.dominates(self.KEDA, self.WP))
        self.assertFalse(sp.no_slower(self.KEDA, self.WP))
        self.assertIsNone(sp.cheapest_at_slo([self.KEDA], self.WP))
        self.assertAlmostEqual(sp.gpuh_ratio(self.WP, self.KEDA), 3.08 / 2.97)  # median ratio

    def test_points_without_the_same_seeds_compare_medians(self):
        other = sp.summarize({"o": [run(2.5, 800, seed=7)]})["o"]
        self.assertEqual(sp.difference(other, self.WP), (2.5 - 2.70, 800 - 826))
        self.assertTrue(sp.dominates(P("p", 2, 700, 0), self.WP))  # no seeds: medians

    def test_long_grace_stands_for_itself_or_the_30s_grace(self):
        # Seed 1 has a task past 30 s (the grid ran g120), seed 2 has none (only g30).
        pts = sp.grid_points({"keda-ll5-cd60-pi10-g30": [run(1, 10, seed=1), run(2, 20, seed=2)],
                              "keda-ll5-cd60-pi10-g120": [run(3, 30, seed=1)]})
        self.assertEqual(pts["keda-ll5-cd60-pi10-glongest"].seeds, ((1, 3, 30), (2, 2, 20)))
        self.assertEqual(pts["keda-ll5-cd60-pi10-g30"].seeds, ((1, 1, 10), (2, 2, 20)))


class Front(unittest.TestCase):
    POINTS = [P("cheap-slow", 10, 500, 0), P("mid", 20, 200, 0), P("dominated", 25, 250, 0),
              P("fast", 40, 50, 0), P("killer", 5, 10, 3), P("tie", 20, 200, 0)]

    def test_front_drops_dominated_and_killing_points(self):
        front = [p.name for p in sp.pareto_front(self.POINTS)]
        # Equal points do not dominate each other: both stay.
        self.assertEqual(front, ["cheap-slow", "mid", "tie", "fast"])

    def test_dominates_needs_one_strict_improvement(self):
        self.assertTrue(sp.dominates(P("a", 10, 100, 0), P("b", 10, 101, 0)))
        self.assertTrue(sp.dominates(P("a", 10, 100, 0), P("b", 10, 100, 1)))
        self.assertFalse(sp.dominates(P("a", 10, 100, 0), P("b", 10, 100, 0)))
        self.assertFalse(sp.dominates(P("a", 9, 101, 0), P("b", 10, 100, 0)))
        self.assertFalse(sp.dominates(P("a", 9, 90, 1), P("b", 10, 100, 0)))


class CostAtEqualSlo(unittest.TestCase):
    POINTS = Front.POINTS

    def test_cheapest_no_worse_and_killing_nothing(self):
        # The killer (5 GPU-h, p95 10) is cheaper and faster but kills: not eligible.
        ratio, best = sp.cost_at_equal_slo(P("warmpool", 15, 200, 0), self.POINTS)
        self.assertEqual(best.name, "mid")
        self.assertAlmostEqual(ratio, 0.75)
        self.assertEqual(sp.cheapest_at_slo(self.POINTS, P("w", 1, 500, 0)).name, "cheap-slow")
        # p95 <= is inclusive
        self.assertEqual(sp.cheapest_at_slo(self.POINTS, P("w", 1, 499, 0)).name, "mid")

    def test_none_reaches_the_slo(self):
        self.assertEqual(sp.cost_at_equal_slo(P("warmpool", 15, 40, 0), self.POINTS), (None, None))

    def test_dominating_configurations(self):
        wp = P("warmpool", 30, 300, 0)
        self.assertEqual([p.name for p in sp.dominating(wp, self.POINTS)],
                         ["mid", "tie", "dominated"])
        self.assertEqual(sp.dominating(P("warmpool", 10, 500, 0), self.POINTS), [])
        # A policy that kills is dominated by a point that matches it without killing.
        self.assertEqual([p.name for p in sp.dominating(P("w", 10, 500, 1), self.POINTS)],
                         ["cheap-slow"])


class RuleVerdict(unittest.TestCase):
    OFF = P("off", 100, 600, 0)
    SWEEP = [P("off-slower", 60, 800, 0), P("off-faster", 200, 450, 0), P("off-kills", 10, 10, 4)]

    def test_same_within_half_a_percent(self):
        self.assertEqual(sp.rule_verdict(P("on", 100.4, 602, 0), self.OFF, self.SWEEP)[0], "same")

    def test_cheaper_at_equal_p95_is_a_gain_even_when_slower_than_off(self):
        # On waits longer than off (700 > 600) but bills less than the cheapest off setting that
        # waits no longer (off itself, 100): a gain at equal p95, 0.8 of it.
        verdict, ratio, best = sp.rule_verdict(P("on", 80, 700, 0), self.OFF, self.SWEEP)
        self.assertEqual((verdict, best.name), ("gain", "off"))
        self.assertAlmostEqual(ratio, 0.8)

    def test_dearer_at_equal_p95_is_a_loss(self):
        # Faster than off, but the off setting as fast (450) bills less: a loss, not a trade.
        verdict, ratio, best = sp.rule_verdict(P("on", 250, 440, 0), self.OFF,
                                               [P("off-fast", 200, 440, 0)])
        self.assertEqual((verdict, best.name), ("loss", "off-fast"))
        self.assertAlmostEqual(ratio, 1.25)

    def test_faster_than_every_off_setting(self):
        # The killing setting never counts; the fastest clean one is off-faster (450 s, 200).
        self.assertEqual(sp.rule_verdict(P("on", 150, 400, 0), self.OFF, self.SWEEP)[:2],
                         ("gain", 0.75))
        self.assertEqual(sp.rule_verdict(P("on", 300, 400, 0), self.OFF, self.SWEEP)[:2],
                         ("trade", 1.5))

    def test_text_names_the_setting_judged_against(self):
        self.assertEqual(sp.rule_text("same", 1.0, self.OFF), "same")
        self.assertEqual(sp.rule_text("gain", 0.5, P("off, `keepAlive 300`", 1, 1, 0)),
                         "**gain** (0.50× GPU-h at equal p95: off with `keepAlive 300`)")
        self.assertEqual(sp.rule_text("trade", 1.5, self.OFF),
                         "trade (1.50× GPU-h against the fastest off: off with the shipped "
                         "settings)")


class Swept(unittest.TestCase):
    def test_one_point_per_setting_that_ran_the_policy(self):
        runs = {"t375": {"off": [run(10, 100), run(30, 300)]}, "ka300": {"other": [run(1, 1)]}}
        sweep = [("t375", ["--meta", "targetWaitSeconds=375"]),
                 ("ka300", ["--meta", "keepAlive=300"]), ("t600", ["--meta", "x=1"])]
        self.assertEqual(sp.swept(lambda kind: runs.get(kind, {}), "off", sweep),
                         [P("off, `targetWaitSeconds 375`", 20, 200, 0)])


if __name__ == "__main__":
    unittest.main()
