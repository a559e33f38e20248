"""Positions for search, labelling and analysis: :class:`~.state.Game`, :class:`~.state.State`,
:class:`~.state.Analysis` (:mod:`.state`), on the process's shared session."""
