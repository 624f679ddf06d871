"""The Kafka classification service (``streamnb serve``), in parts that each do one thing.

The sources are the repository's top-level folder ``consumers/``, installed as
``streamnb.consumers`` (pyproject.toml): the modules below are ``streamnb.consumers.<name>``.

- reading and committing Kafka, rebalances, checkpoints: :mod:`.service`;
- the model (pure statistics): :mod:`.state`, per-partition states and their sum;
- persistence: :mod:`.snapshots` (files and changelog records) and :mod:`.changelog` (the
  changelog topic);
- the edges: :mod:`.config`, :mod:`.messages` (decoding and dead-letter reasons),
  :mod:`.publisher` (predictions out), :mod:`.metrics`;
- development: :mod:`.broker` (an embedded tansu broker), :mod:`.demo`.

The operator guide is docs/service.md.
"""
