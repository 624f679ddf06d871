"""Models by name: the command line's and the service's names (``MODELS``) and the class
names state files record (``model_class``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streamnb.models.aode import AODE
from streamnb.models.base import CountClassifier
from streamnb.models.ccica_nb import CCICANB
from streamnb.models.indifferent_nb import IndifferentNB
from streamnb.models.kernel_nb import KernelNB
from streamnb.models.lda import LDA
from streamnb.models.naive_bayes import NaiveBayes
from streamnb.models.qda import QDA
from streamnb.models.selective_bn import SelectiveBN
from streamnb.models.selective_nb import SelectiveNB
from streamnb.models.selective_tan import SelectiveTAN
from streamnb.models.spam_filter import SpamFilter
from streamnb.models.tan import TAN

__all__ = ["MODELS", "NUMERIC_ONLY", "make_model", "model_class"]

MODELS: dict[str, Callable[[], CountClassifier]] = {
    # raw text (e-mail or SMS) or {token: count}; the others take feature dicts
    "spam-filter": SpamFilter,
    "indifferent": IndifferentNB,
    "ml": lambda: NaiveBayes(estimator="ml"),
    "laplace": lambda: NaiveBayes(estimator="laplace"),
    "m-estimate": lambda: NaiveBayes(estimator="m-estimate"),
    "bibl": lambda: NaiveBayes(estimator="bibl"),
    "tan": TAN,
    "tan-ddr": lambda: TAN(weight="ddr"),
    "tan-bayes": lambda: TAN(weight="bayes"),
    "aode": AODE,
    # Info-AS selection (Singh & Provan) with the CDC metric, the best on the spam stream
    # (docs/selective.md)
    "selective-nb": lambda: SelectiveNB(metric="cdc"),
    "selective-tan": lambda: SelectiveTAN(metric="cdc"),
    "selective-bn": lambda: SelectiveBN(metric="cdc"),
    # numeric attributes only (docs/continuous.md); they refuse nominal, token and text values
    "lda": LDA,
    "qda": QDA,
    "kernel-nb": KernelNB,
    # class-conditional ICA + naive Bayes (Bressan & Vitrià; docs/ccica.md)
    "ccica-nb": CCICANB,
}

#: models that take numeric attributes only (not token records: the demo's ``all`` skips them)
NUMERIC_ONLY = frozenset({"lda", "qda", "kernel-nb", "ccica-nb"})


def make_model(name: str) -> CountClassifier:
    """A fresh model from its name (see ``MODELS``)."""
    try:
        return MODELS[name]()
    except KeyError:
        raise ValueError(f"unknown model {name!r}; choose one of {sorted(MODELS)}") from None


def model_class(name: Any) -> type[CountClassifier] | None:
    """The model class a state file names: any subclass of ``CountClassifier`` (this module
    imports every model module, so each is known), by its class name; None if there is none."""
    pending: list[type[CountClassifier]] = [CountClassifier]
    while pending:
        cls = pending.pop()
        if cls.__name__ == name:
            return cls
        pending.extend(cls.__subclasses__())
    return None
