"""The scheduler of a sweep: it runs the runs a store does not hold yet and stores each result
as it arrives.

:class:`Scheduler` is the loop: it keeps the workers busy (local processes, this process, or a
Dask cluster) with a bounded window of runs in flight, in the sweep's order, writes every result
to the :class:`~haslab.store.Store` as soon as it completes, re-runs once a run whose local worker
died, and on SIGINT or SIGTERM stops the workers and raises :class:`SweepInterrupted`. The rest of
this module is what it uses: the executors and how their processes are started and stopped
(:func:`_local_executor`, :func:`_dask_client`, :func:`_stop_workers`, :func:`_die_with_parent`),
the signal handling (:class:`_Interrupts`) and the progress bar. :func:`haslab.sweep.run_sweep`
is its public entry point.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import sys
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from .runs import RunSpec, SweepError

if TYPE_CHECKING:
    from .store import Store


@dataclass
class SweepOutcome:
    """What one call of :func:`haslab.sweep.run_sweep` (:meth:`Scheduler.run`) did."""

    total: int  #: runs in the sweep
    skipped: int  #: runs already stored (ok, or failed without retry_failed)
    ran: int = 0  #: runs executed by this call
    stale: int = 0  #: of which had been stored by another simulator (another MODEL_ID): re-run
    ok: int = 0  #: of which succeeded
    failed: int = 0  #: of which failed
    store: "Store | None" = field(default=None, repr=False)
    failures: list = field(default_factory=list, repr=False)  #: (RunSpec, error) of this call

    def summary(self):
        """The store's summary table (one row per run of the whole store)."""
        return self.store.summary()


class _InlineExecutor:
    """Runs each submitted call at once, in this process (``jobs=1``)."""

    def submit(self, fn, *args):
        f: Future = Future()
        try:
            f.set_result(fn(*args))
        except BaseException as e:  # noqa: BLE001
            f.set_exception(e)
        return f

    def shutdown(self, wait=True, cancel_futures=False):
        pass


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by SIGINT (Ctrl-C) or SIGTERM.

    The sweep stopped its workers (the runs they were running are dropped) and the runs finished
    before are stored: running the sweep again resumes. A subclass of :class:`KeyboardInterrupt`,
    so code that catches that still does."""

    def __init__(self, signum: int = signal.SIGINT):
        self.signum = int(signum)
        self.signal_name = signal.Signals(self.signum).name
        super().__init__(self.signal_name)
        self.out: Path | None = None  #: the output directory
        self.total = 0  #: runs in the sweep
        self.stored = 0  #: runs of the sweep stored (ok or failed), this call's and earlier ones
        self.dropped = 0  #: runs that were running or queued in the workers when the sweep stopped

    def message(self) -> str:
        """One line: what stopped the sweep and what is stored."""
        return (
            f"interrupted by {self.signal_name}: {self.stored} of {self.total} runs stored in {self.out}/, "
            f"{self.dropped} run(s) in progress dropped; run the sweep again to resume"
        )


class _Interrupts:
    """While a sweep runs (in the main thread), SIGINT and SIGTERM raise :class:`SweepInterrupted`.

    The first signal stops the sweep; later ones are ignored while it stops its workers and
    compacts the store (a few seconds at most; SIGKILL still ends it at once, and the workers
    follow, see :func:`_die_with_parent`). A signal that arrives while a run is being written
    to the store (:meth:`hold`) is acted on once the write is complete, so a finished run is
    never dropped half-written. A handler the program installed itself is left in place, and
    so is an ignored signal (a sweep started with ``nohup`` or in the background)."""

    def __init__(self) -> None:
        self.fired: int | None = None
        self.deferred = False
        self.holding = 0

    def _handler(self, signum, frame) -> None:
        if self.fired is not None:
            return
        self.fired = signum
        if self.holding:
            self.deferred = True
        else:
            raise SweepInterrupted(signum)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        self.holding += 1
        try:
            yield
        finally:
            self.holding -= 1
        if self.deferred and not self.holding:
            self.deferred = False
            raise SweepInterrupted(self.fired)

    @contextlib.contextmanager
    def installed(self) -> Iterator["_Interrupts"]:
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        saved = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            current = signal.getsignal(sig)
            if current in (signal.SIG_DFL, signal.default_int_handler):
                saved[sig] = current
                signal.signal(sig, self._handler)
        try:
            yield self
        finally:
            for sig, previous in saved.items():
                signal.signal(sig, previous)


def _die_with_parent(parent_pid: int) -> None:
    """Makes this (worker) process end when its parent, the sweep process, ends however it ends.

    On Linux the kernel sends this process SIGKILL when the parent thread that started it exits
    (prctl(2), ``PR_SET_PDEATHSIG``; a pool's workers are started by the thread that runs the
    sweep). SIGKILL, not a signal with a Python handler: the simulator runs a whole run without
    returning to the interpreter, and a handler would wait for the run to end. If the parent died
    before the call took effect, the process exits at once. Elsewhere a thread polls the
    parent's pid and ends the process (the simulator runs without holding the GIL)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1  # linux/prctl.h
            if libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0) == 0:
                if os.getppid() != parent_pid:
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass
    _watch_parent(parent_pid)


