"""The layer rules of docs/architecture.md that code review alone would let slip.

- Everything above the stats layer (models, estimators, structure, features, the CLI, the
  service in consumers/) reads the statistics through their public surface: no
  ``stats._vc``, ``schema._column_attribute``, ``Schema._token_present``, ``pairs._since``, …
  (private names of stats-layer objects).
- Attribute kinds are compared with their names (``NOMINAL``, ``TOKEN``, …), never with bare
  integers (``kind in (0, 1)``).
- The library never imports the service: no module of ``streamnb/`` but ``cli.py`` imports
  ``streamnb.consumers``, and ``cli.py`` only inside the functions that dispatch to it; no code
  imports a top-level ``consumers`` (the service is installed as ``streamnb.consumers`` only).
- Models register themselves: ``models/base.py`` imports no model and not the registry (only
  ``models/persistence.py``, which imports no model), and ``models/registry.py`` lists none.
- The service stays in parts a newcomer can read one at a time: no class of ``consumers/``
  over :data:`MAX_CLASS_LINES` lines and no module over :data:`MAX_MODULE_LINES`
  (docs/architecture.md, "The service's parts").
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import streamnb

PACKAGE = Path(streamnb.__file__).parent
# modules above the stats layer, which must use its public surface
ABOVE_STATS = sorted([p for p in PACKAGE.rglob("*.py")
                      if p.relative_to(PACKAGE).parts[0] not in ("stats", "_accel")]
                     + list((PACKAGE.parent / "consumers").rglob("*.py")))
SERVICE = PACKAGE.parent / "consumers"
# every Python file of the repository's code, the service's, tests and benchmarks included
ALL_CODE = sorted(p for folder in (PACKAGE, SERVICE, PACKAGE.parent / "tests",
                                   PACKAGE.parent / "benchmarks")
                  for p in folder.rglob("*.py"))
# names under which code holds stats-layer objects (an instance or its class)
# the size of one concern: a class to read in one sitting, a module of one such class and its
# helpers (docs/architecture.md)
MAX_CLASS_LINES = 300
MAX_MODULE_LINES = 600
STATS_OBJECTS = {"stats", "schema", "pairs", "Schema", "PairCounts", "CountStatistics",
                 "EncodedBatch", "Encoded", "reservoir", "sample", "tokens", "moments"}


def _holder(node: ast.expr) -> str | None:
    """The name an attribute is read from: ``stats`` in ``stats._vc`` and ``self.stats._vc``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def private_stats_reads(source: str) -> list[str]:
    """``holder._name`` reads of a private name of a stats-layer object in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__") and _holder(node.value) in STATS_OBJECTS):
            found.append((node.lineno, f"{_holder(node.value)}.{node.attr}"))
    return [f"line {line}: {text}" for line, text in sorted(found)]


def _is_int_constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_int_constant(e) for e in node.elts)
    return False


def _mentions_kind(node: ast.expr) -> bool:
    """``kind``, ``x.kind``, ``kinds[a]``, ``schema.kinds[a]``, ``self.kind(a)``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Subscript):
        node = node.value
    name = _holder(node)
    return name in {"kind", "kinds"}


def bare_kind_comparisons(source: str) -> list[str]:
    """Comparisons of an attribute kind with integer literals in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_mentions_kind(s) for s in sides) and any(_is_int_constant(s) for s in sides):
                found.append((node.lineno, ast.unparse(node)))
    return [f"line {line}: {text}" for line, text in sorted(found)]


def _imported(node: ast.stmt) -> list[str]:
    """The modules an import statement names (``a.b`` and ``a.b.c`` for ``from a.b import c``,
    which may import a submodule); relative imports count from nothing (they stay in their own
    package)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


