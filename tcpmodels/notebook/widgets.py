"""Widget plumbing shared by the teaching notebooks and the paper notebooks: lecture mode, the controls, a panel that redraws its figures in place.

The notebooks may not define functions, so every ipywidgets callback lives here.
:func:`figure_widget` observes a dict of controls and calls :func:`render` on every
change; :func:`render` calls each plot function with the slider values it accepts and puts
the returned figure, as a PNG, into an :class:`ipywidgets.Image` of the panel (or, for a
``ValueError``, its message into the panel's message line, so that an out-of-domain slider
combination reads as a sentence in the lecture, not as a traceback).

Redrawing in place: the panel's images are widgets whose ``value`` is replaced, one state
message per figure. The front end swaps the ``src`` of the same ``<img>``, so the old figure
stays on screen until the new one is decoded: no empty frame and no jump of the page. (An
:class:`ipywidgets.Output` is cleared and refilled by the front end on every change, and the
new ``<img>`` has no height until it is decoded.) The value is a ``data:`` URL, not PNG bytes:
ipywidgets shows bytes through a blob URL, and Chromium swapping one blob URL for another left
the image without pixels for one frame in 6 of 60 swaps (4 of 30 with the old URL revoked, as
ipywidgets does, 2 of 30 without), against 0 of 60 for data URLs (a test page in Debian's
Chromium; the browser test saw the same frames in the heavy-tails lecture). The images also
need no front end at all: under papermill/nbclient the panel is widget state only (capturing
displays into an Output under nbclient intermittently never finished the cell: nbclient #312,
nbconvert #1921).

Lecture mode (:func:`lecture_mode`, the environment variable ``TCPMODELS_LECTURE=1``, e.g.
``TCPMODELS_LECTURE=1 make lab``) puts the controls in one column as wide as the notebook with
17-pixel labels and larger slider handles, and :mod:`tcpmodels.teaching.style` draws the
figures for a projector at 1024x768.
"""

from __future__ import annotations

import base64
import functools
import inspect
import io
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from matplotlib.figure import Figure

from tcpmodels._docstrings import SharedEntries

__all__ = ["LECTURE_CLASS", "LECTURE_DPI", "LECTURE_ENV", "REPORT_DPI", "dropdown", "figure_dpi", "figure_widget",
           "float_slider", "int_slider", "lecture_mode", "log_slider", "render", "save_figure"]  # fmt: skip

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    description : str
        Label, with the unit in brackets.
    readout_format : str
        Format of the number shown beside the slider.
""")

#: Prefix of a panel image's value (see the module docstring).
_DATA_URL = b"data:image/png;base64,"
#: The environment variable that switches lecture mode on (``1``, ``true``, ``yes``, ``on``).
LECTURE_ENV = "TCPMODELS_LECTURE"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")
#: Resolution of the panels' figures in lecture mode. [dots/in]
LECTURE_DPI = 96
#: Resolution of the panels' figures otherwise (an 11-inch figure is 880 pixels wide). [dots/in]
REPORT_DPI = 80
#: Class of a panel in lecture mode; :data:`_LECTURE_CSS` applies to it.
LECTURE_CLASS = "tm-lecture"
#: Projector-sized controls: ipywidgets 8's own CSS variables, set on the panel only.
_LECTURE_CSS = f"""<style>
.{LECTURE_CLASS} {{
  --jp-widgets-font-size: 17px; --jp-widgets-inline-height: 34px; --jp-widgets-slider-handle-size: 22px;
  --jp-widgets-slider-track-thickness: 8px; --jp-widgets-inline-label-width: 45%;
}}
.{LECTURE_CLASS} .widget-label, .{LECTURE_CLASS} .widget-readout, .{LECTURE_CLASS} select,
.{LECTURE_CLASS} .tm-message {{ font-size: 17px; }}
.{LECTURE_CLASS} .widget-readout {{ min-width: 5em; }}
</style>"""


def lecture_mode() -> bool:
    """Whether lecture mode is on: the environment variable :data:`LECTURE_ENV`.

    Returns
    -------
    bool
        True for ``1``, ``true``, ``yes`` or ``on`` (any case); False if unset, empty, ``0``,
        ``false``, ``no`` or ``off``.

    Raises
    ------
    ValueError
        For any other value, naming the variable, the value and the accepted ones.
    """
    value = os.environ.get(LECTURE_ENV, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{LECTURE_ENV} must be one of {', '.join(_TRUE)} (on) or {', '.join(v for v in _FALSE if v)} or unset "
                     f"(off); got {os.environ[LECTURE_ENV]!r}")  # fmt: skip


def figure_dpi() -> float:
    """Resolution a panel renders its figures at. [dots/in]

    Returns
    -------
    float
        :data:`LECTURE_DPI` in lecture mode, else :data:`REPORT_DPI`.
    """
    return float(LECTURE_DPI if lecture_mode() else REPORT_DPI)


def _control(cls: type[widgets.Widget], description: str, **kwargs: Any) -> widgets.Widget:
    """A control of class ``cls`` labelled ``description``, its label and width sized for the current mode.

    Sliders pass ``continuous_update=False`` (redraw on release, not on every pixel of a drag).
    """
    return cls(description=description, style={"description_width": "45%" if lecture_mode() else "13em"},
               layout={"width": "100%" if lecture_mode() else "34em"}, **kwargs)  # fmt: skip


def save_figure(fig: Figure, figures_dir: str | Path, name: str, dpi: int = 120) -> Path:
    """Save ``fig`` as ``<figures_dir>/<name>.png``, creating the folder.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to save.
    figures_dir : str or Path
        Folder for the PNG (created if missing).
    name : str
        File name without the ``.png`` suffix.
    dpi : int
        Resolution. [dots/inch]

    Returns
    -------
    Path
        The written file.
    """
    out_dir = Path(figures_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.png"
    fig.savefig(path, dpi=dpi)
    return path


def _accepted(fn: Callable[..., Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``values`` that ``fn`` takes as keyword arguments."""
    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(values)
    return {k: v for k, v in values.items() if k in params}


