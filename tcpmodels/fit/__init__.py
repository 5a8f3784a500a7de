"""Fitting the formula models to captured traces (issue 11).

- :mod:`.events`      loss events (the retransmissions of one congestion signal), their definition;
- :mod:`.trace`       :func:`flow_estimates`: p, RTT, T0, b, W_max, MSS and the measured rate of a flow from its capture;
- :mod:`.throughput`  Mathis / PFTK predictions with those inputs, regimes, the fitted Mathis C, error tables;
- :mod:`.cubic`       CUBIC epochs from a cwnd trajectory, fitted C and beta_cubic, K observed vs predicted;
- :mod:`.lia`         the RFC 6356 counterfactual for a captured MPTCP connection;
- :mod:`.dataset`, :mod:`.report`, :mod:`.plots`  campaign records -> ``data/datasets/fit_*`` -> notebook tables and figures.
"""

from .events import group_loss_events
from .trace import FlowEstimates, flow_estimates, retransmissions

__all__ = ["group_loss_events", "FlowEstimates", "flow_estimates", "retransmissions"]