def model_imports(source: str) -> list[str]:
    """The modules of ``streamnb.models`` that ``source`` imports when it runs (an ``if
    TYPE_CHECKING:`` block does not run): ``streamnb.models.<module>``, or ``streamnb.models``
    for a name of the package itself (which imports every model)."""
    modules = {p.stem for p in (PACKAGE / "models").glob("*.py")}
    found = set()
    pending = list(ast.parse(source).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            pending.extend(node.orelse)
            continue
        for name in _imported(node):
            parts = name.split(".")
            if parts[:2] == ["streamnb", "models"]:
                found.add(".".join(parts[:3]) if parts[2:3] and parts[2] in modules
                          else "streamnb.models")
        pending.extend(ast.iter_child_nodes(node))
    return sorted(found)


def service_imports(source: str, module_level_only: bool = False) -> list[str]:
    """Imports of the service (``streamnb.consumers``, or a top-level ``consumers``) in
    ``source``: all of them, or those run when the module is imported (its top-level
    statements)."""
    tree = ast.parse(source)
    nodes = tree.body if module_level_only else ast.walk(tree)
    found = set()
    for node in nodes:
        for name in _imported(node):
            if (name == "consumers" or name.startswith("consumers.")
                    or name == "streamnb.consumers" or name.startswith("streamnb.consumers.")):
                found.add((node.lineno, ast.unparse(node)))
    return [f"line {line}: {text}" for line, text in sorted(found)]


def oversized(source: str) -> list[str]:
    """The classes of ``source`` over :data:`MAX_CLASS_LINES` lines (from ``class`` to their
    last line, nested classes included in their own count too), and the module itself if it is
    over :data:`MAX_MODULE_LINES`."""
    found = [f"class {node.name}: {node.end_lineno - node.lineno + 1} lines"
             for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)
             and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES]
    lines = len(source.splitlines())
    return found + ([f"module: {lines} lines"] if lines > MAX_MODULE_LINES else [])


