"""River classifiers on count statistics."""

from streamnb.models.base import CountClassifier, load_model
from streamnb.models.indifferent_nb import IndifferentNB
from streamnb.models.naive_bayes import NaiveBayes

__all__ = ["CountClassifier", "IndifferentNB", "NaiveBayes", "load_model"]
