"""How the teaching figures look, in the report and in lecture mode (a projector at 1024x768).

Lecture mode is one setting, the environment variable ``TCPMODELS_LECTURE``
(:func:`tcpmodels.notebook.widgets.lecture_mode`): ``TCPMODELS_LECTURE=1 make lab``. Its figures are
:data:`LECTURE_WIDTH_IN` wide at :data:`tcpmodels.notebook.widgets.LECTURE_DPI` (576 pixels: JupyterLab's output area at
1024x768 with the file browser open is about 590 pixels, so the image is shown at its own size,
never scaled down), with fonts of :data:`LECTURE_FONT_PT` (16 pixels; legends and notes 13),
line widths and markers times :data:`LECTURE_LINE_SCALE`, the panels of a figure stacked instead
of side by side, legends beside the axes and long titles wrapped. Every plot function of the
lectures is decorated with :func:`teaching_figure`, which builds its figure under the mode's
matplotlib settings; :func:`text_overlaps` is the check that no two labels collide.

Log axes are labelled ``0.01 ... 1000`` and ``10⁴`` without mathtext: that parser was a third
of the time a redraw took.
"""

from __future__ import annotations

import functools
import math
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
from matplotlib.transforms import ScaledTranslation

from tcpmodels._docstrings import SharedEntries
from tcpmodels.notebook.widgets import LECTURE_DPI, lecture_mode

