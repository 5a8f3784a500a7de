"""The shared broadcasting and domain-check helper used by every formula model."""

import numpy as np
import pandas as pd
import pytest

from tcpmodels._arrays import broadcast, check_range, wrap


def test_scalar_in_scalar_out():
    args, kind = broadcast(a=2.0, b=3)
    out = wrap(args["a"] * args["b"], kind)
    assert isinstance(out, float) and out == 6.0


def test_array_broadcasts_against_scalar():
    args, kind = broadcast(a=[1.0, 2.0], b=3.0)
    out = wrap(args["a"] * args["b"], kind)
    assert isinstance(out, np.ndarray) and out.tolist() == [3.0, 6.0]


def test_series_keeps_index_and_name():
    s = pd.Series([1.0, 2.0], index=["x", "y"], name="rtt_s")
    args, kind = broadcast(a=s, b=np.array([10.0, 20.0]))
    out = wrap(args["a"] * args["b"], kind)
    assert isinstance(out, pd.Series) and out.index.tolist() == ["x", "y"] and out.name == "rtt_s"
    assert out.tolist() == [10.0, 40.0]


def test_series_with_different_indexes_is_an_error():
    with pytest.raises(ValueError, match="b and a are pandas Series with different indexes"):
        broadcast(a=pd.Series([1.0], index=[0]), b=pd.Series([1.0], index=[1]))


def test_shapes_that_do_not_broadcast_are_named():
    with pytest.raises(ValueError, match=r"a\(2,\), b\(3,\)"):
        broadcast(a=[1.0, 2.0], b=[1.0, 2.0, 3.0])


def test_non_numeric_is_a_type_error():
    with pytest.raises(TypeError, match="rtt_s must be numeric"):
        broadcast(rtt_s="fast")


def test_check_range_message_names_parameter_unit_value_and_range():
    with pytest.raises(ValueError, match=r"^loss_rate \[-\] must be in \(0, 1\]; got 0$"):
        check_range("loss_rate", 0.0, unit="-", low=0, high=1, low_open=True)
    with pytest.raises(ValueError, match=r"got -1 \(2 values out of range\)"):
        check_range("rtt_s", [-1.0, 0.5, -2.0], unit="s", low=0, low_open=True)


def test_check_range_lets_nan_through():
    check_range("loss_rate", [np.nan, 0.5], unit="-", low=0, high=1, low_open=True)
