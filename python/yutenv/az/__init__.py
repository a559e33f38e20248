"""AlphaZero-style self-play for yutenv (this minimal module exports :class:`SelfPlay`)."""

from .selfplay import SelfPlay, SelfPlaySummary

__all__ = ["SelfPlay", "SelfPlaySummary"]
