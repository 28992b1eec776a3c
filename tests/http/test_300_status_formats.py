"""mod_status: the four formats of /server-status.

?auto must read like Apache 2.4's (the same keys in the same order with the
same value formats, checked against a real Apache when one is installed),
?json must validate against htdocs/manual/status-schema.json, ?metrics must
parse as the Prometheus text format, and the HTML page must render in
headless Chromium.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

import hdtest

STATUS_CONF = """
LoadModule status_module modules/mod_status.so
<Location "/server-status">
    SetHandler server-status
    Require local
</Location>
<Location "/metrics">
    SetHandler server-metrics
    Require local
</Location>
"""

DAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
# APR's %g: no zero before the point, no trailing zeros, exponent of two digits or more.
APR_G = r"-?(0|[1-9]\d*(\.\d*[1-9])?|\.\d*[1-9]|[1-9](\.\d*[1-9])?e[+-]\d{2,})"
INT = r"\d+"

# Apache's keys, in Apache's order, with the shape of their values.
APACHE_KEYS = [
    ("ServerVersion", r"\S.*"),
    ("ServerMPM", r"prefork|worker|event"),
    ("Server Built", r"\S.*"),
    ("CurrentTime", r"(%s), \d\d-(%s)-\d{4} \d\d:\d\d:\d\d \S+" % (DAYS, MONTHS)),
    ("RestartTime", r"(%s), \d\d-(%s)-\d{4} \d\d:\d\d:\d\d \S+" % (DAYS, MONTHS)),
    ("ParentServerConfigGeneration", INT),
    ("ParentServerMPMGeneration", INT),
    ("ServerUptimeSeconds", INT),
    ("ServerUptime", r"( \d+ (day|hour|minute|second)s?)*"),
    ("Load1", r"\d+\.\d\d"),
    ("Load5", r"\d+\.\d\d"),
    ("Load15", r"\d+\.\d\d"),
    ("Total Accesses", INT),
    ("Total kBytes", INT),
    ("Total Duration", INT),
    ("CPUUser", APR_G),
    ("CPUSystem", APR_G),
    ("CPUChildrenUser", APR_G),
    ("CPUChildrenSystem", APR_G),
    ("CPULoad", APR_G),
    ("Uptime", INT),
    ("ReqPerSec", APR_G),
    ("BytesPerSec", APR_G),
    ("BytesPerReq", APR_G),
    ("DurationPerReq", APR_G),
    ("BusyWorkers", INT),
    ("GracefulWorkers", INT),
    ("IdleWorkers", INT),
    ("Processes", INT),
    ("Stopping", INT),
    ("ConnsTotal", INT),
    ("ConnsAsyncWaitIO", INT),
    ("ConnsAsyncWriting", INT),
    ("ConnsAsyncKeepAlive", INT),
    ("ConnsAsyncClosing", INT),
    ("Scoreboard", r"[_SRWKDCLGI.]+"),
]
APACHE_FORMAT = dict(APACHE_KEYS)
# Keys Apache prints only sometimes: CPULoad when CPU was used, the
# per-second and per-request ones once there is uptime or a request.
CONDITIONAL = {"CPULoad", "ReqPerSec", "BytesPerSec", "BytesPerReq", "DurationPerReq"}
EVENT_ONLY = {"Processes", "Stopping", "ConnsTotal", "ConnsAsyncWaitIO", "ConnsAsyncWriting",
              "ConnsAsyncKeepAlive", "ConnsAsyncClosing"}

SCHEMA = os.path.join(hdtest.HTTPD_SOURCE, "htdocs", "manual", "status-schema.json")


def parse_auto(body):
    """Strict reader of Apache's ?auto: returns (server name, [(key, value)])."""
    assert isinstance(body, bytes)
    text = body.decode("ascii")     # Apache's format is plain ASCII
    assert "\r" not in text and text.endswith("\n"), repr(text[-40:])
    lines = text[:-1].split("\n")
    name = lines[0]
    assert name and ": " not in name, "first line must be the bare server name: %r" % name
    pairs = []
    for line in lines[1:]:
        m = re.fullmatch(r"([A-Za-z][A-Za-z0-9 ]*[A-Za-z0-9]):( .*)?", line)
        assert m, "not a 'Key: value' line: %r" % line
        key, rest = m.group(1), m.group(2) or ""
        # ServerUptime keeps Apache's leading space in its value; others drop ": "
        value = rest if key == "ServerUptime" else rest[1:]
        pairs.append((key, value))
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "duplicate keys: %r" % keys
    return name, pairs


