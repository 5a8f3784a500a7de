"""The algorithms' published constants, in a module that imports nothing (no numpy, no pandas).

:mod:`tcpmodels.models.cubic` and :mod:`tcpmodels.models.bbr` use and re-export them; the congestion-control
registry (:mod:`tcpmodels.congestion`) takes its parameter defaults from here, so importing the registry (and
the engine tables derived from it) does not import the models.

References
----------
RFC 9438, CUBIC for Fast and Long-Distance Networks, Sec. 4.2 and 4.6.
N. Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016.
"""

__all__ = ["C_CUBIC", "BETA_CUBIC", "BBR_CWND_GAIN"]

#: RFC 9438 Sec. 4.2 / 5.1: the CUBIC scaling constant C [segments/s^3].
C_CUBIC = 0.4
#: RFC 9438 Sec. 4.6: multiplicative decrease factor, fraction of the window kept [-].
BETA_CUBIC = 0.7
#: BBR's cwnd gain in PROBE_BW: the in-flight cap is this many estimated BDPs. [-]
BBR_CWND_GAIN = 2.0
