"""What the notebooks call before and around their results, below everything that draws or measures.

- :mod:`tcpmodels.notebook.params`  typed notebook parameters checked before any work, and the project's folders
  found from wherever a notebook runs (standard library only).
- :mod:`tcpmodels.notebook.widgets`  the widget plumbing of the teaching and paper notebooks: lecture mode, the
  controls, a panel that redraws its figures in place, saving figures.

In the bottom layers (beside ``records`` and ``stats``): the papers' plots use the widgets too, so they cannot
live in :mod:`tcpmodels.teaching`.
"""
