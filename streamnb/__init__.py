"""streamnb: streaming Bayesian classifiers on count-based sufficient statistics."""

from streamnb.estimators import Dirichlet, Indifferent, Laplace, MaximumLikelihood, MEstimate
from streamnb.models import (
    AODE,
    CCICANB,
    LDA,
    QDA,
    TAN,
    CountClassifier,
    IndifferentNB,
    KernelNB,
    NaiveBayes,
    SelectiveBN,
    SelectiveNB,
    SelectiveTAN,
    SpamFilter,
    load_model,
)
from streamnb.stats import CountStatistics, InvalidRecord, StateFileError

__version__ = "0.1.0"

__all__ = [
    "AODE",
    "CCICANB",
    "LDA",
    "QDA",
    "TAN",
    "CountClassifier",
    "CountStatistics",
    "Dirichlet",
    "Indifferent",
    "IndifferentNB",
    "InvalidRecord",
    "KernelNB",
    "Laplace",
    "MEstimate",
    "MaximumLikelihood",
    "NaiveBayes",
    "SelectiveBN",
    "SelectiveNB",
    "SelectiveTAN",
    "SpamFilter",
    "StateFileError",
    "__version__",
    "load_model",
]