def _png(fig: Figure, dpi: float) -> tuple[bytes, int, int]:
    """The figure as PNG bytes at ``dpi``, with its size in pixels.

    One draw (the layout engine runs inside it) and a fast PNG encoding: ``savefig`` draws twice
    when the figure has a layout engine (the first time with rendering off, for the layout) and
    compresses harder, 0.12 s more of the 0.37 s a lecture figure took (measured on the BDP figure).
    Glyphs are rasterised without hinting: another 12 % (median of 10 renders of the BDP figure,
    0.217 -> 0.191 s CPU), the text as legible.
    """
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    fig.set_dpi(dpi)
    fig.patch.set_facecolor("white")
    canvas = FigureCanvasAgg(fig)
    with mpl.rc_context({"text.hinting": "no_hinting"}):
        canvas.draw()
    width, height = canvas.get_width_height()
    buf = io.BytesIO()
    Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba()).save(buf, format="png", compress_level=1)
    return buf.getvalue(), width, height


def _figure_area(n_figures: int) -> widgets.VBox:
    """The part of a panel that shows figures: one Image per plot function, then a message line."""
    images = [widgets.Image(format="url", layout={"max_width": "100%", "height": "auto", "display": "none"})
              for _ in range(n_figures)]  # fmt: skip
    message = widgets.HTML(value="", layout={"display": "none"})
    message.add_class("tm-message")
    area = widgets.VBox([*images, message])
    area.add_class("tm-figures")
    return area


def _show(area: widgets.VBox, pictures: Sequence[tuple[bytes, int, int] | None], errors: Sequence[str]) -> None:
    """Replace each image's bytes in place (a failed figure is hidden) and set the message line."""
    *images, message = area.children
    for image, picture in zip(images, pictures):
        if picture is None:
            image.layout.display = "none"
            continue
        data, width, height = picture
        with image.hold_sync():  # one state message: the image and its size together
            image.value, image.width, image.height = _DATA_URL + base64.b64encode(data), str(width), str(height)
        image.layout.display = None
    import html

    message.value = "<br>".join(html.escape(line) for line in errors)
    message.layout.display = None if errors else "none"


def render(
    plot_fns: Sequence[Callable[..., Figure]],
    fixed: Mapping[str, Any] | None = None,
    out: Any = None,
    **values: Any,
) -> list[Figure]:
    """Call each plot function with the slider values it accepts and show the figures.

    The callback of every teaching panel (bound with :func:`functools.partial`, so
    the notebook needs no ``def`` or ``lambda``).

    Parameters
    ----------
    plot_fns : sequence of callables
        Functions returning a :class:`matplotlib.figure.Figure`.
    fixed : mapping, optional
        Keyword arguments that are not sliders (e.g. ``n_points`` in quick mode).
    out : ipywidgets.VBox, optional
        A panel's figure area (``figure_widget(...).children[1]``): each figure replaces the bytes
        of its image in place, and the error lines go to its message line. ``None``: display the
        figures in the current output and print the error lines.
    **values
        Current slider values, named as the plot functions' parameters (units in names).

    Returns
    -------
    list of Figure
        The figures made (built without pyplot, so nothing accumulates in pyplot's list of open
        figures).
    """
    merged = {**(fixed or {}), **values}
    figures, pictures, errors = [], [], []
    dpi = figure_dpi()
    for fn in plot_fns:
        try:
            fig = fn(**_accepted(fn, merged))
        except ValueError as exc:  # an impossible slider combination: say why, in one line
            errors.append(f"{getattr(fn, '__name__', 'plot')}: {exc}")
            pictures.append(None)
            continue
        figures.append(fig)
        pictures.append(_png(fig, dpi) if out is not None else None)
    if out is None:
        from IPython.display import display

        for line in errors:
            print(line)
        for fig in figures:
            display(fig)
        return figures
    _show(out, pictures, errors)
    return figures