def test_the_size_scanner_counts_every_line_of_a_class():
    def cls(name: str, body_lines: int, indent: str = "") -> str:
        return (f"{indent}class {name}:\n"
                + "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines)))

    assert oversized(cls("Fits", MAX_CLASS_LINES - 1)) == []
    assert oversized(cls("Big", MAX_CLASS_LINES)) == [f"class Big: {MAX_CLASS_LINES + 1} lines"]
    nested = "class Outer:\n" + cls("Inner", MAX_CLASS_LINES, "    ")
    assert oversized(nested) == [f"class Outer: {MAX_CLASS_LINES + 2} lines",
                                 f"class Inner: {MAX_CLASS_LINES + 1} lines"]
    assert oversized("x = 1\n" * (MAX_MODULE_LINES + 1)) == [
        f"module: {MAX_MODULE_LINES + 1} lines"]


@pytest.mark.parametrize("path", sorted(SERVICE.glob("*.py")),
                         ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_class_or_module_of_the_service_is_over_its_size(path: Path):
    assert oversized(path.read_text(encoding="utf-8")) == []


def test_the_scanners_find_what_they_look_for():
    # the rules below pass because the code is clean, not because the scanners see nothing
    assert private_stats_reads("a = stats._vc[0]\nb = self.stats._cc\nc = self._vc\n"
                               "Schema._token_present(v, r, n)\npairs._since(s, -1)\n"
                               "d = schema.__class__\n") == [
        "line 1: stats._vc", "line 2: stats._cc", "line 4: Schema._token_present",
        "line 5: pairs._since"]
    assert bare_kind_comparisons("a = kind in (0, 1)\nb = schema.kinds[a] == 2\n"
                                 "c = kinds[a] != TOKEN\nd = self.kind(a) == 1\n"
                                 "e = len(kinds) == 0\n") == [
        "line 1: kind in (0, 1)", "line 2: schema.kinds[a] == 2",
        "line 4: self.kind(a) == 1"]
    source = ("import consumers.state\nfrom streamnb import consumers\n"
              "from streamnb.models import tan\nfrom .config import X\n"
              "def f():\n    from streamnb.consumers.demo import run\n"
              "import streamnb.consumers_like\n")
    assert service_imports(source) == [
        "line 1: import consumers.state", "line 2: from streamnb import consumers",
        "line 6: from streamnb.consumers.demo import run"]
    assert service_imports(source, module_level_only=True) == [
        "line 1: import consumers.state", "line 2: from streamnb import consumers"]
    assert model_imports("import streamnb.models.tan as t\nif TYPE_CHECKING:\n"
                         "    from streamnb.models.aode import AODE\n"
                         "def f():\n    from streamnb.models.registry import MODELS\n"
                         "from streamnb.models.persistence import load\n") == [
        "streamnb.models.persistence", "streamnb.models.registry", "streamnb.models.tan"]
    assert model_imports("from streamnb.models import TAN\n") == ["streamnb.models"]
    assert model_imports("from streamnb.models import tan\n") == [
        "streamnb.models", "streamnb.models.tan"]


@pytest.mark.parametrize("path", ABOVE_STATS, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_models_read_the_statistics_through_their_public_surface(path: Path):
    assert private_stats_reads(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", [p for p in sorted(PACKAGE.rglob("*.py"))
                                  if p.name != "values.py"],
                         ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_attribute_kinds_are_compared_by_name(path: Path):
    assert bare_kind_comparisons(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", [p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "cli.py"],
                         ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_the_library_never_imports_the_service(path: Path):
    # stats … models, features, evaluate, datasets and the other CLI modules sit below the service
    assert service_imports(path.read_text(encoding="utf-8")) == []


def test_the_command_line_imports_the_service_only_to_dispatch_to_it():
    # `import streamnb.cli` loads no service code: the commands that run it import it when run
    source = (PACKAGE / "cli.py").read_text(encoding="utf-8")
    assert service_imports(source, module_level_only=True) == []
    assert service_imports(source) != []  # serve, broker and the Kafka demo do dispatch to it


@pytest.mark.parametrize("path", ALL_CODE, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_nothing_imports_a_top_level_consumers_package(path: Path):
    assert [line for line in service_imports(path.read_text(encoding="utf-8"))
            if ": import consumers" in line or ": from consumers" in line] == []


def test_the_model_base_imports_no_model_and_no_registry():
    """models/base.py reaches its subclasses through their registrations only; the registry
    reads them there, listing no model of its own."""
    def scan(name: str) -> list[str]:
        return model_imports((PACKAGE / "models" / name).read_text(encoding="utf-8"))

    # besides persistence, the helpers every model shares: parameter checks and the schedule
    # of relearns and drift reactions (neither imports a model)
    assert scan("base.py") == ["streamnb.models.params", "streamnb.models.persistence",
                               "streamnb.models.schedule"]
    assert scan("params.py") == [] and scan("schedule.py") == []
    # a state file's name imports the module that declares it, by the registry's table
    assert scan("persistence.py") == ["streamnb.models.registry"]
    assert scan("registry.py") == ["streamnb.models.base", "streamnb.models.persistence"]


def test_importing_the_package_loads_no_model_until_a_name_is_used():
    """``import streamnb`` is cheap (the publisher process imports it to start); each public
    name is the object of the module it comes from, loaded when first used; the spam filter
    (``streamnb score``, one process a message) imports neither scipy nor another model."""
    code = ("import sys, streamnb, streamnb.consumers.publisher\n"
            "print(sorted(m for m in ('scipy', 'streamnb.models', 'streamnb.estimators')"
            " if m in sys.modules))\n"
            "streamnb.SpamFilter\n"
            "print('streamnb.models' in sys.modules)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'"
            " or m in ('streamnb.models.naive_bayes', 'streamnb.models.tan')))\n")
    from streamnb.consumers.children import child_environment  # how the service starts one

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=child_environment()).stdout.split("\n")
    assert out[:3] == ["[]", "True", "[]"]
    for package in (streamnb, streamnb.models):
        for name in package.__all__:
            value = getattr(package, name)
            if name != "__version__":
                assert getattr(importlib.import_module(package._SOURCES[name]), name) is value
        assert set(package.__all__) <= set(dir(package))
        # the names type checkers see (imported under TYPE_CHECKING) are the public ones,
        # each from the module it is loaded from
        tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
        guarded = next(node for node in tree.body if isinstance(node, ast.If)
                       and getattr(node.test, "id", None) == "TYPE_CHECKING")
        seen = {alias.name: node.module for node in guarded.body for alias in node.names}
        assert seen == package._SOURCES
        assert set(package.__all__) - {"__version__"} == set(package._SOURCES)
    assert streamnb.stats.CountStatistics is streamnb.CountStatistics  # subpackages resolve
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        streamnb.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        streamnb.models.no_such_name  # noqa: B018


def test_the_twins_pass_leaves_out_only_modules_that_exist():
    """tests/conftest.py's ``SAME_EITHER_WAY`` names the test modules the pass with the Python
    twins skips; a renamed or split module must not silently drop out of, or stay in, it."""
    from tests.conftest import SAME_EITHER_WAY

    tests = PACKAGE.parent / "tests"
    assert {name for name in SAME_EITHER_WAY if not (tests / name).is_file()} == set()
    # the kernels' own comparisons run both implementations in one process: every module of
    # tests that uses their comparison helper (tests/twins.py)
    comparing = {p.name for p in tests.glob("test_*.py")
                 if "from twins import" in p.read_text() or "import twins" in p.read_text()}
    assert comparing and comparing <= SAME_EITHER_WAY
