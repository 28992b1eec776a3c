"""perf/compare: command line, the plan, and the order of the phases."""

import argparse
import datetime
import json
import os
import platform
import shlex
import sys
import time

from . import build
from . import callgrind
from . import collect
from . import conc
from . import loadgen
from . import report
from . import runs
from . import servers
from . import stats

REPO = servers.REPO

EPILOG = """\
what is compared (one of):
  --rev A --rev B         two git revisions, each built Release in its own worktree in /tmp
  --bin A --bin B         two binaries
  --conf A.conf --conf B.conf   one binary (--httpd), two configs: a fragment appended to
                          the generated base config, or a whole config if it has @PORT@
  --directive "EnableSendfile On" --directive "EnableSendfile Off"
                          one binary, the base config plus one directive (or several
                          separated by ';;') per side
  --mpms prefork,event    one binary, one side per MPM
The first side is the base; every other side is compared with it.

examples:
  perf/compare --rev HEAD~1 --rev HEAD
  perf/compare --bin /tmp/old/httpd --bin build/httpd --rates 20%,40%,60%,80%,100%
  perf/compare --directive "EnableSendfile On" --directive "EnableSendfile Off" --url /large.bin
  perf/compare --mpms prefork,event --parity-rate 5000
  perf/compare --rev main --rev HEAD --callgrind
  perf/compare --bin build/httpd --bin build/httpd --concurrency 20,21,22,23
See htdocs/manual/compare.html for how to read the report.
"""


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="perf/compare", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare two builds, configs or MPMs of httpd: throughput at full load, "
                    "costs per request at the same request rate, and whether the "
                    "differences are beyond the noise.", epilog=EPILOG)
    w = ap.add_argument_group("what to compare")
    w.add_argument("--rev", action="append", default=[], metavar="REV",
                   help="a git revision (repeat: the first is the base)")
    w.add_argument("--repo", default=REPO, help="repository of --rev (default: %(default)s)")
    w.add_argument("--bin", action="append", default=[], metavar="HTTPD", help="a binary")
    w.add_argument("--conf", action="append", default=[], metavar="FILE", help="a config")
    w.add_argument("--directive", action="append", default=[], metavar="TEXT",
                   help="a directive variant")
    w.add_argument("--mpms", metavar="LIST", help="MPMs to compare, e.g. prefork,event")
    w.add_argument("--httpd", help="the binary of --conf/--directive/--mpms "
                                   "(default: build/httpd of the repository)")
    w.add_argument("--mpm", default="prefork", help="MPM of every side (default %(default)s)")
    w.add_argument("--common", action="append", default=[], metavar="TEXT",
                   help="a directive added to every side's config")
    w.add_argument("--label", action="append", default=[], help="names of the sides, in order")
    lo = ap.add_argument_group("load")
    lo.add_argument("--rounds", type=int, help="rounds of A B (default 5)")
    lo.add_argument("--duration", type=float, help="seconds per measured run (default 8)")
    lo.add_argument("--warmup", type=float, help="seconds of warm-up per run (default 2)")
    lo.add_argument("-c", "--connections", type=int, help="connections (default 50)")
    lo.add_argument("--url", action="append", default=[], metavar="PATH[=WEIGHT]",
                    help="URL path to load (repeat for a mix; default /4k.bin); the docroot "
                         "has /4k.bin, /large.bin (1 MiB), /index.html, /manual/*.html")
    lo.add_argument("--urls", metavar="FILE", help="URL list: 'path [weight]' a line")
    lo.add_argument("--parity-rate", default=None, metavar="N|N%",
                    help="the fixed rate of the parity phase (default 70%% of the lower maximum)")
    lo.add_argument("--rates", metavar="LIST", help="rate sweep, e.g. 20%%,40%%,60%%,80%%,100%%")
    lo.add_argument("--sweep-rounds", type=int, help="rounds per sweep rate (default --rounds)")
    lo.add_argument("--phases", metavar="LIST",
                    help="phases to run (default closed,parity; + sweep with --rates, + "
                         "concurrency, + callgrind)")
    lo.add_argument("--concurrency", metavar="LIST", help="concurrency levels, e.g. 20,21,22,23")
    lo.add_argument("--miss-share", type=float, default=0.25,
                    help="share of 404 requests in --concurrency runs (default %(default)s)")
    lo.add_argument("--callgrind", action="store_true",
                    help="also count instructions per request under callgrind")
    lo.add_argument("--callgrind-requests", type=int, default=2000)
    lo.add_argument("--callgrind-rounds", type=int, default=None,
                    help="callgrind runs per side (default 2; deterministic)")
    lo.add_argument("--loadgen", help="hd_loadgen binary (default: found in build dirs or PATH)")
    lo.add_argument("--no-loadgen", action="store_true", help="use wrk only")
    lo.add_argument("--no-perf", action="store_true", help="do not run perf stat")
    lo.add_argument("--short", action="store_true",
                    help="quick preset: 3 rounds of 2 s runs, 0.5 s warm-up (tests, smoke runs)")
    an = ap.add_argument_group("analysis and output")
    an.add_argument("--alpha", type=float, default=stats.ALPHA,
                    help="significance level of the t-test (default %(default)s)")
    an.add_argument("--min-change", type=float, default=stats.MIN_CHANGE * 100, metavar="PCT",
                    help="the robot's minimum change in %% (default %(default)s)")
    an.add_argument("--out", metavar="DIR", help="write report.txt, compare.json and plots here "
                                                 "(default /tmp/hdcmp-out-<time>)")
    an.add_argument("--report", metavar="JSON", help="print the report of an earlier "
                                                     "comparison's compare.json (runs nothing)")
    an.add_argument("--no-charts", action="store_true", help="no terminal charts")
    an.add_argument("--quiet", action="store_true", help="no progress line")
    an.add_argument("--keep", action="store_true", help="keep the temporary ServerRoots")
    an.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                    help="build jobs (default %(default)s)")
    return ap.parse_args(argv)


