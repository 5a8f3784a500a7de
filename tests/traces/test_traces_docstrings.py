"""The packet-analysis modules and the analyze command document and hint every public function (issue 22 item 7)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from test_docstrings import public_functions  # noqa: E402

SCOPE = tuple(f"tcpmodels/traces/{m}.py" for m in ("reader", "annotation", "flows", "rtt", "series", "mptcp",
                                                    "patterns", "trim", "plots", "dataset", "cluster")) + \
    ("tcpmodels/analyze.py", "tcpmodels/analyze_cli.py")


def test_scope_documented_and_hinted():
    found = public_functions(ROOT, SCOPE)
    assert {f.path for f in found} >= {"tcpmodels/traces/dataset.py", "tcpmodels/traces/cluster.py",
                                       "tcpmodels/analyze.py"}
    bad = [f"{f.path}:{f.lineno} {f.qualname}" for f in found
           if not (f.has_parameters and f.has_returns and f.fully_hinted)]
    assert not bad, "\n".join(bad)