def apache_part(pairs):
    """The pairs up to and including Scoreboard (Apache's part)."""
    keys = [k for k, _ in pairs]
    return pairs[:keys.index("Scoreboard") + 1]


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra=STATUS_CONF)


def get_json(s, query="json"):
    r = s.get("/server-status?" + query)
    assert r.status == 200, r
    return json.loads(r.body)


def finished_requests(s):
    """Requests the server has finished (a response is counted once it is logged)."""
    return dict(parse_auto(s.get("/server-status?auto").body)[1]).get("Requests")


def test_auto_is_apache_shaped(srv):
    for _ in range(3):
        assert srv.get("/index.html").status == 200
    # the client may have its response before the worker has counted it
    assert hdtest.wait_for(lambda: int(finished_requests(srv)) >= 3, 5)
    r = srv.get("/server-status?auto")
    assert r.status == 200
    assert r.header("Content-Type") == "text/plain; charset=ISO-8859-1"
    name, pairs = parse_auto(r.body)
    assert name == "127.0.0.1"      # the Host the client asked for, without the port
    ours = apache_part(pairs)
    got = [k for k, _ in ours]
    expected = [k for k, _ in APACHE_KEYS
                if (hdtest.HTTPD_MPM == "event" or k not in EVENT_ONLY)
                and (k not in CONDITIONAL or k in got)]
    assert "BytesPerReq" in got and "DurationPerReq" in got     # there were requests
    assert [k for k in got if k != "CPULoad"] == [k for k in expected if k != "CPULoad"]
    for key, value in ours:
        assert re.fullmatch(APACHE_FORMAT[key], value), "%s: %r" % (key, value)
    d = dict(pairs)
    assert d["ServerMPM"] == hdtest.HTTPD_MPM
    j = get_json(srv)
    assert len(d["Scoreboard"]) == j["server"]["server_limit"] * j["server"]["thread_limit"]
    # ours come after Apache's
    assert "ServerGitCommit" in d and "SyscallsPerReqStart" in d
    keys = [k for k, _ in pairs]
    assert keys.index("ServerGitCommit") > keys.index("Scoreboard")


def test_auto_counts_match(server_factory):
    s = server_factory(extra=STATUS_CONF)
    for _ in range(5):
        assert s.get("/4k.bin").status == 200
    for _ in range(7):
        assert s.get("/missing.txt").status == 404
    # the status requests that poll are 200s: the 404s stay exactly 7
    assert hdtest.wait_for(
        lambda: int(dict(parse_auto(s.get("/server-status?auto").body)[1])["Responses4xx"]) == 7,
        5)
    _, pairs = parse_auto(s.get("/server-status?auto").body)
    d = dict(pairs)
    accesses = int(d["Total Accesses"])
    assert int(d["Responses4xx"]) == 7
    assert int(d["Responses2xx"]) >= 5
    assert accesses == sum(int(d["Responses%dxx" % c]) for c in range(1, 6))
    assert int(d["Requests"]) == accesses
    assert int(d["Total kBytes"]) == int(d["Bytes"]) // 1024
    assert int(d["Bytes"]) > 5 * 4096
    assert int(d["Syscalls"]) == sum(int(d["Syscalls" + k]) for k in (
        "Accept", "Read", "Write", "Sendfile", "Open", "Stat", "Close", "EpollWait", "EpollCtl",
        "Other"))


