"""Load generators, behind one small interface.

Every driver returns a dict of the same shape (see empty_result): requests,
requests/s, errors, latency percentiles in µs, whether a fixed target rate
was achieved, and, where the tool gives them, per-URL figures.

Drivers:
- wrk (closed loop: -t1 -cN), the reference everyone knows;
- wrk paced (a stand-in for the open loop while hd_loadgen is missing): a
  LuaJIT script hands out send times at the target rate, so the average
  rate is exact when the server keeps up, but latency is measured from the
  actual send, not the intended one (coordinated omission), and the rate
  falls short, which the report shows, when it does not;
- hd_loadgen (perf/loadgen): closed loop -c N, open loop -R rate with
  latency from the intended send time, --json with per-URL figures. Its
  JSON is read through hdl_result(), the one place to fix if its keys move.
"""

import hashlib
import json
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

# A paced run counts as having achieved its target rate at 97% or more: a
# generator that starts late or drains early loses a little at either end.
ACHIEVED_RATIO = 0.97


class LoadError(Exception):
    pass


def empty_result(tool, mode):
    return {
        "tool": tool, "mode": mode, "duration_s": None, "connections": None,
        "target_rate": None, "requests": 0, "rps": None, "bytes": None,
        "errors": 0, "non_2xx_3xx": 0, "achieved": None, "latency_from": None,
        "latency_us": {}, "per_url": None, "histogram": None, "raw": None,
    }


def weighted_paths(urls):
    """[(path, weight)] -> a list of paths where each occurs weight times (interleaved)."""
    total = sum(w for _p, w in urls)
    seq = []
    acc = {p: 0.0 for p, _w in urls}
    # Smooth weighted round robin: the same order every time, no clumps.
    for _ in range(int(total)):
        for p, w in urls:
            acc[p] += w
        best = max(urls, key=lambda pw: acc[pw[0]])[0]
        acc[best] -= total
        seq.append(best)
    return seq or [urls[0][0]]


LUA_COMMON = r"""
local paths = {%(paths)s}
local reqs = {}
local idx = 0
function init(args)
    for i, p in ipairs(paths) do
        reqs[i] = wrk.format("GET", p)
    end
    idx = math.random(#reqs) - 1
    if pace_init then pace_init(args) end
end
function request()
    idx = idx %% #reqs + 1
    return reqs[idx]
end
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        'HDCMP-WRK {"duration_us":%%d,"requests":%%d,"bytes":%%d,' ..
        '"errors":{"connect":%%d,"read":%%d,"write":%%d,"status":%%d,"timeout":%%d},' ..
        '"latency":{"min":%%d,"max":%%d,"mean":%%.3f,"stdev":%%.3f,' ..
        '"p50":%%d,"p90":%%d,"p99":%%d,"p999":%%d}}\n',
        summary.duration, summary.requests, summary.bytes,
        e.connect, e.read, e.write, e.status, e.timeout,
        latency.min, latency.max, latency.mean, latency.stdev,
        latency:percentile(50), latency:percentile(90), latency:percentile(99),
        latency:percentile(99.9)))
end
"""

# Send times are handed out per thread at the thread's share of the rate,
# from an absolute schedule: a connection that answers early waits for the
# next slot, one that is late sends at once (so the average rate is exact
# whenever the server keeps up). wrk truncates the delay to whole ms.
LUA_PACED = r"""
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } hdcmp_ts;
int clock_gettime(int clk, hdcmp_ts *ts);
]]
local ts = ffi.new("hdcmp_ts")
local function now_ms()
    ffi.C.clock_gettime(1, ts)
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local interval = %(interval_ms).9f
local next_t = nil
-- The schedule starts when the thread does; its first requests (one per
-- connection, sent by wrk on connect) take the first slots.
function pace_init(args)
    next_t = now_ms() + ((tonumber(args[1]) or 1) - 1) * interval
end
function delay()
    local t = now_ms()
    if next_t == nil then next_t = t end
    next_t = next_t + interval
    local d = next_t - t
    if d < 0 then
        if d < -1000 then next_t = t end
        return 0
    end
    return d
end
"""


def wrk_script(path, urls, rate=None, threads=1):
    lua = LUA_COMMON % {"paths": ", ".join('"%s"' % p.replace('"', '\\"')
                                          for p in weighted_paths(urls))}
    if rate:
        lua += LUA_PACED % {"interval_ms": 1000.0 * threads / float(rate)}
    with open(path, "w") as f:
        f.write(lua)
    return path


