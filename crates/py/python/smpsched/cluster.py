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
import socket
import struct
import sys
import threading
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


# The address this process connected to (None: RAY_ADDRESS or a local cluster or instance).
_connected: List[Optional[str]] = []

# How long the TCP check of a cluster's address waits for an answer, in seconds.
_CHECK_SECONDS = 5.0


def _check_reachable(addr: Optional[str]) -> None:
    """Fails at once, naming the address, when nothing listens where the cluster should be:
    Ray itself retries a silent address for about fourteen minutes."""
    target = addr if addr is not None else os.environ.get("RAY_ADDRESS", "")
    if not target.strip() or target.strip() in ("auto", "local"):
        return
    host, sep, port = target.strip().split("://", 1)[-1].rpartition(":")
    if not sep or not port.isdigit():
        return  # Ray says what is wrong with a malformed address itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_CHECK_SECONDS).close()
    except OSError as e:
        raise ConnectionError(
            f"no Ray cluster answers at {target} ({e}): start one there (ray start --head "
            f"--port={port}) or name the address of a running one") from None


def _reason(e: BaseException) -> str:
    """``e`` as a line, with the error it was raised from (Ray wraps the useful one: an
    authentication error's hint about RAY_AUTH_TOKEN_PATH)."""
    text = f"{type(e).__name__}: {e}"
    cause = e.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" (from {type(cause).__name__}: {cause})"
    return text


def connect(address: Any = None) -> None:
    """Connects to the Ray cluster at ``address`` (``None`` or ``True``: ``RAY_ADDRESS`` if set,
    else a cluster ``ray start`` started on this machine, else a local instance started here).
    A connection the program made itself (its own ``ray.init``) is used as it is; one made
    here is kept when ``address`` names no other cluster, and another address disconnects it
    first."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            "running on a cluster needs Ray: pip install 'smpsched[ray]'") from e
    addr = None if address is None or address is True else str(address)
    if ray.is_initialized():
        if not _connected or addr is None or _connected[-1] == addr:
            return
        ray.shutdown()
    _check_reachable(addr)
    # The test hook travels to this job's workers, which do not share this process's variables.
    env = {k: os.environ[k] for k in (_DIE_ONCE,) if k in os.environ}
    try:
        ray.init(address=addr, include_dashboard=False, log_to_driver=False,
                 logging_level="warning", runtime_env={"env_vars": env} if env else None)
    except Exception as e:
        raise ConnectionError(f"cluster {addr or 'auto'}: {_reason(e)}") from e
    _connected[:] = [addr]


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
        _cancel(ray, list(pending))


def _cancel(ray: Any, refs: List[Any]) -> None:
    """Cancels the tasks of ``refs`` that have not finished. Not forced: killing a worker whose
    task is finishing at that moment can trip an internal check of Ray's that ends the whole
    process (Ray 2.x, "Tried to complete task that was not pending"); a task already running
    gets a KeyboardInterrupt instead."""
    if not refs:
        return
    try:
        _, waiting = ray.wait(refs, num_returns=len(refs), timeout=0)
    except Exception:  # the cluster already gone: nothing left to cancel
        return
    for ref in waiting:
        try:
            ray.cancel(ref, force=False)
        except Exception:
            pass


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


# How long the helper waits for Ray to connect before it gives up, in seconds: an address
# where something else listens makes Ray retry for about fourteen minutes.
_CONNECT_SECONDS = 120.0


def _watch_parent() -> None:
    """Ends the helper when the command that started it is gone (killed by a signal the helper
    did not get): no orphan is left holding the cluster's tasks."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            threading.Event().wait(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _connect_or_give_up(out: BinaryIO, address: Optional[str]) -> None:
    """Connects, or after ``_CONNECT_SECONDS`` says so to the command and ends the helper."""
    def give_up() -> None:
        try:
            _send(out, {"fatal": f"ConnectionError: no answer from the Ray cluster at "
                                 f"{address or os.environ.get('RAY_ADDRESS') or 'auto'} within "
                                 f"{_CONNECT_SECONDS:.0f} s (is it a Ray cluster's address?)"})
        finally:
            os._exit(1)

    timer = threading.Timer(_CONNECT_SECONDS, give_up)
    timer.daemon = True
    timer.start()
    try:
        connect(address)
    finally:
        timer.cancel()


def main(argv: Optional[List[str]] = None) -> int:
    """The command's helper: one request on standard input, runs on standard output."""
    _watch_parent()
    # One connection attempt at a time, not Ray's twenty (the helper's own window applies).
    os.environ.setdefault("RAY_gcs_server_port_wait_time_s", "1")
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
        _connect_or_give_up(out, request.get("address") or None)
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
            _send(out, {"fatal": _reason(e)})
        except BrokenPipeError:
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
