"""The command line and configuration errors: -t, -v, -V, -M, -L, -D, -C,
-c, -k, -e, and messages naming file:line."""

import os
import re
import subprocess

import pytest

from hdtest import HTTPD_BIN, HTTPD_MPM, INDEX_HTML, free_port, get, port_accepts, wait_for


@pytest.fixture
def cfg(server_factory):
    """A server that is configured but not started."""
    return server_factory(start=False)


def _out(p):
    return p.stdout + p.stderr


def test_syntax_ok(cfg):
    p = cfg.run("-t")
    assert p.returncode == 0, _out(p)
    assert "Syntax OK" in _out(p)


def test_syntax_ok_with_e_debug(cfg):
    p = cfg.run("-t", "-e", "debug")
    assert p.returncode == 0, _out(p)
    assert "Syntax OK" in _out(p)


def test_missing_config_file(cfg):
    path = os.path.join(cfg.root, "conf", "nope.conf")
    p = subprocess.run([HTTPD_BIN, "-d", cfg.root, "-f", path, "-t"], capture_output=True,
                       text=True, timeout=15)
    assert p.returncode == 1
    assert path in _out(p) or "nope.conf" in _out(p)


def _broken(cfg, text):
    """Appends @text to the configuration and runs -t."""
    cfg.extra = text + "\n"
    cfg.write_conf()
    return cfg.run("-t")


def test_unknown_directive(cfg):
    p = _broken(cfg, "Bogus foo bar")
    line = cfg.conf_line_of("Bogus foo bar")
    assert p.returncode == 1, _out(p)
    assert "%s:%d:" % (cfg.conf_path, line) in _out(p)
    assert "Invalid command 'Bogus'" in _out(p)
    assert "Syntax OK" not in _out(p)


def test_directive_in_wrong_context(cfg):
    p = _broken(cfg, '<Directory "{htdocs}/dir">\n    Listen 127.0.0.1:1\n</Directory>')
    line = cfg.conf_line_of("Listen 127.0.0.1:1")
    assert p.returncode == 1, _out(p)
    assert "%s:%d:" % (cfg.conf_path, line) in _out(p)
    # Apache 2.4's wording inside a section: "Listen not allowed in <Directory> context"
    assert "Listen not allowed in <Directory> context" in _out(p)
    assert "Listen" in _out(p)


def test_wrong_argument_count(cfg):
    p = _broken(cfg, 'DocumentRoot "{htdocs}" "{htdocs}/dir"')
    line = cfg.conf_line_of('/htdocs/dir"')
    assert p.returncode == 1, _out(p)
    assert "%s:%d:" % (cfg.conf_path, line) in _out(p)
    assert "takes one argument" in _out(p)


def test_flag_directive_bad_value(cfg):
    p = _broken(cfg, "KeepAlive Maybe")
    line = cfg.conf_line_of("KeepAlive Maybe")
    assert p.returncode == 1, _out(p)
    assert "%s:%d:" % (cfg.conf_path, line) in _out(p)
    assert "KeepAlive" in _out(p)


def test_unclosed_section(cfg):
    p = _broken(cfg, '<Directory "{htdocs}/dir">\n    Options None')
    assert p.returncode == 1, _out(p)
    assert cfg.conf_path in _out(p)
    assert "Directory" in _out(p)


def test_unknown_loadmodule(cfg):
    p = _broken(cfg, "LoadModule hdtest_bogus_module modules/mod_hdtest_bogus.so")
    assert p.returncode == 1, _out(p)
    assert "hdtest_bogus_module" in _out(p)
    line = cfg.conf_line_of("hdtest_bogus_module")
    assert "%s:%d:" % (cfg.conf_path, line) in _out(p)


def test_version(cfg):
    p = cfg.run("-v")
    assert p.returncode == 0, _out(p)
    assert re.search(r"^Server version: httpd/0\.1\.0\b", p.stdout, re.M), _out(p)


def test_version_verbose(cfg):
    p = cfg.run("-V")
    out = _out(p)
    assert p.returncode == 0, out
    assert "Server version: httpd/0.1.0" in out
    assert re.search(r"(?im)^.*\bmpm\b.*\b%s\b" % HTTPD_MPM, out), out
    assert re.search(r"(?im)^.*commit.*\b([0-9a-f]{7,}(-dirty)?|unknown)\b", out), out
    assert re.search(r"(?im)^.*compiler.*\b(gcc|gnu|clang|cc)\b", out), out


