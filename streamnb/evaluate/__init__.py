"""Evaluation: prequential runs, exact scores (accuracy, AUC, LogScore), reports."""

from streamnb.evaluate.metrics import confusion_matrix, exact_auc, log_score
from streamnb.evaluate.prequential import PrequentialResult, prequential

__all__ = ["PrequentialResult", "confusion_matrix", "exact_auc", "log_score", "prequential"]
