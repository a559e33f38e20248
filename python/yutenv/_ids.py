"""The package's version and the Gymnasium id its env is registered under.

Declared in a leaf module so that the layers below the package root (the dataset exporters)
read them without importing ``yutenv`` itself, which imports every layer; ``yutenv.__version__``
and ``yutenv.ENV_ID`` are these.
"""

from __future__ import annotations

__version__ = "0.1.0"

ENV_ID = "yutenv/Yut-v0"