def fail(msg):
    sys.stderr.write("perf/compare: %s\n" % msg)
    sys.exit(2)


def read_urls(args):
    urls = []
    if args.urls:
        with open(args.urls) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    parts = line.split()
                    urls.append((parts[0], float(parts[1]) if len(parts) > 1 else 1.0))
    for u in args.url:
        p, _eq, wgt = u.partition("=")
        urls.append((p, float(wgt) if wgt else 1.0))
    for p, w in urls:
        if not p.startswith("/") or w <= 0:
            fail("bad URL %r (a path starting with /, a positive weight)" % p)
    return urls or [("/4k.bin", 1.0)]


def default_httpd(args):
    b = args.httpd or os.path.join(REPO, "build", "httpd")
    if not os.path.exists(b):
        fail("no binary %s: build it (./setup.sh build) or pass --httpd" % b)
    return b


def make_sides(args, log):
    """The sides to compare, in order; the first is the base."""
    modes = [m for m, v in (("--rev", args.rev), ("--bin", args.bin), ("--conf", args.conf),
                            ("--directive", args.directive), ("--mpms", args.mpms)) if v]
    if len(modes) != 1:
        fail("give exactly one of --rev, --bin, --conf, --directive, --mpms (got %s)"
             % (", ".join(modes) or "none"))
    sides = []
    keys = "ABCDEFGH"
    if args.rev:
        for i, rev in enumerate(args.rev):
            log("building %s ..." % rev)
            try:
                binary, sha, secs = build.build_revision(
                    args.repo, rev, jobs=args.jobs, log=os.path.join(args.out, "build.log"))
            except build.BuildError as e:
                fail(str(e))
            log("  %s = %s, %s" % (rev, sha[:12], "cached" if secs == 0 else
                                   "built in %.0f s" % secs))
            s = servers.Side(keys[i], "rev " + rev, binary, args.mpm, args.common, revision=sha)
            s.subject = build.subject(args.repo, sha)
            s.build_s = secs
            sides.append(s)
    elif args.bin:
        for i, b in enumerate(args.bin):
            if not os.path.exists(b):
                fail("no binary %s" % b)
            sides.append(servers.Side(keys[i], "bin " + b, b, args.mpm, args.common))
    elif args.conf:
        httpd = default_httpd(args)
        for i, c in enumerate(args.conf):
            if not os.path.exists(c):
                fail("no config %s" % c)
            sides.append(servers.Side(keys[i], "conf " + os.path.basename(c), httpd, args.mpm,
                                      args.common, conf_file=os.path.abspath(c)))
    elif args.directive:
        httpd = default_httpd(args)
        for i, d in enumerate(args.directive):
            lines = [x.strip() for x in d.replace(";;", "\n").splitlines() if x.strip()]
            sides.append(servers.Side(keys[i], " / ".join(lines), httpd, args.mpm,
                                      args.common + lines))
    else:
        httpd = default_httpd(args)
        for i, m in enumerate(x.strip() for x in args.mpms.split(",") if x.strip()):
            sides.append(servers.Side(keys[i], "mpm " + m, httpd, m, args.common))
    if len(sides) < 2:
        fail("need at least two sides to compare")
    if len(sides) > len(keys):
        fail("at most %d sides" % len(keys))
    for i, lab in enumerate(args.label[:len(sides)]):
        sides[i].label = lab
    return sides


