"""Prequential accuracy on SpamAssassin in time order with and without the service's forgetting
(``--half-life``) and drift reaction (``--drift-detector``).

The records go through :class:`streamnb.consumers.state.PartitionedModel` (one partition, the
record's position in the stream as its offset): the same decay and drift reaction the service
applies, not a re-implementation of them. Prints one line per half-life and detector
(docs/service.md quotes them). ``--then-sms`` appends the SMS Spam Collection in its order after
the e-mails: a real change of source (e-mail to SMS), the kind of drift a detector is for.

    python3 benchmarks/forgetting_spamassassin.py [--model spam-filter] [--half-life 0 500 ...]
        [--drift-detector none ddm page-hinkley] [--drift-decay 0.5] [--then-sms]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Hashable
from typing import Any

from streamnb.consumers.drift import DETECTORS
from streamnb.consumers.state import PartitionedModel, PartitionState, model_factory
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.evaluate.prequential import prequential
from streamnb.features import tokenize_email, tokenize_text

KEY = ("spamassassin", 0)


class ServiceForgetting:
    """The service's partition state as a river-style classifier for ``prequential``."""

    def __init__(self, model: str, half_life: float, drift_detector: str = "",
                 drift_decay: float = 0.5) -> None:
        factory = model_factory(model)
        self.drifts: list[int | None] = []
        self.partitioned = PartitionedModel(
            factory, half_life=half_life, drift_detector=drift_detector,
            drift_decay=drift_decay, on_drift=lambda key, offset: self.drifts.append(offset))
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
    parser.add_argument("--drift-detector", nargs="+", default=["none"],
                        choices=["none", *DETECTORS])
    parser.add_argument("--drift-decay", type=float, default=0.5)
    parser.add_argument("--then-sms", action="store_true")
    args = parser.parse_args()
    messages = list(iter_spamassassin_stream())
    # sorted: the model's sums do not depend on the string hash seed
    stream = [(dict.fromkeys(sorted(tokenize_email(m.text)), True), m.label) for m in messages]
    name = f"SpamAssassin, {len(stream)} messages in time order"
    if args.then_sms:
        sms = list(iter_sms_spam_stream())
        stream += [(dict.fromkeys(sorted(tokenize_text(m.text)), True), m.label) for m in sms]
        name += f", then {len(sms)} SMS"
    print(f"{name}, model {args.model}, drift decay {args.drift_decay:g}")
    for half_life in args.half_life:
        for detector in args.drift_detector:
            start = time.perf_counter()
            model = ServiceForgetting(args.model, half_life,
                                      "" if detector == "none" else detector, args.drift_decay)
            result = prequential(model, stream, positive="spam")
            second = result.labels[len(stream) // 2:]
            late = sum(p == y for p, y in zip(result.predicted[len(stream) // 2:], second,
                                              strict=True)) / len(second)
            print(f"half-life {half_life:>6g}, drift {detector:>12}: accuracy "
                  f"{result.accuracy():.4f}, second half {late:.4f}, 1-ROCA% "
                  f"{result.one_minus_roca():.3f}, ham called spam "
                  f"{result.ham_misclassification():.2f} %, drifts {len(model.drifts)} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
