"""Evaluation: prequential runs, cross-validation, random splits and holdout for any river
classifier; exact scores (accuracy, LogScore, log-loss, Brier, AUC); t-tests; reports."""

from streamnb.evaluate.metrics import (
    brier_score,
    confusion_matrix,
    exact_auc,
    log_loss,
    log_score,
    one_vs_rest_auc,
)
from streamnb.evaluate.prequential import PrequentialResult, prequential
from streamnb.evaluate.protocols import (
    METRICS,
    Evaluation,
    Score,
    compare_prequential,
    cross_validate,
    score_log_proba,
    validate_holdout,
    validate_random_splits,
)
from streamnb.evaluate.significance import (
    TTest,
    corrected_resampled_t_test,
    paired_t_test,
    unpaired_t_test,
)
from streamnb.evaluate.splits import holdout, random_splits, stratified_kfold

__all__ = ["METRICS", "Evaluation", "PrequentialResult", "Score", "TTest", "brier_score",
           "compare_prequential", "confusion_matrix", "corrected_resampled_t_test",
           "cross_validate", "exact_auc", "holdout", "log_loss", "log_score",
           "one_vs_rest_auc", "paired_t_test", "prequential", "random_splits",
           "score_log_proba", "stratified_kfold", "unpaired_t_test", "validate_holdout",
           "validate_random_splits"]
