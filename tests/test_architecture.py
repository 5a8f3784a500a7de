"""The layer contract (`.importlinter`, docs/ARCHITECTURE.md) holds, and it would catch a break.

`lint-imports` reads the contract from the repository root; a violation (an
upward import, papers importing a campaign, a cycle between two modules of one
package, a private module imported from outside its package) fails the build.
Private *names* crossing modules are checked here directly, from the source.
"""

import ast
import configparser
import re
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


def contract_layers(text: str) -> list[tuple[str, list[str]]]:
    """The layers of `.importlinter`'s layers contract, bottom first: (separator, modules) per layer."""
    parser = configparser.ConfigParser()
    parser.read_string(text)
    lines = [ln.split("#")[0].strip() for ln in parser["importlinter:contract:layers"]["layers"].splitlines()]
    layers = []
    for line in reversed([ln for ln in lines if ln]):
        sep = "|" if "|" in line else ":"
        layers.append((sep, [m.strip() for m in line.split(sep)]))
    return layers


def table_layers(text: str) -> list[tuple[str, list[str]]]:
    """The layer table of docs/ARCHITECTURE.md, bottom first: (separator, modules) per row, numbered 1, 2, ..."""
    rows = []
    for line in text[text.index("| layer | packages / modules | job |"):].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        number, names = int(cells[0]), cells[1]
        assert number == len(rows) + 1, f"ARCHITECTURE layer {number} out of order: {line}"
        sep = "|" if "\\|" in names else ":"
        rows.append((sep, re.findall(r"`(tcpmodels[\w.]*)`", names)))
    return rows


def test_architecture_table_is_the_contract():
    contract = contract_layers((ROOT / ".importlinter").read_text())
    table = table_layers((ROOT / "docs" / "ARCHITECTURE.md").read_text())
    assert table == contract, (
        "docs/ARCHITECTURE.md's layer table differs from .importlinter (bottom first):\n"
        + "\n".join(f"{i + 1}: doc {t} / contract {c}" for i, (t, c) in enumerate(zip(table, contract, strict=False))
                    if t != c) + f"\n{len(table)} rows in the doc, {len(contract)} layers in the contract")


def test_every_top_level_module_is_in_the_contract():
    named = {m for _, layer in contract_layers((ROOT / ".importlinter").read_text()) for m in layer}
    top = {f"tcpmodels.{p.stem}" for p in (ROOT / "tcpmodels").glob("*.py") if p.stem != "__init__"}
    top |= {f"tcpmodels.{p.parent.name}" for p in (ROOT / "tcpmodels").glob("*/__init__.py")}
    assert not top - named, f"modules in no layer of .importlinter: {sorted(top - named)}"


def test_top_level_holds_packages_and_a_handful_of_modules():
    # issue 56: the folders show the layers; a new module goes into the package of its job
    modules = sorted(p.stem for p in (ROOT / "tcpmodels").glob("*.py"))
    assert modules == ["__init__", "__main__", "_arrays", "_docstrings", "_typing", "cli"], (
        f"loose modules at the top of tcpmodels/: {modules} (put a new one in the package of its job)")


#: The longest a module of the campaign, paper and simulator packages may be (issue 56: "too long to see whole"). [lines]
MAX_MODULE_LINES = 500


def test_campaign_paper_and_simulator_modules_fit_on_a_few_screens():
    long = {str(p.relative_to(ROOT)): n for pkg in ("experiments", "papers", "sim")
            for p in sorted((ROOT / "tcpmodels" / pkg).rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"


def test_grouped_packages_export_what_users_call():
    # `from tcpmodels import analyze` (the report notebook) and `from tcpmodels import teaching` (the CUBIC notebook)
    # reach the names of the modules they were before the grouping
    from tcpmodels import analyze, teaching
    from tcpmodels.analyze import capture
    from tcpmodels.teaching import cubic

    for package, module in ((analyze, capture), (teaching, cubic)):
        missing = [n for n in module.__all__ if getattr(package, n, None) is not getattr(module, n)]
        assert not missing, f"{package.__name__} does not export {missing} of {module.__name__}"
    assert not hasattr(analyze, "_serve") and not hasattr(analyze, "no_such_name")


def test_table_check_catches_a_drift():
    contract = (ROOT / ".importlinter").read_text()
    # two layers swapped in the contract, the doc unchanged: the check must see it
    moved = contract.replace("    tcpmodels.fit\n    tcpmodels.sweep\n",
                             "    tcpmodels.sweep\n    tcpmodels.fit\n")
    assert moved != contract
    assert contract_layers(moved) != table_layers((ROOT / "docs" / "ARCHITECTURE.md").read_text())