__all__ = [
    "LECTURE_FONT_PT",
    "LECTURE_LINE_SCALE",
    "LECTURE_WIDTH_IN",
    "REPORT_FONT_PT",
    "legend",
    "log_tick_label",
    "new_figure",
    "figure_wide",
    "reuse_layout",
    "panels",
    "suptitle",
    "teaching_figure",
    "text_overlaps",
    "title",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    fig : matplotlib.figure.Figure
        The figure.
    ax : Axes
        The axes.
""")

#: Figure width in lecture mode. [in]
LECTURE_WIDTH_IN = 6.0
#: Base font size in lecture mode; "small" text (legends, notes) is 5/6 of it. [pt]
LECTURE_FONT_PT = 12.0
#: Base font size of the report's figures. [pt]
REPORT_FONT_PT = 10.0
#: Factor on every line width and marker size in lecture mode. [-]
LECTURE_LINE_SCALE = 1.5
#: Characters per title line: lecture mode (a full-width panel), report (one of two panels side by side).
_LECTURE_TITLE_CHARS = 50
_REPORT_TITLE_CHARS = 72
#: Characters per line of a figure title (the whole width): lecture mode, report.
_LECTURE_FIGURE_CHARS = 66
_REPORT_FIGURE_CHARS = 140

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _rc() -> dict[str, Any]:
    base = LECTURE_FONT_PT if lecture_mode() else REPORT_FONT_PT
    return {
        "font.size": base,
        "axes.titlesize": "medium",
        "axes.labelsize": "medium",
        "xtick.labelsize": "small" if not lecture_mode() else "medium",
        "ytick.labelsize": "small" if not lecture_mode() else "medium",
        "legend.fontsize": "small",
        "figure.titlesize": "medium",
        "figure.labelsize": "small",
        "axes.titlepad": 10.0 if lecture_mode() else 6.0,
    }


def new_figure(width_in: float, height_in: float, *, lecture_height_in: float | None = None) -> Figure:
    """A figure built without pyplot, sized for the current mode, with constrained layout.

    Parameters
    ----------
    width_in, height_in : float
        Size in the report. [in]
    lecture_height_in : float, optional
        Height in lecture mode (the width is :data:`LECTURE_WIDTH_IN`); default ``height_in``
        scaled to that width. [in]

    Returns
    -------
    matplotlib.figure.Figure
        Without a canvas from pyplot (nothing accumulates in pyplot's figure list).
    """
    if lecture_mode():
        height = lecture_height_in if lecture_height_in is not None else height_in * LECTURE_WIDTH_IN / width_in
        return Figure(figsize=(LECTURE_WIDTH_IN, height), dpi=LECTURE_DPI, layout="constrained")
    return Figure(figsize=(width_in, height_in), layout="constrained")


#: Axes and title positions of figures laid out once, by :func:`reuse_layout` key.
_LAYOUTS: dict[tuple, tuple[list[tuple[float, float, float, float]], tuple[float, float] | None]] = {}


def reuse_layout(fig: Figure, key: tuple) -> Figure:
    """Lay ``fig`` out as the first figure with the same ``key`` was, without running the layout engine again.

    Constrained layout measures every tick label and title twice per draw: on the six axes of
    :func:`tcpmodels.teaching.heavytail.plot_self_similarity` that was 0.12-0.26 s of a
    0.4 s redraw in lecture mode (2026-12-06), and a widget must redraw in under 0.5 s. The first
    figure of a key is laid out by the engine when it is drawn; the positions of its axes and of its
    figure title and x label are then kept (on the canvas's ``draw_event``) and set on every later figure
    of that key, whose layout engine is switched off.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure with constrained layout, complete (every label and title set).
    key : tuple
        Everything that decides the layout besides the figure's size, dpi and the mode, which are
        added here: the axes grid, and whatever changes the width of a tick label or the number of
        lines of a title. Two figures of one key must need the same margins.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig``, laid out.
    """
    full_key = (key, lecture_mode(), tuple(fig.get_size_inches()), fig.dpi, len(fig.axes))
    saved = _LAYOUTS.get(full_key)
    if saved is None:

        def keep(event: Any) -> None:  # after the first draw, when the engine has placed everything
            labels = tuple(None if t is None else t.get_position() for t in _figure_labels(fig))
            _LAYOUTS[full_key] = ([ax.get_position().bounds for ax in fig.axes], labels)
            fig.canvas.mpl_disconnect(cid)

        cid = fig.canvas.mpl_connect("draw_event", keep)
        return fig
    positions, labels = saved
    fig.set_layout_engine("none")
    for ax, bounds in zip(fig.axes, positions):
        ax.set_position(bounds)
    for text, position in zip(_figure_labels(fig), labels):
        if text is not None and position is not None:
            text.set_position(position)
    return fig


def _figure_labels(fig: Figure) -> tuple:
    """The figure's title and its x label (``suptitle``, ``supxlabel``), None where not set."""
    return fig._suptitle, fig._supxlabel


@_PARAMETERS.fill
def panels(fig: Figure, n: int, **gridspec: Any) -> list[Axes]:
    """``n`` axes side by side in the report, stacked (one per row) in lecture mode.

    Parameters
    ----------
    {fig}
    n : int
        Number of panels.
    **gridspec
        ``width_ratios`` (used as height ratios when stacked) and other keywords of
        :meth:`matplotlib.figure.Figure.subplots`.

    Returns
    -------
    list of Axes
        In reading order.
    """
    ratios = gridspec.pop("width_ratios", None)
    if lecture_mode():
        axes = fig.subplots(n, 1, squeeze=False, height_ratios=ratios, **gridspec)[:, 0]
    else:
        axes = fig.subplots(1, n, squeeze=False, width_ratios=ratios, **gridspec)[0, :]
    return list(axes)


@_PARAMETERS.fill
def title(ax: Axes, text: str, **kwargs: Any) -> Text:
    """Set an axes title, wrapped onto lines that fit a panel of the current mode.

    Parameters
    ----------
    {ax}
    text : str
        The title.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.set_title`.

    Returns
    -------
    matplotlib.text.Text
        The title.
    """
    width = _LECTURE_TITLE_CHARS if lecture_mode() else _REPORT_TITLE_CHARS
    text = "\n".join(textwrap.fill(line, width, break_on_hyphens=False) for line in text.split("\n"))
    return ax.set_title(text, **kwargs)


@_PARAMETERS.fill
def legend(ax: Axes, loc: str = "best", *, lecture_columns: int = 1, **kwargs: Any) -> Legend:
    """A legend inside the axes in the report, under them (below the x label) in lecture mode.

    Parameters
    ----------
    {ax}
    loc : str
        Location inside the axes in the report.
    lecture_columns : int
        Columns of the legend in lecture mode.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.legend`.

    Returns
    -------
    matplotlib.legend.Legend
        The legend.
    """
    if lecture_mode():
        # below the tick labels and the x label: tick 5 pt, pads 3.5 + 4 pt, two lines of text
        below = ax.transAxes + ScaledTranslation(0.0, -(12.5 + 2.6 * LECTURE_FONT_PT) / 72.0, ax.figure.dpi_scale_trans)
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=below, borderaxespad=0.0,
                         ncols=lecture_columns, columnspacing=1.0, handlelength=1.6, **kwargs)  # fmt: skip
    return ax.legend(loc=loc, **kwargs)


@_PARAMETERS.fill
def suptitle(fig: Figure, text: str, **kwargs: Any) -> Text:
    """Set a figure title, wrapped onto lines as wide as the figure of the current mode.

    Parameters
    ----------
    {fig}
    text : str
        The title (``\\n`` starts a new line).
    **kwargs
        Passed to :meth:`matplotlib.figure.Figure.suptitle`.

    Returns
    -------
    matplotlib.text.Text
        The title.
    """
    return fig.suptitle(figure_wide(text), **kwargs)


def figure_wide(text: str, scale: float = 1.0) -> str:
    """``text`` wrapped onto lines as wide as a figure of the current mode.

    Parameters
    ----------
    text : str
        The text (``\\n`` starts a new line).
    scale : float
        Font size relative to the base font (0.83 for "small"): smaller text takes more
        characters per line. [-]

    Returns
    -------
    str
        The wrapped text.
    """
    width = round((_LECTURE_FIGURE_CHARS if lecture_mode() else _REPORT_FIGURE_CHARS) / scale)
    return "\n".join(textwrap.fill(line, width, break_on_hyphens=False) for line in text.split("\n"))


def log_tick_label(value: float, pos: Any = None) -> str:
    """Label of a log-axis tick without mathtext: ``0.001`` ... ``1000`` as numbers, else ``10⁴``.

    Parameters
    ----------
    value : float
        Tick position.
    pos : Any
        Unused (the :class:`matplotlib.ticker.FuncFormatter` signature).

    Returns
    -------
    str
        The label; empty between decades.

    Examples
    --------
    >>> [log_tick_label(v) for v in (1e-4, 0.01, 1.0, 100.0, 1e5, 3.0)]
    ['10⁻⁴', '0.01', '1', '100', '10⁵', '']
    """
    if not value > 0 or not math.isfinite(value):
        return ""
    exponent = round(math.log10(value))
    if abs(value / 10.0**exponent - 1.0) > 1e-6:
        return ""
    return f"{value:g}" if -3 <= exponent <= 3 else "10" + str(exponent).translate(_SUPERSCRIPT)


def _finish(fig: Figure) -> None:
    """Log-axis labels without mathtext; in lecture mode wider lines, bigger markers and tick labels."""
    lecture = lecture_mode()
    for ax in fig.axes:
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale == "log":
                axis.set_major_locator(LogLocator(base=10.0, numticks=6 if lecture else 9))
                axis.set_major_formatter(FuncFormatter(log_tick_label))
                axis.set_minor_locator(NullLocator())  # minor ticks were most of the drawing time
        if lecture:  # ticks are made again at draw time, from these settings (not the rc context's)
            ax.tick_params(labelsize=LECTURE_FONT_PT, width=1.2, length=5)
    if lecture:
        for line in fig.findobj(Line2D):
            line.set_linewidth(line.get_linewidth() * LECTURE_LINE_SCALE)
            line.set_markersize(line.get_markersize() * LECTURE_LINE_SCALE)


@contextmanager
def _style() -> Iterator[None]:
    with mpl.rc_context(_rc()):
        yield


def teaching_figure(fn: Callable[..., Figure]) -> Callable[..., Figure]:
    """Decorator of a lecture's plot function: build the figure under the current mode's style.

    Parameters
    ----------
    fn : callable
        Returns a :class:`matplotlib.figure.Figure` made with :func:`new_figure`.

    Returns
    -------
    callable
        Same signature (``inspect.signature`` follows it); font sizes from the mode's rc,
        log-axis labels without mathtext, lecture-mode lines and ticks.
    """

    @functools.wraps(fn)
    def build(*args: Any, **kwargs: Any) -> Figure:
        with _style():
            fig = fn(*args, **kwargs)
            _finish(fig)
        return fig

    return build


def _tick_labels(ax: Axes) -> tuple[set[int], list[Text]]:
    """Ids of all tick-label texts of ``ax``, and those of the ticks drawn (inside the view)."""
    every, shown = set(), []
    for axis, (lo, hi) in ((ax.xaxis, sorted(ax.get_xlim())), (ax.yaxis, sorted(ax.get_ylim()))):
        for ticks in (axis.majorTicks, axis.minorTicks):
            for tick in ticks:
                every.update((id(tick.label1), id(tick.label2)))
        for tick in axis.get_major_ticks():
            loc = tick.get_loc()
            if loc is not None and lo <= loc <= hi:
                shown += [t for t in (tick.label1, tick.label2) if t.get_visible() and t.get_text().strip()]
    return every, shown


def _boxes(fig: Figure, renderer: Any) -> list[tuple[str, Any]]:
    """(label, window extent) of every visible text with content, and of every legend as one box."""
    legends = list(fig.findobj(Legend))
    skip = {id(t) for lg in legends for t in lg.findobj(Text)}
    texts = []
    for ax in fig.axes:
        every, shown = _tick_labels(ax)
        skip |= every
        texts += shown
    texts += [t for t in fig.findobj(Text) if id(t) not in skip and t.get_visible() and t.get_text().strip()]
    boxes = []
    for text in texts:
        box = text.get_window_extent(renderer)
        clip = text.get_clip_box() if text.get_clip_on() else None
        if clip is not None and not box.overlaps(clip):
            continue  # clipped away by its axes: not shown
        boxes.append((text.get_text().replace("\n", " ")[:60], box))
    for lg in legends:
        if lg.get_visible():
            boxes.append(("legend: " + ", ".join(t.get_text() for t in lg.get_texts())[:60], lg.get_window_extent(renderer)))
    return boxes


def text_overlaps(fig: Figure, *, tolerance_px: float = 1.0) -> list[str]:
    """Pairs of labels that collide, and labels that leave the figure (matplotlib's own text boxes).

    Draws the figure, then compares the window extent of every visible text (titles, axis and
    tick labels, annotations, figure labels) and of every legend box with every other.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to check.
    tolerance_px : float
        Boxes that overlap by at most this much (anti-aliasing) do not count. [pixels]

    Returns
    -------
    list of str
        One line per collision (``'a' overlaps 'b'``) or per label outside the figure; empty if none.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig) if fig.canvas is None or not hasattr(fig.canvas, "get_renderer") else fig.canvas
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes = _boxes(fig, renderer)
    page = fig.bbox
    found = []
    for i, (name_a, a) in enumerate(boxes):
        if a.x0 < page.x0 - tolerance_px or a.y0 < page.y0 - tolerance_px or a.x1 > page.x1 + tolerance_px or a.y1 > page.y1 + tolerance_px:
            found.append(f"{name_a!r} leaves the figure")
        for name_b, b in boxes[i + 1 :]:
            w = min(a.x1, b.x1) - max(a.x0, b.x0)
            h = min(a.y1, b.y1) - max(a.y0, b.y0)
            if w > tolerance_px and h > tolerance_px:
                found.append(f"{name_a!r} overlaps {name_b!r}")
    return found
