"""The round scheduler: phases of rounds, A B A B ..., one fresh server per run.

A run: start the side's server, wait until its set of workers is stable,
warm up (closed loop), wait SETTLE_S, read the server's counters, start
perf stat and the /proc/stat sampler, apply the load, stop them, wait
SETTLE_S, read the counters again, stop the server. Each run yields one
record: the load generator's result, the server's per-request deltas, the
kernel's counts and the system samples, flattened into "metrics".

Phases:
  closed   maximum requests/s (wrk -t1 -cN; hd_loadgen -c N too when present)
  parity   every side at the same fixed rate (default 70% of the lower
           maximum): where per-request costs are compared
  sweep    the same at each of --rates
"""

import os
import sys
import time

from . import collect
from . import loadgen


class Options:
    """Everything a comparison run needs to know, with the defaults."""

    def __init__(self, **kw):
        self.rounds = 5
        self.duration = 8.0            # seconds per measured run
        self.warmup = 2.0              # seconds of closed-loop warm-up per run
        self.connections = 50
        self.urls = [("/4k.bin", 1)]
        self.parity = "70%"            # "N%" of the lower maximum, or requests/s
        self.rates = []                # sweep: same syntax as parity
        self.sweep_rounds = None       # default: rounds
        self.perf = True
        self.loadgen = None            # hd_loadgen path or None
        self.closed = True
        self.status = True
        for k, v in kw.items():
            if not hasattr(self, k):
                raise TypeError("unknown option %s" % k)
            setattr(self, k, v)


def parse_rate(spec, maximum):
    """ "70%" of @maximum, or a number of requests/s."""
    s = str(spec).strip()
    if s.endswith("%"):
        if maximum is None:
            raise ValueError("a rate in %% (%s) needs the closed-loop phase" % s)
        return float(s[:-1]) / 100.0 * maximum
    return float(s)


class Progress:
    """One line on stderr: runs done / total, what runs now, and the ETA."""

    def __init__(self, total_runs, est_run_s, stream=sys.stderr):
        self.total = total_runs
        self.done = 0
        self.est = est_run_s
        self.t0 = time.monotonic()
        self.spent_est = 0.0
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.quiet = False

    def add_runs(self, n):
        self.total += n

    def eta(self):
        elapsed = time.monotonic() - self.t0
        # Scale the planned time of what is left by how the plan held so far.
        factor = elapsed / self.spent_est if self.spent_est > 0 else 1.0
        return max(0.0, (self.total - self.done) * self.est * factor)

    def show(self, what):
        if self.quiet:
            return
        el = time.monotonic() - self.t0
        line = "[%3d/%-3d] %-58s elapsed %s  ETA %s" % (
            self.done + 1, self.total, what[:58], fmt_dur(el), fmt_dur(self.eta()))
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finished_run(self):
        self.done += 1
        self.spent_est += self.est

    def close(self):
        if self.tty and not self.quiet:
            self.stream.write("\r\033[K")
            self.stream.flush()


