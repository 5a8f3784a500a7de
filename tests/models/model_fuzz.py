"""A fuzzer over the model API: each call's valid baseline with one or two parameters replaced by hostile values.

Used by tests/models/test_model_fuzz.py (bounded to a minute) and by scripts/battery_issue50.py. Each call ends
in one of these outcomes:

- ``error``: a ValueError or TypeError whose message names a parameter of the call;
- ``nan``: a result with NaN where a NaN was passed (NaN propagates, as documented);
- ``ok``: a finite result from inputs that may give one (see :func:`_refused`), or a documented infinity;
- ``empty``: an empty result from an empty array (nothing that could be wrong);
- ``silent_finite``: a finite result from an input that must be refused;
- ``silent_nonfinite``: a NaN or infinite result from finite inputs, or from a value that must be refused;
- ``crash``: any other exception (OverflowError, ZeroDivisionError, a numpy RuntimeWarning turned error, an
  error that names no parameter, ...).

The last three are findings. What must be refused does not depend on knowing each model's domain: a string or
an integer no float holds, ``None`` where the parameter has no ``None`` default, a boolean where a number is
expected, and a negative or non-finite amount where the parameter is a physical amount by its name's unit
(``_s``, ``_bytes``, ``_bps``, ``_segments``) or a probability/factor whose docstring range excludes it.
"""

from __future__ import annotations

import inspect
import math
import time
import warnings
from dataclasses import dataclass, fields, is_dataclass

import numpy as np
import pandas as pd

from tcpmodels.models import bdp, bottleneck, cubic, fairness, heavytail, hurst, mptcp, throughput, window_dynamics
from tcpmodels.predict import formula, svr

#: Values put in place of one parameter.
HOSTILE = [math.nan, math.inf, -math.inf, -1.0, 0.0, 1e308, -1e308, 10**400, "1.5", "x", None, True, [], [1.0, -1.0],
           np.array([1.0, math.nan]), 1.5, 1e-300]
#: Parameter names whose values are amounts that cannot be negative (nor, by the same token, -inf).
_UNITS = ("_s", "_bytes", "_bps", "_segments", "_rate", "loss_rate", "loss_rates", "rtts_s")
#: Parameters whose declared range is (0, 1) or [0, 1] (a probability or a factor of the standard).
_UNIT_INTERVAL = {"loss_rate", "loss_rates", "beta_cubic", "beta_reduction", "beta_reno", "beta", "p",
                  "median_over_mean"}


@dataclass(frozen=True)
class Call:
    """One API entry point and a valid set of arguments for it."""

    name: str
    fn: object
    kwargs: dict
    #: parameters not to mutate (callables, choices, seeds)
    fixed: tuple = ()
    #: the result may be infinite for finite inputs, as documented (the mean of a Pareto with alpha <= 1)
    documented_inf: bool = False
    #: the result may be NaN for finite inputs, as documented (Jain's index of two zero rates)
    documented_nan: bool = False


def _flow(cls):
    """A fluid flow made with the given arguments and run for 2 s of 10 ms steps at a 50 ms RTT, a loss at 1 s:
    its windows over time."""
    def run(**kwargs):
        flow = cls(**kwargs)
        out = []
        for i in range(200):
            flow.advance(i * 0.01, 0.01, 0.05)
            if i == 100:
                flow.on_loss(i * 0.01)
            out.append(flow.cwnd)
        return np.asarray(out)

    run.__signature__ = inspect.signature(cls)
    return run


