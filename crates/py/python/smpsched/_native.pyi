"""Type stubs of the extension module (use the functions of ``smpsched`` instead)."""

import os
from typing import Any, Callable, List, Optional, Tuple, Union

__version__: str

class ExperimentError(Exception):
    file: str
    line: Optional[int]
    field: str
    message: str

def run_experiment(
    path: Union[str, os.PathLike[str]],
    text: Optional[str] = None,
    seed: Optional[int] = None,
    jobs: int = 0,
    progress: Optional[Callable[[int, int, str], None]] = None,
    per_job: bool = False,
    set: List[str] = ...,
) -> Tuple[str, Optional[str], Optional[str], List[str]]: ...
def reproduce_paper(
    paper: str,
    scale: float = 1.0,
    jobs: int = 0,
    experiments: Union[str, os.PathLike[str]] = "experiments",
    reports: Union[str, os.PathLike[str]] = "reports",
    progress: Optional[Callable[[int, int, str], None]] = None,
    seed: Optional[int] = None,
    set: List[str] = ...,
    only: List[str] = ...,
    remote: Optional[Callable[..., Any]] = None,
) -> str: ...
def reproduce_seeds(
    paper: str,
    seeds: List[int],
    scale: float = 1.0,
    jobs: int = 0,
    experiments: Union[str, os.PathLike[str]] = "experiments",
    reports: Union[str, os.PathLike[str]] = "reports",
    progress: Optional[Callable[[int, int, str], None]] = None,
    set: List[str] = ...,
    only: List[str] = ...,
    remote: Optional[Callable[..., Any]] = None,
) -> str: ...
def reproduce_vary(
    paper: str,
    vary: List[Tuple[str, List[str]]],
    scale: float = 1.0,
    jobs: int = 0,
    experiments: Union[str, os.PathLike[str]] = "experiments",
    reports: Union[str, os.PathLike[str]] = "reports",
    progress: Optional[Callable[[int, int, str], None]] = None,
    seed: Optional[int] = None,
    set: List[str] = ...,
    only: List[str] = ...,
    remote: Optional[Callable[..., Any]] = None,
) -> str: ...
def shard_plan(
    path: Union[str, os.PathLike[str]],
    text: Optional[str] = None,
    seed: Optional[int] = None,
    per_job: bool = False,
    set: List[str] = ...,
    jobs: int = 0,
) -> Tuple[bytes, List[Tuple[int, int]]]: ...
def run_task(bundle: bytes, point: int, repetition: int) -> Tuple[Optional[bytes], int, str]: ...
def run_shipped(
    bundle: bytes,
    shipped: List[Tuple[int, int, Optional[bytes], int, str]],
    jobs: int = 0,
    progress: Optional[Callable[[int, int, str], None]] = None,
) -> Tuple[str, Optional[str], Optional[str], List[str]]: ...
def policies_json() -> str: ...
def workloads_json() -> str: ...
def presets_json() -> str: ...
