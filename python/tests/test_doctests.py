"""Every docstring example of the package written as a doctest (``>>>``) passes under doctest.

Examples that need a trained run, a cluster or real data are written as plain code blocks
(``Example::``) instead, so nothing that looks runnable is left unchecked.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import yutenv
from yutenv.errors import MissingExtraError

MODULES = sorted(m.name for m in pkgutil.walk_packages(yutenv.__path__, "yutenv.") if not m.name.endswith("__main__"))
# The modules whose examples are doctests: each must keep at least one (a test that tried
# nothing would pass for the wrong reason).
WITH_EXAMPLES = {
    "yutenv",
    "yutenv.envs.config",
    "yutenv.evaluation.evaluate",
    "yutenv.evaluation.ladder",
    "yutenv.envs.pettingzoo",
    "yutenv.envs.pettingzoo_parallel",
    "yutenv.evaluation.stats",
    "yutenv.az.schedule",
    "yutenv._specs",
}
assert {"yutenv", *MODULES} >= WITH_EXAMPLES, "a module of WITH_EXAMPLES moved: name its new home"


@pytest.mark.parametrize("name", ["yutenv", *MODULES])
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except MissingExtraError as e:
        pytest.skip(str(e))
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    if name in WITH_EXAMPLES:
        assert result.attempted > 0
