"""tcpmodels.experiments (see the package docstring of tcpmodels)."""
