"""Checks of the Python API's arguments before they reach the engine: a wrong Python type raises
``TypeError`` and a value out of range ``ValueError``, each naming the argument, so that no call
fails deep inside the package or with a bare ``OverflowError`` (the engine's own checks raise
``ExperimentError`` with the same names)."""

from __future__ import annotations

import os
from typing import Any, List, Mapping, Optional, Tuple

from ._toml import value_text

U64_MAX = 2**64 - 1
"""The largest seed (and the bound of every whole-number argument)."""


def _kind(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def whole(name: str, value: Any) -> Optional[int]:
    """``value`` as a whole number from 0 to 2^64 - 1, or None when it is None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected a whole number, got {_kind(value)}")
    if not 0 <= value <= U64_MAX:
        raise ValueError(f"{name}: must be a whole number from 0 to 2^64 - 1, got {value}")
    return value


def flag(name: str, value: Any) -> bool:
    """``value`` as a flag: True or False (None counts as False)."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected True or False, got {_kind(value)}")
    return value


def number(name: str, value: Any) -> float:
    """``value`` as a number (an int or a float, not a flag)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a number, got {_kind(value)}")
    return float(value)


def folder(name: str, value: Any) -> str:
    """``value`` as a path (a str or ``os.PathLike``), not empty."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name}: expected a folder's path, got {_kind(value)}")
    path = os.fspath(value)
    if not isinstance(path, str) or not path:
        raise ValueError(f"{name}: expected a folder's path, got {value!r}")
    return path


def seeds(value: Any) -> List[int]:
    """``seeds`` as a list of whole numbers (a list or a tuple; a str is refused, not split)."""
    if not isinstance(value, (list, tuple, range)):
        raise TypeError(f"seeds: expected a list of whole numbers, got {_kind(value)}")
    return [whole(f"seeds[{i}]", s) for i, s in enumerate(value)]  # type: ignore[misc]


def names(name: str, value: Any) -> List[str]:
    """``value`` as a list of names: None, a str, or a list or tuple of them."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"{name}: expected a name or a list of names, got {_kind(value)}")


def setting_text(value: Any, where: str) -> str:
    """A value as the command line writes it: a str as it is (a bare word is a string, other
    text is read as TOML), anything else as TOML writes it (numbers, booleans, lists, dicts);
    ``None`` and other types raise ``TypeError`` naming ``where``."""
    return value if isinstance(value, str) else value_text(value, where)


def settings(value: Any) -> List[str]:
    """``set`` as the command line's ``PATH=VALUE`` texts: None or a dict of dotted paths."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise TypeError(f"set: expected a dict of dotted paths and values, got {_kind(value)}")
    out = []
    for k, v in value.items():
        if not isinstance(k, str):
            raise TypeError(f"set: a path is a str, got {_kind(k)}")
        out.append(f"{k}={setting_text(v, k)}")
    return out


def vary(value: Any) -> List[Tuple[str, List[str]]]:
    """``vary`` as (path, values) pairs, each value as the command line's ``--vary`` writes it
    (a str as it is, anything else as TOML): a (path, values) pair or a non-empty list of them,
    each with a list or tuple of values. The native side reads them as ``PATH=V1,V2,...`` is
    read, and refuses a value it would split at a comma."""
    pairs = value if isinstance(value, list) else [value]
    if not pairs:
        raise ValueError("vary: expected a (path, values) pair or a list of them, got []")
    out = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], (list, tuple))):
            raise TypeError("vary: expected a (path, [values]) pair or a list of them, got "
                            f"{_kind(pair)}")
        path, values = pair
        out.append((path, [setting_text(v, path) for v in values]))
    return out


def cluster(value: Any) -> Any:
    """``cluster``: None or False (run here), True, or a Ray address (a str)."""
    if isinstance(value, str) and not value.strip():
        raise ValueError("cluster: an empty address; give HOST:PORT, or True for RAY_ADDRESS "
                         "or a cluster started on this machine")
    if value is None or isinstance(value, (bool, str)):
        return value
    raise TypeError(f"cluster: expected an address (str), True, or None, got {_kind(value)}")
