"""--concurrency 20,21,22,23: latency of found and missed requests per level.

At each concurrency level every side serves a mix of requests for files
that exist (2xx) and for names that do not (404), for --duration seconds,
A B A B ... for --rounds rounds. Per level and side: count, min, max,
average, standard deviation and median latency of each kind, operations
per second, and CPU user/sys/intr/idle from /proc/stat over the run.

With hd_loadgen, one run carries both kinds (its per-URL figures split
them). With wrk alone, two wrk processes run side by side: one on the
found URLs with most of the connections, one on missed URLs with
--miss-share of them; each reports its own latency figures.
"""

import math
import os

from . import collect
from . import loadgen
from . import runs
from . import stats

MISSED_URLS = [("/missing-%d.html" % i, 1) for i in range(4)]


def merge(parts):
    """Pools per-round latency summaries {count,min,max,mean,stdev,median} into one.
    The median is the mean of the rounds' medians (an approximation, said so in the report)."""
    parts = [p for p in parts if p and p.get("count")]
    if not parts:
        return None
    n = sum(p["count"] for p in parts)
    m = sum(p["mean"] * p["count"] for p in parts) / n
    ex2 = sum(p["count"] * (p["stdev"] ** 2 + p["mean"] ** 2) for p in parts) / n
    return {"count": n, "min": min(p["min"] for p in parts), "max": max(p["max"] for p in parts),
            "mean": m, "stdev": math.sqrt(max(0.0, ex2 - m * m)),
            "median": stats.mean([p["median"] for p in parts])}


def from_wrk(res):
    lat = res["latency_us"]
    return {"count": res["requests"], "min": lat["min"], "max": lat["max"], "mean": lat["mean"],
            "stdev": lat["stdev"], "median": lat["p50"]}


def from_hdl(res, missed_paths):
    """Splits hd_loadgen's per-URL figures into found and missed summaries."""
    found, missed = [], []
    for u in res.get("per_url") or []:
        lat = u.get("latency") or {}
        part = {"count": u.get("hits") or 0, "min": lat.get("min", 0), "max": lat.get("max", 0),
                "mean": lat.get("mean", 0), "stdev": lat.get("stdev", lat.get("stddev", 0)),
                "median": lat.get("p50", lat.get("median", lat.get("mean", 0)))}
        (missed if u.get("url") in missed_paths else found).append(part)
    return merge(found), merge(missed)


def run(runner, levels, miss_share=0.25, progress=None):
    """Runs every level; records go to runner.records (phase "concurrency")."""
    o = runner.opts
    ws = runner.ws
    found_urls = o.urls
    missed_paths = {p for p, _w in MISSED_URLS}
    out = {"levels": [], "miss_share": miss_share,
           "note": "median over rounds: the mean of the rounds' medians" if o.rounds > 1 else ""}
    for level in levels:
        per_side = {}
        for rnd in range(o.rounds):
            for side in runner.sides:
                if progress:
                    progress.show("concurrency %d round %d side %s" % (level, rnd + 1, side.key))
                srv = ws.start(side)
                try:
                    runs.settle_workers(srv)
                    if o.warmup > 0:
                        loadgen.run_wrk(srv.url(), found_urls, o.warmup, level, runner.script)
                    sampler = collect.SysSampler().start()
                    if o.loadgen:
                        urls = [(p, w * (1 - miss_share) / sum(x for _p, x in found_urls))
                                for p, w in found_urls] + \
                               [(p, miss_share / len(MISSED_URLS)) for p, _w in MISSED_URLS]
                        uf = os.path.join(ws.dir, "conc-urls.txt")
                        loadgen.write_url_file(uf, urls)
                        res = loadgen.run_hd_loadgen(o.loadgen, srv.url(), uf, o.duration, level,
                                                     os.path.join(ws.dir, "conc.json"))
                        found, missed = from_hdl(res, missed_paths)
                        ops = res["rps"] or 0.0
                        raw = [res]
                    else:
                        nm = max(1, int(round(level * miss_share)))
                        nf = max(1, level - nm)
                        hf = loadgen.start_wrk(srv.url(), found_urls, o.duration, nf,
                                               os.path.join(ws.dir, "conc-f.lua"))
                        hm = loadgen.start_wrk(srv.url(), MISSED_URLS, o.duration, nm,
                                               os.path.join(ws.dir, "conc-m.lua"))
                        rf, rm = loadgen.finish_wrk(hf), loadgen.finish_wrk(hm)
                        found, missed = from_wrk(rf), from_wrk(rm)
                        ops = (rf["rps"] or 0.0) + (rm["rps"] or 0.0)
                        raw = [rf, rm]
                    system = sampler.stop()
                finally:
                    srv.stop()
                cpu = (system.get("whole") or {})
                rec = {"side": side.key, "phase": "concurrency", "segment": "c=%d" % level,
                       "round": rnd, "rate": None, "tool": raw[0]["tool"], "load": raw[0],
                       "loads": raw, "system": system, "found": found, "missed": missed,
                       "metrics": {"ops/s": ops}}
                for kind, k in (("found", found), ("missed", missed)):
                    if k:
                        rec["metrics"]["%s mean us" % kind] = k["mean"]
                        rec["metrics"]["%s median us" % kind] = k["median"]
                for name, key in (("sys us%", "us"), ("sys sy%", "sy"), ("sys intr%", "intr"),
                                  ("sys id%", "id")):
                    if key in cpu:
                        rec["metrics"][name] = cpu[key]
                runner.records.append(rec)
                ps = per_side.setdefault(side.key, {"found": [], "missed": [], "ops": [],
                                                    "cpu": []})
                ps["found"].append(found)
                ps["missed"].append(missed)
                ps["ops"].append(ops)
                ps["cpu"].append(cpu)
                if progress:
                    progress.finished_run()
        rows = []
        for side in runner.sides:
            ps = per_side[side.key]
            cpus = [c for c in ps["cpu"] if c]
            rows.append({"side": side.key, "found": merge(ps["found"]),
                         "missed": merge(ps["missed"]), "ops": stats.mean(ps["ops"]),
                         "cpu": {k: stats.mean([c[k] for c in cpus]) for k in
                                 ("us", "sy", "intr", "id")} if cpus else {}})
        notes = []
        if not o.loadgen:
            nm = max(1, int(round(level * miss_share)))
            notes.append("wrk: %d connections on found URLs and %d on missed URLs, side by side"
                         % (max(1, level - nm), nm))
        out["levels"].append({"concurrency": level, "rows": rows, "notes": notes})
    return out
