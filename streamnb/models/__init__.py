"""River classifiers on count statistics.

Each name below is imported from its module when first used (PEP 562), so a process that
needs one model (``streamnb score``: the spam filter) imports that one. A model registers
itself (its state name and presets: ``models/persistence.py``, ``models/registry.py``) when
its module runs; a state file or ``--model NAME`` imports the module that holds the name
(``registry.BUILTIN``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamnb._lazy import lazy_names

# each public name: the module it is imported from
_SOURCES = {
    "AODE": "streamnb.models.aode",
    "CCICANB": "streamnb.models.ccica_nb",
    "CountClassifier": "streamnb.models.base",
    "IndifferentNB": "streamnb.models.indifferent_nb",
    "KernelNB": "streamnb.models.kernel_nb",
    "LDA": "streamnb.models.lda",
    "NaiveBayes": "streamnb.models.naive_bayes",
    "QDA": "streamnb.models.qda",
    "SelectiveBN": "streamnb.models.selective_bn",
    "SelectiveNB": "streamnb.models.selective_nb",
    "SelectiveTAN": "streamnb.models.selective_tan",
    "SpamFilter": "streamnb.models.spam_filter",
    "TAN": "streamnb.models.tan",
    "load_model": "streamnb.models.persistence",
}

__all__ = [
           "AODE",
           "CCICANB",
           "LDA",
           "QDA",
           "TAN",
           "CountClassifier",
           "IndifferentNB",
           "KernelNB",
           "NaiveBayes",
           "SelectiveBN",
           "SelectiveNB",
           "SelectiveTAN",
           "SpamFilter",
           "load_model",
]

__getattr__, __dir__ = lazy_names(__name__, globals(), _SOURCES, __all__)

if TYPE_CHECKING:
    from streamnb.models.aode import AODE
    from streamnb.models.base import CountClassifier
    from streamnb.models.ccica_nb import CCICANB
    from streamnb.models.indifferent_nb import IndifferentNB
    from streamnb.models.kernel_nb import KernelNB
    from streamnb.models.lda import LDA
    from streamnb.models.naive_bayes import NaiveBayes
    from streamnb.models.persistence import load_model
    from streamnb.models.qda import QDA
    from streamnb.models.selective_bn import SelectiveBN
    from streamnb.models.selective_nb import SelectiveNB
    from streamnb.models.selective_tan import SelectiveTAN
    from streamnb.models.spam_filter import SpamFilter
    from streamnb.models.tan import TAN
