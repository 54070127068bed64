"""N4 and its controls, repeated: what decides the /healthz prober's p99 while 50 connections arrive at once.

    .venv/bin/python bench/hostile_n4.py [--trials 5] [--rounds 10]

One server (2 workers, the stand-in hub of bench/hostile_server.py), then ``--trials`` times, in turn:

- ``quiet``: the prober alone (what the machine's other load costs it);
- ``n4``: ``--rounds`` bursts of 50 concurrent ``/api/estimate`` for one new hub id each (its index has
  10^6 keys), 0.5 s apart, as hostile_server's N4;
- ``healthz``: the same client sending ``/healthz`` for every request (its connections alone);
- ``healthz nice 10``: the same, with the burst client at nice 10 (below the server and the prober);
- ``healthz keep-alive probe``: the same bursts, the prober reusing one connection.

The burst client and the prober each run in a process of their own, so each one's CPU is its own (read
from its rusage), and the server's from /proc (both workers); ``--own-sessions`` starts each of them
and the server in a session (a scheduler autogroup) of its own. "others" is the CPU every other process
on the machine used in the same seconds (/proc/stat busy time minus ours): on a 2-core machine shared
with other sessions it is what the scheduler gave away. A burst's span is from its first connection to
its last answer: what a probe arriving with the burst waits behind at worst. The p99 of ~20 probes a
second over ``--rounds`` bursts is read from the few probes that met a burst, so it is close to the
longest span; more rounds read it from more. Prints one line per trial and, per kind, min / median /
max over the trials. A benchmark: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import hostile_server as hs  # noqa: E402  (the server, the stand-in hub, burst, request, CPU readers)

BURST = 50
PAUSE_S = 0.5


def _busy_s() -> float:
    """Every CPU's busy time on the machine (user + nice + system + irq + softirq + steal), seconds."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def burst_main(port: int, paths_json: str) -> None:
    """The burst client's own process (``--burst PORT PATHS``): each round's paths at once, then a pause."""
    rounds: list[list[str]] = json.loads(paths_json)
    statuses: list[int] = []
    spans: list[float] = []  # each burst: from its first connection to its last answer
    for paths in rounds:
        answers = hs.burst(port, paths)
        statuses += [status for status, _, _ in answers]
        spans.append(max(seconds for _, _, seconds in answers))
        time.sleep(PAUSE_S)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"statuses": statuses, "spans": spans, "cpu_s": usage.ru_utime + usage.ru_stime}))


def probe_keepalive_main(port: int) -> None:
    """A prober on ONE kept-alive connection (``--probe-keepalive PORT``), else as hostile_server's."""
    import http.client
    import threading

    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    samples: list[float] = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while not done.is_set():
        start = time.perf_counter()
        try:
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            response.read()
            ok = response.status == 200
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            ok = False
        samples.append(time.perf_counter() - start if ok else 30.0)
        time.sleep(hs.PROBE_EVERY_S)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"samples": samples, "cpu_s": usage.ru_utime + usage.ru_stime}))


@dataclass
class Trial:
    kind: str
    p50_ms: float
    p99_ms: float
    max_ms: float
    probes: int
    server_cpu_s: float
    client_cpu_s: float
    probe_cpu_s: float
    others_cpu_s: float
    wall_s: float
    statuses: str
    span_p50_ms: float = 0.0
    span_max_ms: float = 0.0


