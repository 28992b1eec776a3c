"""mod_status: who may see the status page.

The default configuration (conf/httpd.conf) allows it from the local
machine only. `Require local` grants 127.0.0.0/8, ::1 and a client whose
address is the server's own, as Apache's does, so a second loopback address
is still local: the test of the default block runs the server in a network
namespace of its own with two documentation-range addresses (192.0.2.1 for
the server, 192.0.2.2 for the client) on its loopback device, where no
packet can leave the namespace. A narrower rule is tested from 127.0.0.2.
"""

import os
import re
import shutil
import signal
import socket
import subprocess

import pytest

import hdtest

CONF = os.path.join(hdtest.HTTPD_SOURCE, "conf", "httpd.conf")


def default_status_block():
    with open(CONF) as f:
        text = f.read()
    load = re.search(r"^\s*LoadModule\s+status_module\s+\S+", text, re.M)
    block = re.search(r'^\s*<Location\s+"?/server-status"?\s*>.*?</Location>', text, re.M | re.S)
    return (load.group(0).strip() if load else None), (block.group(0) if block else None)


def status_from(port, source, path="/server-status?auto"):
    """Status code of GET @path to 127.0.0.1:@port from address @source."""
    with socket.create_connection(("127.0.0.1", port), timeout=10,
                                  source_address=(source, 0)) as s:
        s.sendall(hdtest.build_request("GET", path, headers={"Connection": "close"}))
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1])


def test_default_config_has_a_local_only_status_page():
    load, block = default_status_block()
    assert load is not None, "conf/httpd.conf does not load status_module"
    assert block is not None, 'conf/httpd.conf has no <Location "/server-status"> section'
    assert re.search(r"^\s*SetHandler\s+server-status\s*$", block, re.M), block
    assert re.search(r"^\s*Require\s+local\s*$", block, re.M), block


def test_narrow_rule_denies_another_address(server_factory):
    s = server_factory(extra="""
LoadModule status_module modules/mod_status.so
<Location "/server-status">
    SetHandler server-status
    Require ip 127.0.0.1
</Location>
""")
    assert status_from(s.port, "127.0.0.1") == 200
    assert status_from(s.port, "127.0.0.2") == 403
    # the rest of the site is not affected
    assert status_from(s.port, "127.0.0.2", "/index.html") == 200


def netns_tools():
    for tool in ("unshare", "nsenter", "ip", "curl"):
        if shutil.which(tool) is None:
            return "%s is not installed" % tool
    if os.geteuid() != 0:
        return "a network namespace needs root"
    r = subprocess.run(["unshare", "-n", "true"], stderr=subprocess.PIPE, timeout=10)
    if r.returncode != 0:
        return "unshare -n is not allowed here: %s" % r.stderr.decode(errors="replace").strip()
    return None


NETNS_MISSING = netns_tools()

SERVER_ADDR = "192.0.2.1"   # TEST-NET-1: documentation only, never routed
CLIENT_ADDR = "192.0.2.2"


@pytest.mark.skipif(NETNS_MISSING is not None, reason=NETNS_MISSING or "")
def test_default_block_denies_non_local_clients(server_factory):
    load, block = default_status_block()
    if load is None or block is None:
        pytest.fail("conf/httpd.conf has no status block (see the test above)")
    s = server_factory(start=False, extra="%s\n%s\nListen %s:{port}\n" % (load, block, SERVER_ADDR))
    setup = ("ip link set lo up && ip addr add %s/32 dev lo && ip addr add %s/32 dev lo && "
             'exec "$0" "$@"' % (SERVER_ADDR, CLIENT_ADDR))
    err = open(s.stderr_path, "wb")
    proc = subprocess.Popen(["unshare", "-n", "sh", "-c", setup] + s.command("-D", "FOREGROUND"),
                            stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    err.close()

    def curl(source, dest):
        r = subprocess.run(["nsenter", "-t", str(proc.pid), "-n", "curl", "-s", "-o", "/dev/null",
                            "-w", "%{http_code}", "--max-time", "5", "--interface", source,
                            "http://%s:%d/server-status?auto" % (dest, s.port)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=15)
        return r.stdout.decode()

    try:
        up = hdtest.wait_for(lambda: proc.poll() is not None or curl("127.0.0.1", "127.0.0.1")
                             == "200", 10, 0.1)
        assert up and proc.poll() is None, "server did not start in the namespace:\n" + \
            s.diagnostics()
        assert curl(CLIENT_ADDR, SERVER_ADDR) == "403"
        assert curl("127.0.0.1", SERVER_ADDR) == "200"       # loopback is local
        assert curl(SERVER_ADDR, SERVER_ADDR) == "200"       # the server's own address too
    finally:
        kids = hdtest.children_of(proc.pid)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(5)
        for kid in kids:
            if not hdtest.wait_for(lambda: not hdtest.pid_alive(kid), 2.0):
                os.kill(kid, signal.SIGKILL)
