"""Evaluation: prequential runs, cross-validation splits, exact scores (accuracy, AUC, LogScore),
reports."""

from streamnb.evaluate.metrics import confusion_matrix, exact_auc, log_score
from streamnb.evaluate.prequential import PrequentialResult, prequential
from streamnb.evaluate.splits import holdout, random_splits, stratified_kfold

__all__ = ["PrequentialResult", "confusion_matrix", "exact_auc", "holdout", "log_score",
           "prequential", "random_splits", "stratified_kfold"]
