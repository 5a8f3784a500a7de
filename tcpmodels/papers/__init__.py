"""tcpmodels.papers (see the package docstring of tcpmodels)."""
