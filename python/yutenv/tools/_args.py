"""Command-line helpers shared by the benchmark programs."""

from __future__ import annotations

import argparse
from typing import Sequence

__all__ = ["setups"]


def setups(ap: argparse.ArgumentParser, text: str, known: Sequence[str]) -> list[str]:
    """The comma-separated setups of a ``--setups`` option, each one of ``known``; an unknown one
    ends the program through ``ap.error`` naming the known ones."""
    chosen = [s for s in text.split(",") if s]
    for s in chosen:
        if s not in known:
            ap.error(f"unknown setup {s!r}; known: {', '.join(known)}")
    return chosen
