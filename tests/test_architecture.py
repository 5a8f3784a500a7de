"""The layer contract (`.importlinter`, docs/ARCHITECTURE.md) holds, and it would catch a break.

`lint-imports` reads the contract from the repository root; a violation (an
upward import, papers importing a campaign, a cycle between two modules of one
package, a private module imported from outside its package) fails the build.
Private *names* crossing modules are checked here directly, from the source.
"""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import importlinter  # noqa: F401  (the `test` extra: the contract must be checked, never skipped)

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path) -> subprocess.CompletedProcess:
    exe = str(LINT_IMPORTS) if LINT_IMPORTS.exists() else shutil.which("lint-imports")
    assert exe, "lint-imports (import-linter) is not on PATH"
    return subprocess.run([exe, "--no-cache", str(cwd / ".importlinter")], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_layer_contract_holds():
    res = _lint(ROOT)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "0 broken" in res.stdout


def test_contract_fails_on_an_upward_import(tmp_path):
    # the same tree with one formula model importing a paper module: the layers contract must break
    shutil.copytree(ROOT / "tcpmodels", tmp_path / "tcpmodels", ignore=shutil.ignore_patterns("__pycache__", "_bin"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    bdp = tmp_path / "tcpmodels" / "models" / "bdp.py"
    bdp.write_text(bdp.read_text() + "\n\ndef _probe():\n    import tcpmodels.papers  # noqa: F401\n")
    res = _lint(tmp_path)
    assert res.returncode != 0
    assert "tcpmodels.models.bdp -> tcpmodels.papers" in res.stdout


def _is_module(package: str, name: str) -> bool:
    base = ROOT.joinpath(*package.split("."))
    return (base / f"{name}.py").exists() or (base / name / "__init__.py").exists()


def test_no_private_name_is_imported_from_another_module():
    offenders = []
    for path in sorted((ROOT / "tcpmodels").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tcpmodels")):
                continue
            for alias in node.names:
                name = alias.name
                if name.startswith("_") and not name.startswith("__") and not _is_module(node.module, name):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name} from {node.module}")
    assert not offenders, "private names used across modules (give them a public name):\n" + "\n".join(offenders)
