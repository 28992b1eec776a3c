"""perf/peers.sh, the peer benchmark, in a short run: it starts the servers,
alternates wrk over them, prints and writes every figure, and refuses bad
arguments. The figures themselves are not checked (timings are not tests);
that they exist and are sane is."""

import json
import os
import subprocess

import pytest

from hdtest import HTTPD_BIN, HTTPD_SOURCE

PEERS = os.path.join(HTTPD_SOURCE, "perf", "peers.sh")


def _run(*args, timeout=120):
    return subprocess.run([PEERS, "--httpd", HTTPD_BIN] + list(args), capture_output=True,
                          text=True, timeout=timeout, start_new_session=True)


@pytest.mark.skipif(not os.path.exists("/usr/sbin/nginx"), reason="nginx is not installed")
def test_short_run_with_costs(tmp_path):
    out = tmp_path / "peers.json"
    p = _run("--only", "ours-event,nginx", "--rows", "4k-ka", "--rounds", "1", "--duration", "1",
             "--warmup", "0", "--costs", "--json", str(out))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "event/nginx" in p.stdout and "costs per request" in p.stdout, p.stdout
    doc = json.loads(out.read_text())
    row = doc["rows"]["4k-ka"]
    for name in ("ours-event", "nginx"):
        srv = row["servers"][name]
        assert srv["mean_rps"] > 0 and srv["errors"] == 0, srv
        cost = srv["per_request"]
        # a keep-alive request is at least a read and a write; ours makes about 4
        assert 1.5 < cost["syscalls"] < 50, cost
        assert cost["cpu_us"] > 0, cost
    assert row["ratios"]["event_vs_nginx"] > 0


@pytest.mark.parametrize("args, message", [
    (["--rounds", "x"], "--rounds must be a whole number"),
    (["--only", "lighttpd"], "--only: unknown server 'lighttpd'"),
    (["--rows", "4k"], "--rows: unknown workload '4k'"),
    (["--bogus"], "unknown option: --bogus"),
])
def test_bad_arguments(args, message):
    p = _run(*args, timeout=30)
    assert p.returncode == 1
    assert message in p.stderr, p.stderr
