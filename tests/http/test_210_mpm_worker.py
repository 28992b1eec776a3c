"""The worker MPM: ThreadsPerChild threads in each child serve that many
connections at the same time, each from its first byte to its close; the
listener takes a connection only when a thread is free for it."""

import time

import pytest

from hdtest import INDEX_HTML, Conn, thread_count, wait_for

CHILDREN = 2
THREADS = 4

WORKER_SMALL = """\
<IfModule mpm_worker_module>
    StartServers %d
    ServerLimit %d
    ThreadsPerChild %d
    MinSpareThreads 1
    MaxSpareThreads %d
    MaxRequestWorkers %d
</IfModule>
""" % (CHILDREN, CHILDREN, THREADS, CHILDREN * THREADS, CHILDREN * THREADS)

HEAD_START = b"GET /index.html HTTP/1.1\r\n"
HEAD_END = b"Host: test.local\r\n\r\n"


@pytest.mark.mpm("worker")
def test_slow_clients_served_at_the_same_time(server_factory):
    s = server_factory(mpm_directives=WORKER_SMALL, timeout=10)
    kids = wait_for(lambda: len(s.children()) == CHILDREN and s.children(), 5.0)
    assert kids, s.children()
    # ThreadsPerChild workers, a listener and the main thread (and a
    # sanitizer's own, if any).
    assert wait_for(lambda: all(THREADS + 2 <= (thread_count(k) or 0) <= THREADS + 4
                                for k in s.children()), 5.0), \
        [(k, thread_count(k)) for k in s.children()]

    total = CHILDREN * THREADS
    slow = []
    extra = None
    try:
        # Every thread gets a client that sends half a request and stalls.
        for _ in range(total):
            c = Conn(s.port, timeout=15)
            c.send(HEAD_START)
            slow.append(c)
        time.sleep(0.5)
        # One client more: no thread is free, so it waits (in the listen queue).
        extra = Conn(s.port, timeout=15)
        extra.send(HEAD_START + HEAD_END)
        assert not extra.readable(1.0), "served although every thread holds a slow client"

        # The slow clients finish: all are answered at once.
        t0 = time.monotonic()
        for c in slow:
            c.send(HEAD_END)
        for c in slow:
            r = c.read_response(timeout=5)
            assert r.status == 200 and r.body == INDEX_HTML
        assert time.monotonic() - t0 < 2.0
        # Their connections stay open (keep-alive) and hold their threads,
        # until they close; then the extra client gets its turn.
        for c in slow:
            c.close()
        r = extra.read_response(timeout=5)
        assert r.status == 200 and r.body == INDEX_HTML
    finally:
        for c in slow:
            c.close()
        if extra is not None:
            extra.close()
    assert s.alive()


@pytest.mark.mpm("worker")
def test_reaching_max_request_workers_is_logged(server_factory):
    s = server_factory(mpm_directives=WORKER_SMALL, timeout=10)
    assert wait_for(lambda: len(s.children()) == CHILDREN, 5.0)
    held = []
    try:
        for _ in range(CHILDREN * THREADS):
            c = Conn(s.port, timeout=15)
            c.send(HEAD_START)
            held.append(c)
        assert s.wait_log(r"AH00286: server reached MaxRequestWorkers", "error_log", 4.0), \
            s.error_log()
    finally:
        for c in held:
            c.close()
