"""The modules of tcpmodels.traces form a DAG: no import cycle, no function-level imports (but the one
allowed below), no private names."""

import ast
from pathlib import Path

import pytest

import tcpmodels.traces

PKG = Path(tcpmodels.traces.__file__).parent
#: Function-level imports of a sibling, (module, sibling): each still an edge of the DAG checked below.
#: stream -> flows: the flow table's modules (and pandas) are imported beside the pass (issue 51).
LAZY_ALLOWED = {("stream", "flows")}


def _imports(path: Path) -> tuple[set[str], list[str], list[str]]:
    """(sibling modules imported, function-level imports, private names imported) of one module."""
    tree = ast.parse(path.read_text())
    siblings, lazy, private = set(), [], []
    # module level: the body, and a module-level try (an optional compiled extension) is not function level
    top = set(id(n) for n in tree.body)
    for n in tree.body:
        if isinstance(n, ast.Try):
            top.update(id(m) for m in n.body + [x for h in n.handlers for x in h.body])
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                siblings.add(node.module.split(".")[0])
            else:
                siblings.update(a.name for a in node.names)
            private += [a.name for a in node.names if a.name.startswith("_")]
            if id(node) not in top and (path.stem, (node.module or "").split(".")[0]) not in LAZY_ALLOWED:
                lazy.append(f"{path.name}:{node.lineno}")
    return siblings, lazy, private


def test_traces_modules_form_a_dag_without_lazy_or_private_imports():
    graph, lazy, private = {}, [], []
    for path in sorted(PKG.glob("*.py")):
        if path.name == "__init__.py":
            continue
        deps, lz, pv = _imports(path)
        graph[path.stem] = deps
        lazy += lz
        private += [f"{path.name}: {name}" for name in pv]
    assert not lazy, f"function-level imports of sibling modules: {lazy}"
    assert not private, f"private names imported across modules: {private}"
    state: dict[str, int] = {}

    def visit(mod, stack):
        if state.get(mod) == 1:
            raise AssertionError("import cycle: " + " -> ".join(stack + [mod]))
        if state.get(mod) == 2:
            return
        state[mod] = 1
        for dep in graph.get(mod, ()):
            visit(dep, stack + [mod])
        state[mod] = 2

    for mod in graph:
        visit(mod, [])
    assert "flows" not in graph["rtt"] and "annotation" in graph["rtt"] and "annotation" in graph["flows"]


def test_public_annotate_is_the_function_everywhere():
    from tcpmodels.traces import annotate
    from tcpmodels.traces.annotation import annotate as a2
    from tcpmodels.traces.flows import annotate as a3

    assert callable(annotate) and annotate is a2 is a3


def test_importing_the_package_is_cheap_and_names_load_on_first_use():
    """``import tcpmodels.traces`` imports neither numpy nor pandas; a name imports its module when used, and
    ``flows`` stays the function after its submodule is imported."""
    import subprocess
    import sys

    code = ("import sys, tcpmodels.traces as t\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'pyarrow') if m in sys.modules))\n"
            "import tcpmodels.traces.flows, tcpmodels.traces.cluster\n"
            "print(callable(t.flows), t.flows.__module__, t.read_pcap.__module__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "True tcpmodels.traces.flows tcpmodels.traces.reader"
    import tcpmodels.traces as t

    assert set(t.__all__) <= set(dir(t))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        t.nope


def test_streaming_starts_without_pandas_and_imports_it_beside_the_pass(tmp_path):
    """``tcpmodels.traces.stream`` (and the reader under it) import no pandas or pyarrow: :func:`stream_flows`
    imports the flow table's modules in a second thread while the capture is decoded (issue 51), and that
    thread is joined before it returns."""
    import subprocess
    import sys

    from trace_fixtures import CAPTURES

    capture = CAPTURES / "cubic_bulk.pcap.gz"
    code = ("import sys, threading, warnings\nwarnings.simplefilter('ignore')\n"
            "from tcpmodels.traces.stream import stream_flows\n"
            "print(sorted(m for m in ('pandas', 'pyarrow') if m in sys.modules))\n"
            "f = stream_flows(sys.argv[1], decode_ahead=True)\n"
            "print(type(f).__module__.split('.')[0], [t.name for t in threading.enumerate()\n"
            "      if t.name == 'tcpmodels-import-ahead'])\n")
    out = subprocess.run([sys.executable, "-c", code, str(capture)], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "pandas []"
