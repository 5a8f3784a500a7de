"""The host's per-CPU times from /proc/stat: parsed in seconds, differenced, and read from the real file."""

from __future__ import annotations

import os
import time

import pytest

from tcpmodels.testbed import cpu_times

STAT = """cpu  2197172 4708 1610102 9401132 20167 0 2001360 70123 0 0
cpu0 664811 2291 778558 5128117 2215 0 1050479 32261 0 0
cpu1 1532361 2416 831544 4273015 17952 0 950880 37862 0 0
intr 123 0 9
ctxt 999
"""


def test_per_cpu_lines_are_parsed_in_seconds_and_the_total_line_is_left_out():
    cpus = cpu_times.parse_proc_stat(STAT, ticks_per_s=100)
    assert list(cpus) == ["cpu0", "cpu1"]
    assert cpus["cpu0"]["steal"] == pytest.approx(322.61) and cpus["cpu1"]["softirq"] == pytest.approx(9508.80)
    assert tuple(cpus["cpu1"]) == cpu_times.CPU_TIME_FIELDS


def test_a_bad_value_or_no_cpu_line_is_named():
    with pytest.raises(ValueError, match=r"/proc/stat line 2 \(cpu0\): idle is '-5'"):
        cpu_times.parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 3 -5\n", ticks_per_s=100)
    with pytest.raises(ValueError, match="no per-CPU line"):
        cpu_times.parse_proc_stat("intr 1\n", ticks_per_s=100)
    with pytest.raises(ValueError, match="ticks_per_s"):
        cpu_times.parse_proc_stat(STAT, ticks_per_s=0)


def test_delta_is_the_time_between_snapshots_and_refuses_swapped_ones():
    before = cpu_times.parse_proc_stat(STAT, ticks_per_s=100)
    later = STAT.replace("cpu0 664811 2291 778558 5128117 2215 0 1050479 32261",
                         "cpu0 664911 2291 778558 5128117 2215 0 1050779 32461")
    after = cpu_times.parse_proc_stat(later, ticks_per_s=100)
    d = cpu_times.cpu_time_delta(before, after)
    assert d["cpu0"]["user"] == 1.0 and d["cpu0"]["softirq"] == 3.0 and d["cpu0"]["steal"] == 2.0
    assert set(d["cpu1"].values()) == {0.0}
    with pytest.raises(ValueError, match="cpu0 user went from"):
        cpu_times.cpu_time_delta(after, before)


def test_the_real_file_accounts_for_the_wall_time_of_every_cpu():
    """Over 0.5 s of a busy loop, the fields of each CPU add up to about 0.5 s (ticks of 10 ms, so within a few),
    and the CPUs' user (``nice`` too: a niced run's user time is counted there) + system time holds at least most of
    the loop."""
    before, t0 = cpu_times.read_cpu_times(), time.monotonic()
    while time.monotonic() - t0 < 0.5:
        pass
    after, wall = cpu_times.read_cpu_times(), time.monotonic() - t0
    d = cpu_times.cpu_time_delta(before, after)
    assert len(d) == os.cpu_count()
    for cpu, fields in d.items():
        assert all(v >= 0 for v in fields.values())
        assert sum(v for k, v in fields.items() if k not in ("guest", "guest_nice")) == pytest.approx(wall, abs=0.1), cpu
    assert sum(f["user"] + f["nice"] + f["system"] for f in d.values()) > 0.3