def apply_defaults(args):
    o = runs.Options()
    if args.short:
        o.rounds, o.duration, o.warmup = 3, 2.0, 1.0
    for name in ("rounds", "duration", "warmup", "connections"):
        v = getattr(args, name)
        if v is not None:
            setattr(o, name, v)
    if o.rounds < 2:
        fail("--rounds must be at least 2 (a test needs two runs a side)")
    # wrk counts whole seconds.
    o.duration = float(max(1, round(o.duration)))
    o.warmup = float(max(1, round(o.warmup))) if o.warmup > 0 else 0.0
    o.urls = read_urls(args)
    o.parity = args.parity_rate or "70%"
    o.rates = [x.strip() for x in (args.rates or "").split(",") if x.strip()]
    o.sweep_rounds = args.sweep_rounds or o.rounds
    o.perf = not args.no_perf
    return o


def phases_of(args):
    if args.phases:
        ph = [x.strip() for x in args.phases.split(",") if x.strip()]
    else:
        ph = ["closed", "parity"]
        if args.rates:
            ph.append("sweep")
        if args.concurrency:
            ph = ["concurrency"] if not args.rates and not args.parity_rate else \
                ph + ["concurrency"]
        if args.callgrind:
            ph.append("callgrind")
    bad = [p for p in ph if p not in ("closed", "parity", "sweep", "concurrency", "callgrind")]
    if bad:
        fail("unknown phase(s) %s" % ", ".join(bad))
    return ph


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.report:
        with open(args.report) as f:
            result = json.load(f)
        report.analyze(result, args.alpha, args.min_change / 100.0)
        sys.stdout.write(report.text(result, charts=not args.no_charts))
        return 0
    t_start = time.monotonic()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.out = os.path.abspath(args.out or "/tmp/hdcmp-out-" + stamp)

    def log(msg):
        if not args.quiet:
            sys.stderr.write(msg + "\n")
            sys.stderr.flush()

    opts = apply_defaults(args)
    phases = phases_of(args)
    if "closed" not in phases:
        pct = [r for r in ([opts.parity] if "parity" in phases else []) +
               (opts.rates if "sweep" in phases else []) if str(r).endswith("%")]
        if pct:
            fail("rates in %% (%s) are of the closed-loop maximum: run the closed phase or "
                 "give requests/s (--parity-rate N)" % ", ".join(pct))
    os.makedirs(args.out, exist_ok=True)
    sides = make_sides(args, log)
    lg = None if args.no_loadgen else loadgen.find_hd_loadgen(
        args.loadgen, [os.path.dirname(s.binary) for s in sides])
    if args.loadgen and not lg:
        fail("no hd_loadgen at %s" % args.loadgen)
    opts.loadgen = lg
    build_s = time.monotonic() - t_start

    ws = servers.Workspace(keep=args.keep)
    try:
        for s in sides:
            s.identity = servers.identity_of(s.binary)
            try:
                ws.prepare(s)
            except servers.ServerError as e:
                fail(str(e))
        result = run_all(args, opts, phases, sides, ws, log)
    finally:
        ws.cleanup()
    result["meta"]["build_s"] = build_s
    result["meta"]["total_s"] = time.monotonic() - t_start
    report.analyze(result, args.alpha, args.min_change / 100.0)
    if "callgrind" in result:
        pass
    files = report.write_plots(result, args.out)
    result["files"] = [os.path.join(args.out, "report.txt"),
                       os.path.join(args.out, "compare.json")] + files
    if args.keep:
        result["files"].append(ws.dir + " (ServerRoots, kept)")
    text = report.text(result, charts=not args.no_charts)
    text += "took %s (builds %s)\n" % (runs.fmt_dur(result["meta"]["total_s"]),
                                       runs.fmt_dur(build_s))
    with open(os.path.join(args.out, "report.txt"), "w") as f:
        f.write(text)
    report.write_json(result, os.path.join(args.out, "compare.json"))
    sys.stdout.write(text)
    if result.get("error"):
        sys.stderr.write("perf/compare: stopped early: %s\n" % result["error"])
        return 1
    return 0


def estimate_runs(phases, opts, nsides, args):
    n = 0
    per_closed = 2 if opts.loadgen else 1
    if "closed" in phases:
        n += opts.rounds * nsides * per_closed
    if "parity" in phases:
        n += opts.rounds * nsides
    if "sweep" in phases:
        n += len(opts.rates) * opts.sweep_rounds * nsides
    if "concurrency" in phases:
        n += len(args.concurrency.split(",")) * opts.rounds * nsides
    if "callgrind" in phases:
        n += (args.callgrind_rounds or 2) * nsides
    return n


