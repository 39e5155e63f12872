"""Runs smpsched's runs on a Ray cluster: each (point, repetition) a Ray task that runs the
engine in a worker through this package, the results merged at home in plan order so that
every file written is byte-identical to a local run.

What is shipped to workers is the experiment (its text and the files it reads, as one bundle
put once into Ray's object store), never the repository; each worker needs this package
installed (``pip install 'smpsched[ray]'``). Workers that die are retried by Ray (``max_retries``);
a run that fails for its own reason (bad input, a failing simulation) comes back as a failure
and is reported once, as a local run would report it. Ctrl-C cancels the tasks still pending.

``python -m smpsched.cluster`` is the helper ``smpsched run FILE --ray`` and
``smpsched reproduce PAPER --ray`` start: it reads the bundles and tasks from standard input
and writes each finished run to standard output (frames: a 4-byte big-endian length, then the
bytes; a JSON header frame, followed by the run's bytes when it succeeded).
"""

import json
import os
import struct
import sys
from typing import Any, BinaryIO, Iterator, List, Optional, Sequence, Tuple

# Retries of a task whose worker died (a failure of the run itself is never retried).
MAX_RETRIES = 3

# Test hook: when set to a path, the first task to create that file kills its own worker, so
# tests can check that a dead worker changes nothing.
_DIE_ONCE = "SMPSCHED_RAY_DIE_ONCE"


def _one_run(bundle: bytes, point: int, repetition: int) -> Tuple[Optional[bytes], int, str]:
    """Runs in a Ray worker: one run of the bundle's experiment."""
    marker = os.environ.get(_DIE_ONCE)
    if marker:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
            os._exit(1)
        except FileExistsError:
            pass
    from smpsched import _native

    return _native.run_task(bundle, point, repetition)


def connect(address: Any = None) -> None:
    """Connects to the Ray cluster at ``address`` (``None`` or ``True``: ``RAY_ADDRESS`` if set,
    else a cluster ``ray start`` started on this machine, else a local instance started here),
    unless Ray is already initialized."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            "running on a cluster needs Ray: pip install 'smpsched[ray]'") from e
    if ray.is_initialized():
        return
    addr = None if address is None or address is True else str(address)
    # The test hook travels to this job's workers, which do not share this process's variables.
    env = {k: os.environ[k] for k in (_DIE_ONCE,) if k in os.environ}
    ray.init(address=addr, include_dashboard=False, log_to_driver=False,
             logging_level="warning", runtime_env={"env_vars": env} if env else None)


def run_tasks(bundles: Sequence[bytes], tasks: Sequence[Tuple[int, int, int]],
              address: Any = None) -> Iterator[Tuple[int, Optional[bytes], int, str]]:
    """Runs ``tasks`` (bundle index, point, repetition) on the cluster, yielding
    ``(task index, run bytes or None, exit code, message)`` as each finishes, in any order.
    Stopping early (an exception, Ctrl-C, closing the generator) cancels what is pending."""
    import ray

    connect(address)
    remote = ray.remote(max_retries=MAX_RETRIES)(_one_run)
    refs = [ray.put(bytes(b)) for b in bundles]
    pending = {remote.remote(refs[b], p, r): i for i, (b, p, r) in enumerate(tasks)}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2,
                                fetch_local=True)
            if not ready:
                ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                run, code, message = ray.get(ref)
                yield i, run, code, message
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def _read_frame(stream: BinaryIO) -> Optional[bytes]:
    head = stream.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack(">I", head)
    body = stream.read(n)
    if len(body) < n:
        return None
    return body


def _write_frame(stream: BinaryIO, data: bytes) -> None:
    stream.write(struct.pack(">I", len(data)))
    stream.write(data)


def _send(stream: BinaryIO, header: dict, payload: Optional[bytes] = None) -> None:
    _write_frame(stream, json.dumps(header).encode())
    if payload is not None:
        _write_frame(stream, payload)
    stream.flush()


def main(argv: Optional[List[str]] = None) -> int:
    """The command's helper: one request on standard input, runs on standard output."""
    # Whatever Ray or a library prints goes to standard error; frames alone to standard output.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    stdin = sys.stdin.buffer
    head = _read_frame(stdin)
    if head is None:
        return 2
    request = json.loads(head)
    bundles = []
    for _ in range(request["bundles"]):
        b = _read_frame(stdin)
        if b is None:
            return 2
        bundles.append(b)
    tasks = [tuple(t) for t in request["tasks"]]
    try:
        connect(request.get("address") or None)
        import ray

        _send(out, {"cluster": {"cpus": int(ray.cluster_resources().get("CPU", 0))}})
        for i, run, code, message in run_tasks(bundles, tasks):
            if run is None:
                _send(out, {"i": i, "ok": False, "code": code, "message": message})
            else:
                _send(out, {"i": i, "ok": True}, run)
        _send(out, {"done": True})
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:  # the cluster unreachable, Ray missing: said once, to the command
        try:
            _send(out, {"fatal": f"{type(e).__name__}: {e}"})
        except BrokenPipeError:
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
