"""NB vs TAN vs AODE on the SpamAssassin stream, prequentially (the table and learning curves
in docs/tan.md). Every message is predicted, then learned, one by one in time order, under both
event models: ``bernoulli`` (every token a binary attribute ``{token: True}``) and ``text`` (one
text attribute ``{"tokens": bag}``: the candidate tokens binary with the model's dependences,
the others multinomial; docs/tan.md "On the text event model"). Tokens are
``tokenize_email(message.raw)``, sorted so that the order tokens are first registered in does
not follow the process's string hashing. Run:
``python benchmarks/spam_nb_tan_aode.py [--limit N] [--event-model text|bernoulli|both]
[--plot docs/img/spam_nb_tan_aode.png]``; it writes ``benchmarks/results/spam_nb_tan_aode.json``
(``--results``, ``--no-results``).
"""

from __future__ import annotations

import argparse
import time

import _results  # benchmarks/_results.py
from spam_streams import event_model_streams  # benchmarks/spam_streams.py

from streamnb import AODE, TAN, IndifferentNB, NaiveBayes
from streamnb.estimators import MEstimate
from streamnb.evaluate import prequential

# (name, event model, factory)
MODELS = [
    ("Indifferent NB", "bernoulli", IndifferentNB),
    ("NB m-estimate m=0.1", "text", lambda: NaiveBayes(estimator=MEstimate(m=0.1))),
    ("TAN (cmi, 100 candidates)", "bernoulli",
     lambda: TAN(weight="cmi", estimator="indifferent", max_candidates=100,
                 relearn_every=500)),
    ("TAN (cmi, 100 candidates)", "text",
     lambda: TAN(weight="cmi", estimator="indifferent", max_candidates=100,
                 relearn_every=500)),
    ("TAN (ddr, 100 candidates)", "bernoulli",
     lambda: TAN(weight="ddr", estimator="indifferent", max_candidates=100,
                 relearn_every=500)),
    ("TAN (ddr, 100 candidates)", "text",
     lambda: TAN(weight="ddr", estimator="indifferent", max_candidates=100,
                 relearn_every=500)),
    ("TAN (cmi, 100 candidates, m=0.1)", "text",
     lambda: TAN(weight="cmi", max_candidates=100, relearn_every=500,
                 estimator=MEstimate(m=0.1))),
    ("AODE (50 candidates)", "bernoulli", lambda: AODE(max_candidates=50, refresh_every=500)),
    ("AODE (50 candidates)", "text", lambda: AODE(max_candidates=50, refresh_every=500)),
    ("AODE (50 candidates, m=0.1)", "text",
     lambda: AODE(max_candidates=50, refresh_every=500, estimator=MEstimate(m=0.1))),
]


COLUMNS = [_results.column("model"), _results.column("event model"),
           _results.column("accuracy", fmt=".4f"), _results.column("AUC", fmt=".4f"),
           _results.column("LogScore", fmt=",.0f"), _results.column("messages/s", fmt=",.0f")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N messages only")
    parser.add_argument("--plot", default=None, help="write the learning curves to this PNG")
    parser.add_argument("--event-model", choices=("text", "bernoulli", "both"), default="both")
    _results.add_arguments(parser, "spam_nb_tan_aode")
    args = parser.parse_args(argv)
    messages, streams = event_model_streams(args.limit)
    print(f"{len(messages)} messages, prequential, one by one\n")
    rows = []
    curves = {}
    for name, event_model, make in MODELS:
        if args.event_model not in ("both", event_model):
            continue
        stream = streams[event_model]
        start = time.perf_counter()
        result = prequential(make(), stream, positive="spam", every=100)
        rate = len(stream) / (time.perf_counter() - start)
        curves[f"{name}, {event_model}"] = result.curve
        rows.append({"model": name, "event model": event_model, "accuracy": result.accuracy(),
                     "AUC": result.auc(), "LogScore": result.log_score(), "messages/s": rate})
        print(_results.render_row(COLUMNS, rows[-1]), flush=True)
    _results.write_from_args(
        args, "spam_nb_tan_aode", {"models": _results.table(COLUMNS, rows)}, argv=argv,
        script=__file__, notes=f"Limited run: the first {len(messages):,} messages."
        if args.limit else "")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(10, 4.5))
        for name, curve in curves.items():
            ax.plot([n for n, _ in curve], [a for _, a in curve], label=name,
                    linestyle="--" if name.endswith("bernoulli") else "-")
        ax.set_xlabel("messages seen")
        ax.set_ylabel("prequential accuracy so far")
        ax.set_title("SpamAssassin in time order (dashed: Bernoulli, solid: text)")
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"\nlearning curves: {args.plot}")


if __name__ == "__main__":
    main()
