"""Progress bars for long calls: tqdm's (``tqdm.auto``: a widget in Jupyter, a bar in a
terminal) when tqdm is installed, else a plain line redrawn on standard error when it is a
terminal, else nothing."""

from __future__ import annotations

import sys
from typing import Callable, Optional

Callback = Callable[[int, int, str], None]


class _Bar:
    """Adapts the engine's (done, total, label) reports to a bar, one bar per label."""

    def __init__(self) -> None:
        self._bar = None
        self._label: Optional[str] = None
        self._plain = False
        try:
            from tqdm.auto import tqdm  # type: ignore

            self._tqdm = tqdm
        except ImportError:
            self._tqdm = None
            self._plain = sys.stderr.isatty()

    def __call__(self, done: int, total: int, label: str) -> None:
        if self._tqdm is not None:
            if self._bar is None or label != self._label:
                self.close()
                self._bar = self._tqdm(total=total, desc=label, unit="run", leave=False)
                self._label = label
            self._bar.total = total
            self._bar.n = done
            self._bar.refresh()
        elif self._plain:
            sys.stderr.write(f"\r{label}: {done}/{total} runs")
            sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._plain:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def bar(progress: bool) -> Optional[_Bar]:
    """A progress callback for the engine, or None when ``progress`` is false."""
    return _Bar() if progress else None
