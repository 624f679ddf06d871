"""What the package installs: ``streamnb`` with the service as ``streamnb.consumers`` (its sources
in the top-level folder consumers/), and no top-level ``consumers`` package, whose name a PyPI
project holds (pyproject.toml). The service's doctests run here, under the installed name,
because pytest would import consumers/ by path as a top-level package."""

from __future__ import annotations

import doctest
import importlib
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"]


def _tree_packages() -> dict[str, Path]:
    """Every package of the sources, by the name it is installed under."""
    found = {".".join(p.parent.relative_to(ROOT).parts): p.parent
             for p in (ROOT / "streamnb").rglob("__init__.py")}
    found["streamnb.consumers"] = ROOT / "consumers"
    return found


def test_pyproject_installs_every_package_of_the_tree_and_the_service_under_streamnb():
    assert sorted(SETUPTOOLS["packages"]) == sorted(_tree_packages())
    assert SETUPTOOLS["package-dir"] == {"streamnb.consumers": "consumers"}
    assert not any(name.split(".")[0] != "streamnb" for name in SETUPTOOLS["packages"])


def test_the_installed_service_is_this_checkouts_and_consumers_is_not_importable(tmp_path: Path):
    # from an empty directory and without PYTHONPATH, so that only the installed package is found
    probe = ("import importlib.util, streamnb\nprint(streamnb.__file__)\n"
             "spec = importlib.util.find_spec('streamnb.consumers')\n"
             "print(spec.origin if spec else 'not installed')\n"
             "print(importlib.util.find_spec('consumers'))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert Path(out[0]) == ROOT / "streamnb" / "__init__.py", (
        f"streamnb is installed from {out[0]}, not this checkout, whose consumers/ is then not "
        f"the streamnb.consumers any process imports: pip install -e {ROOT} (in a venv made "
        f"with --system-site-packages, for a second checkout)")
    assert Path(out[1]) == ROOT / "consumers" / "__init__.py", (
        f"streamnb.consumers is installed from {out[1]}, not this checkout's consumers/ "
        f"(a PYTHONPATH checkout imports the installed one's service): pip install -e {ROOT}")
    assert out[2] == "None"


def test_child_processes_import_the_running_streamnb_not_one_in_their_working_directory(
        tmp_path: Path):
    """The service, its publisher and the demo start Python children as ``python -m …``, whose
    working directory would come first on ``sys.path``. Run from a checkout with streamnb
    installed from it (not editable: README's `pip install ".[…]"`), the checkout's ``streamnb/``
    (which has no ``consumers``) shadowed the installed package and the demo's service died on
    ``import streamnb.consumers``. Here the working directory holds a decoy ``streamnb``."""
    from streamnb.consumers.children import child_environment

    decoy = tmp_path / "streamnb"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise ImportError('the working directory decoy')\n")
    probe = "import streamnb, streamnb.consumers.children\nprint(streamnb.__file__)"
    for argv in ([sys.executable, "-c", probe],
                 [sys.executable, "-m", "streamnb.consumers.children"]):
        result = subprocess.run(argv, cwd=tmp_path, env=child_environment(), capture_output=True,
                                text=True, check=False)
        assert result.returncode == 0, result.stderr
        assert "decoy" not in result.stderr
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=child_environment(),
                         capture_output=True, text=True, check=True).stdout.strip()
    assert Path(out) == Path(importlib.import_module("streamnb").__file__)


SERVICE_MODULES = sorted(p.stem for p in (ROOT / "consumers").glob("*.py")
                         if p.stem not in ("__init__", "__main__"))


@pytest.mark.parametrize("name", SERVICE_MODULES)
def test_the_service_doctests(name: str):
    module = importlib.import_module(f"streamnb.consumers.{name}")
    # the flags of pyproject.toml's doctest_optionflags, which the other modules' doctests get
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    runner = doctest.DocTestRunner(optionflags=flags)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(module, module.__name__):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    has_examples = ">>>" in (ROOT / "consumers" / f"{name}.py").read_text(encoding="utf-8")
    assert (runner.tries > 0) == has_examples


@pytest.mark.slow
def test_the_wheel_holds_streamnb_consumers_and_no_top_level_consumers(tmp_path: Path):
    # a copy of the tracked files, so that the build leaves nothing in the checkout
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split("\n")
    source = tmp_path / "src"
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                    "--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(source)],
                   check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("streamnb-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert "streamnb" in top and all(t.endswith(".dist-info") for t in top - {"streamnb"})
    tracked = {n for n in files if n.endswith(".py")}
    installed = {n.replace("streamnb/consumers/", "consumers/", 1) for n in names
                 if n.endswith(".py")}
    assert installed == {n for n in tracked if n.startswith(("streamnb/", "consumers/"))}


def test_the_project_urls_are_no_placeholders():
    """A package index shows each project URL as a link: none may point at a reserved or
    example name (RFC 2606/6761), which would be a link to nowhere."""
    from urllib.parse import urlsplit

    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get(
        "urls", {})
    reserved = (".invalid", ".example", ".test", ".localhost", "example.com", "example.org",
                "example.net")
    placeholders = {label: url for label, url in urls.items()
                    if (urlsplit(url).hostname or "").endswith(reserved)
                    or urlsplit(url).hostname in ("localhost", None)}
    assert not placeholders, placeholders
