"""The report: statistics per metric, the summary, tables, charts, JSON.

analyze() turns the raw records into comparisons (each side after the first
against the first, metric by metric, section by section); text() prints
them. One line per metric, as the kernel test robot prints them:

        base ± stddev%   %change   mark        new ± stddev%   p-value  95% CI  metric

mark: `**` the change is beyond noise (both the robot's rule and the sound
test say so), `r` only the robot's rule, `t` only the t-test and interval.
"""

import json
import math
import os

from . import plots
from . import stats

# Display order; metrics not listed come after, alphabetically.
METRIC_ORDER = [
    "requests/s", "ops/s", "errors", "non-2xx/3xx", "found mean us", "found median us",
    "missed mean us", "missed median us",
    "latency p50 us", "latency p90 us", "latency p99 us", "latency max us",
    "cpu us/req", "cpu user us/req", "cpu sys us/req", "perf task-clock us/req",
    "syscalls/req", "perf syscalls/req",
    "sys accept/req", "sys read/req", "sys write/req", "sys sendfile/req", "sys open/req",
    "sys stat/req", "sys close/req", "sys epoll_wait/req", "sys epoll_ctl/req",
    "sys other/req", "master syscalls/req",
    "perf sys accept/req", "perf sys read/req", "perf sys write/req", "perf sys sendfile/req",
    "perf sys open/req", "perf sys stat/req", "perf sys close/req", "perf sys epoll_wait/req",
    "perf sys epoll_ctl/req", "perf sys other/req",
    "cs/req", "cs voluntary/req", "cs involuntary/req", "perf cs/req",
    "run delay us/req", "alloc calls/req", "alloc bytes/req",
    "sys r", "sys b", "sys cs/s", "sys in/s", "sys us%", "sys sy%", "sys intr%", "sys id%",
    "sys wa%",
]

# Per-request costs, most telling first: what "more expensive" is judged on.
CPU_METRICS = ["cpu us/req", "perf task-clock us/req"]
COST_METRICS = CPU_METRICS + ["syscalls/req", "perf syscalls/req", "cs/req", "perf cs/req",
                              "run delay us/req", "alloc calls/req", "alloc bytes/req"]

CHART_METRICS = [("closed/wrk", "requests/s"), ("parity", "latency p99 us"),
                 ("parity", "cpu us/req"), ("parity", "perf task-clock us/req"),
                 ("parity", "syscalls/req"), ("parity", "perf syscalls/req"),
                 ("parity", "cs/req"), ("parity", "perf cs/req")]


def section_of(rec):
    if rec["phase"] == "closed":
        return "closed/" + rec["segment"]
    if rec["phase"] == "concurrency":
        return "concurrency " + rec["segment"]
    if rec["phase"] == "sweep":
        return "sweep@" + rec["segment"]
    return rec["phase"]


def metric_key(name):
    return (METRIC_ORDER.index(name), name) if name in METRIC_ORDER else (len(METRIC_ORDER), name)


def series(result, section):
    """{side: {metric: [value per round]}} of one section (round order)."""
    out = {}
    for rec in sorted(result["records"], key=lambda r: r["round"]):
        if section_of(rec) != section:
            continue
        per = out.setdefault(rec["side"], {})
        for k, v in rec["metrics"].items():
            per.setdefault(k, []).append(v)
    return out


def sections(result):
    seen = []
    for rec in result["records"]:
        s = section_of(rec)
        if s not in seen:
            seen.append(s)
    return seen


# Counts per request (syscalls, context switches, allocations) must also
# move by at least this much to be called a change: accepts per request,
# for one, follow the request rate (connections / requests), not the build.
MIN_ABS_PER_REQ = 0.01


def min_abs_of(metric):
    if metric.endswith("/req") and " us/req" not in metric and "bytes/req" not in metric:
        return MIN_ABS_PER_REQ
    return 0.0


def analyze(result, alpha=stats.ALPHA, min_change=stats.MIN_CHANGE):
    """Adds result["comparisons"][new][section][metric] = stats.compare(...)."""
    keys = [s["key"] for s in result["sides"]]
    base = keys[0]
    comps = {}
    for sec in sections(result):
        ser = series(result, sec)
        for new in keys[1:]:
            a, b = ser.get(base, {}), ser.get(new, {})
            for m in sorted(set(a) | set(b), key=metric_key):
                if m not in a or m not in b:
                    continue
                comps.setdefault(new, {}).setdefault(sec, {})[m] = stats.compare(
                    a[m], b[m], alpha, min_change, min_abs=min_abs_of(m))
    result["comparisons"] = comps
    cg = result.get("callgrind")
    if cg:
        # Deterministic to a few instructions: a 0.1% change is already real.
        for new in keys[1:]:
            a = cg["sides"].get(base, {}).get("instructions/req", [])
            b = cg["sides"].get(new, {}).get("instructions/req", [])
            if a and b:
                cg.setdefault("comparisons", {})[new] = {
                    "instructions/req": stats.compare(a, b, alpha, min(min_change, 0.001))}
    return comps


