"""The fields a continuous model does not model jointly, as naive-Bayes factors.

LDA, QDA, KernelNB and CCICANB model a record's numbers (``float`` and ``int``) jointly, by a
discriminant or a density. Every other field — a nominal ``str``, a token's ``bool`` presence, a
text's token set — is read as :class:`~streamnb.NaiveBayes` reads it: a factor P(x_i | c) from
the counts of a NaiveBayes that learns every record's other fields (its statistics, estimator
and encoder, so those fields behave, fail and are saved exactly as NaiveBayes' do). The joint
log-likelihood is the sum

    log P(x, c) = d_c(numbers) + Σ_i log P(x_i | c)

(the class prior counted once, in d_c), which assumes the other fields independent of the
numbers and of each other given the class. A field is numeric or not for good: by the
attribute it was first registered as, and a field met for the first time by its value (a number:
numeric; anything else: a factor; missing: neither, nothing registered).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from streamnb.models import persistence
from streamnb.models.naive_bayes import NaiveBayes
from streamnb.stats.domain import Domain
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.frames import is_frame, records_of
from streamnb.stats.values import InvalidRecord, RecordName, is_missing, named

__all__ = ["Factors"]

_NUMERIC, _FACTOR, _NONE = 0, 1, 2


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


class Factors:
    """A continuous model's non-numeric fields: a :class:`~streamnb.NaiveBayes` of them (its
    class counts are of every record the model learned, so token absences count right)."""

    def __init__(self, model: NaiveBayes | None = None) -> None:
        self._model = model if model is not None else NaiveBayes()
        # records without a factor field, per label, not yet counted: counting one is an
        # encoded batch's work, which would double the cost of a numeric record learned
        # one by one; counts add, so they are added when the counts are next read
        self._pending: dict[Any, int] = {}

    @property
    def model(self) -> NaiveBayes:
        """The NaiveBayes of the factor fields, every record counted."""
        if self._pending:
            pending, self._pending = self._pending, {}
            self._count_classes([label for label, n in pending.items() for _ in range(n)])
        return self._model

    @property
    def empty(self) -> bool:
        """No factor attribute yet: predictions are the numeric block's alone."""
        return not self._model.stats.schema.n_attributes

    # -- which fields go where -------------------------------------------------------------
    def _side(self, numeric: Domain, name: Any, value: Any, grow: bool,
              decided: dict[Any, int]) -> int:
        if name in numeric:
            return _NUMERIC
        if name in self._model.stats.schema.attributes:
            return _FACTOR
        if not grow:
            return _NONE  # an unknown attribute is missing to both parts
        if name in decided:
            return decided[name]
        if is_missing(value):
            return _NONE
        side = decided[name] = _NUMERIC if _is_number(value) else _FACTOR
        return side

    def split_one(self, numeric: Domain, x: Any, grow: bool,
                  decided: dict[Any, int] | None = None) -> tuple[Any, dict | None]:
        """``x``'s numeric fields (``x`` itself when it has no others) and its factor fields
        (None when it has none). ``decided``: the sides of the fields met earlier in the same
        batch (a batch is split as its records would be one by one)."""
        if not isinstance(x, Mapping):
            return x, None  # the numeric encoder names the record
        if self.empty and all(type(v) is float and v == v for v in x.values()):
            return x, None  # the common record: numbers, none missing
        decided = {} if decided is None else decided
        sides = [self._side(numeric, k, v, grow, decided) for k, v in x.items()]
        if all(s == _NUMERIC for s in sides):
            return x, None
        num = {k: v for (k, v), s in zip(x.items(), sides, strict=True) if s == _NUMERIC}
        other = {k: v for (k, v), s in zip(x.items(), sides, strict=True) if s == _FACTOR}
        return num, other or None

    def split_many(self, numeric: Domain, X: Any, grow: bool) -> tuple[Any, Any]:
        """A batch's numeric part (``X`` itself when it has no other fields) and its factor part
        (None when it has none): DataFrames by column, other batches by record."""
        if is_frame(X):
            import pandas as pd

            if not any(isinstance(t, pd.SparseDtype) for t in X.dtypes):
                return self._split_frame(numeric, X, grow)
        decided: dict[Any, int] = {}
        records = records_of(X)
        parts = [self.split_one(numeric, x, grow, decided) for x in records]
        if all(other is None for _, other in parts):
            return X, None
        return [num for num, _ in parts], [other or {} for _, other in parts]

    def _split_frame(self, numeric: Domain, X: Any, grow: bool) -> tuple[Any, Any]:
        import pandas as pd

        def numeric_dtype(t: Any) -> bool:
            return pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)

        if self.empty and all(numeric_dtype(t) for t in X.dtypes):
            return X, None
        sides = []
        for name in X.columns:
            observed = X[name][X[name].notna()]
            sides.append(self._side(numeric, name, observed.iloc[0] if len(observed) else None,
                                    grow, {}))
        if all(s == _NUMERIC for s in sides):
            return X, None
        num = X[[c for c, s in zip(X.columns, sides, strict=True) if s == _NUMERIC]]
        other = X[[c for c, s in zip(X.columns, sides, strict=True) if s == _FACTOR]]
        return num, (other if other.shape[1] else None)

    # -- learning ----------------------------------------------------------------------------
    def learn_one(self, x: Mapping | None, label: Any, number: int) -> None:
        """Count record ``number``'s factor fields (none: its class alone). All or nothing."""
        if x:
            self._model.stats.update(x, label, number)
        else:
            self._pending[label] = self._pending.get(label, 0) + 1
        self._model.n_learned += 1

    def learn_many(self, X: Any, labels: Sequence) -> None:
        """Count a batch's factor fields (None: the classes alone). All or nothing: the rows
        with fields are learned (and may be refused, named by their row in ``X``) before the
        others' classes are counted."""
        labels = list(labels)
        rows = self._on_fielded_rows(X, labels, self._model.stats.update_many)
        rest = np.ones(len(labels), dtype=bool)
        rest[rows] = False
        self._count_classes([label for label, r in zip(labels, rest, strict=True) if r])
        self._model.n_learned += len(labels)

    def check_many(self, X: Any, labels: Sequence) -> None:
        """Raise what :meth:`learn_many` of the batch would, changing nothing."""
        self._on_fielded_rows(X, list(labels), self._model._check_many)

    @staticmethod
    def _on_fielded_rows(X: Any, labels: list, act: Any) -> np.ndarray:
        """``act(part, part_labels)`` on the rows of ``X`` that hold a factor field (the
        encoder refuses a record without one), an error named by its row in ``X``: the rows."""
        if X is None:
            rows = np.zeros(0, dtype=np.int64)
        elif is_frame(X):
            rows = np.flatnonzero(X.notna().any(axis=1).to_numpy())
        else:
            rows = np.array([i for i, x in enumerate(X) if x], dtype=np.int64)
        if len(rows):
            part = X.iloc[rows].reset_index(drop=True) if is_frame(X) else [X[i] for i in rows]
            try:
                act(part, [labels[i] for i in rows])
            except InvalidRecord as exc:
                if exc.row is None:
                    raise
                raise named(exc, RecordName("row", int(rows[exc.row]))) from None
        return rows

    def _count_classes(self, labels: Sequence) -> None:
        """Count records of ``labels`` that have no factor field: the class counts token
        absences are read against (the encoder refuses a record without features)."""
        if not labels:
            return
        stats = self._model.stats
        classes = [stats.labels.add(v) for v in labels]
        empty = np.zeros(0, dtype=np.int64)
        stats.add_batch(EncodedBatch(len(classes), empty, empty, {}), classes)

    def decay(self, factor: float) -> None:
        self.model.decay(factor)

    def merged(self, other: Factors, numeric: Domain, other_numeric: Domain) -> Factors:
        """The factors of both models, ``self`` unchanged (the caller merges the numeric
        block, then takes them): refused where one model's numeric field is the other's
        factor."""
        for names, fields in ((numeric, other.model.stats.schema.attributes),
                              (other_numeric, self.model.stats.schema.attributes)):
            clash = [name for name in fields if name in names]
            if clash:
                raise ValueError(f"cannot merge: field {clash[0]!r} is numeric in one model "
                                 f"and nominal or token in the other")
        out = Factors()
        out.model.merge(self.model).merge(other.model)
        return out

    # -- prediction --------------------------------------------------------------------------
    def _aligned(self, labels: Sequence, finite: np.ndarray, zeros: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The factors without NaiveBayes' class prior (the numeric block has one), in the
        order of ``labels``; a class the factors never counted gets none."""
        stats = self.model.stats
        prior, prior_zeros = self.model._estimator.log_class_prior(stats)
        finite, zeros = finite - prior, zeros - prior_zeros
        index = stats.labels.index
        at = np.array([index.get(v, -1) for v in labels], dtype=np.int64)
        known = at >= 0
        out_f = np.zeros((finite.shape[0], len(labels)))
        out_z = np.zeros((finite.shape[0], len(labels)), dtype=np.int64)
        out_f[:, known] = finite[:, at[known]]
        out_z[:, known] = zeros[:, at[known]]
        return out_f, out_z

    def add_one(self, labels: Sequence, x: Mapping | None, finite: Any, zeros: Any
                ) -> tuple[Any, Any]:
        """``finite``, ``zeros`` of one record's numeric block plus its factors."""
        if x is None or self.empty:
            return finite, zeros
        scores = self.model._log_likelihood_one(x)
        if scores is None:
            return finite, zeros
        f, z = self._aligned(labels, np.frombuffer(scores[0])[None],
                             np.frombuffer(scores[1], dtype=np.int64)[None])
        return np.asarray(finite) + f[0], np.asarray(zeros) + z[0]

    def add_many(self, labels: Sequence, X: Any, where: str, finite: np.ndarray,
                 zeros: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A batch's numeric-block rows plus its factors."""
        if X is None or self.empty or not self.model.stats.n_classes:
            return finite, zeros
        f, z = self._aligned(labels, *self.model._joint_log_likelihood(X, where))
        return finite + f, zeros + z

    # -- persistence -------------------------------------------------------------------------
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        header, arrays = persistence.to_state(self.model)
        return {"factors": header}, {f"factors.{k}": v for k, v in arrays.items()}

    @classmethod
    def from_state(cls, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Factors:
        """The factors a model's state holds; none in a state written before models took
        them (a model of numbers only, whose class counts the factors start from zero)."""
        if "factors" not in meta:
            return cls()
        inner = {k[len("factors."):]: v for k, v in arrays.items() if k.startswith("factors.")}
        return cls(persistence.from_state(meta["factors"], inner, NaiveBayes))