def _watch_parent(parent_pid: int, interval_s: float = 0.5) -> None:
    """A daemon thread that ends this process once its parent ``parent_pid`` is gone (the
    process is then re-parented, so its parent pid changes)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval_s)
        os._exit(1)

    threading.Thread(target=watch, name="haslab-watch-parent", daemon=True).start()


def _worker_init(parent_pid: int) -> None:
    """Runs first in every local worker process. Ctrl-C in a terminal signals the whole process
    group: only the sweep process acts on it (it stops the workers), so workers ignore SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent_pid)


def _shutdown_now(executor) -> None:
    """Stops an executor without waiting, cancelling what has not started."""
    try:
        executor.shutdown(wait=False, cancel_futures=True)
    except TypeError:  # dask's ClientExecutor cancels everything with wait=False
        executor.shutdown(wait=False)


def _stop_workers(executor) -> None:
    """Stops a local pool at once: cancels what is queued and ends the worker processes (the
    runs they are running are lost). ``shutdown(wait=False)`` alone would let each worker finish
    its run, and the interpreter waits for them when it exits."""
    procs = list((getattr(executor, "_processes", None) or {}).values())
    _shutdown_now(executor)
    for p in procs:
        if p.is_alive():
            p.terminate()  # SIGTERM: workers have no handler for it, so it ends them even mid-run
    for p in procs:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
            p.join(timeout=10)
    if procs:
        executor.shutdown(wait=True)  # joins the pool's manager thread (its workers are gone)


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


#: the resource tracker's report of the pool's semaphores left behind by a stopped sweep
_TRACKER_WARNING = "ignore::UserWarning:multiprocessing.resource_tracker"


def _quiet_resource_tracker() -> None:
    """Starts multiprocessing's resource tracker (if not yet running) with its leak report off.

    A sweep that is stopped (SIGINT, SIGTERM) kills its workers and exits at once; the pool's
    queue semaphores are then still registered, and the tracker, which unlinks them, also
    prints "There appear to be N leaked semaphore objects" after the sweep's one-line message.
    The clean-up is what matters and it still happens; the report is noise. The tracker is a
    separate interpreter that takes its -W options from this one's ``sys.warnoptions``
    (``multiprocessing.util._args_from_interpreter_flags``), so the filter is put there before
    the tracker starts."""
    from multiprocessing import resource_tracker

    if _TRACKER_WARNING not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_WARNING)
    resource_tracker.ensure_running()


