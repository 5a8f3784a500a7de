"""The reports index page: one card row per executed notebook, read from the executed notebook itself.

For every run of :func:`tcpmodels.report.run_notebook` the row shows the notebook's
one-line description (its title), quick or full mode and the parameters papermill
injected, the counts of claim parts per outcome (supported, smaller than claimed, contradicted,
inconclusive, not testable here: the verdict badges of the cell tagged ``claims-table``, see
:func:`tcpmodels.papers.display.claims_full`),
a thumbnail of its main figure (the first image it shows), links to the HTML and to
the executed ``.ipynb``, its run time, and, for a failed run, the cell and the error.
"""

from __future__ import annotations

import base64
import html
import io
import re
import time
from pathlib import Path
from typing import Protocol, Sequence

from tcpmodels.stats.outcomes import BADGE_COLOURS

__all__ = ["notebook_summary", "write_index", "VERDICT_CLASSES"]

#: The verdicts counted, with their badge colours (the badge's class is the verdict with hyphens for spaces,
#: ``verdict-smaller-than-claimed``).
VERDICT_CLASSES = BADGE_COLOURS
_THUMB_WIDTH_PX = 360


class _Run(Protocol):
    """What :func:`write_index` reads of a :class:`tcpmodels.report.NotebookRun` (not imported: ``report`` imports this module)."""

    name: str
    status: str
    seconds: float
    output_ipynb: Path
    output_html: Path | None
    error: str
    failing_cell: int | None


def _outputs_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        parts.append(str(data.get("text/html", "")))
        parts.append(str(out.get("text", "")))
    return "".join(parts)


def _first_image(nb) -> bytes | None:
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            png = out.get("data", {}).get("image/png")
            if png:
                return base64.b64decode(png if isinstance(png, str) else "".join(png))
    return None


def _description(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.strip():
                    return line.lstrip("#").strip()
    return ""


def notebook_summary(executed_ipynb: str | Path) -> dict:
    """What the index shows about one executed notebook.

    Parameters
    ----------
    executed_ipynb : str or Path
        A notebook written by papermill; a missing file gives an empty summary
        (``mode`` ``"?"``, no counts, no image).

    Returns
    -------
    dict
        ``description`` (the first markdown line, heading marks removed), ``parameters`` (dict that
        papermill injected; ``{}`` if none), ``mode`` (``"quick"``, ``"full"`` or ``"?"``),
        ``counts`` (``{verdict: n}`` from the badges in the ``claims-table`` cell, or ``None`` when
        the notebook has no such cell or it produced no output) and ``image`` (PNG bytes of the
        first figure, or ``None``).
    """
    import nbformat

    path = Path(executed_ipynb)
    if not path.exists():
        return {"description": "", "parameters": {}, "mode": "?", "counts": None, "image": None}
    nb = nbformat.read(path, as_version=4)
    params = dict(nb.metadata.get("papermill", {}).get("parameters", {}) or {})
    if "quick" not in params:  # not injected: read the literal from the parameters cell
        for cell in nb.cells:
            if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
                m = re.search(r"^quick\s*=\s*(True|False)", cell.source, re.M)
                if m:
                    params.setdefault("quick", m.group(1) == "True")
    mode = "?" if "quick" not in params else ("quick" if params["quick"] else "full")
    counts = None
    tables = [c for c in nb.cells if c.cell_type == "code" and "claims-table" in c.metadata.get("tags", [])]
    if tables:
        text = "".join(_outputs_text(c) for c in tables)
        if text:
            counts = {v: len(re.findall(rf'class="verdict verdict-{"-".join(v.split())}"', text)) for v in VERDICT_CLASSES}
    return {"description": _description(nb), "parameters": params, "mode": mode, "counts": counts,
            "image": _first_image(nb)}


def _thumbnail(png: bytes, out: Path) -> Path:
    from PIL import Image

    img = Image.open(io.BytesIO(png))
    img.thumbnail((_THUMB_WIDTH_PX, _THUMB_WIDTH_PX))
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out, format="PNG")
    return out


def _counts_html(counts: dict | None) -> str:
    if counts is None:
        return "<span class='muted'>no claims table</span>"
    return " ".join(f"<span class='badge' style='background:{VERDICT_CLASSES[v]}' title='{v}'>{counts[v]} {v}</span>"
                    for v in VERDICT_CLASSES)


