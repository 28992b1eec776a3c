"""Light load: many concurrent keep-alive clients get correct answers, and
clients that send half a request and stall are timed out so that the
server serves again."""

import concurrent.futures
import time

from hdtest import BIN_4K, DIR_INDEX_HTML, INDEX_HTML, Conn, wait_for

LOAD_MPM = """\
<IfModule mpm_prefork_module>
    StartServers 8
    MinSpareServers 4
    MaxSpareServers 16
    MaxRequestWorkers 32
</IfModule>
<IfModule mpm_worker_module>
    StartServers 2
    ThreadsPerChild 16
    MinSpareThreads 8
    MaxSpareThreads 32
    MaxRequestWorkers 32
</IfModule>
<IfModule mpm_event_module>
    StartServers 2
    ThreadsPerChild 16
    MinSpareThreads 8
    MaxSpareThreads 32
    MaxRequestWorkers 32
</IfModule>
"""

# Two workers in all, whatever the MPM.
TINY_MPM = """\
<IfModule mpm_prefork_module>
    StartServers 2
    MinSpareServers 1
    MaxSpareServers 2
    ServerLimit 2
    MaxRequestWorkers 2
</IfModule>
<IfModule mpm_worker_module>
    StartServers 1
    ServerLimit 1
    ThreadsPerChild 2
    ThreadLimit 2
    MinSpareThreads 1
    MaxSpareThreads 2
    MaxRequestWorkers 2
</IfModule>
<IfModule mpm_event_module>
    StartServers 1
    ServerLimit 1
    ThreadsPerChild 2
    ThreadLimit 2
    MinSpareThreads 1
    MaxSpareThreads 2
    MaxRequestWorkers 2
</IfModule>
"""

EXPECT = [("/index.html", INDEX_HTML), ("/4k.bin", BIN_4K), ("/dir/", DIR_INDEX_HTML)]


def test_concurrent_keepalive_clients(server_factory):
    s = server_factory(mpm_directives=LOAD_MPM, keepalive_timeout=2)

    def client(n):
        results = []
        with Conn(s.port, timeout=30) as c:
            for i in range(10):
                path, body = EXPECT[(n + i) % len(EXPECT)]
                r = c.request("GET", path)
                results.append((r.status, r.body == body, r.connection_close))
        return results

    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        all_results = list(pool.map(client, range(20)))
    flat = [x for res in all_results for x in res]
    assert len(flat) == 200
    assert all(status == 200 for status, _, _ in flat), flat
    assert all(ok for _, ok, _ in flat)
    assert not any(close for _, _, close in flat)
    assert s.alive()


def test_stalled_clients_time_out(server_factory):
    s = server_factory(mpm_directives=TINY_MPM, timeout=2, keepalive_timeout=1)
    stalled = []
    try:
        for _ in range(4):
            c = Conn(s.port, timeout=15)
            c.send(b"GET /index.html HTTP/1.1\r\nHost: test.local\r\n")
            stalled.append(c)
        time.sleep(0.2)

        # Once the stalled requests time out (Timeout 2), a new client is served.
        def served():
            try:
                return s.get("/index.html", timeout=15).body == INDEX_HTML
            except OSError:
                return False
        t0 = time.monotonic()
        assert wait_for(served, 20.0, 0.2), "server did not serve again after stalled clients"
        assert time.monotonic() - t0 < 20

        # Each stalled connection was ended by the server: closed, possibly
        # after a 408 response.
        for c in stalled:
            assert c.wait_closed(12.0), "a stalled connection was never closed"
            data = c.pending()
            assert data == b"" or data.startswith(b"HTTP/1.1 408"), data[:100]
    finally:
        for c in stalled:
            c.close()
    assert s.alive()
