"""Each C extension exports exactly the kernels its Python twin module lists in ``__all__`` (the
one list, streamnb/_accel/choose.py), and the choice between them honours
``STREAMNB_PURE_PYTHON`` and a missing build."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from streamnb._accel.choose import choose

# each twin module and its extension
MODULES = [("streamnb._accel.names", "streamnb._accel._names"),
           ("streamnb._accel.kernels", "streamnb._accel._kernels"),
           ("streamnb.features.scan", "streamnb.features._scan"),
           ("streamnb._accel.ppm", "streamnb._accel._ppm")]


@pytest.mark.parametrize(("twin", "extension"), MODULES)
def test_an_extension_exports_its_twins_list(twin, extension):
    """A kernel added to one side only fails here: the extension's public names are the twin
    module's ``__all__``, each a twin defined in Python."""
    module = importlib.import_module(twin)
    c = pytest.importorskip(extension, reason="C extension not built")
    exported = {name for name in dir(c) if not name.startswith("_")}
    assert exported == set(module.__all__)
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:
        python = getattr(module.twin, name)
        assert python.__module__ == twin and python is not getattr(c, name)
        # what callers import is the extension's, unless the twins were asked for
        chosen = getattr(module, name)
        assert chosen is (python if not module.ACCELERATED else getattr(c, name))


@pytest.mark.parametrize(("twin", "extension"), MODULES)
def test_pure_python_forces_every_twin(twin, extension):
    """``STREAMNB_PURE_PYTHON=1`` binds every kernel of every module to its twin (a fresh
    interpreter: the choice is made at import)."""
    script = (f"import {twin} as m\n"
              "assert not m.ACCELERATED\n"
              "assert all(getattr(m, n) is getattr(m.twin, n) for n in m.__all__)\n")
    env = {"STREAMNB_PURE_PYTHON": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", script], check=True, env=env)


@pytest.mark.parametrize("extension", [extension for _, extension in MODULES])
def test_an_extension_imports_first_of_all(extension):
    """An extension imported before anything of streamnb (the token kernels then import the
    name table's C functions themselves)."""
    pytest.importorskip(extension, reason="C extension not built")
    subprocess.run([sys.executable, "-c", f"import {extension}"], check=True,
                   env={"PATH": "/usr/bin:/bin"})


def _namespace() -> dict:
    def kernel() -> str:
        return "twin"

    return {"__all__": ["kernel"], "kernel": kernel}


def test_a_missing_extension_leaves_the_twins(monkeypatch):
    monkeypatch.delenv("STREAMNB_PURE_PYTHON", raising=False)
    namespace = _namespace()
    twin, accelerated = choose(namespace, "streamnb._accel._no_such_extension")
    assert not accelerated and namespace["kernel"] is twin.kernel and twin.kernel() == "twin"


def test_an_extension_without_a_listed_kernel_is_refused(monkeypatch):
    """A stale build (a kernel listed but not exported) is an error, not a mix of the two."""
    monkeypatch.delenv("STREAMNB_PURE_PYTHON", raising=False)
    pytest.importorskip("streamnb._accel._names", reason="C name table not built")
    with pytest.raises(ImportError, match=r"streamnb\._accel\._names has no kernel: rebuild"):
        choose(_namespace(), "streamnb._accel._names")


def test_pure_python_zero_is_unset(monkeypatch):
    pytest.importorskip("streamnb._accel._names", reason="C name table not built")
    monkeypatch.setenv("STREAMNB_PURE_PYTHON", "0")
    namespace = {"__all__": ["NameTable"], "NameTable": object}
    twin, accelerated = choose(namespace, "streamnb._accel._names")
    assert accelerated and namespace["NameTable"].__module__ == "streamnb._accel._names"
    monkeypatch.setenv("STREAMNB_PURE_PYTHON", "1")
    namespace = {"__all__": ["NameTable"], "NameTable": object}
    twin, accelerated = choose(namespace, "streamnb._accel._names")
    assert not accelerated and namespace["NameTable"] is object is twin.NameTable
