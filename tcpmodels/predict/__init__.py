"""tcpmodels.predict (see the package docstring of tcpmodels)."""
