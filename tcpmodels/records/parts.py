"""Ship a campaign's growing records file as parts written once, so the repository grows by the new records only.

A campaign appends one JSON line per finished sample to its records file (:class:`tcpmodels.records.JsonlRecords`)
and runs over many sessions. Re-compressing the whole file into ``data/datasets`` at each stage commits every
old record again: ten stages of a 2.5 MB repetition add about 137 MB of history. Here the shipped records are a
*stem* (``data/datasets/p3_kernel_x_records``) with parts: ``<stem>.jsonl.gz`` (the first, older name) and
``<stem>_part02.jsonl.gz``, ``_part03`` and so on, each holding the lines that no earlier part has, written once
and never rewritten.

- :func:`ship_new_records` writes the next part from the campaign's records file;
- :func:`shipped_record_lines` reads every part back in order (resume a campaign, or read the data in a test);
- ``tcpmodels records ship SRC STEM`` and ``tcpmodels records cat STEM > runs/...jsonl`` are the two commands.

Standard library only, beside :mod:`tcpmodels.records`.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from pathlib import Path

from tcpmodels.records import reproducible_gzip_writer

__all__ = ["MAX_PART_BYTES", "record_parts", "shipped_record_lines", "ship_new_records", "add_subcommand"]

#: Largest shipped part, compressed: the repository keeps every file under 10 MiB. [bytes]
MAX_PART_BYTES = 8 * 2**20


def _stem_path(stem: str | Path) -> Path:
    stem = Path(stem)
    name = stem.name
    for suffix in (".jsonl.gz", ".gz", ".jsonl"):
        if name.endswith(suffix):
            raise ValueError(f"records stem {str(stem)!r}: give the name without {suffix!r} "
                             f"(e.g. {str(stem.with_name(name[: -len(suffix)]))!r}); the parts add '_partNN.jsonl.gz'")
    return stem


def record_parts(stem: str | Path) -> list[Path]:
    """The shipped parts of ``stem`` in the order they were written.

    Parameters
    ----------
    stem : str or Path
        The records' path without suffix, e.g. ``data/datasets/p3_kernel_x_records``.

    Returns
    -------
    list of Path
        ``<stem>.jsonl.gz`` if it exists, then ``<stem>_partNN.jsonl.gz`` by ``NN`` (numerically); empty if none.
    """
    return [path for _, path in _numbered_parts(_stem_path(stem))]


def _numbered_parts(stem: Path) -> list[tuple[int, Path]]:
    """``(1, <stem>.jsonl.gz)`` if it exists, then ``(NN, <stem>_partNN.jsonl.gz)``, sorted by number."""
    part = re.compile(re.escape(stem.name) + r"_part(\d{2,})\.jsonl\.gz")
    first = stem.with_name(stem.name + ".jsonl.gz")
    numbered = sorted((int(m.group(1)), path) for path in stem.parent.glob(stem.name + "_part*.jsonl.gz")
                      if (m := part.fullmatch(path.name)))
    return ([(1, first)] if first.exists() else []) + numbered


def shipped_record_lines(stem: str | Path) -> list[str]:
    """Every non-blank line of every part of ``stem``, parts in order (:func:`record_parts`), newline kept.

    Parameters
    ----------
    stem : str or Path
        The records' path without suffix.

    Returns
    -------
    list of str
        The lines as the campaign wrote them; empty if nothing is shipped.
    """
    lines = []
    for path in record_parts(stem):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            lines.extend(line if line.endswith("\n") else line + "\n" for line in fh if line.strip())
    return lines


def ship_new_records(src: str | Path, stem: str | Path, *, max_part_bytes: int = MAX_PART_BYTES) -> Path | None:
    """Write the lines of ``src`` that no part of ``stem`` has yet into the next part (reproducible gzip), or into
    several consecutive parts when one would be larger than ``max_part_bytes`` compressed.

    Parameters
    ----------
    src : str or Path
        The campaign's records file (JSON lines, appended to by the campaign).
    stem : str or Path
        The shipped records' path without suffix, e.g. ``data/datasets/p3_kernel_x_records``.
    max_part_bytes : int
        Largest compressed part; the new lines are cut (between lines) into as many parts as keep each below it.
        A single line larger than that stays whole. [bytes]

    Returns
    -------
    Path or None
        The first part written (``<stem>.jsonl.gz`` when nothing was shipped yet, else ``<stem>_partNN.jsonl.gz``
        with ``NN`` one past the last; further parts follow it by number, :func:`record_parts`), or None when
        every line of ``src`` is shipped already.

    Raises
    ------
    FileNotFoundError
        ``src`` does not exist.
    ValueError
        A shipped line is not in ``src``: the parts hold records this file does not (another campaign's file,
        or records that were removed), so a new part would not make the two agree.
    """
    src = Path(src)
    if not src.is_file():
        raise FileNotFoundError(f"records file {str(src)!r} does not exist: give the campaign's JSONL records")
    stem = _stem_path(stem)
    with src.open(encoding="utf-8") as fh:
        src_lines = [line if line.endswith("\n") else line + "\n" for line in fh if line.strip()]
    shipped = shipped_record_lines(stem)
    src_set = set(src_lines)
    foreign = [line for line in shipped if line not in src_set]
    if foreign:
        raise ValueError(f"{len(foreign)} of the {len(shipped)} records shipped under {str(stem)!r} are not in "
                         f"{str(src)!r} (first: {foreign[0][:120]!r}...): the parts must be records of this file")
    shipped_set = set(shipped)
    new = [line for line in src_lines if line not in shipped_set]
    if not new:
        return None
    parts = _numbered_parts(stem)
    return _write_parts(stem, parts[-1][0] + 1 if parts else 1, new, max_part_bytes)[0]


def _part_path(stem: Path, number: int) -> Path:
    return stem.with_name(stem.name + ".jsonl.gz" if number == 1 else f"{stem.name}_part{number:02d}.jsonl.gz")


def _write_parts(stem: Path, first: int, lines: list[str], max_part_bytes: int) -> list[Path]:
    """Write ``lines`` as parts ``first, first + 1, ...``: the fewest contiguous groups of about equal size whose
    compressed files are each at most ``max_part_bytes`` (one line a part at the most)."""
    n_groups = 1
    while True:
        sizes = [len(line.encode("utf-8")) for line in lines]
        total, groups, start, acc = sum(sizes), [], 0, 0
        for i, size in enumerate(sizes):  # cut where the running size passes the next k/n of the total
            acc += size
            if acc * n_groups >= total * (len(groups) + 1) or i == len(lines) - 1:
                groups.append(lines[start:i + 1])
                start = i + 1
        paths = [_part_path(stem, first + k) for k in range(len(groups))]
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        for path, group in zip(paths, groups):
            with reproducible_gzip_writer(path, text=True) as out:
                out.writelines(group)
        largest = max(path.stat().st_size for path in paths)
        if largest <= max_part_bytes or len(groups) == len(lines):
            return paths
        for path in paths:
            path.unlink()
        n_groups = max(n_groups + 1, -(-n_groups * largest // max_part_bytes))


def _cmd_ship(args: argparse.Namespace) -> int:
    try:
        dst = ship_new_records(args.src, args.stem)
    except (FileNotFoundError, ValueError) as exc:
        print(f"tcpmodels records ship: {exc}", file=sys.stderr)
        return 2
    if dst is None:
        print(f"every record of {args.src} is shipped already under {args.stem}: nothing written")
        return 0
    parts = record_parts(args.stem)
    for path in parts[parts.index(dst):]:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            count = sum(1 for line in fh if line.strip())
        print(f"{count} new records -> {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


def _cmd_cat(args: argparse.Namespace) -> int:
    try:
        parts = record_parts(args.stem)
    except ValueError as exc:
        print(f"tcpmodels records cat: {exc}", file=sys.stderr)
        return 2
    if not parts:
        print(f"tcpmodels records cat: no records shipped under {args.stem!r} "
              f"(looked for {args.stem}.jsonl.gz and {args.stem}_partNN.jsonl.gz)", file=sys.stderr)
        return 2
    sys.stdout.writelines(shipped_record_lines(args.stem))
    return 0


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``records`` with its actions ``ship`` and ``cat`` on the main ``tcpmodels`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The main parser's sub-command registry; receives ``records`` with ``ship`` and ``cat``, each setting
        ``func``.
    """
    parser = subparsers.add_parser(
        "records", help="ship a campaign's records as parts written once; read them back to resume",
        description="Shipped campaign records: STEM is the path without suffix "
                    "(data/datasets/p3_kernel_x_records); its parts are STEM.jsonl.gz and STEM_partNN.jsonl.gz.")
    sub = parser.add_subparsers(dest="records_command", metavar="ACTION", required=True)
    ship = sub.add_parser("ship", help="write the records of SRC not shipped yet into the next part of STEM")
    ship.add_argument("src", help="the campaign's JSONL records file")
    ship.add_argument("stem", help="shipped records without suffix, e.g. data/datasets/p3_kernel_x_records")
    ship.set_defaults(func=_cmd_ship)
    cat = sub.add_parser("cat", help="print every shipped record of STEM, parts in order (redirect to resume)")
    cat.add_argument("stem", help="shipped records without suffix, e.g. data/datasets/p3_kernel_x_records")
    cat.set_defaults(func=_cmd_cat)
