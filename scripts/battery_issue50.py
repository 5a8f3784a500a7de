"""Issue 50's findings as a battery: run it on a checkout's code, before and after, and compare the counts.

Usage (from any checkout; the code under test is the ``tcpmodels`` on ``PYTHONPATH``)::

    PYTHONPATH=/path/to/checkout python scripts/battery_issue50.py [--json OUT.json]

Each case ends ``ok`` (the right result, or a clear error: ``ValueError``/``TypeError``/``OSError`` naming what
was wrong, a CLI exit code 2 with one line) or in a finding named by its kind (``silent``: a wrong result
without a word; ``crash``: a traceback from inside; ``hang``/``memory``: beyond the time or memory bound).
Groups follow the issue's findings: 1 datasets, 2 oversized records (and the pcapng block with a flipped type
bit), 3 analyze, 4 Dask bind addresses, 5 model inputs (with the model fuzz of tests/models/model_fuzz.py),
6 the testbed's quiet drops (on a fake congestion-control registry: nothing is loaded in the kernel), 7 the
streaming path against the in-memory one on mutated captures. Only the code under test changes between two
runs; the cases are the same. Takes a few minutes; uses a temporary folder.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]
CAPTURES = HERE / "data" / "captures"
sys.path.insert(0, str(HERE / "tests" / "models"))
sys.path.insert(0, str(HERE / "tests" / "traces"))

RESULTS: dict[str, dict[str, int]] = {}
EXAMPLES: dict[str, list[str]] = {}
VERBOSE = [False]


def record(group: str, outcome: str, label: str = "") -> None:
    if VERBOSE[0]:
        print(f"[{group}] {outcome}: {label[:200]}", flush=True)
    RESULTS.setdefault(group, {})
    RESULTS[group][outcome] = RESULTS[group].get(outcome, 0) + 1
    if outcome != "ok" and len(EXAMPLES.setdefault(group, [])) < 6:
        EXAMPLES[group].append(f"{outcome}: {label}")


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def clear_error(exc: BaseException, *names: str) -> bool:
    """A ValueError/TypeError/OSError whose message names one of ``names`` (any, when none given)."""
    if not isinstance(exc, (ValueError, TypeError, OSError)):
        return False
    return not names or any(n in str(exc) for n in names)


# ------------------------------------------------------------------ 1 datasets
class Stop(Exception):
    pass


def _interrupted(capture, out, chunk, after):
    from tcpmodels.traces import to_parquet

    seen = []

    def progress(n):
        seen.append(n)
        if len(seen) >= after:
            raise Stop

    with contextlib.suppress(Stop):
        quiet(to_parquet, capture, out, chunk_bytes=chunk, partitions=4, progress=progress)


def group_datasets(tmp: Path) -> None:
    from tcpmodels.traces import flows, read_pcap, to_parquet
    from tcpmodels.traces.dataset import read_parquet_dataset

    caps = [CAPTURES / n for n in ("short_flows_any.pcap.gz", "reno_bulk.pcap.gz",
                                   "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz")]
    truth = {c: quiet(read_pcap, c) for c in caps}
    n = 0
    # interrupted runs, rerun into the same folder with another chunk size
    for cap in caps:
        for after in (1, 2, 3):
            for first, second in ((1 << 14, 1 << 16), (1 << 16, 1 << 14)):
                n += 1
                out = tmp / f"int{n}"
                _interrupted(cap, out, first, after)
                try:
                    quiet(to_parquet, cap, out, chunk_bytes=second, partitions=4)
                    back = quiet(read_parquet_dataset, out)
                    ok = len(back) == len(truth[cap]) and quiet(flows, out)["packets"].sum() == len(truth[cap])
                    record("1 datasets", "ok" if ok else "silent", f"interrupted {cap.name} after {after}: "
                                                                   f"{len(back)} rows, true {len(truth[cap])}")
                except Exception as exc:  # noqa: BLE001
                    record("1 datasets", "ok" if clear_error(exc, str(out)) else "crash", repr(exc)[:120])
    # complete datasets, then damaged in one way each
    for cap in caps:
        for damage in ("foreign_same_dir", "foreign_new_dir", "two_foreign", "delete", "flip", "truncate",
                       "append", "user_file_target"):
            n += 1
            out = tmp / f"d{n}"
            if damage == "user_file_target":
                out.mkdir()
                (out / "my_notes.txt").write_text("mine")
                try:
                    quiet(to_parquet, cap, out, partitions=4)
                    record("1 datasets", "silent", f"wrote into a folder holding my_notes.txt ({cap.name})")
                except Exception as exc:  # noqa: BLE001
                    record("1 datasets", "ok" if clear_error(exc, "my_notes.txt") else "unclear", repr(exc)[:120])
                continue
            ds = quiet(to_parquet, cap, out, chunk_bytes=1 << 16, partitions=4)
            other = quiet(to_parquet, caps[(caps.index(cap) + 1) % 3], tmp / f"o{n}", partitions=4)
            foreign = other.partition_files(other.nonempty()[0])[0]
            files = [f for i in ds.nonempty() for f in ds.partition_files(i)]
            victim = files[len(files) // 2]
            name = str(victim.relative_to(out))
            if damage == "foreign_same_dir":
                shutil.copy(foreign, victim.parent / "data-00077.parquet")
                name = f"{victim.parent.name}/data-00077.parquet"
            elif damage == "foreign_new_dir":
                (out / "part=0009").mkdir()
                shutil.copy(foreign, out / "part=0009" / "data-00000.parquet")
                name = "part=0009"
            elif damage == "two_foreign":
                for i, f in enumerate(other.partition_files(other.nonempty()[0])[:1] * 2):
                    shutil.copy(f, victim.parent / f"data-0008{i}.parquet")
                name = "data-0008"
            elif damage == "delete":
                victim.unlink()
            else:
                data = bytearray(victim.read_bytes())
                if damage == "flip":
                    data[len(data) // 2] ^= 0x40
                elif damage == "truncate":
                    data = data[:-64]
                else:
                    data += b"\0" * 16
                victim.write_bytes(bytes(data))
            try:
                got = quiet(flows, out)
                back = quiet(read_parquet_dataset, out)
                same = len(back) == len(truth[cap]) and got["packets"].sum() == len(truth[cap]) and \
                    back.equals(truth[cap])
                record("1 datasets", "ok" if same else "silent",
                       f"{damage} {cap.name}: {len(back)} rows, true {len(truth[cap])}")
            except Exception as exc:  # noqa: BLE001
                record("1 datasets", "ok" if clear_error(exc, name) else "crash" if not isinstance(
                    exc, (ValueError, OSError)) else "unclear", f"{damage}: {repr(exc)[:140]}")


# ------------------------------------------------------------------ 2 oversized records, pcapng blocks
_CHILD = r"""
import resource, sys, time, warnings
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from tcpmodels.traces import read_pcap
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
        tab = read_pcap(sys.argv[1], chunk_bytes=int(sys.argv[2]))
        out = "read:%d" % len(tab)
    except MemoryError:
        out = "memory"
    except Exception as e:
        out = "error:" + type(e).__name__
