"""The Kafka classification service (``streamnb serve``), in parts that each do one thing.

The sources are the repository's top-level folder ``consumers/``, installed as
``streamnb.consumers`` (pyproject.toml): the modules below are ``streamnb.consumers.<name>``.

- the poll loop, rebalances and shutdown: :mod:`.service`; one poll's batch: :mod:`.batch`;
  the Kafka clients and dead letters: :mod:`.clients`;
- exactly once: :mod:`.checkpoint` (flush, snapshot, changelog, commit, in that order) and
  :mod:`.recovery` (restore, the offset-gap check; :mod:`.logcheck` reads the log back);
- health: :mod:`.health` (readiness, the endpoint of :mod:`.endpoint`, the shutdown watchdog);
- the model (pure statistics): :mod:`.state`, per-partition states and their sum, with
  :mod:`.ownership`, :mod:`.translation`, :mod:`.drift`, :mod:`.candidates` and
  :mod:`.classify` (forgetting: :mod:`streamnb.stats.forgetting`);
- persistence: :mod:`.snapshots` (files and changelog records) and :mod:`.changelog` (the
  changelog topic);
- the edges: :mod:`.config`, :mod:`.messages` (decoding and dead-letter reasons),
  :mod:`.publisher` (predictions out), :mod:`.metrics`;
- development: :mod:`.broker` (an embedded tansu broker), :mod:`.demo`.

The operator guide is docs/service.md; docs/architecture.md lists which part owns what.
"""
