"""Models register themselves in their class statements (``state_name=``, ``presets=``):
state files find their class by the state name, the command line and the service find a model
by its presets, and a new model needs nothing else (docs/architecture.md, "Adding a model")."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import streamnb.models
from streamnb import TAN, CountClassifier, NaiveBayes
from streamnb.models.persistence import model_class, registered
from streamnb.models.registry import CONTINUOUS, MODELS, make_model

# a model defined outside the package (a user's module, here a fresh process), as a newcomer
# would add one: its class statement and nothing else
NEW_MODEL = '''
import json, sys
from pathlib import Path

from streamnb import CountClassifier, NaiveBayes, load_model
from streamnb.cli_evaluate import model_factory
from streamnb.consumers.state import model_factory as service_model_factory
from streamnb.models.persistence import model_class
from streamnb.models.registry import MODELS, CONTINUOUS, make_model
from streamnb.stats import read_state


def define():
    class RecentNB(NaiveBayes, state_name="RecentNB", presets={"recent-nb": {"keep": 2}}):
        """Naive Bayes that also remembers the labels of its last ``keep`` records."""

        def __init__(self, keep: int = 1, estimator: str = "laplace") -> None:
            super().__init__(estimator=estimator)
            self.keep = keep
            self.recent: list = []

        def learn_one(self, x, y):
            super().learn_one(x, y)
            self.recent = [*self.recent, y][-self.keep:]

        def _extra_state(self):
            return {"recent": self.recent}, {}

        def _restore_extra(self, meta, arrays):
            self.recent = list(meta["recent"])

    return RecentNB


define()  # a notebook cell run twice: the second definition takes the name over
RecentNB = define()
assert model_class("RecentNB") is RecentNB
model = make_model("recent-nb")
assert type(model) is RecentNB and model.keep == 2 and "recent-nb" in MODELS
assert "recent-nb" not in CONTINUOUS and "recent-nb" in set(MODELS) - CONTINUOUS
assert type(model_factory("recent-nb")()) is RecentNB  # the command line's evaluate
assert type(service_model_factory("recent-nb")()) is RecentNB  # the service
data = [({"o": "s", "w": "weak"}, "no"), ({"o": "c", "w": "weak"}, "yes"),
        ({"o": "r", "w": "strong"}, "no"), ({"o": "c", "w": "strong"}, "maybe")]
for x, y in data:
    model.learn_one(x, y)
path = Path(sys.argv[1])
model.save(path)
header, _ = read_state(path)
loaded = load_model(path)
assert type(loaded) is RecentNB and type(NaiveBayes.load(path)) is RecentNB
assert type(CountClassifier.from_state(*model.to_state())) is RecentNB
query = {"o": "c", "w": "strong"}
print(json.dumps([header["model"], loaded.keep, loaded.recent, loaded.n_learned,
                  loaded.predict_proba_one(query) == model.predict_proba_one(query)]))
'''


def test_a_new_model_is_saved_loaded_and_found_by_name_with_no_other_edit(tmp_path):
    done = subprocess.run([sys.executable, "-c", NEW_MODEL, str(tmp_path / "recent.state")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '["RecentNB", 2, ["no", "maybe"], 4, true]'


def test_every_model_class_is_registered_under_the_name_its_files_hold():
    """The state name of every public model is its class name: what state files have always
    recorded (tests/test_state_fixtures.py loads files of three of them)."""
    public = {getattr(streamnb.models, name) for name in streamnb.models.__all__}
    models = {cls for cls in public if isinstance(cls, type) and cls is not CountClassifier}
    assert {name: cls.__name__ for name, cls in registered().items()
            if cls.__module__.startswith("streamnb.")} == {c.__name__: c.__name__ for c in models}
    assert all(model_class(cls.__name__) is cls for cls in models)
    assert model_class("PairwiseNaiveBayes") is None  # an abstract base declares none
    assert model_class(["TAN"]) is None  # a malformed header's name


def test_presets_name_the_models_and_their_parameters():
    assert type(make_model("ml")) is NaiveBayes and make_model("ml").estimator == "ml"
    assert (type(make_model("tan-ddr")), make_model("tan-ddr").weight) == (TAN, "ddr")
    assert make_model("selective-tan").metric == "cdc"
    assert set(CONTINUOUS) == {"lda", "qda", "kernel-nb", "ccica-nb"} <= set(MODELS)
    assert len(CONTINUOUS) == 4 and "tan" not in CONTINUOUS
    with pytest.raises(ValueError, match="unknown model 'nosuch'; choose one of"):
        make_model("nosuch")


def test_a_name_another_class_holds_is_refused_and_nothing_is_recorded():
    with pytest.raises(ValueError, match=re.escape(
            "state name 'TAN' is already streamnb.models.tan.TAN's")):
        class NotTAN(NaiveBayes, state_name="TAN"):
            pass
    with pytest.raises(ValueError, match="preset 'tan' is already TAN's"):
        class AlsoTAN(NaiveBayes, state_name="AlsoTAN", presets={"tan": {}}):
            pass
    with pytest.raises(TypeError, match="presets need a state_name"):
        class Nameless(NaiveBayes, presets={"nameless": {}}):
            pass
    with pytest.raises(TypeError, match="state_name must be a non-empty str"):
        class Empty(NaiveBayes, state_name=""):
            pass
    with pytest.raises(TypeError, match="preset 'typo': got an unexpected keyword argument "
                                        "'estimater'"):
        class Typo(NaiveBayes, state_name="Typo", presets={"typo": {"estimater": "ml"}}):
            pass
    assert model_class("TAN") is TAN and type(make_model("tan")) is TAN
    assert model_class("AlsoTAN") is None and "nameless" not in MODELS
    assert model_class("Typo") is None and "typo" not in MODELS


def test_a_subclass_without_a_state_name_of_its_own_is_not_saved(tmp_path):
    """A subclass inherits neither its base's state name (a file would load as the base) nor
    its presets."""
    class Tweaked(NaiveBayes):
        pass

    model = Tweaked()
    model.learn_one({"a": "x"}, 1)
    with pytest.raises(TypeError, match="Tweaked has no state name to save under"):
        model.save(tmp_path / "t.state")
    assert not (tmp_path / "t.state").exists()
    assert type(make_model("laplace")) is NaiveBayes


def learned(name: str) -> tuple[CountClassifier, list]:
    """The preset ``name`` after a few records of the kind it reads, and queries for it."""
    if name == "spam-filter":  # raw text, two labels
        data = [("win money now", "spam"), ("lunch at noon?", "ham"),
                ("free money, claim now", "spam"), ("see you at lunch", "ham")]
        queries = ["claim your money", "noon lunch", "nothing known"]
    elif name in CONTINUOUS:
        data = [({"a": 1.0 + i / 7, "b": 2.5 - i / 5}, i % 2) for i in range(12)]
        queries = [{"a": 1.2, "b": 2.2}, {"a": 2.5, "b": 0.1}]
    else:
        data = [({"o": o, "w": w, "free": o == "s"}, y) for o, w, y in (
            ("s", "weak", "no"), ("c", "weak", "yes"), ("r", "strong", "no"),
            ("c", "strong", "yes"), ("s", "strong", "maybe"), ("r", "weak", "yes"))]
        queries = [{"o": "s", "w": "weak"}, {"o": "c", "free": True}, {"o": "zzz"}]
    model = make_model(name)
    for x, y in data * 2:
        model.learn_one(x, y)
    return model, queries


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_preset_round_trips_through_its_state(name):
    """Each model the registry names comes back from its state as it was: same class,
    parameters and predictions (a new model's presets are checked with no edit here)."""
    model, queries = learned(name)
    loaded = CountClassifier.from_state(*model.to_state())
    assert type(loaded) is type(model) and loaded.n_learned == model.n_learned
    assert loaded._get_params() == model._get_params()
    assert [loaded.predict_proba_one(q) for q in queries] == [
        model.predict_proba_one(q) for q in queries]


def test_the_builtin_table_holds_every_name_the_model_modules_register():
    """``registry.BUILTIN`` (which module a state file's or ``--model``'s name imports) lists
    exactly the state names and presets the modules of ``streamnb.models`` register: a new
    model module missing from it fails here."""
    from streamnb.models.registry import BUILTIN

    for path in sorted(Path(streamnb.models.__file__).parent.glob("*.py")):
        importlib.import_module(f"streamnb.models.{path.stem}")
    declared: dict[str, set[str]] = {}
    for state, cls in registered().items():
        if cls.__module__.startswith("streamnb.models."):
            declared.setdefault(cls.__module__, set()).update({state, *cls._presets})
    assert {module: set(names) for module, names in BUILTIN.items()} == declared
    every = [name for names in BUILTIN.values() for name in names]
    assert len(every) == len(set(every))  # a name leads to one module


def test_a_fresh_process_finds_every_model_by_its_state_or_preset_name(tmp_path):
    """A saved state of every registered model loads in a process that imported no model
    (``load_model`` imports the one the file names), with its predictions; ``--model NAME``
    (``make_model``) imports that model's module only."""
    one_preset = {cls: preset for preset, cls in
                  ((p, type(make_model(p))) for p in sorted(MODELS))}
    expected, queries = {}, {}
    for cls, preset in one_preset.items():
        model, [query, *_] = learned(preset)
        model.save(tmp_path / f"{preset}.state")
        queries[f"{preset}.state"] = query
        expected[f"{preset}.state"] = [cls.__name__, repr(model.predict_proba_one(query))]
    assert {cls.__name__ for cls in one_preset} >= {
        name for name, cls in registered().items() if cls.__module__.startswith("streamnb.")}
    (tmp_path / "queries.json").write_text(json.dumps(queries))
    code = """
import json, sys
from pathlib import Path
import streamnb
assert not [m for m in sys.modules if m.startswith("streamnb.models.")]
folder = Path(sys.argv[1])
out = {}
for name, query in json.loads((folder / "queries.json").read_text()).items():
    model = streamnb.load_model(folder / name)
    out[name] = [type(model).__name__, repr(model.predict_proba_one(query))]
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, check=True)
    assert json.loads(done.stdout) == expected
    probe = ("import sys\n"
             "from streamnb.models.registry import make_model\n"
             "print(type(make_model('laplace')).__name__,"
             " sorted(m for m in sys.modules if m in ('streamnb.models.naive_bayes',"
             " 'streamnb.models.tan', 'streamnb.models.spam_filter', 'scipy')))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["NaiveBayes", "['streamnb.models.naive_bayes']"]