def _local_executor(jobs: int):
    """A pool of ``jobs`` worker processes (started with spawn: the parent may have threads, the
    progress bar's and Arrow's, which fork does not copy safely), or this process for ``jobs=1``.

    Workers end with the sweep process, however it ends (:func:`_worker_init`).

    A spawned worker re-imports the main script: a script that starts a sweep without an
    ``if __name__ == "__main__":`` guard would start it again in every worker, which breaks the
    pool. One trivial call through the pool checks that workers start, with a clear error if not."""
    if jobs == 1:
        return _InlineExecutor()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    _quiet_resource_tracker()
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_init,
        initargs=(os.getpid(),),
    )
    try:
        pool.submit(os.getpid).result()
    except BrokenProcessPool:
        pool.shutdown(wait=False, cancel_futures=True)
        raise SweepError(
            "the worker processes died while starting. If the sweep is started from a script, put "
            "that code under `if __name__ == \"__main__\":` (each worker process imports the script)."
        ) from None
    except BaseException:
        _stop_workers(pool)
        raise
    return pool


_LOCAL_DASK = re.compile(r"local(?::(\d+))?")


def _dask_client(dask: Any):
    """(client, cluster or None): a Client for ``dask``.

    ``dask`` is a Client (used as it is, left open), a scheduler address (a Client is connected,
    and closed at the end; the cluster and its workers belong to whoever started them), or
    ``"local"`` / ``"local:N"``: a LocalCluster of N single-threaded worker processes (default:
    all cores) that the sweep starts, and stops at the end, or when it is interrupted. Its
    workers end with the sweep process however that ends: a LocalCluster's nannies live in
    the sweep process, and distributed's worker processes exit when the pipe from the process
    that started them closes (``AsyncProcess`` in distributed/process.py; the simulator runs
    without holding the GIL, so that thread acts mid-run)."""
    if isinstance(dask, str):
        try:
            from distributed import Client
        except ImportError:
            raise SweepError(
                "--dask needs dask.distributed: pip install 'haslab[dask]' (or 'dask[distributed]')"
            ) from None
        m = _LOCAL_DASK.fullmatch(dask.strip())
        if m:
            n = int(m.group(1)) if m.group(1) else default_jobs()
            if n < 1:
                raise SweepError(f"--dask local:N needs N >= 1, got {n}")
            return _local_cluster(n)
        if dask.startswith("local"):
            raise SweepError(f"--dask: {dask!r} is neither local, local:N nor a scheduler address")
        return Client(dask, timeout="20s"), None
    return dask, None


def _local_cluster(n: int):
    """(client, cluster): a LocalCluster of ``n`` worker processes owned by this sweep."""
    import logging

    from distributed import Client, LocalCluster

    # Ctrl-C signals the whole process group: only the sweep process acts on it (it closes the
    # cluster). Worker processes started while SIGINT is ignored keep ignoring it (signal(7):
    # an ignored disposition survives fork and execve); otherwise each prints a traceback.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        # The workers of a stopped sweep log its cancelled tasks at WARNING and, when the
        # scheduler closes before a worker's next heartbeat, "Failed to communicate with
        # scheduler during heartbeat" at ERROR with a traceback: noise for the user, who gets
        # the one-line interruption message. Nothing is lost by silencing them: a task's
        # failure and a worker's death reach the sweep through its futures and are recorded
        # with the run ("worker error: ...").
        cluster = LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.CRITICAL
        )
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
    try:
        client = Client(cluster)
    except BaseException:
        cluster.close()
        raise
    return client, cluster


class _Progress:
    def __init__(self, enabled: bool, force: bool, total: int, done: int, name: str):
        self.bar = None
        self.failed = 0
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn(f"[bold]{name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("runs"),
            TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True, force_terminal=force or None),
            speed_estimate_period=3600,
        )
        self.bar.start()
        self.task = self.bar.add_task(name, total=total, completed=done, failed="")

    def advance(self, failed: bool) -> None:
        if failed:
            self.failed += 1
        if self.bar is not None:
            label = f"[red]{self.failed} failed" if self.failed else ""
            self.bar.update(self.task, advance=1, failed=label)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


