"""Experiments built in Python: a dict with the shape of an experiment file written as TOML.

The lab reads TOML only, so a dict goes through this small writer (Python 3.9 has no TOML
writer in its standard library): top-level values first, then one ``[table]`` per dict and one
``[[table]]`` per list of dicts, so an error names a line of a readable text.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping


# TOML's integers are 64-bit signed.
_INT_RANGE = (-(2**63), 2**63 - 1)


def _text(t: str, where: str, what: str = "") -> str:
    """``t`` if it is text TOML can hold: a lone surrogate (from a bad decode) cannot be
    written as UTF-8, so it raises ``ValueError`` naming ``where``."""
    try:
        t.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{where}: {what}{t!r} is not valid Unicode text ({e.reason})") from None
    return t


def _key(k: Any, where: str = "") -> str:
    """``k`` as a TOML key, bare where it can be; ``where`` names the table holding it."""
    if not isinstance(k, str):
        raise TypeError(f"experiment keys must be strings, got {k!r}")
    _text(k, where or "experiment", "the key ")
    bare = k and all(c.isalnum() or c in "-_" for c in k) and k.isascii()
    return k if bare else json.dumps(k)


def value_text(v: Any, where: str) -> str:
    """``v`` as a TOML value (inline); ``TypeError`` naming ``where`` for what TOML cannot
    write (None, sets, objects)."""
    try:
        return _value(v, where)
    except RecursionError:
        raise ValueError(f"{where}: nested too deeply to write as TOML") from None


def _value(v: Any, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        if not _INT_RANGE[0] <= v <= _INT_RANGE[1]:
            raise ValueError(f"{where}: {v} is outside TOML's integers (-2**63 to 2**63 - 1)")
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(_text(v, where))
    if isinstance(v, Mapping):
        inner = ", ".join(f"{_key(k, where)} = {_value(x, f'{where}.{k}')}" for k, x in v.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, where) for x in v) + "]"
    raise TypeError(f"{where}: cannot write {type(v).__name__} {v!r} in an experiment")


def _is_table_list(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and bool(v) and all(isinstance(x, Mapping) for x in v)


def experiment_toml(experiment: Mapping[str, Any]) -> str:
    """The TOML text of an experiment given as a dict shaped like an experiment file.

    ``{"name": "x", "machine": {"preset": "tango-12"}, "workload": [{...}], "sweep": {...}}``
    becomes ``name = "x"``, ``[machine]``, ``[[workload]]``, ``[sweep]``; any nesting below that
    is written inline.
    """
    if not isinstance(experiment, Mapping):
        raise TypeError("an experiment is a dict shaped like an experiment file")
    try:
        return _experiment_toml(experiment)
    except RecursionError:
        raise ValueError("the experiment is nested too deeply to write as TOML") from None


def _experiment_toml(experiment: Mapping[str, Any]) -> str:
    lines = []
    tables = []
    for k, v in experiment.items():
        if isinstance(v, Mapping) or _is_table_list(v):
            tables.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v, k)}")
    for k, v in tables:
        items = [v] if isinstance(v, Mapping) else list(v)
        header = f"[{_key(k)}]" if isinstance(v, Mapping) else f"[[{_key(k)}]]"
        for i, t in enumerate(items):
            lines.append("")
            lines.append(header)
            # A dotted path as `set` and the errors write it: a list of tables is indexed.
            at = f"{k}.{i}" if isinstance(v, (list, tuple)) else k
            for kk, vv in t.items():
                lines.append(f"{_key(kk, at)} = {_value(vv, f'{at}.{kk}')}")
    return "\n".join(lines) + "\n"
