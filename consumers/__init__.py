"""The Kafka classification service (``streamnb serve``), in parts that each do one thing.

- reading and committing Kafka, rebalances, checkpoints: :mod:`consumers.service`;
- the model (pure statistics): :mod:`consumers.state`, per-partition states and their sum;
- persistence: :mod:`consumers.snapshots` (files and changelog records) and
  :mod:`consumers.changelog` (the changelog topic);
- the edges: :mod:`consumers.config`, :mod:`consumers.messages` (decoding and dead-letter
  reasons), :mod:`consumers.publisher` (predictions out), :mod:`consumers.metrics`;
- development: :mod:`consumers.broker` (an embedded tansu broker), :mod:`consumers.demo`.

The operator guide is docs/service.md.
"""
