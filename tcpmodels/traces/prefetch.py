"""Run an iterator a bounded number of steps ahead of its consumer, in a thread.

The streaming pass (:func:`tcpmodels.traces.connpass.stream_records`) alternates two kinds of work on each
chunk of a capture: reading and decoding it (file reads and the compiled decoder) and feeding it to the
compiled per-connection pass. Both release the GIL for their compiled part, so on a machine with two cores
the next chunk can be read and decoded while the current one is fed. :func:`prefetched` does that with one
producer thread and a queue of ``depth`` items: memory stays bounded (at most ``depth + 2`` items exist at
once: one being made, ``depth`` waiting, one being used), the order is kept, and an exception in the
producer is raised in the consumer, at the item where it happened, with its own type and traceback.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["prefetched", "more_than_one_cpu"]

T = TypeVar("T")

_ITEM, _END, _ERROR = 0, 1, 2
#: how often a blocked producer checks whether the consumer has gone away [s]
_POLL_S = 0.05


def more_than_one_cpu() -> bool:
    """Whether this process may run on more than one CPU: its affinity (Linux), else the CPU count.

    The readers decode ahead (:func:`prefetched`) by default only then: on one CPU the second thread would
    only take turns with the first.

    Returns
    -------
    bool
        True with two or more CPUs allowed.
    """
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # not Linux
        return (os.cpu_count() or 1) > 1


def prefetched(items: Iterable[T], *, depth: int = 1, name: str = "tcpmodels-prefetch") -> Iterator[T]:
    """The items of ``items`` in order, each made in a background thread up to ``depth`` items ahead.

    Parameters
    ----------
    items : iterable
        What to produce; iterated (and, if it is a generator, closed) in the background thread only.
    depth : int
        Items made ahead of the one the consumer holds (at least 1).
    name : str
        The thread's name (shown by debuggers and ``py-spy``).

    Returns
    -------
    iterator
        The items. Closing it early (``break``, an exception in the consumer, garbage collection) stops the
        producer after the item it is making and waits for its thread.

    Raises
    ------
    ValueError
        ``depth`` below 1.
    Exception
        Whatever ``items`` raised, when the consumer reaches that point.
    """
    if int(depth) < 1:
        raise ValueError(f"prefetched: depth={depth!r}, expected a whole number of at least 1")
    return _Prefetcher(items, int(depth), name).run()


class _Prefetcher:
    """One producer thread and its queue (see :func:`prefetched`)."""

    def __init__(self, items: Iterable, depth: int, name: str):
        self._items = items
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name=name, daemon=True)

    def _put(self, entry: tuple) -> bool:
        """Queue ``entry`` unless the consumer has gone away; whether it was queued."""
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self) -> None:
        iterator = iter(self._items)
        try:
            for item in iterator:
                if not self._put((_ITEM, item)):
                    return
                del item
            self._put((_END, None))
        except BaseException as exc:  # noqa: BLE001 (not swallowed: handed to the consumer and raised there)
            self._put((_ERROR, exc))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()

    def run(self) -> Iterator:
        self._thread.start()
        try:
            while True:
                kind, value = self._queue.get()
                if kind == _END:
                    return
                if kind == _ERROR:
                    raise value
                yield value
                del value
        finally:
            self._stop.set()
            while True:  # let a producer blocked on a full queue see the stop
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
            self._thread.join()
