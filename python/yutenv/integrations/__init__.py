"""Bridges to other libraries, each behind its extra and imported only when asked for:
Stable-Baselines3 (:mod:`.sb3`), RLlib (:mod:`.rllib`), Tianshou (:mod:`.tianshou`) and OpenSpiel (:mod:`.openspiel`). Ray-distributed
self-play and evaluation is the training layer's: :mod:`yutenv.az.distributed` (``yutenv.distributed``)."""
