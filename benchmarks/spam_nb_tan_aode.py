"""NB vs TAN vs AODE on the SpamAssassin stream, prequentially (the table and learning curves
in docs/tan.md). Every message is predicted, then learned, one by one in time order. Run:
``python benchmarks/spam_nb_tan_aode.py [--limit N] [--plot docs/img/spam_nb_tan_aode.png]``.
"""

from __future__ import annotations

import argparse
import time

from streamnb import AODE, TAN, IndifferentNB
from streamnb.datasets import iter_spamassassin_stream
from streamnb.evaluate import prequential
from streamnb.features import tokenize_email

MODELS = {
    "Indifferent NB": IndifferentNB,
    "TAN (cmi, 100 candidates)": lambda: TAN(max_candidates=100, relearn_every=500),
    "TAN (ddr, 100 candidates)": lambda: TAN(weight="ddr", max_candidates=100,
                                             relearn_every=500),
    "AODE (50 candidates)": lambda: AODE(max_candidates=50, refresh_every=500),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N messages only")
    parser.add_argument("--plot", default=None, help="write the learning curves to this PNG")
    args = parser.parse_args()
    messages = list(iter_spamassassin_stream())[: args.limit]
    stream = [({t: True for t in tokenize_email(m.text)}, m.label) for m in messages]
    print(f"{len(stream)} messages, prequential, one by one\n")
    print("| model | accuracy | AUC | LogScore | messages/s |")
    print("|---|---|---|---|---|")
    curves = {}
    for name, make in MODELS.items():
        start = time.perf_counter()
        result = prequential(make(), stream, positive="spam", every=100)
        rate = len(stream) / (time.perf_counter() - start)
        curves[name] = result.curve
        print(f"| {name} | {result.accuracy():.4f} | {result.auc():.4f} | "
              f"{result.log_score():,.0f} | {rate:,.0f} |", flush=True)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        for name, curve in curves.items():
            ax.plot([n for n, _ in curve], [a for _, a in curve], label=name)
        ax.set_xlabel("messages seen")
        ax.set_ylabel("prequential accuracy so far")
        ax.set_title("SpamAssassin in time order")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"\nlearning curves: {args.plot}")


if __name__ == "__main__":
    main()
