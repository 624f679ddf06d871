"""Shared mechanics of the count-based classifiers: input handling, posteriors, merging, and a
model's registration (its state name and command-line names, declared in its class statement).

A model says how it computes the joint log-likelihood ``log P(x, c)`` of an encoded record from
its statistics; this base turns that into probabilities (log-sum-exp, and the zero-factor rule of
the maximum-likelihood estimator), validates input, runs the batch paths and merges; saving and
loading are ``models/persistence.py``'s.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
from river import base

import streamnb.models.persistence as persistence
from streamnb._accel.kernels import posterior
from streamnb.models.params import DRIFT_DECAY, DRIFT_DETECTOR, HALF_LIFE, validate_params
from streamnb.models.schedule import learn_in_pieces, learn_watching_drift, react_to_drift
from streamnb.stats import CountStatistics, InvalidRecord, Schema
from streamnb.stats.binning import FINE_BINS
from streamnb.stats.cache import StateCache
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.forgetting import Forgetting
from streamnb.stats.frames import labels_of, n_rows
from streamnb.stats.values import RecordName

__all__ = ["CountClassifier"]


def _adapting_one(learn: Callable[..., None]) -> Callable[..., None]:
    """``learn_one`` with the model's ``drift_detector`` fed and its ``half_life`` applied,
    once per record: the calls it makes to its bases' ``learn_one`` learn only."""
    @functools.wraps(learn)
    def learn_one(self: CountClassifier, x: Any, y: Any) -> None:
        if self.__dict__.get("_adapting"):
            return learn(self, x, y)
        self._adapting = True
        try:
            start = self.n_learned
            if learn_watching_drift(self, self.drift_detector, x, y, lambda: learn(self, x, y)):
                react_to_drift(self, self.drift_decay)
            if self._forgetting is not None:
                self._forgetting.decay(self, start, self.n_learned)
        finally:
            del self._adapting
        return None
    return learn_one


def _adapting_many(learn: Callable[..., None]) -> Callable[..., None]:
    """``learn_many`` learning its batch in pieces (:func:`~streamnb.models.schedule.
    learn_in_pieces`) that end at the model's :meth:`~CountClassifier._pieces` and at the
    decay points of its ``half_life``, so its counts and structures are those of ``learn_one``
    on each row; the class's own ``learn_many`` learns one piece, and the calls it makes to its
    bases' ``learn_many`` learn only. The drift detector is not fed (it reads one-by-one
    prequential errors)."""
    @functools.wraps(learn)
    def learn_many(self: CountClassifier, X: Any, y: Any) -> None:
        if self.__dict__.get("_adapting"):
            return learn(self, X, y)
        self._adapting = True
        try:
            labels = labels_of(y)
            X, ends = self._pieces(X, labels)
            learn_in_pieces(self, X, labels, ends, functools.partial(learn, self))
        finally:
            del self._adapting
        return None
    return learn_many


