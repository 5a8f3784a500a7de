"""Widget plumbing shared by the teaching notebooks and the paper notebooks: a callback that displays figures, a panel builder.

The notebooks may not define functions, so every ipywidgets callback lives here.
:func:`figure_widget` observes a dict of controls and calls :func:`render` on every
change; :func:`render` calls each plot function with the slider values it accepts
and shows the returned figure (or the error message of a ``ValueError``, so that an
out-of-domain slider combination reads as a sentence in the lecture, not as a
traceback).

The panel writes its :class:`ipywidgets.Output` from the kernel
(``Output.outputs``) instead of capturing displays into it
(``with out: display(...)``, which is what :func:`ipywidgets.interactive_output`
does). Capture routes the figure through the front end by message id; under
papermill/nbclient that path intermittently never finishes the cell (measured here:
with both cores busy, 10 of 20 runs of ``teach_mptcp_lia.ipynb`` hung in the widget
cell with kernel and client both idle; upstream reports: nbclient #312, nbconvert
#1921, #2003, #2029). Writing the outputs as widget state needs no front end at all.
"""

from __future__ import annotations

import functools
import inspect
import io
import math
from contextlib import redirect_stdout
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from matplotlib.figure import Figure


__all__ = ["figure_widget", "render", "save_figure", "log_slider", "float_slider", "int_slider"]

#: Layout shared by all sliders: a readable description column and a wide track.
_STYLE = {"description_width": "13em"}
_LAYOUT = {"width": "34em"}


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
    out : ipywidgets.Output, optional
        Where to show the result: its ``outputs`` are replaced by the figures and
        the error lines (as widget state, see the module docstring). ``None``:
        display in the current output and print the error lines.
    **values
        Current slider values, named as the plot functions' parameters (units in names).

    Returns
    -------
    list of Figure
        The figures shown (figures are built without pyplot, so nothing accumulates
        in pyplot's list of open figures).
    """
    merged = {**(fixed or {}), **values}
    figures, errors = [], []
    for fn in plot_fns:
        try:
            figures.append(fn(**_accepted(fn, merged)))
        except ValueError as exc:  # an impossible slider combination: say why, in one line
            errors.append(f"{fn.__name__}: {exc}")
    if out is None:
        from IPython.display import display

        for line in errors:
            print(line)
        for fig in figures:
            display(fig)
        return figures
    out.outputs = ()
    if errors:
        out.append_stdout("".join(line + "\n" for line in errors))
    for fig in figures:
        out.append_display_data(fig)
    return figures


def _redraw(plot_fns, fixed, controls, out, change=None) -> None:
    """Observer of every control: :func:`render` into ``out`` with all controls' current values."""
    with redirect_stdout(io.StringIO()):  # nothing may leak into the cell that built the panel
        render(plot_fns, fixed, out, **{name: control.value for name, control in controls.items()})


def figure_widget(
    plot_fns: Callable[..., Figure] | Sequence[Callable[..., Figure]],
    controls: Mapping[str, Any],
    *,
    fixed: Mapping[str, Any] | None = None,
    columns: int = 2,
) -> widgets.VBox:
    """A panel of controls above an output area that redraws the figures when a control changes.

    Parameters
    ----------
    plot_fns : callable or sequence of callables
        Plot functions (see :func:`render`).
    controls : mapping of str to ipywidgets.ValueWidget
        Keyword name -> control.
    fixed : mapping, optional
        Extra keyword arguments passed on every redraw.
    columns : int
        Controls per row.

    Returns
    -------
    ipywidgets.VBox
        ``children[0]`` holds the controls, ``children[1]`` is the :class:`ipywidgets.Output`.
    """

    fns = (plot_fns,) if callable(plot_fns) else tuple(plot_fns)
    if not fns:
        raise ValueError("plot_fns must name at least one plot function")
    if columns < 1:
        raise ValueError(f"columns [-] must be >= 1; got {columns}")
    controls = dict(controls)
    items = list(controls.values())
    rows = [widgets.HBox(items[i : i + columns]) for i in range(0, len(items), columns)]
    out = widgets.Output()
    redraw = functools.partial(_redraw, fns, dict(fixed or {}), controls, out)
    for control in items:
        control.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.VBox(rows), out])


def log_slider(
    description: str, value: float, low: float, high: float, *, steps_per_decade: int = 20, readout_format: str = ".3g"
) -> widgets.FloatLogSlider:
    """A :class:`ipywidgets.FloatLogSlider` from ``low`` to ``high`` (values, not exponents).

    Parameters
    ----------
    description : str
        Label, with the unit in brackets.
    value : float
        Initial value (clamped into the range by ipywidgets).
    low, high : float
        Range, 0 < low < high.
    steps_per_decade : int
        Keyboard/drag steps per factor of ten. [-]
    readout_format : str
        Format of the number shown beside the slider.

    Returns
    -------
    ipywidgets.FloatLogSlider
        Redraws on release (``continuous_update=False``).
    """

    if not 0 < low < high:
        raise ValueError(f"log slider {description!r}: need 0 < low < high; got low={low}, high={high}")
    return widgets.FloatLogSlider(
        value=value, base=10, min=math.log10(low), max=math.log10(high), step=1.0 / steps_per_decade,
        description=description, readout_format=readout_format, continuous_update=False,
        style=_STYLE, layout=_LAYOUT,
    )  # fmt: skip


def float_slider(
    description: str, value: float, low: float, high: float, step: float, *, readout_format: str = ".3g"
) -> widgets.FloatSlider:
    """A :class:`ipywidgets.FloatSlider` that redraws on release (not on every pixel of a drag).

    Parameters
    ----------
    description : str
        Label, with the unit in brackets.
    value : float
        Initial value.
    low, high : float
        Range.
    step : float
        Step of the slider and the arrow keys.
    readout_format : str
        Format of the number shown beside the slider.

    Returns
    -------
    ipywidgets.FloatSlider
        With ``continuous_update=False``.
    """

    return widgets.FloatSlider(
        value=value, min=low, max=high, step=step, description=description, readout_format=readout_format,
        continuous_update=False, style=_STYLE, layout=_LAYOUT,
    )  # fmt: skip


def int_slider(description: str, value: int, low: int, high: int, step: int = 1) -> widgets.IntSlider:
    """A :class:`ipywidgets.IntSlider` that redraws on release.

    Parameters
    ----------
    description : str
        Label, with the unit in brackets.
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

    return widgets.IntSlider(
        value=value, min=low, max=high, step=step, description=description, continuous_update=False,
        style=_STYLE, layout=_LAYOUT,
    )  # fmt: skip