def run_all(args, opts, phases, sides, ws, log):
    status_any = any(s.status for s in sides)
    per_run = opts.warmup + opts.duration + (4.0 if status_any else 1.5)
    progress = runs.Progress(estimate_runs(phases, opts, len(sides), args), per_run)
    progress.quiet = args.quiet
    runner = runs.Runner(ws, sides, opts, progress)
    result = {
        "version": 1,
        "meta": {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                 "host": platform.node(), "kernel": platform.release(),
                 "cpus": os.cpu_count(), "argv": " ".join(shlex.quote(a) for a in sys.argv),
                 "python": platform.python_version()},
        "options": {"rounds": opts.rounds, "duration": opts.duration, "warmup": opts.warmup,
                    "connections": opts.connections, "urls": opts.urls,
                    "parity": opts.parity, "rates": opts.rates,
                    "sweep_rounds": opts.sweep_rounds, "perf": runner.perf_ok,
                    "loadgen": opts.loadgen, "phases": phases, "alpha": args.alpha,
                    "min_change": args.min_change / 100.0, "short": args.short},
        "sides": [], "records": runner.records, "warnings": runner.warnings,
    }
    if not opts.loadgen and ("parity" in phases or "sweep" in phases):
        runner.warnings.append("hd_loadgen not found: the parity phase is paced by wrk (latency "
                               "from the actual send, no per-URL figures)")
    result["paced_by"] = "hd_loadgen -R (open loop)" if opts.loadgen else "wrk paced by a Lua " \
        "schedule (stand-in for hd_loadgen)"
    try:
        run_phases(args, opts, phases, sides, ws, runner, result, progress)
    except (servers.ServerError, loadgen.LoadError, callgrind.CallgrindError,
            collect.PerfError, OSError) as e:
        # What ran so far is still reported and saved; the exit status says it is partial.
        result["error"] = "%s: %s" % (type(e).__name__, e)
        runner.warnings.append("STOPPED EARLY, the figures are partial: " + result["error"])
    finally:
        progress.close()
    for s in sides:
        j = s.to_json()
        j["subject"] = getattr(s, "subject", None)
        j["build_s"] = getattr(s, "build_s", None)
        j["status_counters"] = runner.status_seen.get(s.key, False)
        result["sides"].append(j)
    missing = [s.key for s in sides if not runner.status_seen.get(s.key)]
    if missing and runner.records:
        runner.warnings.append("no server counters (/server-status?json) from side(s) %s: "
                               "server-side per-request figures are missing there; the "
                               "kernel's (perf) are not" % "/".join(missing))
    return result


def run_phases(args, opts, phases, sides, ws, runner, result, progress):
    lower = None
    if "closed" in phases:
        runner.rounds("closed", opts.rounds, runner.closed_segments)
        result["max_rps"], lower = runner.max_rps()
    if "parity" in phases:
        try:
            rate = runs.parse_rate(opts.parity, lower)
        except ValueError as e:
            fail(str(e) + " (give --parity-rate N)")
        result["parity_rate"] = rate
        result["parity_spec"] = "fixed"
        if str(opts.parity).endswith("%"):
            result["parity_spec"] = "%s of the lower maximum %.0f/s" % (opts.parity, lower)
        runner.rounds("parity", opts.rounds,
                      lambda side: [("paced", "paced", rate)])
    if "sweep" in phases:
        result["sweep_specs"] = []
        result["sweep_rates"] = {}
        for spec in opts.rates:
            try:
                r = runs.parse_rate(spec, lower)
            except ValueError as e:
                fail(str(e))
            result["sweep_specs"].append(spec)
            result["sweep_rates"][spec] = r
        for spec in result["sweep_specs"]:
            r = result["sweep_rates"][spec]
            runner.rounds("sweep", opts.sweep_rounds,
                          lambda side, spec=spec, r=r: [(spec, "paced", r)])
    if "concurrency" in phases:
        levels = [int(x) for x in args.concurrency.split(",") if x.strip()]
        result["concurrency"] = conc.run(runner, levels, args.miss_share, progress)
    if "callgrind" in phases:
        ok, why = callgrind.available()
        if not ok:
            runner.warnings.append("callgrind skipped: " + why)
        else:
            result["callgrind"] = callgrind.run(
                ws, sides, opts.urls, args.callgrind_requests, 200,
                args.callgrind_rounds or 2, args.out, progress)
