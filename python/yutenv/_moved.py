"""The import paths of the flat layout, kept working after the modules moved into subpackages.

yutenv's modules used to sit side by side (``yutenv.gym_env``, ``yutenv.state``, ...). They
now live in subpackages, one layer each (see the package docstring); :data:`MOVED` maps every old module to its new
home. :func:`install` puts a finder on ``sys.meta_path`` that answers an old name with the
*same module object* as the new one (not a copy): ``import yutenv.gym_env``,
``from yutenv.state import Game``, ``python -m yutenv.bench``, monkeypatching
``yutenv.state._session`` and unpickling objects saved under the old paths all keep working,
and a class has one identity whichever path named it.

No file is left at the old paths, so that edits made elsewhere to an old file follow git's
rename to the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import CodeType, ModuleType
from typing import Sequence

#: Old module -> the module it moved to.
MOVED: dict[str, str] = {
    "yutenv.client": "yutenv._wire.client",
    "yutenv.server": "yutenv.connection.server",
    "yutenv.core": "yutenv.envs.batch",
    "yutenv.config": "yutenv.envs.config",
    "yutenv.gym_env": "yutenv.envs.gym_env",
    "yutenv.vector": "yutenv.envs.vector",
    "yutenv.pettingzoo": "yutenv.envs.pettingzoo",
    "yutenv.pettingzoo_parallel": "yutenv.envs.pettingzoo_parallel",
    "yutenv.state": "yutenv.positions.state",
    "yutenv.datasets": "yutenv.data.datasets",
    "yutenv.sb3": "yutenv.integrations.sb3",
    "yutenv.rllib": "yutenv.integrations.rllib",
    "yutenv.openspiel": "yutenv.integrations.openspiel",
    # Short names of integrations added since, beside their kin above.
    "yutenv.torchrl": "yutenv.integrations.torchrl",
    "yutenv.tianshou": "yutenv.integrations.tianshou",
    "yutenv.distributed": "yutenv.az.distributed",
    "yutenv.bench": "yutenv.tools.bench_envs",
    "yutenv.bench_sb3": "yutenv.tools.bench_sb3",
    "yutenv.demo": "yutenv.tools.demo",
    "yutenv.cli": "yutenv.tools.cli",
    "yutenv.evaluate": "yutenv.evaluation.evaluate",
    "yutenv.stats": "yutenv.evaluation.stats",
    # Second moves: library code out of tools/ into evaluation/, Ray self-play into az/, and
    # names that say which ladder and which benchmark a module holds.
    "yutenv.tools.evaluate": "yutenv.evaluation.evaluate",
    "yutenv.tools.ladder": "yutenv.evaluation.ladder",
    "yutenv.tools.stats": "yutenv.evaluation.stats",
    "yutenv.tools.bench": "yutenv.tools.bench_envs",
    "yutenv.integrations.distributed": "yutenv.az.distributed",
    "yutenv.az.ladder": "yutenv.az.judge",
    "yutenv.az.bench": "yutenv.az.bench_net",
}


class _AliasLoader(importlib.abc.Loader):
    """Loads an old name as the module it moved to."""

    def __init__(self, new: str) -> None:
        self.new = new
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system set the alias's spec on the module: give it its own back.
        module.__spec__ = self._spec

    def get_code(self, fullname: str) -> CodeType:
        """``python -m <old name>``: run the new module as ``__main__``."""
        src = f"import runpy\nrunpy.run_module({self.new!r}, run_name='__main__', alter_sys=True)\n"
        return compile(src, f"<{fullname}: moved to {self.new}>", "exec")


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of :data:`MOVED`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def install() -> None:
    """Answer the old names from now on (idempotent). Old names whose new module is already
    imported are bound at once, so that importing one later does not rebind the package
    attribute of the same name (``yutenv.evaluate`` is the function, not the module); the
    others are bound as the package attributes that importing them would have made."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
    for old, new in MOVED.items():
        module = sys.modules.get(new)
        parent, _, child = old.rpartition(".")
        if module is not None and old not in sys.modules and parent in sys.modules:
            sys.modules[old] = module
            if not hasattr(sys.modules[parent], child):  # as importing it would have bound it
                setattr(sys.modules[parent], child, module)