def _percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def trial(
    port: int, pid: int, kind: str, rounds: list[list[str]], *, nice: int = 0, keepalive: bool = False
) -> Trial:
    probe_flag = "--probe-keepalive" if keepalive else "--probe"
    script = str(HERE / ("hostile_n4.py" if keepalive else "hostile_server.py"))
    prober = subprocess.Popen([sys.executable, script, probe_flag, str(port)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, start_new_session=hs.OWN_SESSIONS)  # fmt: skip
    time.sleep(0.5)  # the prober's interpreter start
    busy0, server0, wall0 = _busy_s(), hs.server_cpu(pid), time.monotonic()
    self0 = time.process_time()
    client_cpu, statuses, spans = 0.0, "-", [0.0]
    if rounds:
        client = subprocess.run(
            [sys.executable, str(HERE / "hostile_n4.py"), "--burst", str(port), json.dumps(rounds)],
            capture_output=True, text=True, timeout=600, start_new_session=hs.OWN_SESSIONS,
            preexec_fn=(lambda: os.nice(nice)) if nice else None,
        )  # fmt: skip
        result = json.loads(client.stdout)
        client_cpu, spans = result["cpu_s"], sorted(result["spans"])
        counts: dict[int, int] = {}
        for status in result["statuses"]:
            counts[status] = counts.get(status, 0) + 1
        statuses = " ".join(f"{k}x{v}" for k, v in sorted(counts.items()))
    else:
        time.sleep(len(rounds) or 6.0)
    time.sleep(0.3)
    server = hs.server_cpu(pid) - server0
    out, _ = prober.communicate("", timeout=60)
    busy, wall = _busy_s() - busy0, time.monotonic() - wall0
    probe = json.loads(out)
    ordered = sorted(probe["samples"])
    others = busy - server - client_cpu - probe["cpu_s"] - (time.process_time() - self0)
    return Trial(kind, _percentile(ordered, 0.5), _percentile(ordered, 0.99), ordered[-1] * 1000, len(ordered),
                 server, client_cpu, probe["cpu_s"], max(0.0, others), wall, statuses,
                 statistics.median(spans) * 1000, spans[-1] * 1000)  # fmt: skip


def show(t: Trial) -> None:
    print(f"{t.kind:<26} p50 {t.p50_ms:6.1f}  p99 {t.p99_ms:6.1f}  max {t.max_ms:6.1f} ms  ({t.probes:3} probes)  "
          f"server {t.server_cpu_s:5.2f} s  client {t.client_cpu_s:4.2f} s  prober {t.probe_cpu_s:4.2f} s  "
          f"others {t.others_cpu_s:5.2f} s in {t.wall_s:4.1f} s  burst span p50 {t.span_p50_ms:5.0f} max {t.span_max_ms:5.0f} ms"
          f"  {t.statuses}", flush=True)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--kinds", default="quiet,n4,healthz,healthz nice 10,healthz keep-alive probe")
    parser.add_argument(
        "--own-sessions", action="store_true", help="server, client, prober each in its own session"
    )
    parser.add_argument("--burst", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--probe-keepalive", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.burst:
        burst_main(int(args.burst[0]), args.burst[1])
        return 0
    if args.probe_keepalive:
        probe_keepalive_main(args.probe_keepalive)
        return 0
    hs.OWN_SESSIONS = args.own_sessions
    kinds = args.kinds.split(",")
    hub = hs.start_hub()
    port = hs.load.free_port()
    results: list[Trial] = []
    with tempfile.TemporaryDirectory() as cache:
        proc = hs.start_server(port, hub, cache)
        try:
            for n in range(args.trials):
                for kind in kinds:
                    healthz = [["/healthz"] * BURST for _ in range(args.rounds)]
                    if kind == "quiet":
                        t = trial(port, proc.pid, kind, [])
                    elif kind == "n4":
                        ids = [[f"/api/estimate?model=bigindex%2Ft{n}r{k}&device=h100"] * BURST
                               for k in range(args.rounds)]  # fmt: skip
                        t = trial(port, proc.pid, kind, ids)
                    elif kind == "healthz":
                        t = trial(port, proc.pid, kind, healthz)
                    elif kind == "healthz nice 10":
                        t = trial(port, proc.pid, kind, healthz, nice=10)
                    elif kind == "healthz keep-alive probe":
                        t = trial(port, proc.pid, kind, healthz, keepalive=True)
                    else:
                        raise SystemExit(f"unknown kind {kind!r}")
                    results.append(t)
                    show(t)
        finally:
            hub.stop.set()
            hs.load.stop_server(proc)
    print(f"\nover {args.trials} trials, min / median / max (load average now {os.getloadavg()[0]:.1f}):")
    for kind in kinds:
        mine = [t for t in results if t.kind == kind]
        for name in ("p99_ms", "p50_ms", "max_ms", "span_p50_ms", "span_max_ms", "server_cpu_s", "client_cpu_s",
                     "others_cpu_s"):  # fmt: skip
            values = [getattr(t, name) for t in mine]
            print(
                f"  {kind:<26} {name:<13} {min(values):7.2f} / {statistics.median(values):7.2f} / {max(values):7.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