def calls() -> list[Call]:
    """The model API, each entry with a valid baseline (small enough to run in milliseconds)."""
    rng = lambda: np.random.default_rng(0)  # noqa: E731
    series = heavytail.fgn(512, 0.7, np.random.default_rng(1))
    return [
        Call("mathis_throughput_bps", throughput.mathis_throughput_bps,
             dict(mss_bytes=1460.0, rtt_s=0.05, loss_rate=0.01, b=1.0)),
        Call("mathis_loss_rate", throughput.mathis_loss_rate, dict(rate_bps=1e7, mss_bytes=1460.0, rtt_s=0.05)),
        Call("padhye_throughput_bps", throughput.padhye_throughput_bps,
             dict(mss_bytes=1460.0, rtt_s=0.05, loss_rate=0.01, t0_s=0.3, w_max_segments=64.0, b=2.0)),
        Call("padhye_approx_throughput_bps", throughput.padhye_approx_throughput_bps,
             dict(mss_bytes=1460.0, rtt_s=0.05, loss_rate=0.01, t0_s=0.3, w_max_segments=64.0, b=2.0)),
        Call("window_limited_throughput_bps", throughput.window_limited_throughput_bps,
             dict(window_bytes=65535.0, rtt_s=0.05)),
        Call("bdp_bytes", bdp.bdp_bytes, dict(rate_bps=1e9, rtt_s=0.05)),
        Call("window_needed_bytes", bdp.window_needed_bytes, dict(rate_bps=1e9, rtt_s=0.05)),
        Call("max_window_ceiling_bps", bdp.max_window_ceiling_bps, dict(wscale_shift=7, rtt_s=0.05)),
        Call("min_wscale_shift", bdp.min_wscale_shift, dict(rate_bps=1e9, rtt_s=0.05)),
        Call("cubic_k_s", cubic.cubic_k_s, dict(w_max_segments=100.0, c=0.4, beta_cubic=0.7)),
        Call("cubic_window_segments", cubic.cubic_window_segments,
             dict(t_s=1.0, w_max_segments=100.0, c=0.4, beta_cubic=0.7)),
        Call("cubic_reno_friendly_window_segments", cubic.cubic_reno_friendly_window_segments,
             dict(t_s=1.0, w_max_segments=100.0, rtt_s=0.05, beta_cubic=0.7)),
        Call("reno_window_segments", cubic.reno_window_segments,
             dict(t_s=1.0, w_max_segments=100.0, rtt_s=0.05, beta_reno=0.5)),
        Call("cubic_average_window_segments", cubic.cubic_average_window_segments,
             dict(loss_rate=0.01, rtt_s=0.05, c=0.4, beta_cubic=0.7)),
        Call("cubic_loss_rate_for_window", cubic.cubic_loss_rate_for_window,
             dict(window_segments=50.0, rtt_s=0.05, c=0.4, beta_cubic=0.7)),
        Call("kozu_k_s", cubic.kozu_k_s, dict(w_max_segments=100.0, rtt_s=0.05), fixed=("reading", "x_of_rtt")),
        Call("beta_cubic_from_reduction", cubic.beta_cubic_from_reduction, dict(beta_reduction=0.3)),
        Call("PowerLawX", cubic.PowerLawX, dict(rtt1_s=0.001, x1=10.0, rtt2_s=1.0, x2=1.0)),
        Call("jain_index", fairness.jain_index, dict(rate_a_bps=1e6, rate_b_bps=2e6), documented_nan=True),
        Call("pareto_scale", heavytail.pareto_scale, dict(mean=2.0, alpha=1.5)),
        Call("pareto_mean", heavytail.pareto_mean, dict(scale=1.0, alpha=1.5), documented_inf=True),
        Call("pareto_median", heavytail.pareto_median, dict(scale=1.0, alpha=1.5)),
        Call("hurst_from_alpha", heavytail.hurst_from_alpha, dict(alpha=1.5)),
        Call("Pareto", heavytail.Pareto, dict(scale=1.0, alpha=1.5)),
        Call("onoff_mean_rate", heavytail.onoff_mean_rate,
             dict(n_sources=4.0, mean_on_s=1.0, mean_off_s=2.0, peak_rate=1.0)),
        Call("fgn_autocovariance", heavytail.fgn_autocovariance, dict(lag=3.0, hurst=0.7)),
        Call("fgn", heavytail.fgn, dict(n=64, hurst=0.7, rng=rng(), sigma=1.0), fixed=("rng",)),
        Call("hurst_exponent", hurst.hurst_exponent, dict(x=series), fixed=("method",)),
        Call("lia_alpha", mptcp.lia_alpha, dict(windows_segments=[10.0, 20.0], rtts_s=[0.01, 0.05])),
        Call("lia_equilibrium", mptcp.lia_equilibrium, dict(rtts_s=[0.01, 0.05], loss_rates=[0.01, 0.02],
                                                            mss_bytes=1460.0)),
        Call("reno_window_trajectory", window_dynamics.reno_window_trajectory,
             dict(rtt_s=0.05, duration_s=2.0, w_max_segments=40.0, loss_interval_s=1.0)),
        Call("cubic_window_trajectory", window_dynamics.cubic_window_trajectory,
             dict(rtt_s=0.05, duration_s=2.0, w_max_segments=40.0, loss_interval_s=1.0, c=0.4, beta_cubic=0.7,
                  fast_convergence=True), fixed=("x_reading", "x_of_rtt")),
        Call("RenoFlow", _flow(window_dynamics.RenoFlow), dict(cwnd=10.0, ssthresh=math.inf, max_cwnd=100.0)),
        Call("CubicFlow", _flow(window_dynamics.CubicFlow), dict(cwnd=10.0, ssthresh=math.inf, max_cwnd=100.0,
                                                                 c=0.4, beta=0.7, k_factor=1.0,
                                                                 fast_convergence=True)),
        Call("reno_cubic_bottleneck", bottleneck.reno_cubic_bottleneck,
             dict(capacity_bps=1e7, buffer_bytes=5e4, reno_rtt_s=0.02, cubic_rtt_s=0.04, duration_s=2.0,
                  warmup_s=0.5, c=0.4, beta_cubic=0.7, fast_convergence=True, dt_s=0.004, trace_interval_s=0.1),
             fixed=("x_reading", "x_of_rtt", "loss_sharing", "max_window_bytes")),
        Call("FormulaThroughputRegressor", lambda **kw: formula.FormulaThroughputRegressor(**kw).fit(
            np.array([[0.05, 0.01], [0.1, 0.02]]), [1e6, 2e6]), dict(mss_bytes=1460.0, calibrate=False)),
        Call("make_svr_pipeline", svr.make_svr_pipeline, dict(C=1.0, epsilon=0.1, gamma=0.5, log_throughput=False,
                                                              tol=1e-3)),
    ]


