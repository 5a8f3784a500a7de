"""Validation of the tm_* congestion controls on the testbed (issue 15, item 4); writes a dataset.

``python -m tcpmodels.experiments.kernel_coupled_cc --out data/datasets/kernel_coupled_cc``
runs, with the compared variants interleaved within each repetition and the host lock held
per experiment:

* ``reno``: kernel ``reno`` vs ``tm_reno``, one path with random loss, ``--reno-reps`` pairs of
  ``--reno-duration-s`` (which goes first alternates): rate and retransmits, summarized as the
  mean ratio with a 95 % t interval over pairs (:func:`mean_ratio_ci`; judged by :func:`claims`);
* ``cubic``: kernel ``cubic`` vs ``tm_cubic_x`` (x = 1): rate, and K observed from the cwnd
  trajectory (TCP_INFO every 20 ms) beside RFC 9438's K for the observed windows (:func:`observed_k`);
  ``cubic_multiply`` / ``cubic_divide``: ``tm_cubic_x`` with each reading of x(RTT), K observed
  beside ``models.cubic.kozu_k_s`` with that reading;
* ``shared``: one MPTCP connection with two subflows over one lossy link beside one TCP flow,
  MPTCP rate / TCP rate for tm_lia, tm_olia and uncoupled (kernel reno on each subflow);
* ``disjoint``: two paths with 0.2 % and 2 % loss: share of bytes on the less lossy path;
* ``alpha``: in-kernel LIA alpha vs ``lia_alpha`` on the same map snapshot (shared and disjoint runs);
* ``olia_incr``: in-kernel OLIA increase vs ``arithmetic.olia_increase_segments`` on the same snapshot;
* ``timeouts``: per coupled run the loss events and retransmission timeouts of each subflow
  (map counters read 1 s before the run ends).

Map snapshots: each slot of a connection's map entry holds the last alpha (tm_lia) or increase
(tm_olia) that slot's subflow computed, with the exact windows, RTTs and l it was computed from,
between two sequence counters; each entry is copied three times in a row and a record counts as
``consistent`` only if the counters show no write during the middle copy
(:mod:`tcpmodels.testbed.kernel_cc.mapread`). Rows measured that way carry ``snapshot_method``
``seqcount``, ``consistent``, ``slot`` and ``seq``; earlier rows (one read of the entry, the
increase beside the windows the entry held then) have no ``snapshot_method``.

The tests, stated before the runs that decide them, judged through :class:`tcpmodels.stats.ClaimSpec` by
:func:`claims` (RFC 6356 Sec. 2; the outcomes of :mod:`tcpmodels.stats`: supported, smaller than claimed,
contradicted, inconclusive, not testable here; Holm's adjustment within each engine). The unit is the
repetition (one interleaved pair of runs); ratios are judged on the log scale:

* reno, cubic: tm_reno / reno (rate) equivalent to 1 within ±5 % (retransmits ±10 %; cubic rate ±5 %):
  TOST on the per-pair log ratio with margin ``log(1 + tolerance)``;
* goal (a), "do no harm" (Goal 2): on the shared link a coupled variant's MPTCP / TCP rate ratio lies
  below 1.5 (halfway between one TCP flow's share, 1, and two uncoupled subflows', 2): the effect is
  ``log 2 - log ratio`` per repetition (the uncoupled share as "no effect"), smallest effect
  ``log(2 / 1.5)``; the uncoupled contrast (kernel reno on each subflow) lies above 1.5: ``log ratio``,
  smallest effect ``log 1.5``;
* goal 1, "improve throughput" (at least as well as one TCP flow on the best path, here the same link):
  non-inferiority with the 5 % margin of the reference tests: the effect is ``log(ratio / 0.95)``,
  smallest effect ``log(1 / 0.95)`` (supported when the ratio's interval lies above 1, smaller than
  claimed when it lies within (0.95, 1));
* goal (b), "balance congestion" (Goal 3): on the disjoint paths a coupled variant's share on the less
  lossy path divided by the uncoupled share of the same repetition lies above 1, by at least 5 %;
* goal (c): every consistent map record's alpha (LIA) and increase (OLIA) within 2 % of the model on
  that record's own inputs (exact comparison of the largest error; torn reads counted, not tested);
* the explanation offered for tm_olia's low share on the shared link (its smaller subflow loses by
  timeouts more often): the pooled timeouts per loss event of the smaller subflow, tm_olia minus tm_lia,
  exceed 0 by at least 0.01 (one more timeout per hundred loss events), percentile bootstrap with the
  runs of each variant resampled independently.

The package: :mod:`.observe` (the topology, K observed), :mod:`.validation` (the runs), :mod:`.ratios`
(paired ratios and tables), :mod:`.claims` (the verdicts), :mod:`.dataset` (rows, records, provenance), :mod:`.cli`.

Rows go to ``<out>.parquet`` (one per run or snapshot) and provenance to ``<out>.json``
(commit and whether the tree was dirty, kernel, tool versions, parameters, host load, and
the item-4 summary of :func:`summarize`); cwnd samples of one disjoint run per variant
to ``<out>_cwnd.parquet``.
"""

from tcpmodels.experiments.kernel_coupled_cc.claims import (
    claims,
    rto_share_ci,
    summarize,
    timeout_difference,
    timeout_table,
)
from tcpmodels.experiments.kernel_coupled_cc.cli import main
from tcpmodels.experiments.kernel_coupled_cc.dataset import build_from_records, findings_lines, records_from_dataset
from tcpmodels.experiments.kernel_coupled_cc.observe import observed_k, shared_link
from tcpmodels.experiments.kernel_coupled_cc.ratios import (
    clamped_snapshots,
    goal_ratios,
    lia_model_table,
    mean_ratio_ci,
    olia_loss_events,
    pairs_to_decide,
    ratio_table,
    reps_to_exclude,
)
from tcpmodels.experiments.kernel_coupled_cc.validation import ns3_shared_link, run_validation

__all__ = ["shared_link", "observed_k", "ns3_shared_link", "mean_ratio_ci", "ratio_table", "olia_loss_events", "timeout_table", "rto_share_ci", "timeout_difference", "clamped_snapshots", "pairs_to_decide", "reps_to_exclude", "claims", "goal_ratios", "lia_model_table", "records_from_dataset", "summarize", "findings_lines", "build_from_records", "run_validation", "main"]
