"""tcpmodels.traces.prefetch: an iterator run ahead in a thread keeps order, bounds, errors and closing."""

import threading
import time
import warnings

import pandas as pd
import pytest
from trace_fixtures import CAPTURES

from tcpmodels.traces import TraceWarning, read_pcap
from tcpmodels.traces.prefetch import prefetched


def test_items_come_in_order_and_the_thread_ends():
    before = threading.active_count()
    assert list(prefetched(iter(range(1000)), depth=3)) == list(range(1000))
    assert threading.active_count() == before


def test_the_producer_runs_at_most_depth_items_ahead_of_the_consumer():
    made = []

    def items():
        for i in range(20):
            made.append(i)
            yield i

    it = prefetched(items(), depth=2)
    assert next(it) == 0
    # the producer has made item 0 (held), items 1-2 (queued) and is making item 3 (blocked on the full queue)
    time.sleep(0.3)  # time for a producer that ignored the bound to run on
    assert len(made) <= 4
    assert list(it) == list(range(1, 20))


def test_an_error_in_the_producer_is_raised_in_the_consumer_where_it_happened():
    def items():
        yield 1
        yield 2
        raise OSError("disk went away at item 3")

    got = []
    with pytest.raises(OSError, match="disk went away at item 3"):
        for x in prefetched(items()):
            got.append(x)
    assert got == [1, 2]


def test_closing_early_stops_the_producer_and_closes_its_generator():
    closed = threading.Event()
    before = threading.active_count()

    def items():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    for x in prefetched(items(), depth=1):
        if x == 5:
            break
    assert closed.wait(5)
    assert threading.active_count() == before


def test_an_error_in_the_consumer_stops_the_producer():
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="consumer failed"):
        for x in prefetched(iter(range(10**9))):
            if x == 3:
                raise RuntimeError("consumer failed")
    assert threading.active_count() == before


def test_depth_below_one_is_a_clear_error():
    with pytest.raises(ValueError, match=r"depth=0, expected a whole number of at least 1"):
        prefetched([1, 2], depth=0)


def test_read_pcap_gives_the_same_table_decoding_ahead_or_not():
    """Small chunks, so that every capture is many chunks; tables and accounting equal, column by column."""
    checked = 0
    for path in sorted(CAPTURES.glob("*.pcap*")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            one = read_pcap(path, chunk_bytes=1 << 14, decode_ahead=False)
            two = read_pcap(path, chunk_bytes=1 << 14, decode_ahead=True)
        pd.testing.assert_frame_equal(two, one, check_exact=True, obj=path.name)
        assert two.attrs["accounting"] == one.attrs["accounting"]
        checked += 1
    assert checked >= 10


def test_decoding_ahead_follows_the_cpus_the_process_may_use(monkeypatch):
    import tcpmodels.traces.prefetch as prefetch

    monkeypatch.setattr(prefetch.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert prefetch.more_than_one_cpu() is False
    monkeypatch.setattr(prefetch.os, "sched_getaffinity", lambda pid: {0, 3}, raising=False)
    assert prefetch.more_than_one_cpu() is True
    monkeypatch.delattr(prefetch.os, "sched_getaffinity")
    monkeypatch.setattr(prefetch.os, "cpu_count", lambda: 1)
    assert prefetch.more_than_one_cpu() is False


def test_read_pcap_on_one_cpu_starts_no_thread(monkeypatch):
    """Where the process may use one CPU only, the reader does not decode ahead (the thread would only take
    turns with the caller)."""
    import tcpmodels.traces.reader as reader

    started = []
    monkeypatch.setattr(reader, "more_than_one_cpu", lambda: False)
    monkeypatch.setattr(reader, "prefetched", lambda items, **kw: started.append(kw) or items)
    path = sorted(CAPTURES.glob("*.pcap*"))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        read_pcap(path)
        assert started == []
        monkeypatch.setattr(reader, "more_than_one_cpu", lambda: True)
        read_pcap(path)
    assert len(started) == 1