def fmt_dur(s):
    s = int(round(s))
    return "%d:%02d" % (s // 60, s % 60)


def settle_workers(srv, timeout=5.0):
    """Waits until the server's process count stops changing for 0.3 s."""
    deadline = time.monotonic() + timeout
    last, since = len(srv.pids()), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        n = len(srv.pids())
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= 0.3:
            break
    return last


def flatten(load, status, perf_req, system):
    """The per-run metrics, by name (units in the name)."""
    m = {}
    if load.get("rps") is not None:
        m["requests/s"] = load["rps"]
    lat = load.get("latency_us") or {}
    for k in ("p50", "p90", "p99", "max"):
        if lat.get(k) is not None:
            m["latency %s us" % k] = float(lat[k])
    m["errors"] = float(load.get("errors") or 0)
    m["non-2xx/3xx"] = float(load.get("non_2xx_3xx") or 0)
    if status:
        for k, v in status.items():
            if k not in ("requests", "bytes"):
                m[k] = v
    m.update(perf_req or {})
    if system and system.get("mean"):
        m.update(system["mean"])
    return m


class Runner:
    def __init__(self, ws, sides, opts, progress=None, log=None):
        self.ws = ws
        self.sides = sides
        self.opts = opts
        self.progress = progress
        self.log = log or (lambda msg: None)
        self.records = []
        self.perf_ok, self.perf_why = collect.perf_usable() if opts.perf else (False, "--no-perf")
        self.warnings = []
        if opts.perf and not self.perf_ok:
            self.warnings.append("perf stat unavailable, kernel counts skipped: " + self.perf_why)
        self.url_file = os.path.join(ws.dir, "urls.txt")
        loadgen.write_url_file(self.url_file, opts.urls)
        self.script = os.path.join(ws.dir, "wrk.lua")
        self.status_seen = {}

    # -- one run -----------------------------------------------------------

    def _load(self, srv, kind, rate=None, duration=None):
        o = self.opts
        duration = duration or o.duration
        if kind == "wrk":
            return loadgen.run_wrk(srv.url(), o.urls, duration, o.connections, self.script)
        if kind == "paced":
            if o.loadgen:
                return loadgen.run_hd_loadgen(o.loadgen, srv.url(), self.url_file, duration,
                                              o.connections, os.path.join(self.ws.dir, "lg.json"),
                                              rate=rate)
            return loadgen.run_wrk(srv.url(), o.urls, duration, o.connections, self.script,
                                   rate=rate)
        if kind == "hd_loadgen":
            return loadgen.run_hd_loadgen(o.loadgen, srv.url(), self.url_file, duration,
                                          o.connections, os.path.join(self.ws.dir, "lg.json"))
        raise ValueError(kind)

    def run(self, side, phase, rnd, segments):
        """Runs @segments [(name, kind, rate)] on one fresh server of @side."""
        o = self.opts
        t0 = time.monotonic()
        srv = self.ws.start(side)
        out = []
        try:
            nworkers = settle_workers(srv)
            if o.warmup > 0:
                loadgen.run_wrk(srv.url(), o.urls, o.warmup, o.connections, self.script)
            for name, kind, rate in segments:
                if self.progress:
                    self.progress.show("%s %s round %d side %s%s" % (
                        phase, name, rnd + 1, side.key,
                        " @ %d/s" % rate if rate else ""))
                rec = self._segment(srv, side, phase, name, kind, rate, rnd)
                rec["workers"] = nworkers
                out.append(rec)
                if self.progress:
                    self.progress.finished_run()
        finally:
            srv.stop()
        wall = time.monotonic() - t0
        for rec in out:
            rec["wall_s"] = wall / len(out)
        errs = srv.error_log()
        if errs.strip():
            out[-1]["error_log_tail"] = errs[-2000:]
        self.records.extend(out)
        return out

    def _segment(self, srv, side, phase, name, kind, rate, rnd):
        o = self.opts
        status = o.status and side.status and self.status_seen.get(side.key, True)
        before, _n = collect.fetch_status_settled(srv.port, time.time()) if status \
            else (None, 0)
        self.status_seen.setdefault(side.key, before is not None)
        pids = srv.pids()
        perf = collect.PerfStat(pids, os.path.join(self.ws.dir, "perf.csv")) \
            if self.perf_ok else None
        sampler = collect.SysSampler().start()
        if perf:
            try:
                perf.start()
            except collect.PerfError as e:
                perf.stop()
                perf = None
                self.perf_ok = False
                self.warnings.append("perf stat failed, kernel counts left out from here on: "
                                     "%s" % e)
        try:
            load = self._load(srv, kind, rate)
        finally:
            perf_raw = perf.stop() if perf else None
            system = sampler.stop()
        after, n_after = None, 0
        if before is not None:
            after, n_after = collect.fetch_status_settled(srv.port, time.time())
        # Counted in the window: the first read's own request, and every read
        # after it but the last.
        delta = collect.status_delta(before, after, own_requests=n_after)
        reqs = (delta or {}).get("requests") or load.get("requests")
        perf_req = collect.perf_per_request(perf_raw, reqs)
        rec = {
            "side": side.key, "phase": phase, "segment": name, "round": rnd,
            "rate": rate, "tool": load["tool"], "load": load, "status_delta": delta,
            "status_before": before, "status_after": after,
            "perf": perf_raw, "perf_pids": len(pids), "system": system,
            "metrics": flatten(load, delta, perf_req, system),
        }
        if status and before is None:
            rec["status_missing"] = True
        return rec

    # -- phases -------------------------------------------------------------

    def rounds(self, phase, rounds, segments_of):
        """@rounds rounds of every side in turn, A B, B A, A B ...

        Every other round runs the sides in reverse, so that whatever favours
        the first (or last) run of a round - a machine that has just been
        idle, caches - falls on each side equally and does not show up as a
        difference between them.
        """
        for rnd in range(rounds):
            order = self.sides if rnd % 2 == 0 else list(reversed(self.sides))
            for side in order:
                self.run(side, phase, rnd, segments_of(side))

    def closed_segments(self, side):
        segs = [("wrk", "wrk", None)]
        if self.opts.loadgen:
            segs.append(("hd_loadgen", "hd_loadgen", None))
        return segs

    def max_rps(self):
        """Mean closed-loop requests/s per side (wrk), and the lower of them."""
        per = {}
        for rec in self.records:
            if rec["phase"] == "closed" and rec["segment"] == "wrk":
                per.setdefault(rec["side"], []).append(rec["metrics"].get("requests/s", 0))
        means = {k: sum(v) / len(v) for k, v in per.items() if v}
        return means, (min(means.values()) if means else None)
