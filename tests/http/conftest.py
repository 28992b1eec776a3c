"""Fixtures for the black-box HTTP tests.

Environment (set by CTest; defaults for running by hand):
  HTTPD_BIN     the binary            (<repo>/build/httpd)
  HTTPD_MPM     prefork|worker|event  (prefork)
  HTTPD_SOURCE  the repository root   (<repo>)
  HDTEST_KEEP   if set, temporary ServerRoots are not removed

Run: /usr/bin/python3 -m pytest -q tests/http

Each test module starts the servers it needs through server_factory
(per test) or module_server_factory (shared by the module's tests); each
server has its own temporary ServerRoot and port and is stopped by PID.
Tests that only make sense for one MPM carry @pytest.mark.mpm("name").
"""

import pytest

import hdtest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "mpm(*names): run only when HTTPD_MPM is one of the names")


def pytest_report_header(config):
    return "httpd: bin=%s mpm=%s source=%s" % (hdtest.HTTPD_BIN, hdtest.HTTPD_MPM,
                                                 hdtest.HTTPD_SOURCE)


def pytest_runtest_setup(item):
    for mark in item.iter_markers(name="mpm"):
        if hdtest.HTTPD_MPM not in mark.args:
            pytest.skip("only for MPM %s (running %s)" % ("/".join(mark.args), hdtest.HTTPD_MPM))


class ServerFactory:
    """Calling it makes (and by default starts) a Server; all are stopped at teardown."""

    def __init__(self, name):
        self.name = name
        self.servers = []

    def __call__(self, start=True, name=None, **kw):
        s = hdtest.Server(name=name or self.name, **kw)
        self.servers.append(s)
        if start:
            try:
                s.start()
            except hdtest.ServerError as e:
                pytest.fail(str(e), pytrace=False)
        return s

    def cleanup(self):
        for s in reversed(self.servers):
            s.cleanup()


@pytest.fixture
def server_factory(request):
    f = ServerFactory(request.node.name)
    request.node._hd_factories = getattr(request.node, "_hd_factories", []) + [f]
    yield f
    f.cleanup()


@pytest.fixture(scope="module")
def module_server_factory(request):
    f = ServerFactory(request.module.__name__)
    yield f
    f.cleanup()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On failure, attach the error logs of the servers the test used."""
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed:
        return
    servers = []
    for f in getattr(item, "_hd_factories", []):
        servers.extend(f.servers)
    for v in getattr(item, "funcargs", {}).values():
        if isinstance(v, hdtest.Server):
            servers.append(v)
        elif isinstance(v, ServerFactory):
            servers.extend(v.servers)
    seen = set()
    for s in servers:
        if id(s) in seen:
            continue
        seen.add(id(s))
        log = s.error_log()
        if log:
            rep.sections.append(("httpd error_log (%s)" % s.root, log[-3000:]))
