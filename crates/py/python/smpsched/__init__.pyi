"""Type stubs of the smpsched Python package."""

import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import polars as pl

__version__: str

Experiment = Union[str, os.PathLike[str], Mapping[str, Any]]

RUN_COLUMNS: List[str]
PROCESSOR_COLUMNS: List[str]
APP_COLUMNS: List[str]
JOB_COLUMNS: List[str]

class ExperimentError(Exception):
    """Bad input, located: the file (``<dict>`` or ``<string>`` for an experiment given in
    Python), the 1-based line (None when unknown), the field as a dotted path ('' when none)
    and what is wrong."""

    file: str
    line: Optional[int]
    field: str
    message: str

class Result:
    """The runs of one experiment."""

    stopped: Optional[str]
    @property
    def data(self) -> Dict[str, Any]: ...
    @property
    def experiment(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def runs(self) -> pl.DataFrame: ...
    @property
    def processors(self) -> pl.DataFrame: ...
    @property
    def apps(self) -> pl.DataFrame: ...
    @property
    def jobs(self) -> pl.DataFrame: ...
    def to_json(self) -> str: ...
    def jobs_csv(self) -> str: ...

class Reproduction:
    """A paper reproduced: claims and values as frames."""

    data: Dict[str, Any]
    paper: str
    summary: Dict[str, int]
    failed_claims: int
    report: str
    run_dir: str
    @property
    def claims(self) -> pl.DataFrame: ...
    @property
    def values(self) -> pl.DataFrame: ...

class SeedsReproduction:
    """A paper reproduced from several seeds: each claim's verdict at each seed."""

    data: Dict[str, Any]
    paper: str
    seeds: List[int]
    summary: str
    report: str
    @property
    def claims(self) -> pl.DataFrame: ...
    @property
    def values(self) -> pl.DataFrame: ...
    @property
    def agreement(self) -> pl.DataFrame: ...

class VaryReproduction(SeedsReproduction):
    """A paper reproduced at several values of one setting, or at every combination of the
    values of several: each claim's verdict at each value (or combination)."""

    path: str
    paths: List[str]
    settings: List[str]

def run(
    experiment: Experiment,
    seed: Optional[int] = None,
    jobs: Optional[int] = None,
    progress: bool = True,
    cluster: Any = None,
    per_job: bool = True,
    set: Optional[Dict[str, Any]] = None,
) -> Result: ...
def reproduce(
    paper: str,
    scale: float = 1.0,
    jobs: Optional[int] = None,
    progress: bool = True,
    experiments: Union[str, os.PathLike[str]] = "experiments",
    reports: Union[str, os.PathLike[str]] = "reports",
    seed: Optional[int] = None,
    seeds: Optional[List[int]] = None,
    set: Optional[Dict[str, Any]] = None,
    vary: Union[None, Tuple[str, List[Any]], List[Tuple[str, List[Any]]]] = None,
    only: Union[None, str, List[str]] = None,
    cluster: Any = None,
) -> Union[Reproduction, SeedsReproduction, VaryReproduction]: ...
def policies() -> List[Dict[str, Any]]: ...
def workloads() -> List[Dict[str, Any]]: ...
def presets() -> List[Dict[str, Any]]: ...
def experiment_toml(experiment: Mapping[str, Any]) -> str: ...
