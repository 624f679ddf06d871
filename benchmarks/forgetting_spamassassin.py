"""Prequential accuracy on SpamAssassin in time order with and without the service's forgetting
(``--half-life``) and drift reaction (``--drift-detector``).

The records go through :class:`streamnb.consumers.state.PartitionedModel` (one partition, the
record's position in the stream as its offset): the same decay and drift reaction the service
applies, not a re-implementation of them. Two studies, the two tables of docs/service.md:
``half_life``, SpamAssassin with each ``--half-life`` and no detector; ``drift``, each
``--drift-detector`` without forgetting on each of ``--streams``: SpamAssassin alone, and
SpamAssassin followed by the SMS Spam Collection in its order (``spamassassin+sms``: a real
change of source, e-mail to SMS, the kind of drift a detector is for).

    python benchmarks/forgetting_spamassassin.py [--model spam-filter] [--half-life 0 4000 ...]
        [--drift-detector none ddm page-hinkley] [--drift-decay 0.5]
        [--streams spamassassin spamassassin+sms]

It writes ``benchmarks/results/forgetting_spamassassin.json`` (``--results``, ``--no-results``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Hashable
from typing import Any

import _results  # benchmarks/_results.py

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


STREAMS = ("spamassassin", "spamassassin+sms")
COLUMNS = {"stream": _results.column("stream"), "half-life": _results.column("half-life",
                                                                            "`--half-life`", "g"),
           "detector": _results.column("detector", "`--drift-detector`"),
           "drifts": _results.column("drifts"),
           "accuracy": _results.column("accuracy", fmt=".4f"),
           "second half": _results.column("second half", "accuracy, second half", ".4f"),
           "1-ROCA %": _results.column("1-ROCA %", fmt=".3f"),
           "ham called spam %": _results.column("ham called spam %", fmt=".2f"),
           "seconds": _results.column("seconds", fmt=".0f")}


def _stream(name: str) -> tuple[str, list[tuple[dict, str]]]:
    messages = list(iter_spamassassin_stream())
    # sorted: the model's sums do not depend on the string hash seed
    stream = [(dict.fromkeys(sorted(tokenize_email(m.text)), True), m.label) for m in messages]
    label = f"SpamAssassin ({len(stream):,} e-mails in time order)"
    if name == "spamassassin+sms":
        sms = list(iter_sms_spam_stream())
        stream += [(dict.fromkeys(sorted(tokenize_text(m.text)), True), m.label) for m in sms]
        label = f"SpamAssassin, then SMS ({len(stream):,} messages)"
    return label, stream


def run(stream: list[tuple[dict, str]], model: str, half_life: float, detector: str,
        drift_decay: float) -> dict[str, Any]:
    start = time.perf_counter()
    service = ServiceForgetting(model, half_life, "" if detector == "none" else detector,
                                drift_decay)
    result = prequential(service, stream, positive="spam")
    second = result.labels[len(stream) // 2:]
    late = sum(p == y for p, y in zip(result.predicted[len(stream) // 2:], second,
                                      strict=True)) / len(second)
    return {"half-life": half_life, "detector": detector, "drifts": len(service.drifts),
            "accuracy": result.accuracy(), "second half": late,
            "1-ROCA %": result.one_minus_roca(),
            "ham called spam %": result.ham_misclassification(),
            "seconds": time.perf_counter() - start}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="spam-filter")
    parser.add_argument("--half-life", type=float, nargs="+", default=[0, 4000, 1000, 250])
    parser.add_argument("--drift-detector", nargs="+", default=["none", *DETECTORS],
                        choices=["none", *DETECTORS])
    parser.add_argument("--drift-decay", type=float, default=0.5)
    parser.add_argument("--streams", nargs="+", default=list(STREAMS), choices=STREAMS)
    _results.add_arguments(parser, "forgetting_spamassassin")
    args = parser.parse_args(argv)
    print(f"model {args.model}, drift decay {args.drift_decay:g}")
    done: dict[tuple[str, float, str], dict[str, Any]] = {}  # a run both studies share

    def measured(name: str, half_life: float, detector: str) -> dict[str, Any]:
        if (name, half_life, detector) not in done:
            label, stream = streams[name]
            row = {"stream": label, **run(stream, args.model, half_life, detector,
                                          args.drift_decay)}
            done[name, half_life, detector] = row
            print(_results.render_row(list(COLUMNS.values()), row), flush=True)
        return done[name, half_life, detector]

    streams = {name: _stream(name) for name in {"spamassassin", *args.streams}}
    half_life = [measured("spamassassin", h, "none") for h in args.half_life]
    drift = [measured(name, 0, detector) for name in args.streams
             for detector in args.drift_detector]
    keys = ("half-life", "accuracy", "second half", "1-ROCA %", "ham called spam %", "seconds")
    _results.write_from_args(args, "forgetting_spamassassin", {
        "half_life": _results.table([COLUMNS[k] for k in keys], half_life),
        "drift": _results.table([COLUMNS[k] for k in ("stream", "detector", "drifts", *keys[1:])],
                                drift)}, argv=argv, script=__file__,
        notes=f"Model `{args.model}`, `--drift-decay {args.drift_decay:g}`.")


if __name__ == "__main__":
    main()
