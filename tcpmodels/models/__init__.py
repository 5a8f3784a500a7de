"""Formula models: pure functions over floats, numpy arrays and pandas Series, SI units in names.

No I/O, printing or plotting here; randomness only through a ``numpy.random.Generator``.
"""
