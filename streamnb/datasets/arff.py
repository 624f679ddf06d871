"""ARFF files (Weka's format) as records of nominal and numeric attributes.

A small parser rather than ``scipy.io.arff``, which rejects files Weka itself reads (soybean's
quoted values with a leading space, for one). Dense ARFF only: ``@relation``, ``@attribute``
(nominal ``{a, b}``, ``numeric``/``real``/``integer``, ``string``) and ``@data`` rows; ``?``
is a missing value, kept as ``None`` so that a row whose every value is missing is still a
record (of missing fields), not an empty one. A gzip-compressed file (``.gz``) is read as is.
"""

from __future__ import annotations

import csv
import gzip
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["WEKA_EXAMPLES", "ArffData", "load_arff", "weka_example"]

WEKA_EXAMPLES = Path("/usr/share/doc/weka/examples")


@dataclass(frozen=True)
class ArffData:
    """A parsed ARFF file: the records (attribute → value, None when missing), the class of
    each record, the declared attributes (name → list of nominal values, or ``"numeric"``
    / ``"string"``), and how many rows had no class (they are not records)."""

    relation: str
    records: list[dict[str, Any]]
    labels: list[Any]
    attributes: dict[str, list[str] | str]
    target: str
    unlabelled: int = 0


def _split(line: str) -> list[str]:
    return next(csv.reader([line], quotechar="'", skipinitialspace=True))


def load_arff(path: str | os.PathLike, target: str | None = None) -> ArffData:
    """Read a dense ARFF file; ``target`` (default: the last attribute) is the class.

    Examples
    --------
    >>> import tempfile
    >>> text = "@relation t\\n@attribute a {x, 'y z'}\\n@attribute n numeric\\n" \\
    ...        "@attribute c {p, q}\\n@data\\nx, 1.5, p\\n'y z', ?, q\\n"
    >>> with tempfile.NamedTemporaryFile("w", suffix=".arff", delete=False) as f:
    ...     _ = f.write(text)
    >>> data = load_arff(f.name)
    >>> data.records, data.labels
    ([{'a': 'x', 'n': 1.5}, {'a': 'y z', 'n': None}], ['p', 'q'])

    """
    path = Path(path)
    relation, attributes, rows = "", {}, []
    in_data = False
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for number, raw in enumerate(f, start=1):
            line = raw.strip()
            if not line or line.startswith("%"):
                continue
            lower = line.lower()
            if in_data:
                values = _split(line)
                if len(values) != len(attributes):
                    raise ValueError(f"{path}:{number}: {len(values)} values for "
                                     f"{len(attributes)} attributes")
                rows.append((number, values))
            elif lower.startswith("@relation"):
                relation = line.split(None, 1)[1].strip().strip("'\"") if " " in line else ""
            elif lower.startswith("@attribute"):
                rest = line.split(None, 1)[1]
                if rest[0] in "'\"":
                    name, _, spec = rest[1:].partition(rest[0])
                else:
                    name, spec = [*re.split(r"\s+", rest, maxsplit=1), ""][:2]
                spec = spec.strip()
                if spec.startswith("{"):
                    attributes[name] = [v for v in _split(spec.strip("{} \t")) if v != ""]
                elif spec.lower() in ("numeric", "real", "integer"):
                    attributes[name] = "numeric"
                elif spec.lower() == "string":
                    attributes[name] = "string"
                else:
                    raise ValueError(f"{path}:{number}: unsupported attribute type {spec!r}")
            elif lower.startswith("@data"):
                in_data = True
    names = list(attributes)
    target = target or names[-1]
    if target not in attributes:
        raise ValueError(f"{path}: no attribute {target!r}")
    records, labels = [], []
    unlabelled = 0
    for number, values in rows:
        record = {}
        label = None
        for name, value in zip(names, values, strict=True):
            parsed: Any = None
            if value != "?":
                if attributes[name] == "numeric":
                    try:
                        parsed = float(value)
                    except ValueError:
                        raise ValueError(f"{path}:{number}: {name} = {value!r} is not a "
                                         "number") from None
                else:
                    parsed = value
                    kind = attributes[name]
                    if isinstance(kind, list) and value not in kind:
                        raise ValueError(f"{path}:{number}: {name} = {value!r} is not one of "
                                         f"its declared values")
            if name == target:
                label = parsed
            else:
                record[name] = parsed
        if label is None:
            unlabelled += 1  # nothing to learn or score; counted so that it is not silent
            continue
        records.append(record)
        labels.append(label)
    return ArffData(relation, records, labels, attributes, target, unlabelled)


def weka_example(name: str) -> ArffData:
    """One of the ARFF files of Debian's ``weka`` package (vote, soybean, breast-cancer,
    credit-g, diabetes, glass, iris, segment-challenge, …)."""
    path = WEKA_EXAMPLES / f"{name}.arff"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: install Debian's weka package "
                                "(apt-get install --no-install-recommends weka)")
    return load_arff(path)
