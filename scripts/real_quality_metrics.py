"""Pixel scores and the two numpy baselines of scripts/real_quality.py (numpy only, no I/O).

Scores are for the change class over the labelled pixels only: a sparse reference (Nanjing) marks
most pixels "not labelled", and those must count neither for nor against a mask.
"""

import numpy as np

OTSU_BINS = 256


def confusion(predicted, truth, labelled):
    """Counts of a boolean mask against a boolean truth on the labelled pixels (all same shape)."""
    if not (predicted.shape == truth.shape == labelled.shape):
        raise ValueError(
            f"shape mismatch: predicted {predicted.shape}, truth {truth.shape}, "
            f"labelled {labelled.shape}"
        )
    p = predicted[labelled].astype(bool)
    t = truth[labelled].astype(bool)
    return {
        "tp": int(np.count_nonzero(p & t)),
        "fp": int(np.count_nonzero(p & ~t)),
        "fn": int(np.count_nonzero(~p & t)),
        "tn": int(np.count_nonzero(~p & ~t)),
    }


def add_confusions(confusions):
    """Pooled counts over several pairs."""
    total = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for c in confusions:
        for key in total:
            total[key] += c[key]
    return total


def _ratio(num, den):
    # An empty denominator means nothing to get wrong (no truth and no detection): a perfect
    # score, as imagery/testing/quality_metrics.h defines it for the synthetic report.
    return num / den if den else 1.0


def scores(c):
    """Precision, recall, F1, IoU and Cohen's kappa of the change class from confusion counts."""
    tp, fp, fn, tn = (float(c[k]) for k in ("tp", "fp", "fn", "tn"))
    n = tp + fp + fn + tn
    if n > 0:
        observed = (tp + tn) / n
        # Agreement expected by chance from the two marginals (Cohen 1960).
        expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        kappa = (observed - expected) / (1.0 - expected) if expected < 1.0 else 1.0
    else:
        kappa = 1.0
    return {
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "iou": _ratio(tp, tp + fp + fn),
        "kappa": kappa,
    }


def cva_magnitude(before, after):
    """Change vector magnitude sqrt(sum_b (after_b - before_b)^2), float64; arrays are (bands, h, w)."""
    diff = after.astype(np.float64) - before.astype(np.float64)
    return np.sqrt(np.sum(diff * diff, axis=0))


def standardize(image):
    """Per-band z-score (population standard deviation); a constant band becomes zeros."""
    x = image.astype(np.float64).reshape(image.shape[0], -1)
    mean = x.mean(axis=1, keepdims=True)
    std = x.std(axis=1, keepdims=True)
    std[std == 0] = 1.0
    return ((x - mean) / std).reshape(image.shape)


def otsu_threshold(values):
    """Otsu (1979) on a 256-bin histogram over values' min..max.

    Returns the upper edge of the last bin of the lower class, the bin boundary that maximises the
    between-class variance; the mask is values > threshold. A constant image returns its value.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    lo, hi = float(v.min()), float(v.max())
    if hi <= lo:
        return hi
    counts, edges = np.histogram(v, bins=OTSU_BINS, range=(lo, hi))
    p = counts / counts.sum()
    w0 = np.cumsum(p)
    w1 = 1.0 - w0
    mu = np.cumsum(p * np.arange(OTSU_BINS))
    with np.errstate(divide="ignore", invalid="ignore"):
        between = (mu[-1] * w0 - mu) ** 2 / (w0 * w1)
    between[~np.isfinite(between)] = 0.0
    return float(edges[int(np.argmax(between)) + 1])


def baseline_mask(before, after, standardized):
    """Baseline (a) raw CVA + Otsu, or (b) the same on per-band, per-date standardised images."""
    if standardized:
        before, after = standardize(before), standardize(after)
    magnitude = cva_magnitude(before, after)
    return magnitude > otsu_threshold(magnitude)
