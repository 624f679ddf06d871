"""Models by the names the command line (``--model``), the service and the benchmarks use.

The names are the presets the models declare in their class statements (``presets=``, see
:class:`~streamnb.models.base.CountClassifier`), read from the classes registered with
``models/persistence.py`` each time: a model defined after this module was imported is found
too. A built-in model's module is imported when one of its names is first asked for
(``BUILTIN``), every one of them when all names are listed: a command that runs one model
imports that one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Set
from functools import partial

from streamnb.models.base import CountClassifier
from streamnb.models.persistence import registered

__all__ = ["BUILTIN", "CONTINUOUS", "MODELS", "import_builtin", "make_model"]

#: each built-in model module: the state names and presets its classes declare, so that a
#: state file or ``--model NAME`` imports the one module that holds the name
#: (tests/test_model_registration.py checks it against what the modules register)
BUILTIN: Mapping[str, tuple[str, ...]] = {
    "streamnb.models.aode": ("AODE", "aode"),
    "streamnb.models.ccica_nb": ("CCICANB", "ccica-nb"),
    "streamnb.models.indifferent_nb": ("IndifferentNB", "indifferent", "indifferent-bins",
                                       "indifferent-mdl"),
    "streamnb.models.kernel_nb": ("KernelNB", "kernel-nb"),
    "streamnb.models.lda": ("LDA", "lda"),
    "streamnb.models.naive_bayes": ("NaiveBayes", "ml", "laplace", "m-estimate", "bibl",
                                    "laplace-bins", "laplace-mdl"),
    "streamnb.models.qda": ("QDA", "qda"),
    "streamnb.models.selective_bn": ("SelectiveBN", "selective-bn"),
    "streamnb.models.selective_nb": ("SelectiveNB", "selective-nb"),
    "streamnb.models.selective_tan": ("SelectiveTAN", "selective-tan"),
    "streamnb.models.spam_filter": ("SpamFilter", "spam-filter"),
    "streamnb.models.tan": ("TAN", "tan", "tan-ddr", "tan-bayes", "tan-cmi"),
}
_MODULE_OF = {name: module for module, names in BUILTIN.items() for name in names}


def import_builtin(name: str | None = None) -> None:
    """Import the built-in model module that declares ``name`` (a state name or a preset;
    none for a name no built-in declares), or every one of them when ``name`` is None."""
    for module in BUILTIN if name is None else [_MODULE_OF.get(name)]:
        if module is not None:
            importlib.import_module(module)


def _presets() -> dict[str, tuple[type[CountClassifier], Mapping]]:
    """Preset name → its class and the constructor arguments it sets (``__init_subclass__``
    refuses a name two classes declare), of every built-in model and those defined since."""
    import_builtin()
    return _loaded_presets()


def _loaded_presets() -> dict[str, tuple[type[CountClassifier], Mapping]]:
    return {name: (cls, params) for cls in registered().values()
            for name, params in cls._presets.items()}


def _preset(name: object) -> tuple[type[CountClassifier], Mapping] | None:
    """The class and arguments of the preset ``name``, importing only the module it needs."""
    if not isinstance(name, str):
        return None
    if name not in _loaded_presets():
        import_builtin(name)
    return _loaded_presets().get(name)


class _Models(Mapping[str, Callable[[], CountClassifier]]):
    """Name → a factory of fresh models so named."""

    def __getitem__(self, name: str) -> Callable[[], CountClassifier]:
        found = _preset(name)
        if found is None:
            raise KeyError(name)
        cls, params = found
        return partial(cls, **params)

    def __iter__(self) -> Iterator[str]:
        return iter(_presets())

    def __len__(self) -> int:
        return len(_presets())

    def __repr__(self) -> str:
        return f"MODELS({sorted(self)})"


class _Continuous(Set[str]):
    """The names of the continuous models (the classes flagged ``_continuous``): a numeric
    block of their own (Gaussian discriminants, kernel densities, CC-ICA), every other field
    read as a naive-Bayes factor beside it."""

    def __contains__(self, name: object) -> bool:
        found = _preset(name)
        return found is not None and found[0]._continuous

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, (cls, _) in _presets().items() if cls._continuous])

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
