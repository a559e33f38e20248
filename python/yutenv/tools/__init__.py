"""Programs: benchmarks (:mod:`.bench_envs`, :mod:`.bench_sb3`), the demo (:mod:`.demo`) and the
``yutenv`` console script (:mod:`.cli`). The library code they use lives in the layers below
(evaluation is :mod:`yutenv.evaluation`)."""