def _params_html(mode: str, params: dict) -> str:
    rest = ", ".join(f"{html.escape(str(k))}={html.escape(repr(v))}" for k, v in params.items() if k != "quick")
    return f"<b>{html.escape(mode)}</b>" + (f"<br><span class='muted'>{rest}</span>" if rest else "")


def write_index(runs: Sequence[_Run], output_dir: str | Path) -> Path:
    """Write ``<output_dir>/index.html`` (and thumbnails in ``<output_dir>/thumbs/``) for ``runs``.

    Parameters
    ----------
    runs : sequence of tcpmodels.report.NotebookRun
        One per executed notebook (``name, status, seconds, output_ipynb, output_html, error, failing_cell``).
    output_dir : str or Path
        Where the executed notebooks and their HTML are; must exist.

    Returns
    -------
    Path
        The index page, ``<output_dir>/index.html``.
    """
    output_dir = Path(output_dir)
    rows = []
    totals = dict.fromkeys(VERDICT_CLASSES, 0)
    for run in runs:
        info = notebook_summary(run.output_ipynb)
        for v, n in (info["counts"] or {}).items():
            totals[v] += n
        thumb = "<span class='muted'>no figure</span>"
        if info["image"]:
            try:
                t = _thumbnail(info["image"], output_dir / "thumbs" / f"{run.name}.png")
                thumb = f"<img src='thumbs/{html.escape(t.name)}' alt='main figure of {html.escape(run.name)}'>"
            except Exception as exc:  # noqa: BLE001 - an unreadable image must not break the index
                thumb = f"<span class='muted'>thumbnail failed: {html.escape(str(exc))}</span>"
        links = []
        if run.output_html:
            links.append(f"<a href='{html.escape(Path(run.output_html).name)}'>HTML</a>")
        if Path(run.output_ipynb).exists():
            links.append(f"<a href='{html.escape(Path(run.output_ipynb).name)}'>.ipynb</a>")
        status = "<span class='ok'>ok</span>" if run.status == "ok" else "<span class='failed'>failed</span>"
        if run.status != "ok":
            where = f"cell {run.failing_cell}: " if run.failing_cell is not None else ""
            status += f"<div class='error'>{html.escape(where + run.error)}</div>"
        rows.append(
            "<tr>"
            f"<td><div class='name'>{html.escape(run.name)}</div><div class='desc'>{html.escape(info['description'])}</div></td>"
            f"<td>{_params_html(info['mode'], info['parameters'])}</td>"
            f"<td>{_counts_html(info['counts'])}</td>"
            f"<td class='thumb'>{thumb}</td>"
            f"<td>{' · '.join(links)}</td>"
            f"<td>{status}<div class='muted'>{run.seconds:.1f} s</div></td>"
            "</tr>"
        )
    n_ok = sum(r.status == "ok" for r in runs)
    page = (
        "<!doctype html><html lang='en'><meta charset='utf-8'><title>tcpmodels report</title>"
        "<style>body{font-family:system-ui,sans-serif;margin:2em;color:#1f2328}"
        "table{border-collapse:collapse;width:100%}th,td{padding:.5em .8em;border-bottom:1px solid #d0d7de;"
        "text-align:left;vertical-align:top}th{background:#f6f8fa}.name{font-weight:600}"
        ".desc{max-width:28em;color:#424a53}.muted{color:#6e7781;font-size:.9em}"
        ".badge{display:inline-block;color:#fff;border-radius:9px;padding:1px 8px;margin:1px;font-size:.85em;"
        "white-space:nowrap}.thumb img{max-width:240px;max-height:180px;object-fit:contain;border:1px solid #d0d7de}"
        ".ok{color:#1a7f37;font-weight:600}.failed{color:#cf222e;font-weight:600}"
        ".error{color:#cf222e;font-family:monospace;font-size:.85em;max-width:30em;white-space:pre-wrap}</style>"
        f"<h1>tcpmodels report</h1><p>{time.strftime('%Y-%m-%d %H:%M:%S %Z')} · {n_ok} of {len(runs)} notebooks ran · "
        f"claims: {_counts_html(totals)}</p>"
        "<table><tr><th>notebook</th><th>mode and parameters</th><th>claims</th><th>main figure</th>"
        "<th>links</th><th>status</th></tr>" + "".join(rows) + "</table></html>"
    )
    index = output_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
