"""Programs and their library parts: head-to-head evaluation (:mod:`.evaluate`, :mod:`.stats`),
benchmarks (:mod:`.bench`, :mod:`.bench_sb3`), the demo (:mod:`.demo`) and the ``yutenv``
console script (:mod:`.cli`)."""
