"""environment.yml names the same dependencies as setup.cfg (install_requires and the lab extra)."""

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _names(lines):
    return {re.split(r"[<>=!~ ]", line.strip(), maxsplit=1)[0].lower() for line in lines if line.strip()}


def test_environment_yml_matches_setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    wanted = _names(cfg["options"]["install_requires"].splitlines()) | _names(
        cfg["options.extras_require"]["lab"].splitlines()
    )
    env = (ROOT / "environment.yml").read_text()
    listed = _names(m.group(1) for m in re.finditer(r"^  - ([A-Za-z0-9_.\-]+[^\n]*)$", env, re.M))
    missing = {w for w in wanted if w not in listed}
    assert not missing, f"environment.yml lacks {sorted(missing)} (setup.cfg requires them)"