def _redraw(plot_fns, fixed, controls, out, change=None) -> None:
    """Observer of every control: :func:`render` into ``out`` with all controls' current values."""
    render(plot_fns, fixed, out, **{name: control.value for name, control in controls.items()})


def figure_widget(
    plot_fns: Callable[..., Figure] | Sequence[Callable[..., Figure]],
    controls: Mapping[str, Any],
    *,
    fixed: Mapping[str, Any] | None = None,
    columns: int = 2,
) -> widgets.VBox:
    """A panel of controls above the figures, redrawn in place when a control changes.

    Parameters
    ----------
    plot_fns : callable or sequence of callables
        Plot functions (see :func:`render`).
    controls : mapping of str to ipywidgets.ValueWidget
        Keyword name -> control.
    fixed : mapping, optional
        Extra keyword arguments passed on every redraw.
    columns : int
        Controls per row (one in lecture mode).

    Returns
    -------
    ipywidgets.VBox
        ``children[0]`` holds the rows of controls, ``children[1]`` the figure area: one
        :class:`ipywidgets.Image` per plot function and a message line (an :class:`ipywidgets.HTML`).
        In lecture mode the panel has the class :data:`LECTURE_CLASS` and a third child, the style
        sheet that enlarges its controls.
    """

    fns = (plot_fns,) if callable(plot_fns) else tuple(plot_fns)
    if not fns:
        raise ValueError("plot_fns must name at least one plot function")
    if columns < 1:
        raise ValueError(f"columns [-] must be >= 1; got {columns}")
    lecture = lecture_mode()
    per_row = 1 if lecture else columns
    controls = dict(controls)
    items = list(controls.values())
    rows = [widgets.HBox(items[i : i + per_row]) for i in range(0, len(items), per_row)]
    area = _figure_area(len(fns))
    redraw = functools.partial(_redraw, fns, dict(fixed or {}), controls, area)
    for control in items:
        control.observe(redraw, names="value")
    redraw()
    if not lecture:
        return widgets.VBox([widgets.VBox(rows), area])
    panel = widgets.VBox([widgets.VBox(rows), area, widgets.HTML(_LECTURE_CSS)])
    panel.add_class(LECTURE_CLASS)
    return panel


def dropdown(description: str, options: Sequence[Any], value: Any) -> widgets.Dropdown:
    """A :class:`ipywidgets.Dropdown` laid out like the sliders.

    Parameters
    ----------
    description : str
        Label.
    options : sequence
        The choices.
    value : Any
        Initial choice, one of ``options``.

    Returns
    -------
    ipywidgets.Dropdown
        Sized for the current mode.
    """
    return _control(widgets.Dropdown, description, options=list(options), value=value)


@_PARAMETERS.fill
def log_slider(
    description: str, value: float, low: float, high: float, *, steps_per_decade: int = 20, readout_format: str = ".3g"
) -> widgets.FloatLogSlider:
    """A :class:`ipywidgets.FloatLogSlider` from ``low`` to ``high`` (values, not exponents).

    Parameters
    ----------
    {description}
    value : float
        Initial value (clamped into the range by ipywidgets).
    low, high : float
        Range, 0 < low < high.
    steps_per_decade : int
        Keyboard/drag steps per factor of ten. [-]
    {readout_format}

    Returns
    -------
    ipywidgets.FloatLogSlider
        Redraws on release (``continuous_update=False``).
    """

    if not 0 < low < high:
        raise ValueError(f"log slider {description!r}: need 0 < low < high; got low={low}, high={high}")
    return _control(widgets.FloatLogSlider, description, value=value, base=10, min=math.log10(low),
                    max=math.log10(high), step=1.0 / steps_per_decade, readout_format=readout_format,
                    continuous_update=False)  # fmt: skip


@_PARAMETERS.fill
def float_slider(
    description: str, value: float, low: float, high: float, step: float, *, readout_format: str = ".3g"
) -> widgets.FloatSlider:
    """A :class:`ipywidgets.FloatSlider` that redraws on release (not on every pixel of a drag).

    Parameters
    ----------
    {description}
    value : float
        Initial value.
    low, high : float
        Range.
    step : float
        Step of the slider and the arrow keys.
    {readout_format}

    Returns
    -------
    ipywidgets.FloatSlider
        With ``continuous_update=False``.
    """

    return _control(widgets.FloatSlider, description, value=value, min=low, max=high, step=step,
                    readout_format=readout_format, continuous_update=False)  # fmt: skip


@_PARAMETERS.fill
def int_slider(description: str, value: int, low: int, high: int, step: int = 1) -> widgets.IntSlider:
    """A :class:`ipywidgets.IntSlider` that redraws on release.

    Parameters
    ----------
    {description}
    value : int
        Initial value.
    low, high : int
        Range.
    step : int
        Step of the slider and the arrow keys.

    Returns
    -------
    ipywidgets.IntSlider
        With ``continuous_update=False``.
    """

    return _control(widgets.IntSlider, description, value=value, min=low, max=high, step=step,
                    continuous_update=False)
