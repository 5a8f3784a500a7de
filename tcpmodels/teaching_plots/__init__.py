"""Figures and widget panels for the teaching notebooks (``notebooks/teach_*.ipynb``).

One module per notebook; each has ``plot_*`` functions that take the slider values as
keyword arguments (units in the names) and return a :class:`matplotlib.figure.Figure`
built without pyplot, and a ``*_widget`` function that puts sliders above them
(:func:`tcpmodels.widgets.figure_widget`). The notebooks call the plot
function once for the static figure (what papermill and the HTML report show) and then
display the widget (what students move in JupyterLab).
"""

from tcpmodels.widgets import figure_widget, render, save_figure

__all__ = ["figure_widget", "render", "save_figure"]