def _param_names(fn) -> set[str]:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()


def _numbers(result) -> np.ndarray:
    """Every number in a result (float, array, Series, DataFrame, dataclass, estimator with fitted floats)."""
    if isinstance(result, (bool, np.bool_)) or result is None or isinstance(result, str):
        return np.zeros(0)
    if isinstance(result, (int, float, np.number)):
        return np.asarray([float(result)])
    if isinstance(result, np.ndarray):
        return result.astype(float, copy=False).ravel() if result.dtype.kind in "fiub" else np.zeros(0)
    if isinstance(result, pd.Series):
        return _numbers(result.to_numpy())
    if isinstance(result, pd.DataFrame):  # columns that are NaN by design (a Reno trajectory's W_cubic) left out
        cols = [c for c in result.columns if result[c].dtype.kind in "fiu" and not result[c].isna().all()]
        return result[cols].to_numpy(float).ravel() if cols else np.zeros(0)
    if is_dataclass(result):
        parts = [_numbers(getattr(result, f.name)) for f in fields(result) if f.name not in ("params", "trace")]
        return np.concatenate(parts) if parts else np.zeros(0)
    slots = getattr(type(result), "__slots__", ())
    if slots:
        return np.concatenate([_numbers(getattr(result, s, None)) for s in slots if s != "last_loss_t"] or
                              [np.zeros(0)])
    return np.zeros(0)