def run_apache(tmp, port, mpm):
    """Starts Debian's Apache with mod_status on @port; returns the Popen."""
    conf = os.path.join(tmp, "apache.conf")
    mods = "/usr/lib/apache2/modules"
    with open(conf, "w") as f:
        f.write("""ServerRoot "{tmp}"
LoadModule mpm_{mpm}_module {mods}/mod_mpm_{mpm}.so
LoadModule authz_core_module {mods}/mod_authz_core.so
LoadModule authz_host_module {mods}/mod_authz_host.so
LoadModule status_module {mods}/mod_status.so
Listen 127.0.0.1:{port}
ServerName test.local
PidFile "{tmp}/apache.pid"
ErrorLog "{tmp}/apache_error_log"
DocumentRoot "{tmp}"
<Location "/server-status">
    SetHandler server-status
    Require local
</Location>
""".format(tmp=tmp, port=port, mpm=mpm, mods=mods))
    return subprocess.Popen(["/usr/sbin/apache2", "-f", conf, "-D", "FOREGROUND"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)


@pytest.mark.skipif(not os.path.exists("/usr/sbin/apache2"),
                    reason="Debian's apache2 is not installed (setup.sh installs it)")
def test_auto_keys_same_as_apache(srv):
    """Our Apache part has exactly the keys of a real Apache of the same MPM, in its order."""
    tmp = tempfile.mkdtemp(prefix="hdtest-apache-")
    port = hdtest.free_port()
    proc = run_apache(tmp, port, hdtest.HTTPD_MPM)
    try:
        assert hdtest.wait_for(lambda: hdtest.port_accepts(port), 10), "apache did not start"
        hdtest.get(port, "/")
        time.sleep(1.1)   # uptime > 0, so ReqPerSec and BytesPerSec appear
        r = hdtest.get(port, "/server-status?auto")
        assert r.status == 200
        _, theirs = parse_auto(r.body)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)
    srv.get("/index.html")
    _, ours = parse_auto(srv.get("/server-status?auto").body)
    theirs_keys = [k for k, _ in apache_part(theirs) if k != "CPULoad"]
    ours_keys = [k for k, _ in apache_part(ours) if k != "CPULoad"]
    assert ours_keys == theirs_keys
    for key, value in apache_part(theirs):
        assert re.fullmatch(APACHE_FORMAT[key], value), \
            "the test's idea of Apache's format is wrong for %s: %r" % (key, value)


def test_extended_status_off(server_factory):
    s = server_factory(extra=STATUS_CONF + "ExtendedStatus Off\n")
    s.get("/index.html")
    _, pairs = parse_auto(s.get("/server-status?auto").body)
    keys = [k for k, _ in pairs]
    # Apache prints the access and CPU figures only with ExtendedStatus On
    assert "Total Accesses" not in keys and "CPUUser" not in keys
    assert "BusyWorkers" in keys and "Scoreboard" in keys
    j = get_json(s)
    assert j["server"]["extended_status"] is False
    assert all(slot["request"] is None for slot in j["slots"])


def test_json_validates_against_schema(srv):
    jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema not installed")
    srv.get("/index.html")
    with open(SCHEMA) as f:
        schema = json.load(f)
    r = srv.get("/server-status?json&history=600")
    assert r.header("Content-Type") == "application/json"
    doc = json.loads(r.body)
    jsonschema.validate(doc, schema)
    assert doc["server"]["mpm"] == hdtest.HTTPD_MPM
    t = doc["totals"]
    assert t["syscalls"]["total"] == sum(v for k, v in t["syscalls"].items() if k != "total")
    assert t["requests"] >= 1 and t["responses"]["2xx"] >= 1
    # the slot serving this request is listed and busy
    me = [s for s in doc["slots"] if s["index"] == doc["workers"]["self_slot"]]
    assert len(me) == 1 and me[0]["state"] in ("R", "W")
    assert me[0]["request"] == "GET /server-status?json&history=600 HTTP/1.1"
    assert me[0]["client"] == "127.0.0.1"
    buckets = doc["latency"]["buckets"]
    assert buckets[-1]["le_us"] is None
    assert buckets[-1]["cumulative"] == doc["latency"]["count"] == t["requests"]
    h = doc["history"]
    assert h["capacity"] >= 600
    assert all(len(h[c]) == h["samples"] for c in ("time", "requests", "syscalls"))


def test_json_rates_after_samples(srv):
    """Once the master has sampled, the 1 s window has system figures and requests."""
    time.sleep(1.2)
    for _ in range(20):
        srv.get("/index.html")
    time.sleep(1.2)
    doc = get_json(srv)
    w = doc["rates"]["10s"]
    assert w["span_s"] is not None and w["span_s"] > 0
    assert w["requests"] >= 20
    assert w["per_request"]["syscalls"]["total"] > 0
    assert w["system"]["cpu_pct"]["idle"] is not None
    assert doc["system"]["procs_running"] >= 1
    assert doc["history"]["samples"] >= 2


