"""How the server runs: detached (no -D FOREGROUND), in one process (-X),
and on several listeners including IPv6."""

import os
import signal
import socket
import subprocess
import time

import pytest

from hdtest import INDEX_HTML, free_port, port_accepts, wait_for
from hdtest.client import Conn


def _get_index(port, host="127.0.0.1", family=socket.AF_INET):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((host, port))
    s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_detaches_without_foreground(server_factory):
    """Without -D FOREGROUND the command returns at once and a daemon serves."""
    s = server_factory(start=False)
    p = subprocess.run(s.command(), stdin=subprocess.DEVNULL, capture_output=True, timeout=15,
                       start_new_session=True)
    assert p.returncode == 0, p.stderr
    assert wait_for(lambda: s.pid_from_file(), 5.0), "no PidFile after a detached start"
    pid = s.pid_from_file()
    try:
        assert wait_for(lambda: port_accepts(s.port), 5.0)
        assert _get_index(s.port).endswith(INDEX_HTML)
        # The daemon is in a session of its own, not a child of the command.
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        assert int(fields[3]) == pid, "the master is not a session leader"
        p = s.run("-k", "start")
        assert "already running" in p.stdout + p.stderr
    finally:
        s.run("-k", "stop")
        assert wait_for(lambda: not _pid_alive(pid), 5.0), "daemon did not stop on -k stop"


@pytest.mark.mpm("prefork")
def test_one_process_mode(server_factory):
    """-X serves in the one foreground process, with no children."""
    s = server_factory(args=["-X"])
    assert _get_index(s.port).endswith(INDEX_HTML)
    assert s.children() == []
    s.signal(signal.SIGTERM)
    assert s.wait_exit(5.0), "-X process did not stop on TERM"


def test_several_listeners_ipv4_and_ipv6(server_factory):
    if not socket.has_ipv6:
        pytest.skip("no IPv6 in this Python")
    try:
        probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        pytest.skip("no ::1 on this machine")
    second = free_port()
    v6 = free_port()
    s = server_factory(extra="Listen 127.0.0.1:%d\nListen [::1]:%d\n" % (second, v6))
    assert _get_index(s.port).endswith(INDEX_HTML)
    assert _get_index(second).endswith(INDEX_HTML)
    assert _get_index(v6, "::1", socket.AF_INET6).endswith(INDEX_HTML)


def test_listen_address_in_use_is_an_error(server_factory):
    """A port that is taken stops the start with a message, exit status 1."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    try:
        s = server_factory(start=False, extra="Listen 127.0.0.1:%d\n" % port)
        p = subprocess.run(s.command("-D", "FOREGROUND"), capture_output=True, text=True,
                           timeout=15, stdin=subprocess.DEVNULL, start_new_session=True)
        assert p.returncode == 1
        out = p.stdout + p.stderr
        # Listeners open before the logs, so the message goes to stderr.
        assert "could not bind to address 127.0.0.1:%d" % port in out, out
    finally:
        busy.close()


def _idle_then_served(s, hold):
    """Opens a connection that sends nothing, then asks for the index on
    another; returns whether the second answer came within @hold seconds."""
    idle = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    try:
        time.sleep(0.2)  # the one process would be in the idle connection by now
        c = socket.create_connection(("127.0.0.1", s.port), timeout=hold)
        try:
            c.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            try:
                data = c.recv(65536)
            except socket.timeout:
                return False
            assert data.startswith(b"HTTP/1.1 200"), data[:100]
            return True
        finally:
            c.close()
    finally:
        idle.close()


@pytest.mark.mpm("prefork")
def test_accept_filter_keeps_silent_clients_away(server_factory):
    """Apache's default AcceptFilter on Linux (TCP_DEFER_ACCEPT): a client
    that connects and sends nothing is not handed to a process, so the only
    process of -X still serves the next client at once."""
    s = server_factory(args=["-X"], extra="Timeout 4")
    assert _idle_then_served(s, 2.0), "a silent connection held the only process"


@pytest.mark.mpm("prefork")
def test_accept_filter_none_hands_over_at_once(server_factory):
    """AcceptFilter http none: the silent connection is accepted at once and
    holds -X's only process until Timeout, so the next client waits."""
    s = server_factory(args=["-X"], extra="Timeout 4\nAcceptFilter http none")
    assert not _idle_then_served(s, 1.5), "AcceptFilter none did not take effect"
