"""The package's version and its Gymnasium id, declared once for every layer (the top-level
package re-exports both; pyproject.toml reads the version from here)."""

from __future__ import annotations

__version__ = "0.1.0"

ENV_ID = "yutenv/Yut-v0"
"""The id under which ``import yutenv`` registers :class:`yutenv.YutEnv` with Gymnasium."""
