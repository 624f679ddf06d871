"""River classifiers on count statistics.

Importing the package imports every model module below, and so registers every built-in model
(its state name and presets: ``models/persistence.py``, ``models/registry.py``).
"""

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
