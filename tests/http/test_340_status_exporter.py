"""mod_status: Debian's prometheus-apache-exporter reads our ?auto as it
reads Apache's: it reports apache_up 1 and our access total.
"""

import os
import shutil
import signal
import subprocess
import urllib.request

import pytest

import hdtest

STATUS_CONF = """
LoadModule status_module modules/mod_status.so
<Location "/server-status">
    SetHandler server-status
    Require local
</Location>
"""

EXPORTER = shutil.which("prometheus-apache-exporter")


def listen_flag(exe):
    """0.12 (bookworm) calls it --telemetry.address, later ones --web.listen-address."""
    r = subprocess.run([exe, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=10, text=True)
    return "--web.listen-address" if "--web.listen-address" in r.stdout else "--telemetry.address"


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("apache_") and " " in line:
            k, v = line.rsplit(" ", 1)
            values[k] = float(v)
    return values


@pytest.mark.skipif(EXPORTER is None,
                    reason="prometheus-apache-exporter is not installed (setup.sh installs it)")
def test_apache_exporter_reads_auto(server_factory, tmp_path):
    s = server_factory(extra=STATUS_CONF)
    for _ in range(9):
        assert s.get("/missing.txt").status == 404
    polls = []

    def counted_404s():
        polls.append(1)
        auto = s.get("/server-status?auto").body.decode()
        return "Responses4xx: 9\n" in auto

    # a client may have its response before the worker has counted it
    assert hdtest.wait_for(counted_404s, 5)
    made = 9 + len(polls)
    port = hdtest.free_port()
    log = open(tmp_path / "exporter.log", "wb")
    scrape_uri = "http://127.0.0.1:%d/server-status?auto" % s.port
    proc = subprocess.Popen([EXPORTER, "--scrape_uri=" + scrape_uri,
                             "%s=127.0.0.1:%d" % (listen_flag(EXPORTER), port)],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    log.close()
    try:
        assert hdtest.wait_for(lambda: hdtest.port_accepts(port), 10), \
            (tmp_path / "exporter.log").read_text()
        values = scrape(port)
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(5)
    assert values.get("apache_up") == 1, values
    # every request made before the scrape, except perhaps the last poll if
    # its worker had not counted it yet; the exporter's own is still running
    assert values["apache_accesses_total"] in (made - 1, made)
    assert values['apache_workers{state="busy"}'] >= 1
    assert values["apache_uptime_seconds_total"] >= 0
    info = [k for k in values if k.startswith('apache_info{mpm="%s",version="httpd/'
                                              % hdtest.HTTPD_MPM)]
    assert len(info) == 1, values
