"""Type aliases shared by the public API's annotations."""

from __future__ import annotations

from typing import TypeAlias, Union

import numpy as np
import pandas as pd

#: A number, a numpy array or a pandas Series: what every formula model accepts and returns in kind
#: (see :mod:`tcpmodels._arrays`).
Numeric: TypeAlias = Union[float, np.ndarray, pd.Series]

__all__ = ["Numeric"]
