"""The front ends: Gymnasium (:mod:`.gym_env`), vector (:mod:`.vector`), PettingZoo AEC
(:mod:`.pettingzoo`) and parallel (:mod:`.pettingzoo_parallel`), their shared options
(:mod:`.config`), and the one :class:`~.batch.Batch` they all step through (:mod:`.batch`)."""