def _refused(name: str, value, default) -> bool:
    """Whether ``value`` must be refused for parameter ``name`` (see the module docstring)."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool) and abs(value) > 1e308):
        return True
    if value is None:
        return default is not None
    if isinstance(value, bool):
        return not isinstance(default, bool)
    if isinstance(default, bool):
        return True  # a switch given a number
    arr = np.asarray(value, dtype=float) if not isinstance(value, list) else np.asarray(value, dtype=float)
    amount = name.endswith(_UNITS) or name in _UNIT_INTERVAL
    if amount and np.any(arr[~np.isnan(arr)] < 0):
        return True
    if name in _UNIT_INTERVAL and np.any(arr[~np.isnan(arr)] > 1):
        return True
    return False


def classify(call: Call, mutated: dict) -> str:
    """Run ``call`` with ``mutated`` replacing some of its arguments; return the outcome (module docstring)."""
    kwargs = {**call.kwargs, **mutated}
    if "rng" in kwargs:
        kwargs["rng"] = np.random.default_rng(0)
    names = _param_names(call.fn) | set(call.kwargs)
    defaults = {}
    try:
        defaults = {k: p.default for k, p in inspect.signature(call.fn).parameters.items()
                    if p.default is not inspect.Parameter.empty}
    except (TypeError, ValueError):
        pass
    must_refuse = any(_refused(k, v, defaults.get(k, call.kwargs.get(k))) for k, v in mutated.items())
    nan_in = any(isinstance(v, float) and math.isnan(v) or (isinstance(v, np.ndarray) and np.isnan(v).any())
                 for v in mutated.values())
    nonfinite_in = any(isinstance(v, float) and not math.isfinite(v) for v in mutated.values()) or nan_in
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with np.errstate(over="raise", invalid="raise", divide="raise"):
                result = call.fn(**kwargs)
    except (ValueError, TypeError) as exc:
        text = str(exc)
        return "error" if any(n in text for n in names) else "crash"
    except Exception:  # noqa: BLE001 - every other exception is the finding
        return "crash"
    values = _numbers(result)
    if values.size == 0 and isinstance(result, (np.ndarray, pd.Series)):
        return "empty"  # an empty array in, an empty result out: no value to be wrong
    finite = bool(np.all(np.isfinite(values)))
    if must_refuse:
        return "silent_finite" if finite else "silent_nonfinite"
    if finite:
        return "ok"
    if nan_in and not np.any(np.isinf(values)):
        return "nan"
    if call.documented_inf and not np.any(np.isnan(values)):
        return "ok"
    if call.documented_nan and not np.any(np.isinf(values)):
        return "nan"
    return "ok" if nonfinite_in else "silent_nonfinite"


def fuzz(seconds: float, pairs: int = 400, seed: int = 20261206) -> tuple[dict, list]:
    """Every call with each parameter replaced by each hostile value, then ``pairs`` seeded two-parameter
    mutations, within ``seconds``; returns outcome counts and the findings (call, mutation, outcome)."""
    deadline = time.monotonic() + seconds
    counts: dict[str, int] = {}
    findings: list = []
    rng = np.random.default_rng(seed)
    todo = []
    table = calls()
    for call in table:
        for name in call.kwargs:
            if name in call.fixed or name == "rng":
                continue
            for value in HOSTILE:
                todo.append((call, {name: value}))
    for _ in range(pairs):
        call = table[int(rng.integers(len(table)))]
        names = [n for n in call.kwargs if n not in call.fixed and n != "rng"]
        if len(names) < 2:
            continue
        a, b = rng.choice(len(names), 2, replace=False)
        todo.append((call, {names[a]: HOSTILE[int(rng.integers(len(HOSTILE)))],
                            names[b]: HOSTILE[int(rng.integers(len(HOSTILE)))]}))
    for call, mutated in todo:
        if time.monotonic() > deadline:
            counts["not_run"] = counts.get("not_run", 0) + 1
            continue
        outcome = classify(call, mutated)
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("silent_finite", "silent_nonfinite", "crash"):
            findings.append((call.name, {k: (v if not isinstance(v, int) or abs(v) < 1e20 else "10**400")
                                         for k, v in mutated.items()}, outcome))
    return counts, findings
