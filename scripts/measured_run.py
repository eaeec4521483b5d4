"""One process (or a producer | consumer pipeline) run and measured: wall time, CPU time and
peak resident memory from the kernel's own accounting (os.wait4's ru_maxrss, what
/usr/bin/time -v prints), under an optional memory cap that a watchdog enforces.

The watchdog polls the resident size of the process's whole group (it starts in a session of
its own) and kills the group with SIGKILL once it passes the cap, so that a tool that would
take the machine's memory (HTA on a large trace) is stopped first, without cgroups. A cap is
checked every `interval` seconds: memory can overshoot it by what is allocated in that time.
"""
import os
import signal
import subprocess
import tempfile
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def group_rss(leader):
    """Resident bytes of every process in `leader`'s process group."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            # Fields after the command's closing parenthesis: state ppid pgrp ...
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) != leader:
                continue
            with open(f"/proc/{entry}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue  # the process ended while we looked
    return total


class Watchdog(threading.Thread):
    """Polls a process group's resident memory; kills the group past `cap` bytes."""

    def __init__(self, leader, cap=None, interval=0.05):
        super().__init__(daemon=True)
        self.leader, self.cap, self.interval = leader, cap, interval
        self.peak = 0
        self.killed = False
        self._done = threading.Event()

    def run(self):
        while not self._done.is_set():
            rss = group_rss(self.leader)
            self.peak = max(self.peak, rss)
            if self.cap is not None and rss > self.cap:
                self.killed = True
                try:
                    os.killpg(self.leader, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                return
            self._done.wait(self.interval)

    def stop(self):
        self._done.set()
        self.join()


def _wait(proc, deadline):
    """os.wait4 on proc, killing its group at `deadline`: (status, rusage, timed_out)."""
    timed_out = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG if deadline else 0)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage, timed_out
        if deadline and time.monotonic() > deadline and not timed_out:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(0.02)


def _tail(path, limit=2000):
    with open(path, "rb") as f:
        text = f.read()
    return text[-limit:].decode("utf-8", "replace")


def run(cmd, *, cap=None, timeout=None, stdin=None, env=None):
    """Runs `cmd`; returns a dict: rc, wall_s, user_s, sys_s, peak_rss_bytes (ru_maxrss),
    watched_peak_rss_bytes (the watchdog's group maximum), killed_by_cap, timed_out, stdout,
    stderr_tail."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in cmd], stdin=stdin, stdout=out, stderr=err,
                                start_new_session=True, env=env)
        dog = Watchdog(proc.pid, cap)
        dog.start()
        usage, timed_out = _wait(proc, time.monotonic() + timeout if timeout else None)
        wall = time.perf_counter() - start
        dog.stop()
        out.seek(0)
        return {
            "rc": proc.returncode,
            "wall_s": wall,
            "user_s": usage.ru_utime,
            "sys_s": usage.ru_stime,
            "peak_rss_bytes": usage.ru_maxrss * 1024,
            "watched_peak_rss_bytes": dog.peak,
            "killed_by_cap": dog.killed,
            "timed_out": timed_out,
            "stdout": out.read().decode("utf-8", "replace"),
            "stderr_tail": _tail(err.name),
        }


def run_pipeline(producer, consumer, *, cap=None, timeout=None):
    """`producer | consumer`, the consumer measured as run() does; the producer's CPU time
    and exit status under "producer"."""
    with tempfile.NamedTemporaryFile() as perr:
        start = time.perf_counter()
        prod = subprocess.Popen([str(c) for c in producer], stdout=subprocess.PIPE, stderr=perr,
                                start_new_session=True)
        try:
            result = run(consumer, cap=cap, timeout=timeout, stdin=prod.stdout)
        finally:
            prod.stdout.close()
        usage, _ = _wait(prod, None)
        result["wall_s"] = time.perf_counter() - start
        result["producer"] = {
            "rc": prod.returncode,
            "user_s": usage.ru_utime,
            "sys_s": usage.ru_stime,
            "peak_rss_bytes": usage.ru_maxrss * 1024,
            "stderr_tail": _tail(perr.name),
        }
        return result