def test_list_modules(cfg):
    p = cfg.run("-M")
    out = _out(p)
    assert p.returncode == 0, out
    assert re.search(r"(?m)^\s*core_module \((static|shared)\)\s*$", out), out
    assert re.search(r"(?m)^\s*mpm_%s_module \((static|shared)\)\s*$" % HTTPD_MPM, out), out
    for other in ("prefork", "worker", "event"):
        if other != HTTPD_MPM:
            assert "mpm_%s_module" % other not in out


def test_list_directives(cfg):
    p = cfg.run("-L")
    out = _out(p)
    assert p.returncode == 0, out
    i = out.find("DocumentRoot")
    assert i >= 0, out
    near = out[i + len("DocumentRoot"):i + 500]
    assert re.search(r"(?i)(document|director|root)", near), near
    for name in ("Listen", "KeepAliveTimeout", "ErrorDocument", "Options", "Require",
                 "DirectoryIndex", "AddType", "LogFormat", "CustomLog"):
        assert re.search(r"(?m)^\s*%s\b" % name, out), name


def test_bad_flag(cfg):
    p = subprocess.run([HTTPD_BIN, "-Z"], capture_output=True, text=True, timeout=15)
    assert p.returncode == 1
    assert re.search(r"(?i)usage", _out(p)), _out(p)


def test_define_on_command_line_enables_listen(server_factory):
    port2 = free_port()
    extra = "<IfDefine HDEXTRA>\nListen 127.0.0.1:%d\n</IfDefine>\n" % port2
    s = server_factory(extra=extra, args=["-D", "HDEXTRA"])
    assert wait_for(lambda: port_accepts(port2), 5.0)
    assert s.get("/index.html").status == 200
    r = get(port2, "/index.html")
    assert r.status == 200 and r.body == INDEX_HTML


def test_without_define_listen_not_enabled(server_factory):
    port2 = free_port()
    extra = "<IfDefine HDEXTRA>\nListen 127.0.0.1:%d\n</IfDefine>\n" % port2
    s = server_factory(extra=extra)
    assert s.get("/index.html").status == 200
    assert not port_accepts(port2)


def test_define_negated_and_C_define(cfg):
    cfg.extra = "<IfDefine !HDX>\nBogus\n</IfDefine>\n"
    cfg.write_conf()
    assert cfg.run("-t").returncode == 1
    p = cfg.run("-t", "-D", "HDX")
    assert p.returncode == 0, _out(p)
    p = cfg.run("-t", "-C", "Define HDX")
    assert p.returncode == 0, _out(p)


def test_C_and_c_directives_are_checked(cfg):
    for flag in ("-C", "-c"):
        p = cfg.run("-t", flag, "KeepAlive Maybe")
        assert p.returncode == 1, _out(p)
        assert "KeepAlive" in _out(p)
        p = cfg.run("-t", flag, "KeepAlive Off")
        assert p.returncode == 0, _out(p)


def _htdocs2(s):
    os.makedirs(os.path.join(s.root, "htdocs2"))
    with open(os.path.join(s.root, "htdocs2", "index.html"), "wb") as f:
        f.write(b"htdocs2 index\n")


def test_c_directive_after_file_overrides(server_factory):
    s = server_factory(setup=_htdocs2, start=False)
    s.args = ["-c", 'DocumentRoot "%s/htdocs2"' % s.root]
    s.start()
    r = s.get("/")
    assert r.status == 200 and r.body == b"htdocs2 index\n"


def test_C_directive_before_file_is_overridden(server_factory):
    s = server_factory(setup=_htdocs2, start=False)
    s.args = ["-C", 'DocumentRoot "%s/htdocs2"' % s.root]
    s.start()
    r = s.get("/")
    assert r.status == 200 and r.body == INDEX_HTML


def test_k_stop(server_factory):
    s = server_factory()
    kids = s.children()
    p = s.run("-k", "stop")
    assert p.returncode == 0, _out(p)
    assert s.wait_exit(5.0), "master still running 5 s after -k stop"
    assert wait_for(lambda: not any(os.path.exists("/proc/%d" % k) for k in kids), 5.0)
    assert not os.path.exists(s.pid_file)
    assert not port_accepts(s.port)


def test_k_graceful(server_factory):
    s = server_factory()
    assert s.get("/index.html").status == 200
    before = set(wait_for(s.children, 5.0) or [])
    assert before
    master = s.pid
    p = s.run("-k", "graceful")
    assert p.returncode == 0, _out(p)

    def replaced():
        return set(s.children()) - before
    assert wait_for(replaced, 5.0), "no new child after -k graceful"
    assert s.alive() and s.pid == master == s.pid_from_file()
    assert s.get("/index.html").status == 200


def test_k_without_running_server(cfg):
    p = cfg.run("-k", "stop")
    assert re.search(r"(?i)(not running|pid|no such)", _out(p)), _out(p)
