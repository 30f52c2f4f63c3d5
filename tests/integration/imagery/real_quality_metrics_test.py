#!/usr/bin/python3
"""Hand-computed checks of scripts/real_quality_metrics.py and real_quality's report section.

Run: /usr/bin/python3 -m unittest tests/integration/imagery/real_quality_metrics_test.py
(ctest: imagery_real_quality_metrics). Exit 77 when numpy or GDAL is missing.
"""

import os
import sys
import unittest

try:
    import numpy as np
    from osgeo import gdal  # noqa: F401  (real_quality imports it)
except ImportError as e:
    print(f"skipped: {e}", file=sys.stderr)
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import real_quality  # noqa: E402
import real_quality_metrics as m  # noqa: E402


class ConfusionAndScores(unittest.TestCase):
    def example(self):
        # 8 labelled pixels: tp 2, fp 1, fn 1, tn 4; 3 unlabelled pixels that, if counted, would
        # add 2 false positives and 1 false negative.
        predicted = np.array([1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0], bool)
        truth = np.array([1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1], bool)
        labelled = np.array([1] * 8 + [0] * 3, bool)
        return predicted, truth, labelled

    def test_counts_only_labelled_pixels(self):
        c = m.confusion(*self.example())
        self.assertEqual(c, {"tp": 2, "fp": 1, "fn": 1, "tn": 4})

    def test_scores_by_hand(self):
        s = m.scores(m.confusion(*self.example()))
        self.assertAlmostEqual(s["precision"], 2 / 3)
        self.assertAlmostEqual(s["recall"], 2 / 3)
        self.assertAlmostEqual(s["f1"], 2 / 3)
        self.assertAlmostEqual(s["iou"], 2 / 4)
        # po = 6/8, pe = (3*3 + 5*5)/64 = 34/64 -> kappa = (48/64 - 34/64)/(30/64) = 7/15.
        self.assertAlmostEqual(s["kappa"], 7 / 15)

    def test_asymmetric_example(self):
        # tp 3, fp 1, fn 2, tn 10: P 3/4, R 3/5, F1 6/9, IoU 3/6.
        # po = 13/16, pe = (4*5 + 12*11)/256 = 152/256 -> kappa = (208-152)/(256-152) = 56/104.
        s = m.scores({"tp": 3, "fp": 1, "fn": 2, "tn": 10})
        self.assertAlmostEqual(s["precision"], 3 / 4)
        self.assertAlmostEqual(s["recall"], 3 / 5)
        self.assertAlmostEqual(s["f1"], 6 / 9)
        self.assertAlmostEqual(s["iou"], 3 / 6)
        self.assertAlmostEqual(s["kappa"], 56 / 104)

    def test_chance_agreement_gives_zero_kappa(self):
        # Prediction independent of truth: po equals pe.
        s = m.scores({"tp": 25, "fp": 25, "fn": 25, "tn": 25})
        self.assertAlmostEqual(s["kappa"], 0.0)
        self.assertAlmostEqual(s["f1"], 0.5)

    def test_empty_truth_and_mask_is_perfect(self):
        s = m.scores({"tp": 0, "fp": 0, "fn": 0, "tn": 9})
        self.assertEqual((s["precision"], s["recall"], s["f1"], s["iou"], s["kappa"]),
                         (1.0, 1.0, 1.0, 1.0, 1.0))

    def test_all_wrong(self):
        s = m.scores({"tp": 0, "fp": 3, "fn": 2, "tn": 5})
        self.assertEqual((s["precision"], s["recall"], s["f1"], s["iou"]), (0.0, 0.0, 0.0, 0.0))
        self.assertLess(s["kappa"], 0.0)

    def test_pooled_is_sum_of_counts(self):
        c = m.add_confusions([{"tp": 1, "fp": 2, "fn": 3, "tn": 4},
                              {"tp": 10, "fp": 20, "fn": 30, "tn": 40}])
        self.assertEqual(c, {"tp": 11, "fp": 22, "fn": 33, "tn": 44})

    def test_shape_mismatch_is_an_error(self):
        with self.assertRaises(ValueError):
            m.confusion(np.zeros(3, bool), np.zeros(4, bool), np.ones(3, bool))


class Baselines(unittest.TestCase):
    def test_cva_magnitude(self):
        before = np.zeros((2, 1, 2), np.uint8)
        after = np.array([[[3, 0]], [[4, 1]]], np.uint8)  # uint8 must not wrap on subtraction
        np.testing.assert_allclose(m.cva_magnitude(after, before), [[5.0, 1.0]])
        np.testing.assert_allclose(m.cva_magnitude(before, after), [[5.0, 1.0]])

    def test_standardize_per_band(self):
        image = np.array([[[1, 2, 3, 4]], [[10, 10, 10, 10]]], np.uint8)
        z = m.standardize(image)
        np.testing.assert_allclose(z[0].mean(), 0.0, atol=1e-12)
        np.testing.assert_allclose(z[0].std(), 1.0)
        np.testing.assert_allclose(z[1], 0.0)  # a constant band

    def test_otsu_threshold_is_a_bin_edge_between_modes(self):
        values = np.array([0.0] * 50 + [1.0] * 50 + [9.0] * 30 + [10.0] * 30 + [25.6])
        t = m.otsu_threshold(values)
        # Bins are 0.1 wide over 0..25.6: the edge must split {0, 1} from {9, 10}.
        self.assertTrue(1.0 < t < 9.0)
        self.assertAlmostEqual(t * 10, round(t * 10))  # on a bin edge
        self.assertEqual(int(np.count_nonzero(values > t)), 61)

    def test_otsu_two_values(self):
        # Every split between the modes has the same variance: argmax takes the first, edge 1 of 256.
        values = np.array([0.0] * 4 + [255.0] * 4)
        self.assertAlmostEqual(m.otsu_threshold(values), 255.0 / 256)

    def test_otsu_constant_image_flags_nothing(self):
        values = np.full(10, 7.0)
        self.assertFalse(np.any(values > m.otsu_threshold(values)))

    def test_baseline_mask_finds_a_square(self):
        rng = np.random.default_rng(1)
        before = rng.integers(100, 104, (3, 32, 32)).astype(np.uint8)
        after = before.copy()
        after[:, 8:16, 8:16] += 60
        mask = m.baseline_mask(before, after, standardized=False)
        expected = np.zeros((32, 32), bool)
        expected[8:16, 8:16] = True
        np.testing.assert_array_equal(mask, expected)
        np.testing.assert_array_equal(m.baseline_mask(before, after, standardized=True), expected)


class ReportSection(unittest.TestCase):
    SECTION = f"{real_quality.BEGIN_MARKER}\nnew\n{real_quality.END_MARKER}\n"

    def test_replaces_in_place(self):
        text = (f"# head\n\n{real_quality.BEGIN_MARKER}\nold\n{real_quality.END_MARKER}\n"
                "\n## after\n")
        out = real_quality.update_section(text, self.SECTION)
        self.assertEqual(out, f"# head\n\n{self.SECTION}\n## after\n")

    def test_appends_when_absent(self):
        out = real_quality.update_section("# head\n", self.SECTION)
        self.assertEqual(out, "# head\n\n" + self.SECTION)

    def test_idempotent(self):
        once = real_quality.update_section("# head\n", self.SECTION)
        self.assertEqual(real_quality.update_section(once, self.SECTION), once)


if __name__ == "__main__":
    unittest.main()