# ---- text -------------------------------------------------------------------

def fnum(v, width=10):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a".rjust(width)
    a = abs(v)
    if a >= 1e5:
        s = "%.0f" % v
    elif a >= 100:
        s = "%.1f" % v
    elif a >= 1:
        s = "%.3f" % v
    elif a == 0:
        s = "0"
    else:
        s = "%.4f" % v
    return s.rjust(width)


def fsigned(v):
    if v is None or math.isnan(v):
        return "n/a"
    a = abs(v)
    if a >= 100:
        return "%+.1f" % v
    if a >= 1:
        return "%+.3f" % v
    return "%+.4f" % v


def fpct(v):
    if v is None or math.isnan(v):
        return "n/a"
    if math.isinf(v):
        return "+inf%" if v > 0 else "-inf%"
    return "%+.1f%%" % v


def mark(c):
    if c["significant"]:
        return "**"
    if c["robot"]:
        return "r "
    if c["sound"]:
        return " t"
    return "  "


def metric_line(c, name):
    return "%s ±%5.1f%%  %8s %s %s ±%5.1f%%  %6s  [%s, %s]  %s" % (
        fnum(c["base_mean"], 11), c["base_stddev_pct"], fpct(c["change_pct"]), mark(c),
        fnum(c["new_mean"], 11), c["new_stddev_pct"], stats.fmt_p(c["p"]),
        fsigned(c["ci95"][0]), fsigned(c["ci95"][1]), name)


def side_name(side):
    ident = side.get("identity") or {}
    commit = ident.get("git_commit") or "unknown"
    return "%s %s [commit %s]" % (side["key"], side["label"], commit)


def commit_of(side):
    return (side.get("identity") or {}).get("git_commit") or "unknown commit"


def sides_by_key(result):
    return {s["key"]: s for s in result["sides"]}


def achieved_lines(result, section, rate):
    """Did every side reach the fixed rate in every round? LOUD when not."""
    lines, missed = [], []
    per = {}
    for rec in result["records"]:
        if section_of(rec) != section:
            continue
        load = rec["load"]
        ok = load.get("achieved")
        per.setdefault(rec["side"], []).append((ok, load.get("rps"), rec["round"]))
    for key, runs in sorted(per.items()):
        bad = [(r, rps) for ok, rps, r in runs if ok is False]
        unknown = [r for ok, _rps, r in runs if ok is None]
        if bad:
            missed.append(key)
            lines.append("  !!! side %s DID NOT ACHIEVE the target rate of %.0f/s in %d of %d "
                         "rounds (%s)" % (key, rate, len(bad), len(runs), ", ".join(
                             "round %d: %.0f/s" % (r + 1, rps or 0) for r, rps in bad)))
        elif unknown:
            lines.append("  side %s: whether the rate was achieved is unknown in %d rounds"
                         % (key, len(unknown)))
        else:
            lines.append("  side %s achieved %.0f/s in all %d rounds" % (key, rate, len(runs)))
    if missed:
        lines.insert(0, "  " + "!" * 74)
        lines.append("  !!! per-request costs of %s below are NOT at parity: compare them with "
                     "care" % "/".join(missed))
        lines.append("  " + "!" * 74)
    return lines, missed


