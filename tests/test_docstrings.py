"""Every public function of the documented modules has type hints and numpydoc Parameters/Returns.

Scope (``DOCUMENTED``): the whole package (issue 20). Public means: a module-level function or a
method of a module-level class whose name (and the class's) does not start with ``_``,
in a module whose name does not start with ``_``; dunder methods and properties are
exempt from the sections (properties are documented as attributes).

Run as a script to print the counts: ``python tests/test_docstrings.py [ROOT]``.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Files and folders (relative to the repository) whose public API must be documented.
DOCUMENTED = ("tcpmodels",)
EXCLUDED: tuple[str, ...] = ()
#: Functions exempt from the sections (none: every public function of the package is documented).
EXEMPT: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class PublicFunction:
    path: str
    qualname: str
    lineno: int
    has_parameters: bool  # a numpydoc Parameters section, or no parameter to document
    has_returns: bool  # a Returns/Yields section, or annotated/obviously returning None
    fully_hinted: bool  # every parameter and the return annotated
    parameters_section: bool  # literally has a Parameters section (the count the issue quotes)


def _section(doc: str, title: str) -> bool:
    lines = [ln.strip() for ln in doc.splitlines()]
    return any(a == title and set(b) == {"-"} and len(b) >= len(title) for a, b in zip(lines, lines[1:]))


def _returns_value(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if fn.returns is not None:
        return not (isinstance(fn.returns, ast.Constant) and fn.returns.value is None)
    for node in ast.walk(fn):
        if isinstance(node, (ast.Return,)) and node.value is not None:
            return True
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
    return False


def _arguments(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[ast.arg]:
    a = fn.args
    args = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]
    if method and args and args[0].arg in ("self", "cls"):
        args = args[1:]
    return args


def _inspect(path: Path, rel: str) -> list[PublicFunction]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def visit(fn, qualname: str, method: bool) -> None:
        decorators = {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in fn.decorator_list}
        if fn.name.startswith("_") or decorators & {"property", "setter", "overload", "cached_property"}:
            return
        doc = ast.get_docstring(fn) or ""
        args = _arguments(fn, method)
        has_parameters = not args or _section(doc, "Parameters")
        has_returns = not _returns_value(fn) or _section(doc, "Returns") or _section(doc, "Yields")
        hinted = all(arg.annotation is not None for arg in args) and (fn.returns is not None or fn.name == "__init__")
        found.append(PublicFunction(rel, qualname, fn.lineno, has_parameters, has_returns, hinted, _section(doc, "Parameters")))

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            visit(node, node.name, method=False)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    visit(item, f"{node.name}.{item.name}", method=True)
    return found


def public_functions(root: Path = REPO, scope: tuple[str, ...] = DOCUMENTED) -> list[PublicFunction]:
    """The public functions of the files under ``scope`` (see the module docstring)."""
    files = []
    for entry in scope:
        p = root / entry
        files += sorted(p.rglob("*.py")) if p.is_dir() else ([p] if p.is_file() else [])
    out = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        if rel in EXCLUDED or any(part.startswith("_") and part != "__init__.py" for part in path.relative_to(root).parts):
            continue
        out += _inspect(path, rel)
    return out


def test_the_scope_exists_and_holds_functions():
    functions = public_functions()
    assert {f.path.split("/")[1] for f in functions} >= {
        "models", "predict", "teaching", "notebook", "traces", "testbed", "experiments",
        "papers", "sim", "fit", "stats", "analyze", "report", "records"}
    assert len(functions) > 600


@pytest.mark.parametrize("what", ["has_parameters", "has_returns", "fully_hinted"])
def test_every_public_function_is_documented_and_hinted(what):
    missing = [f"{f.path}:{f.lineno} {f.qualname}" for f in public_functions()
               if not getattr(f, what) and (f.path, f.qualname) not in EXEMPT]
    assert not missing, f"{len(missing)} public functions lack {what.removeprefix('has_').replace('_', ' ')}:\n" + "\n".join(missing)


def _type_checking_names(module) -> dict:
    """The names a module imports under ``if TYPE_CHECKING:`` (for its hints only), imported here."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    names: dict = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            code = compile(ast.Module(body=node.body, type_ignores=[]), module.__file__, "exec")
            exec(code, {"__name__": module.__name__, "__package__": module.__package__}, names)
    return names


def test_every_annotation_resolves():
    """The hints name real objects (``from __future__ import annotations`` defers them, so a typo would pass
    silently), those a module imports only for type checking (``if TYPE_CHECKING:``) included."""
    import importlib
    import typing

    unresolved = []
    typing_only: dict = {}
    for f in public_functions():
        module = importlib.import_module(f.path.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
        if module.__name__ not in typing_only:
            typing_only[module.__name__] = _type_checking_names(module)
        obj = module
        for part in f.qualname.split("."):
            obj = getattr(obj, part, None)
        if obj is None:
            continue  # defined conditionally or shadowed: nothing to resolve
        try:
            typing.get_type_hints(obj, localns=typing_only[module.__name__])
        except Exception as exc:  # noqa: BLE001 - NameError, TypeError, ... from a bad expression: all are reported
            unresolved.append(f"{f.path}:{f.lineno} {f.qualname}: {type(exc).__name__}: {exc}")
    assert not unresolved, "\n".join(unresolved)


def test_the_checker_sees_sections_and_hints(tmp_path):
    (tmp_path / "m.py").write_text(
        "def good(x: float) -> float:\n"
        "    '''Doc.\n\n    Parameters\n    ----------\n    x : float\n        X.\n\n"
        "    Returns\n    -------\n    float\n        Y.\n    '''\n    return x\n\n"
        "def bad(x):\n    '''Doc without sections.'''\n    return x\n\n"
        "def _private(x):\n    return x\n\n"
        "class C:\n    def method(self) -> None:\n        '''Nothing to document.'''\n"
    )  # fmt: skip
    found = {f.qualname: f for f in public_functions(tmp_path, ("m.py",))}
    assert set(found) == {"good", "bad", "C.method"}
    assert found["good"].has_parameters and found["good"].has_returns and found["good"].fully_hinted
    assert not (found["bad"].has_parameters or found["bad"].has_returns or found["bad"].fully_hinted)
    assert found["C.method"].has_parameters and found["C.method"].has_returns and found["C.method"].fully_hinted


if __name__ == "__main__":  # the counts quoted in the changelog and the report
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO
    functions = public_functions(root)
    for what in ("has_parameters", "has_returns", "fully_hinted"):
        print(f"{what}: {sum(getattr(f, what) for f in functions)} of {len(functions)}")
    print(f"with a Parameters section: {sum(f.parameters_section for f in functions)} of {len(functions)}")
