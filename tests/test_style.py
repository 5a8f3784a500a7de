"""The style checks the project keeps (`[tool.ruff]` in pyproject.toml) hold on the whole tree, and would catch a break.

Run by the suite as `lint-imports` is by tests/test_architecture.py; by hand: `ruff check` in the repository root.
Which rules and why is said beside them in pyproject.toml.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import ruff  # noqa: F401  (the `test` extra: the style must be checked, never skipped)

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    exe = str(RUFF) if RUFF.exists() else shutil.which("ruff")
    assert exe, "ruff is not on PATH"
    return subprocess.run([exe, "check", "--no-cache", "--output-format", "concise", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    res = _ruff()
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_ruff_uses_the_project_rules(tmp_path):
    # a module breaking each kept rule, checked with the project's configuration: every rule must fire
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "bad.py").write_text(
        "import os\n"
        "import numpy as np\n\n\n"
        "def draw():\n"
        "    import json  # noqa: PLC0415\n\n"
        "    np.random.seed(0)\n"
        "    try:\n"
        "        return json.dumps(np.random.rand(2).tolist())\n"
        "    except Exception:\n"
        "        return None\n"
    )
    res = _ruff("bad.py", cwd=tmp_path)
    assert res.returncode != 0
    for code in ("F401", "RUF100", "NPY002", "BLE001"):
        assert code in res.stdout, f"{code} not reported:\n{res.stdout}"
