"""Figures and widget panels for the teaching notebooks (``notebooks/teach_*.ipynb``).

One module per notebook: :mod:`.cubic` (``teach_cubic_vs_reno``), :mod:`.bdp`, :mod:`.throughput`,
:mod:`.mptcp`, :mod:`.heavytail`, :mod:`.traces`, :mod:`.bufferbloat`; :mod:`.style` holds the lecture-mode
figure style they share. Each has ``plot_*`` functions that take the slider values as keyword arguments (units
in the names) and return a :class:`matplotlib.figure.Figure` built without pyplot, and a ``*_widget`` function
that puts sliders above them (:func:`tcpmodels.notebook.widgets.figure_widget`). The notebooks call the plot
function once for the static figure (what papermill and the HTML report show) and then display the widget
(what students move in JupyterLab).

The package exports the widget helpers and, so that ``from tcpmodels import teaching`` (the CUBIC notebook's
form) keeps working, the names of :mod:`.cubic`.
"""

from tcpmodels.notebook.widgets import figure_widget, render, save_figure
from tcpmodels.teaching.cubic import (
                                      PARAMETERS,
                                      bottleneck_table,
                                      cubic_vs_reno_summary,
                                      cubic_vs_reno_widget,
                                      plot_cubic_vs_reno,
)

__all__ = ["figure_widget", "render", "save_figure", "PARAMETERS", "bottleneck_table",
           "cubic_vs_reno_summary", "cubic_vs_reno_widget", "plot_cubic_vs_reno"]
