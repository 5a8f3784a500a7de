"""Ground truth for the per-flow limitation diagnosis (:mod:`tcpmodels.traces.limits`): labelled testbed runs.

- :mod:`.endpoint`  the sender and receiver programs run inside the namespaces (socket buffers, bursts
  with sleeps, ``TCP_INFO`` with the kernel's chrono counters every 100 ms).
- :mod:`.campaign`  the scenarios (one per class), the runner, and the dataset with provenance.
- :mod:`.score`  the kernel's label of every interval, the diagnosis matched to it, and the claims.
"""
