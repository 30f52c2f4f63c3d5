#pragma once

#include "policy/idle_gap_histogram.h"

namespace warmpool::policy {

// What keeping one idle replica warm for K more seconds costs and saves, on the time axis of the
// gap histogram (seconds since the last busy period started). Released at once, the pod goes
// `to_zero` later and its node `to_zero + linger` later (the cluster autoscaler's
// scale-down-unneeded-time); kept for K, both go K later. The next busy period then starts on
// the warm pod (free), on the lingering node (a pod start, `pod_start`) or on a new node (a cold
// start, `cold_start`), and the node is billed until it starts or the node goes.
struct KeepAliveCosts {
  double elapsed = 0;     // s0: the busy period's length when it ended (the keep-alive's start)
  double to_zero = 0;     // KEDA's time to zero once the policy is inactive
  double linger = 0;      // nodeUnneededSeconds
  double cold_start = 0;  // price of a start on a new node, in node-seconds
  double pod_start = 0;   // price of a pod start on a lingering node, in node-seconds
  double cap = 0;         // the longest keep-alive considered (at most the histogram's 4 h)
};

// The keep-alive K in [0, cap] (whole minutes, the histogram's bins, or cap itself) that minimises
// the expected node time plus start prices, given that the next busy period starts no sooner than
// `elapsed` (the gaps' distribution conditioned on it): rent or buy (ski rental: Karlin, Manasse,
// McGeoch and Owicki, Algorithmica 1994) with the distribution known. With S(s) the share of
// gaps longer than s (one gap more than recorded counted beyond 4 h: the next busy period may
// never come), over S(s0):
//   E[cost(K)] = integral of S from s0 to s0 + K + to_zero + linger
//              + pod_start x (S(s0 + K + to_zero) - S(s0 + K + to_zero + linger))
//              + cold_start x S(s0 + K + to_zero + linger).
// Keeping costs node time only when the next start comes after the node would have gone: a
// come-back while the node lingers is billed the same either way, less the pod start it saves.
// Ties keep more: a longer K within a node-second of the cheapest shorter one is taken, as the
// release would save next to nothing and restart a pod. 0 when no gap is known.
double ExpectedCostKeepAlive(const IdleGapHistogram& gaps, const KeepAliveCosts& costs);

}  // namespace warmpool::policy
