"""Zhang (2005), Table 2: ChowLiu (TAN on conditional mutual information, eq. 15) against
ddr-ChowLiu (TAN on the dependence-distribution weight I_D, eq. 17–19), with the paper's
protocol: Fayyad–Irani MDL discretisation fitted on each training fold, 5-fold
cross-validation repeated 20 times, two-tailed unpaired t-test at 95%. Every data set of the
table that an installed package ships (see ``streamnb.datasets.PAPER_DATASETS``).

Run: ``python benchmarks/reproduce_zhang.py [--repeats 20]``; it writes
``benchmarks/results/reproduce_zhang.json`` (``--results``, ``--no-results``), the table of
docs/results/zhang.md.
"""

from __future__ import annotations

import argparse
import time

import _results  # benchmarks/_results.py
from _models import LearnedOnce  # benchmarks/_models.py

from streamnb import TAN
from streamnb.datasets import PAPER_DATASETS, load
from streamnb.evaluate import cross_validate
from streamnb.features import MDLDiscretizer

# Table 2 of the paper: accuracy % of ChowLiu and ddr-ChowLiu
PAPER = {"Australia": (76.7, 76.1), "breast": (73.3, 73.3), "cars": (85.4, 87.1),
         "dermatology": (97.7, 97.7), "ecoli": (96.1, 95.8), "hepatitis": (70.5, 70.5),
         "import": (93.6, 95.6), "iris": (91.2, 91.3), "pima": (70.5, 71.8),
         "segment": (82.3, 82.4), "vehicle": (89.3, 85.7), "vote": (78.6, 79.1)}


class OnceTAN(LearnedOnce, TAN):
    """`TAN` whose tree is learned once per training fold, from the whole fold's counts."""


MODELS = {"ChowLiu": lambda: OnceTAN(weight="cmi", estimator="indifferent", relearn_every=0),
          "ddr-ChowLiu": lambda: OnceTAN(weight="ddr", estimator="indifferent", relearn_every=0)}


def paper_copy(entry):
    """The installed copy prepared as the paper describes it: the complete cases when that is
    how the paper's record count arises."""
    data = load(entry.dataset)
    if data.n_rows != entry.instances:
        complete = data.complete_cases()
        if complete.n_rows == entry.instances:
            return complete
    return data


COLUMNS = [_results.column("paper", "data set (paper)"), _results.column("copy", "copy used"),
           _results.column("records"), _results.column("paper ChowLiu", fmt=".1f"),
           _results.column("paper ddr", fmt=".1f"),
           _results.column("ChowLiu", "ChowLiu %", ".1f"),
           _results.column("ChowLiu se", "±", ".1f"),
           _results.column("ddr-ChowLiu", "ddr-ChowLiu %", ".1f"),
           _results.column("ddr-ChowLiu se", "±", ".1f"),
           _results.column("verdict", "t-test"), _results.column("p", fmt=".3g"),
           _results.column("seconds", fmt=".0f")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--folds", type=int, default=5)
    _results.add_arguments(parser, "reproduce_zhang")
    args = parser.parse_args(argv)
    rows = []
    for entry in PAPER_DATASETS:
        if not (entry.paper.startswith("Zhang") and entry.name in PAPER):
            continue
        cl, ddr = PAPER[entry.name]
        row = {"paper": entry.name, "paper ChowLiu": cl, "paper ddr": ddr}
        if entry.dataset is None:
            rows.append(row | {"copy": "not shipped by any installed package"})
            continue
        data = paper_copy(entry)
        start = time.perf_counter()
        result = cross_validate(MODELS, data.records, data.labels, k=args.folds,
                                repeats=args.repeats, seed=0, discretizer=MDLDiscretizer,
                                dataset=data.name)
        seconds = time.perf_counter() - start
        t = result.compare("ddr-ChowLiu", "ChowLiu", test="unpaired")
        row |= {"copy": data.name, "records": data.n_rows, "verdict": t.verdict(),
                "p": t.p_value, "seconds": seconds}
        for model, (mean, se) in result.summary("accuracy").items():
            row |= {model: 100 * mean, f"{model} se": 100 * se}
        rows.append(row)
        print(_results.render_row(COLUMNS, row), flush=True)
    _results.write_from_args(
        args, "reproduce_zhang", {"accuracy": _results.table(COLUMNS, rows)}, argv=argv,
        script=__file__,
        notes=(f"{args.folds}-fold CV × {args.repeats}, MDL discretisation on each training "
               "fold, unpaired two-tailed t-test at 95% (ddr-ChowLiu against ChowLiu)."))


if __name__ == "__main__":
    main()
