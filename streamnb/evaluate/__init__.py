"""Evaluation: prequential runs, cross-validation, random splits and holdout for any river
classifier; exact scores (accuracy, LogScore, log-loss, Brier, AUC, ROC curves, rolling
accuracy) and the TREC spam track's measures and feedback modes; t-tests; reports."""

from streamnb.evaluate.metrics import (
    brier_score,
    confusion_matrix,
    exact_auc,
    log_loss,
    log_score,
    misclassification_rates,
    one_vs_rest_auc,
    operating_points,
    roc_curve,
    rolling_accuracy,
)
from streamnb.evaluate.prequential import (
    PartialFeedback,
    PrequentialResult,
    check_feedback,
    prequential,
)
from streamnb.evaluate.protocols import (
    METRICS,
    SPAM_TRACK_METRICS,
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

__all__ = ["METRICS", "SPAM_TRACK_METRICS", "Evaluation", "PartialFeedback",
           "PrequentialResult", "Score", "TTest", "brier_score", "check_feedback",
           "compare_prequential", "confusion_matrix", "corrected_resampled_t_test",
           "cross_validate", "exact_auc", "holdout", "log_loss", "log_score",
           "misclassification_rates", "one_vs_rest_auc", "operating_points", "paired_t_test",
           "prequential", "random_splits", "roc_curve", "rolling_accuracy", "score_log_proba",
           "stratified_kfold", "unpaired_t_test", "validate_holdout", "validate_random_splits"]
