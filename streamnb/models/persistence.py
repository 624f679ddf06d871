"""A model's part of a state file, and the state names models register under.

The header of a model's state (``stats/persist.py`` writes it with the arrays) holds
``{"model": <state name>, "params": <constructor arguments>, "n_learned": …, "statistics":
<the statistics' header>, "extra": <the model's own header>}``; the arrays are the statistics'
and the model's own, the latter prefixed ``extra.``.

A class has a state name when its class statement declares one
(``class TAN(PairwiseNaiveBayes, state_name="TAN")``: ``CountClassifier.__init_subclass__``
calls :func:`register`). The name is what a file records, so it stays when the class is renamed
or moved. This module imports no model: a class is known once its module has run; a built-in
model's module is imported when a file names it (``registry.BUILTIN``). A model defined
elsewhere is known once its module is imported, as pickle would need it.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from streamnb.estimators import ESTIMATORS, Estimator
from streamnb.stats import read_state, write_state
from streamnb.stats.codec import from_json_value, to_json_value
from streamnb.stats.persist import StateFileError, header_int

if TYPE_CHECKING:
    from streamnb.models.base import CountClassifier

__all__ = ["from_state", "init_params", "load", "load_model", "model_class", "params_state",
           "register", "registered", "save", "state_name", "to_state"]

Model = TypeVar("Model", bound="CountClassifier")

_CLASSES: dict[str, type[CountClassifier]] = {}  # state name → class, in definition order
_NAMES: dict[type, str] = {}  # and back


def _where(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register(cls: type[CountClassifier], name: str) -> None:
    """Record ``cls`` under the state name ``name``. A name another class holds is refused;
    the same class defined again (same module and qualified name: a reloaded module, a
    notebook cell run twice) takes its name over."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"{_where(cls)}: state_name must be a non-empty str, got {name!r}")
    held = _CLASSES.get(name)
    if held is not None and _where(held) != _where(cls):
        raise ValueError(f"{_where(cls)}: state name {name!r} is already {_where(held)}'s")
    if held is not None:
        del _NAMES[held]
    _CLASSES[name] = cls
    _NAMES[cls] = name


def registered() -> Mapping[str, type[CountClassifier]]:
    """State name → class of every registered model (a live, read-only view)."""
    return MappingProxyType(_CLASSES)


def model_class(name: Any) -> type[CountClassifier] | None:
    """The class registered under the state name ``name`` (a built-in model's module imported
    first if need be); None if there is none."""
    if not isinstance(name, str):
        return None
    if name not in _CLASSES:
        from streamnb.models.registry import import_builtin  # which imports this module

        import_builtin(name)
    return _CLASSES.get(name)


def state_name(cls: type) -> str | None:
    """The state name ``cls`` declared (not inherited: a subclass writes a file only under a
    name of its own); None if it declared none."""
    return _NAMES.get(cls)


# -- parameters --------------------------------------------------------------------------------
def init_params(obj: Any) -> dict[str, Any]:
    """The constructor arguments of ``obj`` as given (river's ``_get_params`` turns nested
    estimators into (class, params) tuples; a state file wants them as values)."""
    init = type(obj).__init__
    if init is object.__init__:
        return {}
    names = [name for name, p in inspect.signature(init).parameters.items()
             if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return {name: getattr(obj, name) for name in names}


#: where a drift detector saved as a parameter may come from (a class is imported by name)
_DETECTOR_MODULES = "river.drift"


def _encode_param(value: Any) -> Any:
    if type(value).__module__.startswith(_DETECTOR_MODULES + "."):
        # a model's drift_detector, by its class and parameters: a loaded model watches with
        # a fresh one (its running state is not saved; ADWIN's is not plain data)
        return {"drift_detector": f"{type(value).__module__}:{type(value).__qualname__}",
                "params": _encode_param(value._get_params())}
    if isinstance(value, Estimator):
        return {"estimator": value.name, "params": _encode_param(init_params(value))}
    if isinstance(value, dict):
        return {"map": [[to_json_value(k), _encode_param(v)] for k, v in value.items()]}
    return to_json_value(value)


def _decode_param(value: Any) -> Any:
    if isinstance(value, dict) and "drift_detector" in value:
        module, _, name = str(value["drift_detector"]).partition(":")
        if not module.startswith(_DETECTOR_MODULES + "."):
            raise ValueError(f"drift detector {value['drift_detector']!r} is not river's")
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"no drift detector {value['drift_detector']!r}: {exc}") from None
        return cls(**_decode_param(value["params"]))
    if isinstance(value, dict) and "estimator" in value:
        cls = ESTIMATORS[value["estimator"]]
        return cls(**_decode_param(value["params"]))
    if isinstance(value, dict) and "map" in value:
        return {from_json_value(k): _decode_param(v) for k, v in value["map"]}
    return from_json_value(value)


def params_state(model: Any, skip: Collection[str] = ()) -> Any:
    """``model``'s constructor arguments as its state file records them (``skip``: names left
    out): equal for models built alike, an estimator compared by its name and parameters."""
    return _encode_param({k: v for k, v in init_params(model).items() if k not in skip})


# -- state -------------------------------------------------------------------------------------
def to_state(model: CountClassifier) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and arrays of ``model``'s state."""
    name = state_name(type(model))
    if name is None:
        raise TypeError(f"{_where(type(model))} has no state name to save under: declare one "
                        f"in its class statement ({type(model).__name__}(…, state_name=…))")
    meta, arrays = model.stats.to_state()
    extra_meta, extra_arrays = model._extra_state()
    header = {"model": name, "params": params_state(model), "n_learned": model.n_learned,
              "statistics": meta, "extra": extra_meta}
    return header, {**arrays, **{f"extra.{k}": v for k, v in extra_arrays.items()}}


def from_state(header: Mapping[str, Any], arrays: Mapping[str, np.ndarray],
               expected: type[Model] | None = None) -> Model:
    """The model a state holds, of the class its header names (which must be ``expected`` or
    a subclass of it). A state naming no known class or inconsistent with the class raises
    :class:`~streamnb.StateFileError`."""
    name = header.get("model")
    cls = model_class(name)
    if cls is None:
        raise StateFileError(f"unknown model {name!r} in state (a model is known once the "
                             "module that defines it is imported)")
    if expected is not None and not issubclass(cls, expected):
        raise StateFileError(f"state holds a {name}, not a {expected.__name__}")
    try:
        model = cls(**_decode_param(header["params"]))
        model.stats = cls._statistics.from_state(header["statistics"], arrays)
        model.n_learned = header_int(header["n_learned"], "n_learned")
        extra = {k[len("extra."):]: v for k, v in arrays.items() if k.startswith("extra.")}
        model._restore_extra(header.get("extra", {}), extra)
    except StateFileError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise StateFileError(f"inconsistent model state: {exc}") from exc
    return model


def save(model: CountClassifier, path: str | os.PathLike) -> None:
    """Write ``model`` atomically in streamnb's versioned, checksummed format."""
    write_state(path, *to_state(model))


def load(path: str | os.PathLike, expected: type[Model] | None = None) -> Model:
    """Read a model written by :func:`save` (never unpickles anything)."""
    header, arrays = read_state(path)
    return from_state(header, arrays, expected)


def load_model(path: str | os.PathLike) -> CountClassifier:
    """Load any streamnb model from a state file."""
    return load(path)
