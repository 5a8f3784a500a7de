"""A fuzz test over the model API (issue 50): hostile values in place of each parameter, and seeded pairs of them.

Before the fix, 233 of 1,592 such calls in the battery returned a silent value (156 finite, 77 not) where a
clear error or a documented NaN was due. Here every call must end in a clear error naming a parameter, a
finite value, a NaN from a NaN, an empty result from an empty array or a documented infinity; the
classification is in tests/models/model_fuzz.py. Bounded to a minute.
"""

from __future__ import annotations

import time

from model_fuzz import fuzz


def test_every_hostile_call_is_refused_clearly_or_answered_rightly():
    start = time.monotonic()
    counts, findings = fuzz(seconds=50, pairs=3000)
    assert time.monotonic() - start < 60
    assert counts.get("not_run", 0) == 0, counts  # the whole plan ran inside the bound
    assert counts["error"] > 1500 and counts["ok"] > 200, counts  # the fuzz reaches both sides
    assert findings == [], f"{len(findings)} findings, e.g. {findings[:10]} (counts {counts})"
