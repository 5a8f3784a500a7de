"""The compiled pass under AddressSanitizer and UndefinedBehaviorSanitizer, on hostile input.

``tcpmodels/traces/cflows.c`` reads packet tables made from untrusted files. Here it is compiled again with
``-fsanitize=address,undefined`` (gcc or clang, whichever is present) into a temporary folder and a child
interpreter (the sanitizer runtime preloaded) runs it over every shipped and corpus capture, hostile
variants of them (tests/traces/pass_equality.py) and chunked streams, and checks that its results equal the
normal build's; so do the helpers of the capture split (``connection_shares``, ``route``, and ``sync_classic``, which
guesses record boundaries in raw capture bytes, over every capture's bytes and mutants of them). Any out-of-bounds access, use after free, overflow or undefined shift stops the child with
the sanitizer's report, which the test prints.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from pass_equality import needs_pass

SOURCE = Path(__file__).resolve().parents[2] / "tcpmodels" / "traces" / "cflows.c"
HERE = Path(__file__).resolve().parent

CHILD = r"""
import importlib.util, os, sys, warnings
from pathlib import Path
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[2])
spec = importlib.util.spec_from_file_location("cflows", sys.argv[1])
asan = importlib.util.module_from_spec(spec)
spec.loader.exec_module(asan)
from tcpmodels.traces import cflows, connpass
from pass_equality import mutated_tables, read_quietly
folders = [Path(p) for p in sys.argv[3:]]
tables = []
for folder in folders:
    for path in sorted(folder.glob("*.pcap*")):
        t = read_quietly(path)
        if t is not None and len(t):
            tables.append((path.name, t))
hostile = []
for seed, (name, t) in enumerate(tables):
    if len(t) >= 4 and seed % 3 == 0:
        hostile += [(f"{name} variant {i}", v) for i, v in enumerate(mutated_tables(t.iloc[:1500], seed, copies=2))]
checked = 0
for name, t in tables + hostile:
    cols = connpass.table_columns(t)
    ns0 = int(t["timestamp_ns"].min())
    outs = [tuple(np.empty(len(t), d) for d in (np.int64,) * 4 + (np.uint16,)) for _ in range(2)]
    a = asan.analyze(cols, ns0, True, outs[0])
    b = cflows.analyze(cols, ns0, True, outs[1])
    assert a == b, name
    assert all(np.array_equal(x, y) for x, y in zip(*outs)), name
    # a stream fed in small chunks, with a short idle timeout (connections finished and their slots reused)
    s = asan.Stream(ns0, 50_000_000, True)
    for lo in range(0, len(t), 97):
        s.feed(tuple(None if c is None else c[lo:lo + 97] for c in cols))
        s.take()
    s.finish()
    s.take()
    # the split's share hash (tcpmodels.traces.split)
    zeros = np.zeros(len(t), np.uint64)
    for shares in (1, 2, 5):
        hs = [np.empty(len(t), np.int8) for _ in range(2)]
        for mod, h in zip((asan, cflows), hs):
            mod.connection_shares(zeros, cols[3].astype(np.uint64), cols[4], zeros, cols[6].astype(np.uint64),
                                  cols[7], shares, h)
        assert np.array_equal(*hs), name
        routed = [mod.route(tuple(c for c in cols if c is not None), hs[0], shares) for mod in (asan, cflows)]
        assert routed[0] == routed[1], name
    checked += 1
# the split's record-boundary guess over the raw bytes of every capture and of hostile mutants of them
import gzip
from test_reader_robustness import _mutants
rng = np.random.default_rng(51)
for folder in folders:
    for path in sorted(folder.glob("*.pcap*")):
        raw = path.read_bytes()
        raw = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        for data in [raw[:200_000]] + list(_mutants(raw[:8000], rng, 4)) if len(raw) > 64 else []:
            for start in rng.integers(0, len(data), 6).tolist() + [0, len(data) - 1]:
                window = data[start:start + int(rng.integers(0, 70_000))]
                for big, frac, chain in ((False, 10**6, 16), (True, 10**9, 2)):
                    args = (window, big, frac, 262144, 86400, chain)
                    assert asan.sync_classic(*args) == cflows.sync_classic(*args), path.name
            checked += 1
print("CHECKED", checked)
"""


def _sanitizer_build(tmp_path: Path) -> tuple[Path, dict]:
    cc = shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (gcc or clang) for the sanitizer build")
    runtime = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    if not runtime or not os.path.isabs(runtime) or not os.path.exists(runtime):
        pytest.skip(f"{cc} has no AddressSanitizer runtime (libasan.so)")
    out = tmp_path / "cflows.so"
    cmd = [cc, "-shared", "-fPIC", "-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
           "-fno-sanitize-recover=all", "-fno-fast-math", "-ffp-contract=off",
           "-I" + sysconfig.get_paths()["include"], str(SOURCE), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        if "sanitize" in proc.stderr and "unrecognized" in proc.stderr:
            pytest.skip(f"{cc} does not support -fsanitize=address,undefined: {proc.stderr[-300:]}")
        raise AssertionError(f"the sanitizer build failed: {' '.join(cmd)}\n{proc.stderr}")
    env = dict(os.environ, LD_PRELOAD=runtime, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=97",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=98", PYTHONWARNINGS="ignore")
    return out, env


@needs_pass
def test_pass_is_clean_under_address_and_undefined_behaviour_sanitizers(tmp_path):
    from test_connpass import CORPORA
    from trace_fixtures import CAPTURES

    lib, env = _sanitizer_build(tmp_path)
    folders = [str(CAPTURES)] + [str(f) for f in CORPORA if f.is_dir()]
    proc = subprocess.run([sys.executable, "-c", CHILD, str(lib), str(HERE), *folders], capture_output=True,
                          text=True, env=env, timeout=1200)
    report = proc.stderr[-6000:]
    assert proc.returncode == 0, f"sanitized pass failed (exit {proc.returncode}):\n{report}"
    assert "AddressSanitizer" not in proc.stderr and "runtime error" not in proc.stderr, report
    checked = int(proc.stdout.split("CHECKED")[-1])
    assert checked > 20
