"""The Examples sections of the formula models' docstrings are executed and must hold."""

import doctest
import importlib
import pkgutil

import pytest

import tcpmodels.models

MODULES = [m.name for m in pkgutil.iter_modules(tcpmodels.models.__path__, "tcpmodels.models.")]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {name}"