class CountClassifier(base.MiniBatchClassifier):
    """Base of streamnb's classifiers: state = :class:`~streamnb.stats.CountStatistics`.

    A model registers itself in its class statement, e.g.
    ``class TAN(PairwiseNaiveBayes, state_name="TAN", presets={"tan": {}, "tan-ddr":
    {"weight": "ddr"}})``: ``state_name`` is the name its state files record
    (``models/persistence.py``; a class without one, such as an abstract base, is not saved),
    ``presets`` the names ``--model`` and the service take for it, each with the constructor
    arguments it sets (``models/registry.py``). Neither is inherited; a name another class
    holds is refused.
    """

    #: the class's own presets (``presets=`` of its class statement; empty if it has none)
    _presets: ClassVar[Mapping[str, Mapping[str, Any]]] = MappingProxyType({})
    #: the class of ``stats`` (its ``from_state`` restores a saved model's statistics)
    _statistics: ClassVar[type] = CountStatistics
    #: False for models of discrete attributes: a float is counted in its fine bin
    #: (:mod:`streamnb.stats.binning`), not modelled as a Gaussian (NaiveBayes sets it per
    #: model from its ``numeric`` parameter)
    _numeric: ClassVar[bool] = True
    #: the bound of a binned float's fine grid (its schema's ``fine_bins``)
    _fine_bins: ClassVar[int] = FINE_BINS
    #: True for a model that takes a text message as the frozenset of its tokens (the service
    #: then decodes one into that, not into ``{token: True}``)
    reads_token_sets: ClassVar[bool] = False
    #: True for a continuous model: a numeric block of its own, every other field read as a
    #: naive-Bayes factor beside it (``registry.CONTINUOUS``)
    _continuous: ClassVar[bool] = False
    #: the parameters every model takes: forgetting (:meth:`_adapt`)
    _parameter_constraints: ClassVar[dict[str, list]] = {
        "half_life": HALF_LIFE, "drift_detector": DRIFT_DETECTOR, "drift_decay": DRIFT_DECAY}

    def __init_subclass__(cls, /, state_name: str | None = None,
                          presets: Mapping[str, Mapping[str, Any]] | None = None,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = {name: MappingProxyType(dict(params)) for name, params in (presets or {}).items()}
        if own and state_name is None:  # the service saves every model it runs
            raise TypeError(f"{cls.__qualname__}: presets need a state_name")
        # the class holding this state name is either this one defined again (replaced) or
        # another one (refused by ``register``): its presets are not taken
        taken = {preset: other for other in persistence.registered().values()
                 if persistence.state_name(other) != state_name for preset in other._presets}
        for preset in own:
            if not isinstance(preset, str) or not preset:
                raise TypeError(f"{cls.__qualname__}: a preset name must be a non-empty str, "
                                f"got {preset!r}")
            if preset in taken:
                raise ValueError(f"{cls.__qualname__}: preset {preset!r} is already "
                                 f"{taken[preset].__qualname__}'s")
            try:  # a misspelt parameter fails here, not when the name is first used
                inspect.signature(cls).bind(**own[preset])
            except TypeError as exc:
                raise TypeError(f"{cls.__qualname__}: preset {preset!r}: {exc}") from None
        if state_name is not None:
            persistence.register(cls, state_name)
        cls._presets = MappingProxyType(own)
        # every model forgets and watches for drift the same way, whatever its learning does
        for name, adapting in (("learn_one", _adapting_one), ("learn_many", _adapting_many)):
            if name in cls.__dict__:
                setattr(cls, name, adapting(cls.__dict__[name]))

    def __init__(self, nominal: Iterable | None = None, domains: Mapping | None = None,
                 half_life: float | None = None, drift_detector: Any = None,
                 drift_decay: float = 0.5) -> None:
        self._adapt(half_life, drift_detector, drift_decay)
        self.nominal = nominal
        self.domains = domains
        if nominal is not None and (isinstance(nominal, str) or not isinstance(nominal, Iterable)):
            raise ValueError(f"nominal must be an iterable of attribute names, got {nominal!r}")
        if domains is not None and not isinstance(domains, Mapping):
            raise ValueError(f"domains must be a mapping attribute -> values, got {domains!r}")
        self.stats = CountStatistics(Schema(nominal=nominal or (), domains=domains,
                                            numeric=self._numeric, fine_bins=self._fine_bins))
        self.n_learned = 0
        self._cache = StateCache()  # values derived from the state, once per state version

    def _adapt(self, half_life: float | None, drift_detector: Any, drift_decay: float) -> None:
        """Take the parameters of forgetting that every model's constructor passes on.

        ``half_life``: records over which a count halves (None: never forget), applied as the
        service's ``--half-life`` is (:class:`~streamnb.stats.forgetting.Forgetting`, a decay
        every ``half_life / 16`` records, positions counted by ``n_learned``).
        ``drift_detector``: a river drift detector fed the prequential error of each record
        ``learn_one`` learns; when it signals a drift, the counts are multiplied by
        ``drift_decay`` and a structure is re-learned
        (:func:`~streamnb.models.schedule.react_to_drift`, as the service's ``--drift-detector``
        and ``--drift-decay``)."""
        self.half_life = half_life
        self.drift_detector = drift_detector
        self.drift_decay = drift_decay
        validate_params(self)
        self._forgetting = Forgetting(half_life) if half_life is not None else None

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
    @_adapting_one
    def learn_one(self, x: Mapping, y: Any) -> None:
        self.stats.update(x, y, self.n_learned + 1)
        self.n_learned += 1

    def _pieces(self, X: Any, labels: list) -> tuple[Any, Sequence[int]]:
        """The batch ``X`` of ``len(labels)`` records as ``learn_many`` cuts it, and the record
        counts (``n_learned`` after a piece) at which a piece must end besides the decay
        points: ``X`` and none here; a model that updates a structure on a schedule ends a
        piece at each of its points, and one whose structure also follows what the records
        bring (CCICANB: a class or attribute appearing) at the records that bring it."""
        return X, ()

    def _check_many(self, X: Any, labels: list) -> Any:
        """Raise :class:`~streamnb.stats.InvalidRecord` for the first bad record or label of
        a batch (its row named), changing nothing: ``learn_many`` checks a batch it learns in
        pieces before the first (the continuous models check their own way,
        ``models/discriminant.py``). The batch in the form its pieces are learned from: ``X``
        here; a model whose check reads what learning reads again gives it with what it read
        (SpamFilter: the messages' tokens)."""
        self.stats.encode(X, "row")
        for i, y in enumerate(labels):
            if not (type(y) is str or type(y) is int or type(y) is bool):
                self.stats.encode_label(y, RecordName("row", i))
        return X

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

    @_adapting_many
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
        if type(other) is not type(self):
            raise ValueError(f"cannot merge {other!r} into {self!r}: models differ")
        # compared as saved (an estimator by its name and parameters), one at a time so that
        # the message names the parameter (e.g. numeric="bins" against "gaussian")
        params = persistence.init_params(self)
        for name in params:
            others = set(params) - {name}
            if (persistence.params_state(self, others)
                    != persistence.params_state(other, others)):
                raise ValueError(f"cannot merge {type(other).__name__}({name}="
                                 f"{getattr(other, name)!r}) into {type(self).__name__}({name}="
                                 f"{params[name]!r}): models differ")
        self.stats.merge(other.stats)
        self.n_learned += other.n_learned
        return self

    # -- persistence (models/persistence.py) ---------------------------------------------------
    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """What a model keeps beside its statistics: a JSON-able header and arrays."""
        return {}, {}

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Take back what ``_extra_state`` gave, on a model whose statistics are loaded."""
        return None

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The header and arrays of the model's state (:func:`~streamnb.models.persistence
        .to_state`)."""
        return persistence.to_state(self)

    @classmethod
    def from_state(cls, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> CountClassifier:
        """The model a state holds: of the class it names, which must be this one or one of
        its subclasses."""
        return persistence.from_state(header, arrays, cls)

    def save(self, path: str | os.PathLike) -> None:
        """Write the model atomically in streamnb's versioned, checksummed format."""
        persistence.save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> CountClassifier:
        """Read a model written by :meth:`save` (never unpickles anything); the file may hold
        this class or a subclass."""
        return persistence.load(path, cls)