PROM_LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*'
                       r'(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})?'
                       r' (-?[0-9.]+(e[+-]?\d+)?|[+-]Inf|NaN)$')


def check_prometheus(text):
    """Exposition format checks; with prometheus_client, its parser too."""
    types = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name not in types, "TYPE given twice for " + name
            types[name] = kind
        elif line.startswith("# HELP ") or not line:
            continue
        else:
            assert PROM_LINE.match(line), "bad sample line %r" % line
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        return types
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert "httpd_request_duration_seconds" in families
    return types


def test_metrics(srv):
    for _ in range(5):
        srv.get("/4k.bin")
    r = srv.get("/server-status?metrics")
    assert r.status == 200
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4")
    text = r.body.decode()
    types = check_prometheus(text)
    assert types["httpd_request_duration_seconds"] == "histogram"
    assert types["httpd_requests_total"] == "counter"
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            values[k] = float(v)
    total = values["httpd_requests_total"]
    assert total >= 5
    assert values['httpd_request_duration_seconds_bucket{le="+Inf"}'] == total
    assert values["httpd_request_duration_seconds_count"] == total
    buckets = [v for k, v in values.items()
               if k.startswith("httpd_request_duration_seconds_bucket")]
    assert buckets == sorted(buckets)
    kinds = [k for k in values if k.startswith("httpd_syscalls_total{")]
    assert len(kinds) == 10
    assert 'httpd_syscalls_per_request{window="start",kind="total"}' in values


def test_metrics_location(srv):
    r = srv.get("/metrics")
    assert r.status == 200
    assert b"httpd_requests_total" in r.body
    check_prometheus(r.body.decode())


def test_refresh_and_methods(srv):
    r = srv.get("/server-status?refresh=3")
    assert r.header("Refresh") == "3"
    assert srv.get("/server-status?refresh").header("Refresh") == "1"
    assert srv.get("/server-status").header("Refresh") is None
    r = srv.get("/server-status", method="POST", body=b"x")
    assert r.status == 405
    assert "GET" in r.header("Allow")
    r = srv.get("/server-status?auto", method="HEAD")
    assert r.status == 200 and r.body == b""


def test_html_page(srv):
    r = srv.get("/server-status")
    assert r.status == 200
    assert r.header("Content-Type") == "text/html; charset=utf-8"
    html = r.body.decode()
    for needle in ("<h1>Server status for 127.0.0.1</h1>", "Rates and cost per request",
                   "syscalls/request", "Scoreboard", "Waiting for Connection",
                   "Open slot with no current process", "<h2>Workers</h2>",
                   "MPM <b>%s</b>" % hdtest.HTTPD_MPM, "context switches/s",
                   'class="req">GET /server-status HTTP/1.1</td>'):
        assert needle in html, needle
    assert html.count("<svg") == 4


def test_html_escapes_request_lines(srv):
    # (a Host must be a host name now: "&" is the one character of its grammar HTML escapes)
    r = srv.request("GET", '/server-status?x=<script>"&', host="a&b")
    assert r.status == 200
    html = r.body.decode()
    assert "<script>" not in html
    assert 'GET /server-status?x=&lt;script&gt;&quot;&amp; HTTP/1.1' in html
    assert "Server status for a&amp;b" in html


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.skipif(find_chromium() is None,
                    reason="chromium is not installed (setup.sh installs it)")
def test_html_renders_in_chromium(srv, tmp_path):
    for _ in range(10):
        srv.get("/index.html")
    url = "http://127.0.0.1:%d/server-status" % srv.port
    shot = tmp_path / "status.png"
    base = [find_chromium(), "--headless", "--disable-gpu", "--no-first-run",
            "--user-data-dir=%s" % (tmp_path / "profile")]
    if os.geteuid() == 0:
        base.append("--no-sandbox")
    dom = subprocess.run(base + ["--dump-dom", url], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, timeout=60, text=True)
    assert "Server status for" in dom.stdout
    assert dom.stdout.count("<svg") == 4
    subprocess.run(base + ["--screenshot=%s" % shot, "--window-size=1280,1800", url],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20000, "a near-empty screenshot (%d bytes)" % len(data)
    keep = os.environ.get("HDTEST_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