def cost_sentence(comps, where, name_a, name_b):
    """What the per-request costs of one section say, in one sentence."""
    sig = [(m, comps[m]) for m in COST_METRICS if m in comps and comps[m]["significant"]]
    cpu_name = next((m for m in CPU_METRICS if m in comps), None)
    cpu = comps.get(cpu_name) if cpu_name else None
    up = [(m, c) for m, c in sig if c["diff"] > 0]
    down = [(m, c) for m, c in sig if c["diff"] < 0]
    cpu_sig = cpu is not None and cpu["significant"]

    def lst(items):
        return ", ".join("%s %s (%s, p=%s)" % (m, fsigned(c["diff"]), fpct(c["change_pct"]),
                                               stats.fmt_p(c["p"]).strip())
                         for m, c in items[:4])
    if (cpu_sig and cpu["diff"] > 0) or (not cpu_sig and up and not down):
        verdict = "MORE expensive per request"
    elif (cpu_sig and cpu["diff"] < 0) or (not cpu_sig and down and not up):
        verdict = "CHEAPER per request"
    elif up or down:
        verdict = "different per request (mixed)"
    else:
        verdict = None
    where = where[0].upper() + where[1:]
    if verdict:
        s = "%s, %s is %s than %s: %s" % (where, name_b, verdict, name_a, lst(up + down))
        if cpu is not None and not cpu_sig:
            s += "; CPU per request is within noise (%s %s, p=%s)" % (
                cpu_name, fpct(cpu["change_pct"]), stats.fmt_p(cpu["p"]).strip())
        return s + "."
    s = "%s, %s is NOT more expensive per request than %s: no cost differs beyond noise" % (
        where, name_b, name_a)
    if cpu is not None:
        s += " (%s %s, p=%s)" % (cpu_name, fpct(cpu["change_pct"]), stats.fmt_p(cpu["p"]).strip())
    return s + "."


def summary(result, new):
    """One or two sentences: costs per request at parity, throughput at full load."""
    sides = sides_by_key(result)
    base = result["sides"][0]["key"]
    a, b = sides[base], sides[new]
    comps = result["comparisons"].get(new, {})
    out = []
    name_b = "%s (%s, commit %s)" % (b["key"], b["label"], commit_of(b))
    name_a = "%s (%s, commit %s)" % (a["key"], a["label"], commit_of(a))
    rate = result.get("parity_rate")
    closed = comps.get("closed/wrk", {})
    if comps.get("parity"):
        out.append(cost_sentence(comps["parity"], "at parity (%.0f requests/s)" % (rate or 0),
                                 name_a, name_b))
        _l, missed = achieved_lines(result, "parity", rate or 0)
        if missed:
            out.append("WARNING: %s did not achieve the parity rate in every round, so those "
                       "costs are not at parity." % "/".join(missed))
    elif closed:
        out.append(cost_sentence(closed, "at full load (no parity phase was run)", name_a,
                                 name_b))
    rps = closed.get("requests/s")
    if rps:
        verdict = "beyond noise" if rps["significant"] else "within noise"
        out.append("At full load %s serves %.0f requests/s against %.0f for %s (%s, %s, p=%s)."
                   % (b["key"], rps["new_mean"], rps["base_mean"], a["key"],
                      fpct(rps["change_pct"]), verdict, stats.fmt_p(rps["p"]).strip()))
    sweep = [(sec[len("sweep@"):], c) for sec, c in comps.items() if sec.startswith("sweep@")]
    if sweep:
        cpu_name = next((m for m in CPU_METRICS if all(m in c for _s, c in sweep)), None)
        sys_name = next((m for m in ("syscalls/req", "perf syscalls/req")
                         if all(m in c for _s, c in sweep)), None)
        parts = []
        for spec, c in sweep:
            bits = []
            for m in (cpu_name, sys_name):
                if m:
                    bits.append("%s %s%s" % (m.replace(" us/req", "").replace("/req", ""),
                                             fpct(c[m]["change_pct"]),
                                             "**" if c[m]["significant"] else ""))
            parts.append("%s: %s" % (spec, ", ".join(bits)))
        out.append("Rate sweep, per request, %s against %s (** beyond noise): %s." % (
            b["key"], a["key"], "; ".join(parts)))
    conc = [(sec, c["ops/s"]) for sec, c in comps.items()
            if sec.startswith("concurrency ") and "ops/s" in c]
    if conc:
        levels = "; ".join("%s %s (%s)" % (
            sec.split(" ", 1)[1], fpct(c["change_pct"]),
            "beyond noise" if c["significant"] else "within noise") for sec, c in conc)
        out.append("Operations/s of %s against %s by concurrency: %s." % (
            b["key"], a["key"], levels))
    cg = (result.get("callgrind") or {}).get("comparisons", {}).get(new)
    if cg:
        c = cg["instructions/req"]
        out.append("Under callgrind %s executes %.0f instructions per request against %.0f "
                   "(%s, %s)." % (b["key"], c["new_mean"], c["base_mean"],
                                  fpct(c["change_pct"]),
                                  "beyond noise" if c["significant"] else "within noise"))
    return " ".join(out)


