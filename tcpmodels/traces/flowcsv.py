"""The flow table of a capture as CSV, from the command line, in one pass and without pandas.

``python -m tcpmodels.traces.flowcsv CAPTURE [-o FLOWS.csv]`` decodes the capture chunk by chunk, runs the
compiled per-connection pass (:func:`tcpmodels.traces.connpass.stream_records`) and writes the flow table:
the text ``stream_flows(CAPTURE).to_csv()`` writes (:func:`tcpmodels.traces.stream.stream_flows`), with the
same columns as :func:`tcpmodels.traces.flows`. It imports numpy but not pandas or pyarrow (about half a
second of a whole command on the test machine), so that a command line reading a capture costs little more
than the reading and the analysis. The reader's warnings go to stderr. It needs the compiled pass (without
a C compiler at install time: ``stream_flows(capture).to_csv()``).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TextIO

import numpy as np

from . import connpass
from .pcapfile import MAX_GZIP_EXPANSION
from .reader import warn_accounting

__all__ = ["write_flow_csv", "main", "DEFAULT_IDLE_TIMEOUT_S"]

#: As :data:`tcpmodels.traces.stream.DEFAULT_IDLE_TIMEOUT_S` (not imported from there: that module imports
#: pandas; tests/traces/test_flowcsv.py checks the two agree). [s]
DEFAULT_IDLE_TIMEOUT_S = 300.0


#: Rows formatted at once (the text of a million flows held at once took 2 GB). [rows]
_ROWS_AT_ONCE = 1 << 16


def _text(values: np.ndarray) -> list[str]:
    """One column as pandas' ``to_csv`` writes it: ``repr`` of floats (NaN empty), True/False, integers."""
    if values.dtype.kind == "f":
        text = list(map(repr, values.tolist()))
        for i in np.flatnonzero(np.isnan(values)).tolist():
            text[i] = ""
        return text
    return list(map(str, values.tolist()))


def write_flow_csv(records: np.ndarray, ns0: int, out: TextIO) -> int:
    """Write flow records as the flow table's CSV (the index ``flow_id`` first).

    Parameters
    ----------
    records : numpy.ndarray
        :data:`~tcpmodels.traces.connpass.FLOW_DTYPE` records, numbered
        (:func:`~tcpmodels.traces.connpass.number_records`).
    ns0 : int
        The time origin (the capture's earliest packet). [ns]
    out : text file
        Where to write.

    Returns
    -------
    int
        Rows written.
    """
    flow_id, cols = connpass.flow_columns(records, ns0, connpass.record_idents(records))
    names = list(cols)
    out.write(",".join(["flow_id"] + names) + "\n")
    for lo in range(0, len(flow_id), _ROWS_AT_ONCE):  # the text of a block of rows at a time, not of all
        hi = lo + _ROWS_AT_ONCE
        texts = [_text(flow_id[lo:hi])] + [_text(np.asarray(cols[c][lo:hi])) for c in names]
        out.writelines(",".join(row) + "\n" for row in zip(*texts))
    return len(flow_id)


def main(argv: list[str] | None = None) -> int:
    """Command line: the flow table of a capture as CSV (see the module's notes).

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status.
    """
    ap = argparse.ArgumentParser(prog="python -m tcpmodels.traces.flowcsv", description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", help="classic pcap or pcapng, optionally gzip-compressed")
    ap.add_argument("-o", "--output", default="-", help="CSV file to write ('-': stdout)")
    ap.add_argument("--idle-timeout-s", type=float, default=DEFAULT_IDLE_TIMEOUT_S,
                    help="a connection idle this long (capture time) is finished [s]")
    ap.add_argument("--chunk-bytes", type=int, default=32 << 20, help="bytes decoded at once [bytes]")
    args = ap.parse_args(argv)
    if not (math.isfinite(args.idle_timeout_s) and args.idle_timeout_s > 0):
        ap.error(f"--idle-timeout-s [s] must be a positive finite number; got {args.idle_timeout_s}")
    if not connpass.compiled_pass_available():  # pragma: no cover - depends on the install
        ap.exit(2, "the compiled pass tcpmodels.traces.cflows is not built (no C compiler at install time); "
                   "use tcpmodels.traces.stream_flows(capture).to_csv() instead\n")
    out = sys.stdout if args.output == "-" else open(args.output, "w", newline="")
    try:
        res = connpass.stream_records(args.capture, idle_timeout_s=args.idle_timeout_s,
                                      chunk_bytes=args.chunk_bytes, max_gzip_expansion=MAX_GZIP_EXPANSION)
        warn_accounting(res.accounting)
        connpass.warn_dropped(res.records, res.negative_rtt)
        write_flow_csv(res.records, res.t_min or 0, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
