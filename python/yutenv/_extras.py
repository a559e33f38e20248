"""Imports of the optional extras' modules, with one clear error when an extra is missing.

An optional module of yutenv (``yutenv.integrations.sb3``, ``yutenv.integrations.rllib``, ``yutenv.az.distributed``,
``yutenv.az``'s trainer, ...) imports what its extra installs through :func:`import_extra`,
so that a user without the extra reads which one to install instead of a bare
``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["import_extra"]


def import_extra(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module``; if it (or a module it needs) is not installed, raise
    :class:`~yutenv.errors.MissingExtraError` naming ``feature``, the ``extra`` and the pip
    command."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:  # not installed, or installed without what it needs (ray without ray[tune])
        # One traceback, this one: the ModuleNotFoundError says nothing more (it stays as __context__).
        raise MissingExtraError(feature, extra, e.name or module) from None
    except ImportError as e:  # installed but broken (a missing shared library...): keep its traceback
        raise MissingExtraError(feature, extra, e.name or module) from e