def section_title(result, sec):
    o = result.get("options", {})
    if sec == "closed/wrk":
        return "closed loop: maximum requests/s (wrk -t1 -c%s, %ss runs)" % (
            o.get("connections"), o.get("duration"))
    if sec == "closed/hd_loadgen":
        return "closed loop: maximum requests/s (hd_loadgen -c %s)" % o.get("connections")
    if sec == "parity":
        return "parity: every side at %.0f requests/s (%s; %s)" % (
            result.get("parity_rate") or 0, result.get("parity_spec"), result.get("paced_by"))
    if sec.startswith("sweep@"):
        spec = sec[len("sweep@"):]
        return "sweep: %s = %.0f requests/s" % (spec, result.get("sweep_rates", {}).get(spec, 0))
    return sec


def slowest_urls(result, key, n=5):
    """The @n URLs with the highest mean time per request for side @key, from
    hd_loadgen's per-URL figures (parity runs when there are some, else closed
    loop): (total, url, connect, write, read, close, hits), means in µs."""
    for phase in ("parity", "closed"):
        acc = {}
        for rec in result["records"]:
            if rec["side"] != key or rec["phase"] != phase or not rec["load"].get("per_url"):
                continue
            for u in rec["load"]["per_url"]:
                hits = u.get("hits") or 0
                a = acc.setdefault(u["url"], {"hits": 0, "connect": 0.0, "write": 0.0,
                                              "read": 0.0, "close": 0.0, "total": 0.0})
                a["hits"] += hits
                for k in ("connect", "write", "read", "close", "total"):
                    a[k] += float((u.get(k) or {}).get("mean") or 0) * hits
        if acc:
            rows = []
            for url, a in acc.items():
                h = a["hits"] or 1
                rows.append((a["total"] / h, url, a["connect"] / h, a["write"] / h,
                             a["read"] / h, a["close"] / h, a["hits"], phase))
            rows.sort(reverse=True)
            return rows[:n]
    return []


