"""Every call to one of the package's own functions matches that function's signature.

Ruff checks names, not calls: a parameter removed from a function (issue 56 removed an unused
``capture_stem``) left a caller in another branch passing it, and the P1 ABAB campaign raised
``TypeError`` on its first run, a path no fast test reaches. This walks each module's syntax tree
and binds the arguments of every call whose callee is a plain name resolving to a ``tcpmodels``
function (imported at the top or inside a function, or defined at module level) to its signature.
Calls with ``*args``/``**kwargs`` and names shadowed by a nested definition are not judged.
"""

import ast
import importlib
import inspect
import pkgutil
import types

import pytest

import tcpmodels


def _imported_names(tree: ast.AST) -> dict[str, object]:
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tcpmodels"):
            try:
                mod = importlib.import_module(node.module)
            except ImportError:
                continue
            for alias in node.names:
                if hasattr(mod, alias.name):
                    names[alias.asname or alias.name] = getattr(mod, alias.name)
    return names


def wrong_calls(source: str, module: types.ModuleType, label: str) -> list[str]:
    """Calls in ``source`` (the text of ``module``) whose arguments do not bind to the callee's signature."""
    tree = ast.parse(source)
    nested = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and n.col_offset > 0}
    imported = _imported_names(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.func.id in nested:
            continue
        callee = getattr(module, node.func.id, None) or imported.get(node.func.id)
        if not (inspect.isfunction(callee) and callee.__module__.startswith("tcpmodels")):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue
        try:
            inspect.signature(callee).bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as err:
            found.append(f"{label}:{node.lineno}: {node.func.id}(...): {err}")
    return found


def _modules():
    for info in pkgutil.walk_packages(tcpmodels.__path__, "tcpmodels."):
        if not info.name.endswith("__main__"):
            yield info.name


def test_every_call_to_a_package_function_matches_its_signature():
    found, unimportable = [], []
    for name in _modules():
        try:
            module = importlib.import_module(name)
        except ImportError as err:  # an optional dependency (ns-3's bindings): named below
            unimportable.append(f"{name}: {err}")
            continue
        path = inspect.getsourcefile(module)
        if path is None:  # a compiled extension (the pcap decoder, the per-connection pass)
            continue
        with open(path, encoding="utf-8") as fh:
            found += wrong_calls(fh.read(), module, name)
    assert not found, "\n".join(found)
    assert len(unimportable) <= 3, "modules not checked:\n" + "\n".join(unimportable)


def test_a_wrong_call_is_found(tmp_path):
    source = ("from tcpmodels.models.throughput import mathis_throughput_bps\n\n\n"
              "def f(a, b):\n    return a + b\n\n\n"
              "def g():\n    f(1)\n    f(1, 2)\n    mathis_throughput_bps(1, 2, 3, 4, 5, 6, 7, 8)\n"
              "    def f(x):\n        return x\n")
    module = types.ModuleType("tcpmodels._probe")
    exec(compile(source, "probe", "exec"), module.__dict__)
    found = wrong_calls(source, module, "probe")
    assert len(found) == 1 and "mathis_throughput_bps" in found[0], found


@pytest.mark.parametrize("call", ["f(1)", "f(1, 2, 3)", "f(1, c=2)"])
def test_each_kind_of_mismatch_is_found(call):
    source = f"def f(a, b):\n    return a + b\n\n\ndef g():\n    {call}\n"
    module = types.ModuleType("tcpmodels._probe")
    exec(compile(source, "probe", "exec"), module.__dict__)
    assert len(wrong_calls(source, module, "probe")) == 1
