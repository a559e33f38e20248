"""Bridges to other libraries, each behind its extra and imported only when asked for:
Stable-Baselines3 (:mod:`.sb3`), RLlib (:mod:`.rllib`), OpenSpiel (:mod:`.openspiel`) and
Ray-distributed self-play and evaluation (:mod:`.distributed`)."""