def text(result, charts=True):
    """The whole report as a string."""
    L = []
    meta = result.get("meta", {})
    sides = result["sides"]
    base = sides[0]
    L.append("perf/compare  %s" % meta.get("date", ""))
    L.append("machine: %s, %s CPUs, Linux %s" % (meta.get("host"), meta.get("cpus"),
                                                 meta.get("kernel")))
    for s in sides:
        ident = s.get("identity") or {}
        L.append("  %s = %s" % (s["key"], s["label"]))
        L.append("      commit %s, %s, %s, MPM %s%s" % (
            ident.get("git_commit", "unknown"), ident.get("version", "?"),
            ident.get("build_type", "?"), s.get("mpm"),
            "" if s.get("status_counters") else ", no server counters (?json)"))
        if s.get("subject"):
            L.append("      \"%s\"" % s["subject"])
    o = result.get("options", {})
    loaded = any(p in o.get("phases", ["closed"]) for p in ("closed", "parity", "sweep",
                                                            "concurrency"))
    if loaded:
        L.append("load: %s; %s rounds, %s; %ss runs after %ss warm-up; fresh server per run" % (
            ", ".join("%s x%g" % (p, w) for p, w in o.get("urls", [])), o.get("rounds"),
            " ".join(s["key"] for s in sides) + " ...", o.get("duration"), o.get("warmup")))
    if result.get("max_rps"):
        L.append("maxima (wrk): " + ", ".join("%s %.0f/s" % (k, v) for k, v in
                                              sorted(result["max_rps"].items())))
    for w in result.get("warnings", []):
        L.extend(wrap("WARNING: " + w, 100))
    L.append("")
    for new in [s["key"] for s in sides[1:]]:
        L.append("SUMMARY (%s vs %s)" % (new, base["key"]))
        for line in wrap(summary(result, new), 96):
            L.append("  " + line)
        L.append("")
    ntests = sum(len(m) for c in result["comparisons"].values() for m in c.values())
    legend = ("mark: ** beyond noise: the runs do not overlap and |change| >= %.0f%% (and >= %g "
              "per request for counts per request), AND Welch's t-test p < %g and the 95%% "
              "bootstrap CI of the difference (new - base) excludes 0; r: the robot's rule "
              "only; t: the t-test only. %d metrics are tested: about %.0f of them would pass "
              "the t-test alone by chance, far fewer both rules." % (
                  100 * o.get("min_change", stats.MIN_CHANGE), MIN_ABS_PER_REQ,
                  o.get("alpha", stats.ALPHA), ntests, ntests * o.get("alpha", stats.ALPHA)))
    if ntests:
        L.extend(wrap(legend, 100))
    for new in [s["key"] for s in sides[1:]]:
        comps = result["comparisons"].get(new, {})
        for sec in sections(result):
            if sec not in comps:
                continue
            L.append("")
            L.append("== %s ==" % section_title(result, sec))
            if sec == "parity":
                lines, _m = achieved_lines(result, sec, result.get("parity_rate") or 0)
                L.extend(lines)
            elif sec.startswith("sweep@"):
                spec = sec[len("sweep@"):]
                lines, _m = achieved_lines(result, sec, result["sweep_rates"].get(spec, 0))
                L.extend(l for l in lines if "!!!" in l)
            L.append("%11s %-8s %8s %s %11s %-8s  %6s  %-22s %s" % (
                base["key"], "±stddev", "%change", "  ", new, "±stddev", "p",
                "95% CI of diff", "metric"))
            for m, c in comps[sec].items():
                L.append(metric_line(c, m))
    if result.get("sweep_specs"):
        L.append("")
        L.extend(sweep_table(result))
    if result.get("concurrency"):
        L.append("")
        L.extend(concurrency_tables(result))
    if result.get("callgrind"):
        L.append("")
        L.extend(callgrind_text(result))
    if loaded:
        L.append("")
        L.append("== slowest URLs (mean time per request; hd_loadgen's per-URL figures) ==")
    any_url = not loaded
    for s in sides:
        rows = slowest_urls(result, s["key"])
        if not rows:
            continue
        any_url = True
        L.append("  side %s (%s runs; µs from the request's start to connected, written, "
                 "first byte, complete)" % (s["key"], rows[0][7]))
        L.append("    %-34s %9s %9s %9s %9s %9s %9s" % ("url", "total", "connect", "write",
                                                       "read", "close", "hits"))
        for total, url, c, w, r, cl, hits, _ph in rows:
            L.append("    %-34s %9.1f %9.1f %9.1f %9.1f %9.1f %9d" % (
                url[:34], total, c, w, r, cl, hits))
    if not any_url:
        L.append("  not available: wrk gives no per-URL times (hd_loadgen was not used)")
    if charts:
        L.append("")
        L.append("== per-round charts (%s = %s *, %s O) ==" % (
            base["key"], base["label"], "/".join(s["key"] for s in sides[1:])))
        for sec, m in CHART_METRICS:
            ser = series(result, sec)
            if not all(m in ser.get(s["key"], {}) for s in sides):
                continue
            L.append("")
            L.extend(plots.term_chart("%s: %s" % (sec, m),
                                      [(s["key"], ser[s["key"]][m]) for s in sides]))
    if result.get("files"):
        L.append("")
        L.append("files: " + ", ".join(result["files"]))
    return "\n".join(L) + "\n"


def wrap(s, width):
    words, lines, cur = s.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = cur + " " + w if cur else w
    if cur:
        lines.append(cur)
    return lines


SWEEP_COLS = ["requests/s", "cpu us/req", "perf task-clock us/req", "syscalls/req",
              "perf syscalls/req", "cs/req", "perf cs/req", "latency p99 us"]


SWEEP_LABELS = {"requests/s": "achieved/s", "cpu us/req": "cpu µs/req",
                "perf task-clock us/req": "perf µs/req", "syscalls/req": "syscalls/req",
                "perf syscalls/req": "perf sysc/r", "cs/req": "cs/req",
                "perf cs/req": "perf cs/req", "latency p99 us": "p99 µs"}


def sweep_table(result):
    L = ["== rate sweep: means per side (per-request costs and p99 at each rate) =="]
    sides = [s["key"] for s in result["sides"]]
    cols = [c for c in SWEEP_COLS if any(
        c in series(result, "sweep@" + spec).get(k, {})
        for spec in result["sweep_specs"] for k in sides)]
    L.append("  %-8s %9s %4s %s" % ("rate", "target/s", "side", " ".join(
        SWEEP_LABELS.get(c, c)[:12].rjust(12) for c in cols)))
    for spec in result["sweep_specs"]:
        ser = series(result, "sweep@" + spec)
        for k in sides:
            vals = ser.get(k, {})
            row = []
            for c in cols:
                v = vals.get(c)
                row.append(fnum(stats.mean(v), 12) if v else "n/a".rjust(12))
            L.append("  %-8s %9.0f %4s %s" % (spec, result["sweep_rates"][spec], k, " ".join(row)))
    return L