def parse_wrk(out):
    for line in out.splitlines():
        if line.startswith("HDCMP-WRK "):
            return json.loads(line[len("HDCMP-WRK "):])
    raise LoadError("wrk printed no summary:\n" + out[-2000:])


def start_wrk(url_base, urls, duration, connections, script_path, rate=None, threads=1,
              timeout_s=10):
    """Starts wrk (closed loop, or paced at @rate requests/s); finish_wrk() collects it."""
    if shutil.which("wrk") is None:
        raise LoadError("wrk is not installed (apt-get install wrk, or ./setup.sh)")
    wrk_script(script_path, urls, rate, threads)
    args = ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % max(1, round(duration)),
            "--timeout", "%ds" % timeout_s, "-s", script_path, url_base]
    if rate:
        args += ["--", str(connections // threads)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", stdin=subprocess.DEVNULL)
    return {"proc": proc, "args": args, "rate": rate, "connections": connections,
            "duration": duration}


def finish_wrk(h):
    proc = h["proc"]
    try:
        out, _err = proc.communicate(timeout=h["duration"] + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise LoadError("wrk did not finish within %d s" % (h["duration"] + 60))
    if proc.returncode != 0:
        raise LoadError("wrk failed (%d):\n%s" % (proc.returncode, out[-2000:]))
    w = parse_wrk(out)
    rate = h["rate"]
    res = empty_result("wrk", "paced" if rate else "closed")
    secs = w["duration_us"] / 1e6
    res.update({
        "duration_s": secs, "connections": h["connections"], "target_rate": rate,
        "requests": w["requests"], "rps": w["requests"] / secs if secs > 0 else 0.0,
        "bytes": w["bytes"], "non_2xx_3xx": w["errors"]["status"],
        "errors": sum(v for k, v in w["errors"].items() if k != "status"),
        "latency_from": "actual send (wrk: coordinated omission possible)",
        "latency_us": {"min": w["latency"]["min"], "mean": w["latency"]["mean"],
                       "stdev": w["latency"]["stdev"], "p50": w["latency"]["p50"],
                       "p90": w["latency"]["p90"], "p99": w["latency"]["p99"],
                       "p99.9": w["latency"]["p999"], "max": w["latency"]["max"]},
        "raw": {"args": h["args"], "summary": w, "stdout": out[-4000:]},
    })
    if rate:
        # wrk's duration includes joining its threads, and the requests still
        # waiting for their slot or in flight at the end (at most one per
        # connection) are not counted: judge on the nominal duration, allowing those.
        nominal = max(1, round(h["duration"]))
        res["rate_check"] = (w["requests"] + h["connections"]) / nominal
        res["achieved"] = res["rate_check"] >= ACHIEVED_RATIO * rate
    return res


def run_wrk(url_base, urls, duration, connections, script_path, rate=None, threads=1,
            timeout_s=10):
    """wrk closed loop, or paced at @rate requests/s when @rate is given."""
    return finish_wrk(start_wrk(url_base, urls, duration, connections, script_path, rate,
                                threads, timeout_s))


# ---- hd_loadgen -------------------------------------------------------------

def find_hd_loadgen(explicit=None, build_dirs=(), compile_ok=True):
    """Path of hd_loadgen: @explicit, $HD_LOADGEN, a build dir, PATH, or one
    compiled from perf/loadgen into /tmp; None when there is none."""
    cands = [explicit, os.environ.get("HD_LOADGEN")]
    for d in list(build_dirs) + [os.path.join(REPO, "build")]:
        if d:
            cands += [os.path.join(d, "perf", "hd_loadgen"), os.path.join(d, "hd_loadgen")]
    cands.append(shutil.which("hd_loadgen"))
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    if explicit or not compile_ok:
        return None
    return compile_hd_loadgen()


def compile_hd_loadgen(src=os.path.join(REPO, "perf", "loadgen")):
    """Builds perf/loadgen (a standalone C client) into /tmp, keyed by its sources."""
    try:
        files = sorted(f for f in os.listdir(src) if f.endswith((".c", ".h")))
    except OSError:
        return None
    if not any(f.endswith(".c") for f in files) or shutil.which("gcc") is None:
        return None
    h = hashlib.sha1()
    for f in files:
        with open(os.path.join(src, f), "rb") as fh:
            h.update(f.encode() + b"\0" + fh.read())
    out_dir = os.path.join("/tmp", "hdcmp-loadgen-" + h.hexdigest()[:16])
    binary = os.path.join(out_dir, "hd_loadgen")
    if os.path.exists(binary):
        return binary
    os.makedirs(out_dir, exist_ok=True)
    args = ["gcc", "-O2", "-std=gnu11", "-D_GNU_SOURCE", "-pthread", "-o", binary + ".tmp"] + \
        [os.path.join(src, f) for f in files if f.endswith(".c")] + ["-lm"]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        return None
    os.rename(binary + ".tmp", binary)
    return binary


def write_url_file(path, urls):
    """The URL list for hd_loadgen -u: "weight /path" a line."""
    with open(path, "w") as f:
        for p, w in urls:
            f.write("%.15g %s\n" % (w, p))
    return path


def _latency(lat):
    out = {}
    for name, key in (("min", "min"), ("mean", "mean"), ("stdev", "stddev"), ("p50", "p50"),
                      ("p90", "p90"), ("p99", "p99"), ("p99.9", "p99_9"), ("max", "max")):
        if isinstance(lat, dict) and lat.get(key) is not None:
            out[name] = lat[key]
    return out


def hdl_result(j, mode, rate, connections):
    """hd_loadgen's --json (perf/loadgen/report.c) -> the common result."""
    res = empty_result("hd_loadgen", mode)
    tot = j.get("totals", {})
    classes = tot.get("status_classes", {})
    res.update({
        "duration_s": j.get("elapsed_s"), "connections": connections, "target_rate": rate,
        "requests": tot.get("responses", 0), "rps": tot.get("rps"), "bytes": tot.get("bytes"),
        "errors": (j.get("errors") or {}).get("total", 0),
        "non_2xx_3xx": sum(classes.get(k, 0) for k in ("1xx", "4xx", "5xx", "invalid")),
        "latency_from": "intended send time" if mode == "open" else "send",
        "latency_us": _latency(j.get("latency_us")),
        "histogram": j.get("histogram"),
        "raw": j,
    })
    if mode == "open":
        ach = (j.get("rate") or {}).get("target_achieved")
        res["achieved"] = bool(ach) if ach is not None else (
            res["rps"] is not None and res["rps"] >= ACHIEVED_RATIO * rate)
    res["per_url"] = [hdl_url(u) for u in j.get("urls") or []]
    return res


def hdl_url(u):
    """One of hd_loadgen's per-URL records. connect/write/read/close are mean µs from
    the request's start to connected, request written, first byte, complete."""
    avg = u.get("avg_us") or {}
    return {"url": u.get("path"), "hits": u.get("responses", u.get("hits", 0)),
            "found": u.get("found", 0), "missed": u.get("missed", 0),
            "status": u.get("status_classes") or {},
            "errors": (u.get("errors") or {}).get("total", 0),
            "connect": {"mean": avg.get("connect")}, "write": {"mean": avg.get("write")},
            "read": {"mean": avg.get("read")}, "close": {"mean": avg.get("close")},
            "total": {"mean": avg.get("total")}, "latency": _latency(u.get("latency_us"))}


def run_hd_loadgen(binary, url_base, url_file, duration, connections, json_path, rate=None,
                   count=None):
    """hd_loadgen closed loop (-c), open loop (-R rate) or a fixed count (-n)."""
    if os.path.exists(json_path):
        os.unlink(json_path)
    args = [binary, "-q", "-c", str(connections)]
    if rate:
        args += ["-R", "%d" % round(rate)]
    if count:
        args += ["-n", str(count)]
    else:
        args += ["-d", "%g" % duration]
    args += ["-u", url_file, "--json", json_path, url_base]
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=(duration or 60) + 60)
    except subprocess.TimeoutExpired:
        raise LoadError("hd_loadgen did not finish")
    if p.returncode != 0 or not os.path.exists(json_path):
        raise LoadError("hd_loadgen failed (%d): %s\n%s" % (p.returncode, " ".join(args),
                                                             p.stdout[-2000:]))
    with open(json_path) as f:
        j = json.load(f)
    res = hdl_result(j, "open" if rate else ("count" if count else "closed"), rate, connections)
    res["raw_args"] = args
    return res