# this process's peak resident memory (VmHWM; ru_maxrss would count the parent's from before the exec) [MiB]
hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")][0] // 1024
print(out, round(time.perf_counter() - t, 2), hwm, flush=True)
"""


def _seg(seq: int) -> bytes:
    from trace_synth import ether, ipv4, tcp

    return ether(ipv4(tcp(seq=seq, payload=100)))


def group_records(tmp: Path) -> None:
    header = lambda snaplen: struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, 1)  # noqa: E731
    def rec(frame: bytes) -> bytes:
        return struct.pack("<IIII", 1_700_000_000, 0, len(frame), len(frame)) + frame

    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    # the memory bomb: a 4 GiB record claim after a snaplen of 0xFFFFFFFF, zeros behind it, in gzip
    for zeros_mb, chunk, budget_s in ((300, 32 << 20, 60), (60, 4096, 60), (60, 1 << 16, 60)):
        p = tmp / f"bomb{zeros_mb}_{chunk}.pcap.gz"
        p.write_bytes(gzip.compress(header(0xFFFFFFFF) + rec(_seg(1)) + struct.pack("<IIII", 1, 0, 0xFFFFFFF0,
                                                                                    0xFFFFFFF0)
                                    + bytes(zeros_mb << 20), compresslevel=6))
        try:
            done = subprocess.run([sys.executable, "-c", _CHILD, str(p), str(chunk)], capture_output=True, cwd=tmp,
                                  text=True, timeout=budget_s, env=env)
            verdict, seconds, peak_mb = (done.stdout.split() + ["?", "?", "?"])[:3] if done.stdout else ("crash", 0, 0)
            # bounds: the import of numpy and pandas is about 100 MiB; a record buffered whole is hundreds
            if verdict == "memory" or (str(peak_mb).isdigit() and int(peak_mb) > 400):
                outcome = "memory"
            elif verdict.startswith(("read:", "error:")):
                outcome = "ok" if float(seconds) < 30 else "hang"
            else:
                outcome = "crash"
            record("2 records", outcome, f"{p.name}: {done.stdout.strip()} {done.stderr[-200:]}")
        except subprocess.TimeoutExpired:
            record("2 records", "hang", f"{p.name}: over {budget_s} s (chunk_bytes {chunk})")
    # a 300 KiB record under a snaplen of 0xFFFFFFFF: refused and counted, not read whole
    from tcpmodels.traces import read_pcap

    p = tmp / "big.pcap"
    p.write_bytes(header(0xFFFFFFFF) + rec(_seg(1)) + rec(_seg(2) + bytes(300 << 10)) + rec(_seg(3)))
    t = quiet(read_pcap, p)
    acc = t.attrs["accounting"]
    counted = sum(acc.skipped.values()) == 1 and acc.records_read == 3 and len(t) == 2
    record("2 records", "ok" if counted else "silent",
           f"300 KiB record under snaplen 0xFFFFFFFF read as a packet ({len(t)} rows, skipped {acc.skipped})")
    # pcapng: each bit of a packet block's type flipped in turn
    from trace_synth import _block, _opt

    def pcapng(blocks):
        out = _block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1), "<")
        out += _block(1, struct.pack("<HHI", 1, 0, 0) + _opt(0, b"", "<"), "<")
        for btype, frame in blocks:
            out += _block(btype, struct.pack("<IIIII", 0, 0, 1000, len(frame), len(frame)) + frame, "<")
        return out

    for bit in range(32):
        btype = 6 ^ (1 << bit)
        p = tmp / f"flip{bit}.pcapng"
        p.write_bytes(pcapng([(6, _seg(1)), (btype, _seg(2)), (6, _seg(3))]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                t = read_pcap(p)
            except Exception as exc:  # noqa: BLE001
                record("2 records", "ok" if clear_error(exc) else "crash", f"bit {bit}: {exc!r}"[:120])
                continue
        acc = t.attrs["accounting"]
        said = " ".join(str(w.message) for w in caught)
        if len(t) == 3 or acc.records_read == 3:
            outcome = "ok"  # read as a packet block of another layout, or counted
        elif f"{btype:#x}" in said or any(str(btype) in k for k in acc.notes):
            outcome = "ok"
        else:
            outcome = "silent"
        record("2 records", outcome, f"pcapng block type 6 with bit {bit} flipped ({btype:#x}): {len(t)} rows, "
                                     f"notes {acc.notes}")


# ------------------------------------------------------------------ 3 analyze
def group_analyze(tmp: Path) -> None:
    import tcpmodels.report as report
    from tcpmodels.cli import main

    calls = []

    class Run:
        status, error, failing_cell = "ok", "", None

        def __init__(self, out):
            self.output_ipynb = out / "analyze_capture.ipynb"
            self.output_html = out / "analyze_capture.html"

    def fake_run_notebook(notebook, output_dir, parameters=None, timeout_s=0, kernel_name="python3"):
        if not Path(notebook).is_file():
            raise FileNotFoundError(f"No such file or directory: {notebook}")
        Path(output_dir).mkdir(parents=True, exist_ok=True)  # as the real one does first
        calls.append(Path(output_dir))
        return Run(Path(output_dir))

    real = report.run_notebook
    report.run_notebook = fake_run_notebook
    cap = CAPTURES / "reno_bulk.pcap.gz"

    def cli(*args):
        calls.clear()
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = main(["analyze", *map(str, args)])
        except SystemExit as stop:
            code = stop.code
        except BaseException as exc:  # noqa: BLE001 - a traceback is the finding
            return "crash", repr(exc)[:120]
        return code, err.getvalue()

    try:
        for d in ("a", "b"):
            (tmp / d).mkdir(exist_ok=True)
            shutil.copy(cap, tmp / d / "run.pcap.gz")
        code, err = cli(tmp / "a" / "run.pcap.gz", tmp / "b" / "run.pcap.gz", "--output-dir", tmp / "out1")
        record("3 analyze", "ok" if code == 2 else "silent" if code == 0 else "crash",
               f"two run.pcap.gz: exit {code}, folders {sorted(set(map(str, calls)))} {err[:100]}")
        afile = tmp / "afile"
        afile.write_text("x")
        for target in (afile, afile / "sub", Path("/sys/tcpmodels_battery")):
            code, err = cli(cap, "--output-dir", target)
            record("3 analyze", "ok" if code == 2 and "Traceback" not in err else "crash",
                   f"--output-dir {target}: exit {code} {err[:100]}")
        for flow in ("garbage:::[[[", "5201", "10.0.0.1:99999", "[fd00::1", "1.2.3.4.5"):
            code, err = cli(cap, "--flow", flow, "--output-dir", tmp / "out2")
            record("3 analyze", "ok" if code == 2 else "silent", f"--flow {flow!r}: exit {code}")
        for top in ("-3", "0"):
            code, err = cli(cap, "--top", top, "--output-dir", tmp / "out3")
            record("3 analyze", "ok" if code == 2 else "silent", f"--top {top}: exit {code}")
        code, err = cli(cap, "--flow", ":5202", "--output-dir", tmp / "out4")
        record("3 analyze", "ok" if code == 2 and "no flow matches" in err else "silent",
               f"--flow :5202 matches nothing: exit {code}")
        dot = tmp / "dot"
        dot.mkdir()
        shutil.copy(cap, dot / ".pcap")
        code, err = cli(dot / ".pcap", "--output-dir", tmp / "out5")
        root = (tmp / "out5").resolve()
        record("3 analyze", "ok" if code == 0 and calls and all(c.resolve() != root for c in calls) else "silent",
               f"a capture named .pcap: exit {code}, report in {calls}")
        # the notebook the installed package would use: inside the package (shipped), not the repository
        import tcpmodels.analyze.capture as an

        nb = an.report_notebook() if hasattr(an, "report_notebook") else an.NOTEBOOK
        inside = "_shipped" in str(nb) or callable(getattr(an, "report_notebook", None))
        record("3 analyze", "ok" if inside else "silent", f"report notebook from {nb} (a wheel lacks the repo)")
    finally:
        report.run_notebook = real


# ------------------------------------------------------------------ 4 Dask
def _listening() -> list[str]:
    import psutil

    pids = [os.getpid()] + [p.pid for p in psutil.Process().children(recursive=True)]
    out = set()
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            out |= {c.laddr.ip for c in psutil.Process(pid).net_connections(kind="tcp") if c.status == "LISTEN"}
    return sorted(out)


def _probe(config, out_dir):
    return _listening()


def group_dask(tmp: Path) -> None:
    from tcpmodels.sweep import sweep
    from tcpmodels.traces.cluster import dask_client

    for processes in (False, True):
        try:
            res = quiet(sweep, [{"x": int(processes)}], _probe, cache_dir=tmp / f"sw{processes}", n_workers=1,
                        processes=processes, progress=False)
            seen = res.values[0]
        except Exception as exc:  # noqa: BLE001
            record("4 dask", "crash", repr(exc)[:120])
            continue
        record("4 dask", "ok" if set(seen) <= {"127.0.0.1"} else "open", f"sweep processes={processes}: {seen}")
        with quiet(dask_client, n_workers=1, processes=processes):
            seen = _listening()
        record("4 dask", "ok" if set(seen) <= {"127.0.0.1"} else "open", f"trace cluster processes={processes}: "
                                                                         f"{seen}")


# ------------------------------------------------------------------ 5 models
def group_models(tmp: Path) -> None:
    import math

    from tcpmodels.models.bottleneck import reno_cubic_bottleneck
    from tcpmodels.models.heavytail import fgn
    from tcpmodels.models.hurst import hurst_exponent
    from tcpmodels.models.throughput import mathis_throughput_bps
    from tcpmodels.models.window_dynamics import CubicFlow, RenoFlow
    from tcpmodels.predict.persist import load_json, save_json
    from tcpmodels.predict.svr import SingleProbeSVR, make_svr_pipeline, tune_svr

    cubic = dict(c=0.4, beta=0.7, k_factor=1.0, fast_convergence=True)
    x = fgn(4096, 0.7, np.random.default_rng(0))
    spike = x.copy()
    spike[100] = 1e308
    probe = np.random.default_rng(0).uniform(1e6, 1e7, size=(30, 1))
    cases = [
        ("RenoFlow cwnd=nan", lambda: RenoFlow(math.nan, 10.0, 100.0), "cwnd"),
        ("RenoFlow cwnd=-5", lambda: RenoFlow(-5.0, 10.0, 100.0), "cwnd"),
        ("RenoFlow cwnd='10'", lambda: RenoFlow("10", 10.0, 100.0), "cwnd"),
        ("CubicFlow cwnd=nan", lambda: CubicFlow(math.nan, 10.0, 100.0, **cubic), "cwnd"),
        ("CubicFlow beta=1.5", lambda: CubicFlow(10.0, math.inf, 100.0, **{**cubic, "beta": 1.5}), "beta"),
        ("CubicFlow c=-1", lambda: CubicFlow(10.0, math.inf, 100.0, **{**cubic, "c": -1.0}), "c"),
        ("CubicFlow fast_convergence='no'",
         lambda: CubicFlow(10.0, math.inf, 100.0, **{**cubic, "fast_convergence": "no"}), "fast_convergence"),
        ("reno_cubic_bottleneck capacity inf",
         lambda: reno_cubic_bottleneck(capacity_bps=math.inf, buffer_bytes=5e4, reno_rtt_s=0.02, cubic_rtt_s=0.04,
                                       duration_s=2.0, warmup_s=0.5), "capacity_bps"),
        ("hurst_exponent with a 1e308 sample", lambda: hurst_exponent(spike), "x"),
        ("mathis_throughput_bps(10**400)", lambda: mathis_throughput_bps(10**400, 0.1, 0.01), "mss_bytes"),
        ("mathis_throughput_bps(1e308)", lambda: mathis_throughput_bps(1e308, 0.1, 0.01), "mss_bytes"),
        ("make_svr_pipeline C=-1", lambda: make_svr_pipeline(C=-1.0), "C"),
        ("make_svr_pipeline gamma='x'", lambda: make_svr_pipeline(gamma="x"), "gamma"),
        ("tune_svr C=-4 in the grid", lambda: quiet(tune_svr, probe, 2 * probe[:, 0], estimator=SingleProbeSVR(),
                                                    param_grid={"C": [-4.0]}, cv=3), "C"),
    ]
    for label, call, name in cases:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                with np.errstate(all="raise"):
                    value = call()
            record("5 models", "silent", f"{label} -> {str(value)[:60]}")
        except Exception as exc:  # noqa: BLE001
            record("5 models", "ok" if clear_error(exc, name) else "crash", f"{label}: {repr(exc)[:100]}")
    # a saved model whose parameters say log_throughput="x", its hash recomputed
    import hashlib

    path = save_json(SingleProbeSVR(log_throughput=True).fit(probe, 2 * probe[:, 0]), tmp / "m.json")
    doc = json.loads(path.read_text())
    doc["params"]["log_throughput"] = "x"
    body = {k: v for k, v in doc.items() if k != "sha256"}
    doc["sha256"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    path.write_text(json.dumps(doc))
    try:
        model = quiet(load_json, path)
        record("5 models", "silent", f"log_throughput='x' loaded; predicts {model.predict(probe[:2])}")
    except Exception as exc:  # noqa: BLE001
        record("5 models", "ok" if clear_error(exc, "log_throughput") else "crash", repr(exc)[:100])
    # the fuzz over the model API
    from model_fuzz import fuzz

    counts, findings = fuzz(seconds=120, pairs=3000)
    for outcome, n in counts.items():
        group = "5 model fuzz"
        RESULTS.setdefault(group, {})
        key = "ok" if outcome in ("ok", "error", "nan", "empty") else outcome
        RESULTS[group][key] = RESULTS[group].get(key, 0) + n
    EXAMPLES["5 model fuzz"] = [f"{f[2]}: {f[0]} {f[1]}" for f in findings[:6]]


# ------------------------------------------------------------------ 6 quiet drops of the testbed
def group_testbed(tmp: Path) -> None:
    from types import SimpleNamespace

    import tcpmodels.testbed.netns as netns
    from tcpmodels.cli import main
    from tcpmodels.testbed.kernel_cc import loader, mapread

    registry: list[str] = []
    saved = {k: getattr(loader, k) for k in ("CC_STATE_DIR", "_require", "build", "_register", "_unregister",
                                             "available_congestion_controls")}
    saved_netns, saved_run = netns.cleanup, mapread.run
    loader.CC_STATE_DIR = tmp / "kernel_cc"
    loader._require = lambda need_root=True: None
    loader.build = lambda name, params=None: tmp / f"{name}.bpf.o"
    loader._register = lambda obj, name: registry.append(name)
    loader._unregister = lambda name: registry.remove(name)
    loader.available_congestion_controls = lambda: list(registry)
    netns.cleanup = lambda include_live=False: SimpleNamespace(to_dict=lambda: {})
    tobefree = [{"bpf_struct_ops_tcp_congestion_ops": {"common": {"state": "BPF_STRUCT_OPS_STATE_TOBEFREE"}}}]
    mapread.run = lambda cmd, check=False: SimpleNamespace(returncode=0, stdout=json.dumps(tobefree))

    def cli(*args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return code, out.getvalue(), err.getvalue()

    try:
        loader.load("tm_reno")  # another user's deliberate `testbed cc load`
        code, out, err = cli("testbed", "cleanup")
        said = "tm_reno" in err or "pinned" in out
        record("6 testbed", "ok" if said or "tm_reno" in registry else "silent",
               f"cleanup removed a cc load: stdout {out.strip()[:120]} stderr {err.strip()[:80]}")
        loader.load("tm_lia")
        code, out, err = cli("testbed", "cc", "unload", "tm_lia")
        record("6 testbed", "ok" if "still" in out or "close" in out else "silent",
               f"cc unload while sockets run it: {out.strip()}")
    finally:
        for k, v in saved.items():
            setattr(loader, k, v)
        netns.cleanup, mapread.run = saved_netns, saved_run


# ------------------------------------------------------------------ 7 streaming against in-memory
def group_streaming(tmp: Path) -> None:
    from test_reader_robustness import _mutants

    from tcpmodels.traces import CaptureFileError, flows, read_pcap, to_parquet
    from tcpmodels.traces.dataset import read_parquet_dataset

    rng = np.random.default_rng(50)
    k = 0
    for name in ("short_flows_any.pcap.gz", "mptcp_2path.pcapng.gz", "reno_bulk.pcap.gz"):
        raw = gzip.decompress((CAPTURES / name).read_bytes())[:40_000]
        for mutant in _mutants(raw, rng, 30):
            k += 1
            cap = tmp / f"mut{k}{'.pcapng' if 'pcapng' in name else '.pcap'}"
            cap.write_bytes(mutant)
            chunk = int(rng.choice([4096, 9000, 1 << 14, 1 << 16]))
            out = tmp / f"sds{k}"
            try:
                table = quiet(read_pcap, cap)
                want = quiet(flows, table)
            except CaptureFileError as exc:
                try:
                    quiet(to_parquet, cap, out, chunk_bytes=chunk, partitions=3)
                    record("7 streaming", "silent", f"{name} #{k}: in memory {exc}; streamed without error")
                except CaptureFileError as exc2:
                    record("7 streaming", "ok" if str(exc2) == str(exc) else "differs", f"{exc2} vs {exc}"[:160])
                except Exception as exc2:  # noqa: BLE001
                    record("7 streaming", "crash", repr(exc2)[:120])
                continue
            try:
                ds = quiet(to_parquet, cap, out, chunk_bytes=chunk, partitions=3)
                same = ds.accounting == table.attrs["accounting"] and quiet(read_parquet_dataset, out).equals(table)
                got = quiet(flows, out)
                same = same and got.equals(want)
                record("7 streaming", "ok" if same else "differs", f"{name} #{k} chunk {chunk}")
            except Exception as exc:  # noqa: BLE001
                record("7 streaming", "crash", f"{name} #{k} chunk {chunk}: {repr(exc)[:120]}")


GROUPS = [group_datasets, group_records, group_analyze, group_dask, group_models, group_testbed, group_streaming]


def main_(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="also write the counts and examples here")
    ap.add_argument("--verbose", action="store_true", help="print every case as it ends")
    args = ap.parse_args(argv)
    VERBOSE[0] = args.verbose
    import tcpmodels

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="battery50-") as d:
        for group in GROUPS:
            tmp = Path(d) / group.__name__
            tmp.mkdir()
            try:
                group(tmp)
            except Exception:  # noqa: BLE001 - a group that cannot run is reported, the others still run
                RESULTS.setdefault(group.__name__, {})["could_not_run"] = 1
                EXAMPLES[group.__name__] = [traceback.format_exc(limit=3)[-400:]]
    total = {"cases": 0, "ok": 0}
    print(f"tcpmodels from {Path(tcpmodels.__file__).parent} ({time.perf_counter() - start:.0f} s)")
    print(f"{'group':<16} {'cases':>6} {'ok':>6}  findings")
    for group, counts in RESULTS.items():
        n = sum(counts.values())
        bad = {k: v for k, v in counts.items() if k != "ok"}
        total["cases"] += n
        total["ok"] += counts.get("ok", 0)
        print(f"{group:<16} {n:>6} {counts.get('ok', 0):>6}  {bad or ''}")
        for e in EXAMPLES.get(group, [])[:3]:
            print(f"{'':<24} e.g. {e[:150]}")
    print(f"{'total':<16} {total['cases']:>6} {total['ok']:>6}  {total['cases'] - total['ok']} findings")
    if args.json:
        args.json.write_text(json.dumps({"results": RESULTS, "examples": EXAMPLES, "total": total}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