def concurrency_tables(result):
    L = ["== concurrency levels: latency of found (2xx) and missed (404) requests, µs =="]
    for level in result["concurrency"]["levels"]:
        L.append("")
        L.append("  concurrency %d" % level["concurrency"])
        L.append("  %-4s %-7s %9s %9s %9s %9s %9s %9s %10s %6s %6s %6s %6s" % (
            "side", "kind", "count", "min", "max", "average", "stddev", "median", "ops/s",
            "user%", "sys%", "intr%", "idle%"))
        for row in level["rows"]:
            cpu = row.get("cpu") or {}
            for kind in ("found", "missed"):
                k = row.get(kind)
                if not k:
                    continue
                L.append("  %-4s %-7s %9d %9.0f %9.0f %9.1f %9.1f %9.0f %10.0f %6.1f %6.1f %6.1f "
                         "%6.1f" % (row["side"], kind, k["count"], k["min"], k["max"], k["mean"],
                                    k["stdev"], k["median"], row["ops"], cpu.get("us", 0),
                                    cpu.get("sy", 0), cpu.get("intr", 0), cpu.get("id", 0)))
        for line in level.get("notes", []):
            L.append("  " + line)
    if result["concurrency"].get("note"):
        L.append("  " + result["concurrency"]["note"])
    return L


def callgrind_text(result):
    cg = result["callgrind"]
    L = ["== callgrind: instructions per request (%d requests on one keep-alive connection, "
         "-X, after %d warm-up requests) ==" % (cg["requests"], cg["warmup"])]
    base = result["sides"][0]["key"]
    for s in result["sides"]:
        v = cg["sides"].get(s["key"], {}).get("instructions/req", [])
        L.append("  %s: %s" % (s["key"], ", ".join("%.0f" % x for x in v)))
    for new, comps in cg.get("comparisons", {}).items():
        c = comps["instructions/req"]
        L.append(metric_line(c, "instructions/req (%s vs %s)" % (new, base)))
        L.append("")
        L.append("  functions whose instructions per request changed most (self, %s vs %s):"
                 % (new, base))
        L.append("  %12s %12s %10s  %s" % (base, new, "change", "function"))
        for f in cg["functions"].get(new, [])[:15]:
            L.append("  %12.1f %12.1f %+10.1f  %s" % (f["base"], f["new"], f["diff"],
                                                       f["function"]))
    return L


# ---- files ------------------------------------------------------------------

def write_json(result, path):
    def clean(o):
        if isinstance(o, float) and (math.isnan(o) or math.isinf(o)):
            return None
        if isinstance(o, dict):
            return {str(k): clean(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        return o
    # Compact: the servers' ?json documents and hd_loadgen's histograms make it
    # large; `python3 -m json.tool` or jq show it readably.
    with open(path, "w") as f:
        json.dump(clean(result), f, separators=(",", ":"))
        f.write("\n")
    return path


def write_plots(result, outdir):
    """Per-round SVGs of the chart metrics, and the sweep plots; the paths written."""
    files = []
    sides = result["sides"]
    for sec, m in CHART_METRICS:
        ser = series(result, sec)
        if not all(m in ser.get(s["key"], {}) for s in sides):
            continue
        name = "%s-%s.svg" % (sec.replace("/", "-"), m.replace("/", "-per-").replace(" ", "-"))
        p = plots.svg_chart(os.path.join(outdir, name), "%s: %s" % (sec, m), "round", m,
                            [("%s %s" % (s["key"], s["label"]),
                              [(i + 1, v) for i, v in enumerate(ser[s["key"]][m])])
                             for s in sides])
        if p:
            files.append(p)
    if result.get("sweep_specs"):
        for m in SWEEP_COLS:
            pts = {s["key"]: [] for s in sides}
            for spec in result["sweep_specs"]:
                ser = series(result, "sweep@" + spec)
                for s in sides:
                    v = ser.get(s["key"], {}).get(m)
                    if v:
                        pts[s["key"]].append((result["sweep_rates"][spec], stats.mean(v)))
            if not any(pts.values()):
                continue
            name = "sweep-%s.svg" % m.replace("/", "-per-").replace(" ", "-")
            p = plots.svg_chart(os.path.join(outdir, name), "sweep: %s" % m,
                                "target requests/s", m,
                                [("%s %s" % (s["key"], s["label"]), pts[s["key"]])
                                 for s in sides])
            if p:
                files.append(p)
    return files
