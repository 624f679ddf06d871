"""Shared mechanics of the count-based classifiers: input handling, posteriors, persistence.

A model says how it computes the joint log-likelihood ``log P(x, c)`` of an encoded record from
its statistics; this base turns that into probabilities (log-sum-exp, and the zero-factor rule of
the maximum-likelihood estimator), validates input, runs the batch paths and saves/loads/merges.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from river import base

from streamnb._accel.kernels import posterior
from streamnb.estimators import ESTIMATORS, Estimator
from streamnb.stats import CountStatistics, InvalidRecord, Schema, read_state, write_state
from streamnb.stats.cache import StateCache
from streamnb.stats.codec import from_json_value, to_json_value
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.frames import n_rows
from streamnb.stats.persist import StateFileError, header_int

__all__ = ["CountClassifier", "load_model"]



def init_params(obj: Any) -> dict[str, Any]:
    """The constructor arguments of ``obj`` as given (river's ``_get_params`` turns nested
    estimators into (class, params) tuples; a state file wants them as values)."""
    init = type(obj).__init__
    if init is object.__init__:
        return {}
    names = [name for name, p in inspect.signature(init).parameters.items()
             if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return {name: getattr(obj, name) for name in names}


def _encode_param(value: Any) -> Any:
    if isinstance(value, Estimator):
        return {"estimator": value.name, "params": _encode_param(init_params(value))}
    if isinstance(value, dict):
        return {"map": [[to_json_value(k), _encode_param(v)] for k, v in value.items()]}
    return to_json_value(value)


def _decode_param(value: Any) -> Any:
    if isinstance(value, dict) and "estimator" in value:
        cls = ESTIMATORS[value["estimator"]]
        return cls(**_decode_param(value["params"]))
    if isinstance(value, dict) and "map" in value:
        return {from_json_value(k): _decode_param(v) for k, v in value["map"]}
    return from_json_value(value)


class CountClassifier(base.MiniBatchClassifier):
    """Base of streamnb's classifiers: state = :class:`~streamnb.stats.CountStatistics`."""

    _format: ClassVar[str] = ""
    #: the class of ``stats`` (its ``from_state`` restores a saved model's statistics)
    _statistics: ClassVar[type] = CountStatistics
    #: False for models of discrete attributes only: a float attribute is refused, not modelled
    _numeric: ClassVar[bool] = True
    #: True for a model that takes a text message as the frozenset of its tokens (the service
    #: then decodes one into that, not into ``{token: True}``)
    reads_token_sets: ClassVar[bool] = False

    def __init__(self, nominal: Iterable | None = None, domains: Mapping | None = None) -> None:
        self.nominal = nominal
        self.domains = domains
        if nominal is not None and (isinstance(nominal, str) or not isinstance(nominal, Iterable)):
            raise ValueError(f"nominal must be an iterable of attribute names, got {nominal!r}")
        if domains is not None and not isinstance(domains, Mapping):
            raise ValueError(f"domains must be a mapping attribute -> values, got {domains!r}")
        self.stats = CountStatistics(Schema(nominal=nominal or (), domains=domains,
                                            numeric=self._numeric))
        self.n_learned = 0
        self._cache = StateCache()  # values derived from the state, once per state version

    @property
    def _multiclass(self) -> bool:
        return True

    @property
    def classes(self) -> list:
        """Class labels seen so far, in order of first appearance."""
        return list(self.stats.labels.values)

    # -- what a model defines ------------------------------------------------------------------
    def _joint_log_likelihood(self, records: Sequence[Mapping], where: str
                              ) -> tuple[np.ndarray, np.ndarray]:
        """Finite part and zero-factor counts of log P(x, c), both ``(len(records), classes)``."""
        raise NotImplementedError

    # -- learning -----------------------------------------------------------------------------
    def learn_one(self, x: Mapping, y: Any) -> None:
        self.stats.update(x, y, self.n_learned + 1)
        self.n_learned += 1

    def encode_many(self, X: Any) -> EncodedBatch:
        """``X`` (DataFrame or sequence of mappings) encoded once for ``predict_proba_many``
        (or ``predict_log_proba_many``) and then ``learn_many`` of the same records: the
        prequential order, at the cost of one encoding (:meth:`CountStatistics.encode
        <streamnb.stats.CountStatistics.encode>`).

        >>> from streamnb import NaiveBayes
        >>> model = NaiveBayes()
        >>> model.learn_many([{"free": True}, {"meeting": True}], ["spam", "ham"])
        >>> batch = model.encode_many([{"free": True, "money": True}, {"meeting": True}])
        >>> model.predict_many(batch).tolist()  # "money" is unknown yet: missing
        ['spam', 'ham']
        >>> model.learn_many(batch, ["spam", "ham"])  # registers "money", as the records would
        >>> model.stats.schema.n_tokens
        3
        """
        return self.stats.encode(X, "row")

    def learn_many(self, X: Any, y: Any) -> None:
        """Learn a batch (DataFrame, sequence of mappings or :meth:`encode_many`'s batch); same
        counts as ``learn_one`` on each row in order. A bad row rejects the whole batch and
        changes nothing."""
        self.stats.update_many(X, y, record="row")
        self.n_learned += n_rows(X)

    # -- prediction ---------------------------------------------------------------------------
    @staticmethod
    def _scores(finite: np.ndarray, zeros: np.ndarray) -> np.ndarray:
        """Rows of class scores: ``finite`` where a class has the fewest zero factors, −inf
        elsewhere (what the posterior normalises; its argmax is the prediction)."""
        if not zeros.any():  # no zero factor (pseudo-counts > 0): finite as it is
            return finite
        return np.where(zeros == zeros.min(axis=1, keepdims=True), finite, -np.inf)

    @classmethod
    def _log_posterior(cls, finite: np.ndarray, zeros: np.ndarray) -> np.ndarray:
        """Rows of log-probabilities; the classes with the fewest zero factors share the mass
        (the others get −inf): the rule of :func:`~streamnb._accel.kernels.posterior` (one
        record), vectorised (tested equal)."""
        scores = cls._scores(finite, zeros)
        scores = scores - scores.max(axis=1, keepdims=True)
        return scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))

    @classmethod
    def _posterior(cls, finite: np.ndarray, zeros: np.ndarray) -> np.ndarray:
        """Rows of probabilities."""
        return np.exp(cls._log_posterior(finite, zeros))

    def _check_record(self, x: Any, where: str) -> None:
        """A record to predict is a mapping; an empty one (a token-less text in a river
        pipeline) is predicted as the class prior, like a record of unknown attributes."""
        if not isinstance(x, Mapping):
            raise InvalidRecord(where, None, f"expected a mapping of features, got "
                                f"{type(x).__name__}")

    def _log_likelihood_one(self, x: Mapping) -> tuple[Any, Any] | None:
        """Finite part and zero-factor counts of log P(x, c) per class for one record (None
        before any class): the one-record path of ``predict_proba_one`` and
        ``predict_log_proba_one``. By default the batch path on one row; a model with a faster
        one-record computation of the same numbers overrides it."""
        self._check_record(x, "record to predict")
        if not self.stats.n_classes:
            return None
        finite, zeros = self._joint_log_likelihood([x], "record to predict")
        return finite[0], zeros[0]

    def predict_proba_one(self, x: Mapping) -> dict[Any, float]:
        scores = self._log_likelihood_one(x)
        return posterior(self.stats.labels.values, *scores) if scores else {}

    def predict_log_proba_one(self, x: Mapping) -> dict[Any, float]:
        """log P(c | x), exact where ``predict_proba_one`` underflows to 0 (long messages make
        posteriors of 1e-300 and below common); −inf only for a true zero (ML estimator)."""
        scores = self._log_likelihood_one(x)
        return posterior(self.stats.labels.values, *scores, True) if scores else {}

    def predict_one(self, x: Mapping) -> Any:
        proba = self.predict_proba_one(x)
        return max(proba, key=proba.__getitem__) if proba else None

    def _frame(self, X: Any, log: bool):
        """The posterior rows (log or not) of ``predict_proba_many`` and
        ``predict_log_proba_many``."""
        import pandas as pd

        index = X.index if isinstance(X, pd.DataFrame) else None
        if not self.stats.n_classes:
            return pd.DataFrame(index=index if index is not None else range(n_rows(X)))
        finite, zeros = self._joint_log_likelihood(X, "row")  # rows checked when encoded
        rows = (self._log_posterior if log else self._posterior)(finite, zeros)
        return pd.DataFrame(rows, index=index, columns=list(self.stats.labels.values))

    def predict_proba_many(self, X: Any):
        return self._frame(X, False)

    def predict_log_proba_many(self, X: Any):
        """log P(c | x) per row: ``predict_proba_many`` in log space, exact where
        probabilities underflow."""
        return self._frame(X, True)

    def predict_many(self, X: Any):
        import pandas as pd

        index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(n_rows(X))
        if not self.stats.n_classes:
            return pd.Series([None] * len(index), index=index, dtype=object)
        # the argmax of predict_proba_many's rows, read off the scores its posterior
        # normalises (the same class: exp and the normalisation keep distinct scores apart)
        scores = self._scores(*self._joint_log_likelihood(X, "row"))
        labels = np.asarray(list(self.stats.labels.values), dtype=object)
        return pd.Series(labels[np.argmax(scores, axis=1)], index=index, dtype=object,
                         copy=False)

    # -- monoid operations ----------------------------------------------------------------------
    def decay(self, factor: float) -> None:
        """Forget exponentially: every count is multiplied by ``factor`` in (0, 1]."""
        self.stats.decay(factor)

    def merge(self, other: CountClassifier) -> CountClassifier:
        """Add the statistics ``other`` learned (e.g. on another shard). Returns ``self``."""
        if type(other) is not type(self) or _encode_param(init_params(other)) != _encode_param(
                init_params(self)):
            raise ValueError(f"cannot merge {other!r} into {self!r}: models differ")
        self.stats.merge(other.stats)
        self.n_learned += other.n_learned
        return self

    # -- persistence ----------------------------------------------------------------------------
    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {}, {}

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        return None

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = self.stats.to_state()
        extra_meta, extra_arrays = self._extra_state()
        header = {"model": type(self).__name__, "params": _encode_param(init_params(self)),
                  "n_learned": self.n_learned, "statistics": meta, "extra": extra_meta}
        return header, {**arrays, **{f"extra.{k}": v for k, v in extra_arrays.items()}}

    @classmethod
    def from_state(cls, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> CountClassifier:
        name = header.get("model")
        from streamnb.models.registry import model_class  # it imports every model module

        model_cls = model_class(name)
        if model_cls is None:
            raise StateFileError(f"unknown model {name!r} in state")
        if not issubclass(model_cls, cls):
            raise StateFileError(f"state holds a {name}, not a {cls.__name__}")
        try:
            model = model_cls(**_decode_param(header["params"]))
            model.stats = model_cls._statistics.from_state(header["statistics"], arrays)
            model.n_learned = header_int(header["n_learned"], "n_learned")
            extra = {k[len("extra."):]: v for k, v in arrays.items() if k.startswith("extra.")}
            model._restore_extra(header.get("extra", {}), extra)
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            if isinstance(exc, StateFileError):
                raise
            raise StateFileError(f"inconsistent model state: {exc}") from exc
        return model

    def save(self, path: str | os.PathLike) -> None:
        """Write the model atomically in streamnb's versioned, checksummed format."""
        header, arrays = self.to_state()
        write_state(path, header, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> CountClassifier:
        """Read a model written by :meth:`save` (never unpickles anything)."""
        header, arrays = read_state(path)
        return cls.from_state(header, arrays)


def load_model(path: str | os.PathLike) -> CountClassifier:
    """Load any streamnb model from a state file."""
    return CountClassifier.load(path)
