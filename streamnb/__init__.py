"""streamnb: streaming Bayesian classifiers on count-based sufficient statistics.

The names below are imported when first used (PEP 562), so ``import streamnb`` alone costs
nothing: a process that needs one part (the service's publisher process, a command of the
CLI) does not import scipy and every model to start, which would be most of its start-up
time.

>>> import streamnb
>>> streamnb.SpamFilter.__module__
'streamnb.models.spam_filter'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamnb._lazy import lazy_names

__version__ = "0.1.0"

# each public name: the module it is imported from
_SOURCES = {
    **dict.fromkeys(("Dirichlet", "Indifferent", "Jeffreys", "Laplace", "MaximumLikelihood",
                     "MEstimate"), "streamnb.estimators"),
    **dict.fromkeys(("AODE", "CCICANB", "LDA", "QDA", "TAN", "CountClassifier", "IndifferentNB",
                     "KernelNB", "NaiveBayes", "SelectiveBN", "SelectiveNB", "SelectiveTAN",
                     "SpamFilter", "load_model"), "streamnb.models"),
    **dict.fromkeys(("CountStatistics", "InvalidRecord", "StateFileError"), "streamnb.stats"),
}

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
    "Jeffreys",
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


__getattr__, __dir__ = lazy_names(__name__, globals(), _SOURCES, __all__)

if TYPE_CHECKING:
    from streamnb.estimators import (
        Dirichlet,
        Indifferent,
        Jeffreys,
        Laplace,
        MaximumLikelihood,
        MEstimate,
    )
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
