"""The TREC feedback modes on the SpamAssassin stream, as ``streamnb evaluate`` runs them
(docs/evaluate.md): the same records, models and scoring as ``streamnb evaluate --protocol
prequential --dataset spamassassin --model indifferent --model laplace`` with immediate
feedback, ``--delay 100`` and ``--feedback 0.2 --seed 0``.

Run: ``python benchmarks/evaluate_feedback.py [--limit N]``; it writes
``benchmarks/results/evaluate_feedback.json`` (``--results``, ``--no-results``).
"""

from __future__ import annotations

import argparse

import _results  # benchmarks/_results.py

from streamnb.cli_evaluate import _data, model_factory
from streamnb.evaluate import compare_prequential

MODELS = ("indifferent", "laplace")
#: (label in the table, delay, feedback, seed): the three modes of the command line
MODES = (("immediate", 0, None, 0), ("`--delay 100`", 100, None, 0),
         ("`--feedback 0.2 --seed 0`", 0, 0.2, 0))

COLUMNS = [_results.column("feedback"), _results.column("model"),
           _results.column("accuracy", "accuracy %", ".2f"),
           _results.column("one_minus_roca", "1-ROCA %", ".4f"),
           _results.column("ham_misclassification", "ham misclass. %", ".2f"),
           _results.column("spam_misclassification", "spam misclass. %", ".2f"),
           _results.column("log_loss", "log-loss", ".4f")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="first N messages only")
    _results.add_arguments(parser, "evaluate_feedback")
    args = parser.parse_args(argv)
    records, labels, positive, _ = _data("spamassassin", args.limit)
    stream = list(zip(records, labels, strict=True))
    models = {spec: model_factory(spec) for spec in MODELS}
    rows = []
    for mode, delay, feedback, seed in MODES:
        evaluation = compare_prequential(models, stream, positive=positive, delay=delay,
                                         feedback=feedback, seed=seed, dataset="spamassassin")
        for model in MODELS:
            row = {"feedback": mode, "model": model}
            for column in COLUMNS[2:]:
                value = evaluation.summary(column["key"])[model][0]
                # accuracy is a fraction in the scores, a percentage in the CLI's report
                row[column["key"]] = 100 * value if column["key"] == "accuracy" else value
            rows.append(row)
            print(_results.render_row(COLUMNS, row), flush=True)
    _results.write_from_args(
        args, "evaluate_feedback", {"modes": _results.table(COLUMNS, rows)}, argv=argv,
        script=__file__, notes=f"Limited run: the first {len(stream):,} messages."
        if args.limit else "")


if __name__ == "__main__":
    main()
