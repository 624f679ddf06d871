"""Models by the names the command line (``--model``), the service and the benchmarks use.

The names are the presets the models declare in their class statements (``presets=``, see
:class:`~streamnb.models.base.CountClassifier`), read from the classes registered with
``models/persistence.py`` each time: a model defined after this module was imported is found
too. Importing this module imports the ``streamnb.models`` package, hence every built-in model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Set
from functools import partial

from streamnb.models.base import CountClassifier
from streamnb.models.persistence import registered

__all__ = ["CONTINUOUS", "MODELS", "make_model"]


def _presets() -> dict[str, tuple[type[CountClassifier], Mapping]]:
    """Preset name → its class and the constructor arguments it sets (``__init_subclass__``
    refuses a name two classes declare)."""
    return {name: (cls, params) for cls in registered().values()
            for name, params in cls._presets.items()}


class _Models(Mapping[str, Callable[[], CountClassifier]]):
    """Name → a factory of fresh models so named."""

    def __getitem__(self, name: str) -> Callable[[], CountClassifier]:
        cls, params = _presets()[name]
        return partial(cls, **params)

    def __iter__(self) -> Iterator[str]:
        return iter(_presets())

    def __len__(self) -> int:
        return len(_presets())

    def __repr__(self) -> str:
        return f"MODELS({sorted(self)})"


class _Continuous(Set[str]):
    """The names of the continuous models (the classes flagged ``_numeric_only``): a numeric
    block of their own (Gaussian discriminants, kernel densities, CC-ICA), every other field
    read as a naive-Bayes factor beside it."""

    def __contains__(self, name: object) -> bool:
        found = _presets().get(name) if isinstance(name, str) else None
        return found is not None and found[0]._numeric_only

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, (cls, _) in _presets().items() if cls._numeric_only])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @classmethod
    def _from_iterable(cls, names):  # what ``set(MODELS) - CONTINUOUS`` and the like make
        return frozenset(names)

    def __repr__(self) -> str:
        return f"CONTINUOUS({sorted(self)})"


MODELS: Mapping[str, Callable[[], CountClassifier]] = _Models()
#: the continuous models (LDA, QDA, KernelNB, CCICANB): a numeric block, other fields as factors
CONTINUOUS: Set[str] = _Continuous()


def make_model(name: str) -> CountClassifier:
    """A fresh model from its name (see ``MODELS``)."""
    try:
        factory = MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; choose one of {sorted(MODELS)}") from None
    return factory()