class Scheduler:
    """Runs the runs of a sweep that ``store`` does not hold yet and stores their results.

    Args:
        store: where results go; the scheduler alone writes it, under its lock.
        work: ``work(spec)`` or, for local worker processes, ``work(spec, scratch)``: runs one
            run in a worker and returns what the store keeps (:func:`haslab.sweep.execute`).
            It never raises for a failed run.
        version: returns the simulator's version (:func:`haslab.sweep.model_version`); a run
            stored under another version is run again.
        jobs, dask, retry_failed, progress: as for :func:`haslab.sweep.run_sweep`.

    :meth:`run`, in order:

    1. under the store's lock, removes what a killed writer left, writes the plan and picks the
       runs to do: those not stored, stored by another version, failed (with ``retry_failed``)
       or stored without the trace or pcap files a run asks for;
    2. submits them in the sweep's order, at most twice as many as there are workers at a time;
    3. stores each result as it arrives (a signal during a write is acted on after it), counts
       it in the :class:`SweepOutcome` and advances the progress bar. A local worker that dies
       breaks the pool: the runs it held go back in the queue and a new pool starts; a run that
       was in a broken pool twice is stored as failed. Any other failure of a worker or of the
       cluster is stored as the run's error;
    4. at the end, or when anything stops it (SIGINT, SIGTERM, an error), cancels the runs not
       yet done, stops the workers it started, closes the Dask client and cluster it opened,
       removes the workers' scratch directory and compacts the store. A stop by signal raises
       :class:`SweepInterrupted` with how many runs are stored and how many were dropped.
    """

    def __init__(
        self,
        store: "Store",
        work: Callable[..., dict],
        version: Callable[[], str],
        *,
        jobs: int | None = None,
        dask: Any = None,
        retry_failed: bool = False,
        progress: bool | str = True,
    ):
        self.store = store
        self.work = work
        self.version = version
        self.jobs = jobs
        self.dask = dask
        self.retry_failed = retry_failed
        self.progress = progress

    def run(self, sweep: Any, runs: list[RunSpec]) -> SweepOutcome:
        """Runs ``runs``, the runs of ``sweep`` (its ``name`` labels the progress bar, its
        ``describe()`` is the plan written to the store), and returns what it did."""
        store = self.store
        interrupts = _Interrupts()
        try:
            with interrupts.installed():
                return self._run(sweep, runs, interrupts)
        except KeyboardInterrupt as e:
            stop = e if isinstance(e, SweepInterrupted) else SweepInterrupted(signal.SIGINT)
            stop.out, stop.total = store.root, len(runs)
            if not stop.dropped:
                stop.dropped = getattr(e, "dropped", 0)
            try:
                status = store.statuses()
                stop.stored = sum(1 for r in runs if r.run_hash in status)
            except Exception:  # noqa: BLE001 - the count is for the message only
                stop.stored = -1
            if stop is e:
                raise
            raise stop from None

    def _todo(self, runs: Sequence[RunSpec], version: str) -> tuple[list[RunSpec], set[str]]:
        """(the runs to run, in order; the hashes of those stored by another version)."""
        store = self.store
        status = store.statuses()
        versions = store.versions()
        # a run stored by another simulator (another source fingerprint) is not reused
        stale = {r.run_hash for r in runs if r.run_hash in status and versions.get(r.run_hash) != version}
        todo = [
            r
            for r in runs
            if r.run_hash not in status
            or r.run_hash in stale
            or (self.retry_failed and status[r.run_hash] != "ok")
            or (status[r.run_hash] == "ok" and not store.has_files(r))
        ]
        return todo, stale

    def _run(self, sweep: Any, runs: list[RunSpec], interrupts: _Interrupts) -> SweepOutcome:
        store, work, jobs, dask, progress = self.store, self.work, self.jobs, self.dask, self.progress
        version = self.version()

        with store.lock():
            store.recover()
            store.write_plan(sweep.describe(), runs)
            todo, stale = self._todo(runs, version)
            outcome = SweepOutcome(total=len(runs), skipped=len(runs) - len(todo), store=store)
            if not todo:
                return outcome

            scratch: str | None = None
            client = cluster = executor = None
            owned = False
            bar = _Progress(False, False, 0, 0, "")
            in_flight: dict[Any, RunSpec] = {}
            try:
                if dask is not None:
                    client, cluster = _dask_client(dask)
                    owned = client is not dask
                    executor = client.get_executor(pure=False)

                    def window() -> int:  # workers may join (or leave) while the sweep runs
                        return 2 * max(sum(client.nthreads().values()), 1)

                else:
                    jobs = min(jobs or default_jobs(), len(todo))
                    executor = _local_executor(jobs)
                    if jobs > 1:
                        scratch = str(store.root.resolve() / ".tmp-work")  # removed by Store.recover

                    def window() -> int:
                        return 2 * jobs

                want = progress == "always" or (bool(progress) and sys.stderr.isatty())
                bar = _Progress(want, progress == "always", len(runs), outcome.skipped, sweep.name)
                crashes: dict[str, int] = {}
                pending = list(reversed(todo))  # pop() from the end keeps the sweep's order

                def record(spec: RunSpec, payload: dict) -> None:
                    with interrupts.hold():
                        store.write(spec, payload, version=version)
                    outcome.ran += 1
                    outcome.stale += spec.run_hash in stale
                    if payload["status"] == "ok":
                        outcome.ok += 1
                    else:
                        outcome.failed += 1
                        outcome.failures.append((spec, payload["error"]))
                    bar.advance(payload["status"] != "ok")

                while pending or in_flight:
                    room = window()
                    while pending and len(in_flight) < room:
                        spec = pending.pop()
                        fut = executor.submit(work, spec) if scratch is None else executor.submit(work, spec, scratch)
                        in_flight[fut] = spec
                    # a timeout, so that the main thread wakes up: a signal the kernel delivered to
                    # another thread (Dask's, the pool's) runs its Python handler only then
                    done, _ = wait(list(in_flight), timeout=0.25, return_when=FIRST_COMPLETED)
                    broken = False
                    for fut in done:
                        spec = in_flight.pop(fut)
                        try:
                            payload = fut.result()
                        except Exception as e:  # noqa: BLE001 - the worker died, or the cluster failed
                            from concurrent.futures.process import BrokenProcessPool

                            if isinstance(e, BrokenProcessPool):
                                broken = True
                                crashes[spec.run_hash] = crashes.get(spec.run_hash, 0) + 1
                                if crashes[spec.run_hash] < 2:
                                    pending.append(spec)  # maybe another run killed the pool: once more
                                    continue
                                err = "the worker process died while running this run (twice)"
                            else:
                                err = "".join(traceback.format_exception_only(type(e), e)).strip()
                            payload = {"status": "failed", "error": f"worker error: {err}", "wall_s": math.nan}
                        record(spec, payload)
                    if broken:
                        # every future of a broken pool fails: re-queue the others and start a new pool
                        for fut, spec in list(in_flight.items()):
                            crashes[spec.run_hash] = crashes.get(spec.run_hash, 0) + 1
                            pending.append(spec)
                        in_flight.clear()
                        _stop_workers(executor)
                        executor = _local_executor(jobs)
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    e.dropped = len(in_flight)  # type: ignore[attr-defined]
                for fut in in_flight:
                    fut.cancel()
                if executor is not None:
                    _stop_workers(executor)
                raise
            else:
                executor.shutdown(wait=True)
            finally:
                bar.close()
                if owned:
                    client.close()
                if cluster is not None:
                    cluster.close()
                if scratch is not None:
                    shutil.rmtree(scratch, ignore_errors=True)
                store.compact()
        return outcome
