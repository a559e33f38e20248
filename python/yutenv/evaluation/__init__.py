"""Policies measured against agents: head-to-head evaluation (:mod:`.evaluate`), ladders of
agents on a Bradley-Terry Elo scale (:mod:`.ladder`), the per-move error rate against a reference
search (:mod:`.grade`), their result types and the published scale
of the built-in agents (:mod:`.scale`), and the statistics of match results (:mod:`.stats`)."""
