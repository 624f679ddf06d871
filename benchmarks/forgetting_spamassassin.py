"""Prequential accuracy on SpamAssassin in time order with and without the service's forgetting.

The records go through :class:`consumers.state.PartitionedModel` (one partition, the record's
position in the stream as its offset): the same ``--half-life`` decay the service applies, not
a re-implementation of it. Prints one line per half-life (docs/service.md quotes them).

    python3 benchmarks/forgetting_spamassassin.py [--model spam-filter] [--half-life 0 500 ...]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Hashable
from typing import Any

from consumers.state import PartitionedModel, PartitionState, model_factory
from streamnb.datasets import iter_spamassassin_stream
from streamnb.evaluate.prequential import prequential
from streamnb.features import tokenize_email

KEY = ("spamassassin", 0)


class ServiceForgetting:
    """The service's partition state as a river-style classifier for ``prequential``."""

    def __init__(self, model: str, half_life: float) -> None:
        factory = model_factory(model)
        self.partitioned = PartitionedModel(factory, half_life=half_life)
        self.partitioned.take(KEY, PartitionState(factory(), 0))
        self.partitioned.rebuild()
        self.offset = 0

    def predict_proba_one(self, x: dict) -> dict[Hashable, float]:
        return self.partitioned.model.predict_proba_one(x)

    def learn_one(self, x: dict, y: Any) -> None:
        self.partitioned.learn(KEY, [x], [y], [self.offset])
        self.offset += 1
        self.partitioned.advance(KEY, self.offset)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="spam-filter")
    parser.add_argument("--half-life", type=float, nargs="+", default=[0, 4000, 1000, 250])
    args = parser.parse_args()
    messages = list(iter_spamassassin_stream())
    # sorted: the model's sums do not depend on the string hash seed
    stream = [(dict.fromkeys(sorted(tokenize_email(m.text)), True), m.label) for m in messages]
    print(f"SpamAssassin, {len(stream)} messages in time order, model {args.model}")
    for half_life in args.half_life:
        start = time.perf_counter()
        result = prequential(ServiceForgetting(args.model, half_life), stream, positive="spam")
        second = result.labels[len(stream) // 2:]
        late = sum(p == y for p, y in zip(result.predicted[len(stream) // 2:], second,
                                          strict=True)) / len(second)
        print(f"half-life {half_life:>6g}: accuracy {result.accuracy():.4f}, second half "
              f"{late:.4f}, 1-ROCA% {result.one_minus_roca():.3f} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
