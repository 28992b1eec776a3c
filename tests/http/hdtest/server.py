"""Starting and stopping the server under test.

A Server owns a temporary ServerRoot with conf/, logs/ and an htdocs/ tree of
known content, writes httpd.conf from a template plus per-test directives,
picks a free loopback port, starts the binary in the foreground and stops it
by PID (TERM, then KILL after 5 s). Nothing is ever killed by name.
"""

import os
import random
import resource
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from . import client

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

HTTPD_SOURCE = os.path.abspath(os.environ.get("HTTPD_SOURCE") or REPO)
HTTPD_BIN = os.path.abspath(os.environ.get("HTTPD_BIN")
                            or os.path.join(HTTPD_SOURCE, "build", "httpd"))
HTTPD_MPM = os.environ.get("HTTPD_MPM") or "prefork"

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0

# Known content. 4k.bin is pseudo-random so that an offset error in a range
# or a short write cannot go unnoticed.
BIN_4K = random.Random(4096).randbytes(4096)
INDEX_HTML = b"<!DOCTYPE html>\n<html><head><title>hdtest</title></head>" \
             b"<body><h1>hdtest index</h1></body></html>\n"
DIR_INDEX_HTML = b"<html><body>dir index page</body></html>\n"
ERR404_HTML = b"<html><body>hdtest custom 404 page</body></html>\n"
ERR403_HTML = b"<html><body>hdtest custom 403 page</body></html>\n"
SPACE_TXT = b"file with a space in its name\n"
SECRET = b"hdtest-secret-outside-docroot-7f3a9c\n"
INDEX_MTIME = 1577934245   # Thu, 02 Jan 2020 03:04:05 GMT
BIN_MTIME = 1622548800     # Tue, 01 Jun 2021 12:00:00 GMT

MIME_FILES = {
    "style.css": b"body { color: black; }\n",
    "app.js": b"console.log('hdtest');\n",
    "image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(17),
    "data.json": b'{"hdtest": true}\n',
    "pic.svg": b'<svg xmlns="http://www.w3.org/2000/svg"/>\n',
    "plain.txt": b"plain text file\n",
    "blob.zzqx": b"unknown extension\n",
    "x.hdt": b"AddType test\n",
}

MPM_DIRECTIVES = """\
<IfModule mpm_prefork_module>
    StartServers 2
    MinSpareServers 1
    MaxSpareServers 4
</IfModule>
<IfModule mpm_worker_module>
    StartServers 2
    ThreadsPerChild 8
    MinSpareThreads 4
    MaxSpareThreads 24
    MaxRequestWorkers 32
</IfModule>
<IfModule mpm_event_module>
    StartServers 2
    ThreadsPerChild 8
    MinSpareThreads 4
    MaxSpareThreads 24
    MaxRequestWorkers 32
</IfModule>
"""

TEMPLATE = """\
# Written by tests/http/hdtest/server.py
ServerRoot "{root}"
LoadModule mpm_{mpm}_module modules/mod_mpm_{mpm}.so
Listen 127.0.0.1:{port}
ServerName test.local
DocumentRoot "{htdocs}"
TypesConfig "{mime_types}"
ErrorLog "{root}/logs/error_log"
LogLevel info
PidFile "{root}/logs/httpd.pid"
LogFormat "%h %l %u %t \\"%r\\" %>s %b" common
CustomLog "{root}/logs/access_log" common
Timeout {timeout}
KeepAlive On
KeepAliveTimeout {keepalive_timeout}
{mpm_directives}
<Directory "{htdocs}">
    Options {options}
    Require all granted
{dir_extra}
</Directory>
{extra}
"""


def mime_types_path():
    p = os.path.join(HTTPD_SOURCE, "conf", "mime.types")
    if os.path.exists(p):
        return p
    # The repository's file is the one meant; /etc/mime.types only lets the
    # rest of the suite run while it is missing (reported in the summary).
    return "/etc/mime.types" if os.path.exists("/etc/mime.types") else p


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def port_accepts(port, timeout=0.2):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for(pred, timeout, interval=0.05):
    """Polls @pred until it returns something true; returns it, or None."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def pid_alive(pid):
    """True if @pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def children_of(pid):
    """PIDs of live processes whose parent is @pid (from /proc)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[1]) == pid:
            out.append(int(name))
    return sorted(out)


def thread_count(pid):
    """Threads of process @pid (from /proc), or None if it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _exe_is(pid, path):
    try:
        return os.path.realpath("/proc/%d/exe" % pid) == os.path.realpath(path)
    except OSError:
        return False


def populate_htdocs(root):
    """The standard content tree under @root/htdocs (and a secret outside it)."""
    htdocs = os.path.join(root, "htdocs")
    os.makedirs(htdocs, exist_ok=True)

    def put(rel, data, mtime=None):
        p = os.path.join(htdocs, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        if mtime is not None:
            os.utime(p, (mtime, mtime))

    put("index.html", INDEX_HTML, INDEX_MTIME)
    put("4k.bin", BIN_4K, BIN_MTIME)
    put("dir/index.html", DIR_INDEX_HTML)
    put("dir/page.txt", b"page in dir\n")
    put("noindex/a.txt", b"file a\n")
    put("noindex/b.txt", b"file b\n")
    os.makedirs(os.path.join(htdocs, "noindex", "sub"), exist_ok=True)
    for name, data in MIME_FILES.items():
        put(name, data)
    put("sp ace.txt", SPACE_TXT)
    put("err404.html", ERR404_HTML)
    put("err403.html", ERR403_HTML)
    put("unreadable.txt", b"nobody may read this\n")
    os.chmod(os.path.join(htdocs, "unreadable.txt"), 0)
    with open(os.path.join(root, "secret.txt"), "wb") as f:
        f.write(SECRET)
    os.symlink("4k.bin", os.path.join(htdocs, "link_in.bin"))
    os.symlink(os.path.join(root, "secret.txt"), os.path.join(htdocs, "link_out.txt"))
    for d in ("nofollow", "nooptions"):
        put(d + "/real.txt", b"real file in " + d.encode() + b"\n")
        os.symlink("../4k.bin", os.path.join(htdocs, d, "link_in.bin"))
        os.symlink(os.path.join(root, "secret.txt"), os.path.join(htdocs, d, "link_out.txt"))
    return htdocs


class ServerError(Exception):
    pass


class Server:
    """One server instance with its own ServerRoot.

    extra       directives appended after everything else
    dir_extra   lines inside <Directory htdocs>
    options     the Options of htdocs ("Indexes FollowSymLinks")
    files       {relative path under htdocs: bytes} written after the standard tree
    setup       callable(server) run after the content exists, before start
    args        extra command-line arguments (["-D", "X"])
    nofile      RLIMIT_NOFILE (soft and hard) for the server, or None
    mpm_directives  replaces the default MPM blocks
    """

    def __init__(self, name="httpd", extra="", dir_extra="", options="Indexes FollowSymLinks",
                 files=None, setup=None, args=(), timeout=5, keepalive_timeout=5,
                 mpm_directives=MPM_DIRECTIVES, nofile=None):
        self.name = name
        self.nofile = nofile
        self.extra = extra
        self.dir_extra = dir_extra
        self.options = options
        self.args = list(args)
        self.timeout = timeout
        self.keepalive_timeout = keepalive_timeout
        self.mpm_directives = mpm_directives
        self.mpm = HTTPD_MPM
        self.bin = HTTPD_BIN
        self.root = tempfile.mkdtemp(prefix="hdtest-%s-" % re.sub(r"\W", "_", name)[:40])
        # Let children read it even if some day they drop privileges.
        os.chmod(self.root, 0o755)
        self.htdocs = populate_htdocs(self.root)
        self.conf_dir = os.path.join(self.root, "conf")
        self.logs_dir = os.path.join(self.root, "logs")
        os.makedirs(self.conf_dir)
        os.makedirs(self.logs_dir)
        self.conf_path = os.path.join(self.conf_dir, "httpd.conf")
        self.pid_file = os.path.join(self.logs_dir, "httpd.pid")
        self.error_log_path = os.path.join(self.logs_dir, "error_log")
        self.stdout_path = os.path.join(self.root, "stdout.txt")
        self.stderr_path = os.path.join(self.root, "stderr.txt")
        self.proc = None
        self.port = free_port()
        self._known_children = set()
        for rel, data in (files or {}).items():
            self.write_file(rel, data)
        if setup is not None:
            setup(self)
        self.write_conf()

    # -- files and configuration ----------------------------------------

    def write_file(self, rel, data, mode=None):
        p = os.path.join(self.htdocs, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        if mode is not None:
            os.chmod(p, mode)
        return p

    def fmt(self, text):
        """Substitutes {root}, {htdocs}, {port}, {mpm} in per-test directives."""
        return text.replace("{root}", self.root).replace("{htdocs}", self.htdocs) \
                   .replace("{port}", str(self.port)).replace("{mpm}", self.mpm)

    def conf_text(self, extra=None):
        return TEMPLATE.format(
            root=self.root, htdocs=self.htdocs, port=self.port, mpm=self.mpm,
            mime_types=mime_types_path(), timeout=self.timeout,
            keepalive_timeout=self.keepalive_timeout,
            mpm_directives=self.mpm_directives,
            options=self.options, dir_extra=self.fmt(self.dir_extra),
            extra=self.fmt(self.extra if extra is None else extra))

    def write_conf(self, text=None):
        """Writes httpd.conf (the template with this server's settings, or @text)."""
        with open(self.conf_path, "w") as f:
            f.write(self.conf_text() if text is None else text)

    def conf_line_of(self, needle):
        """1-based line number of the first line of httpd.conf containing @needle."""
        with open(self.conf_path) as f:
            for i, line in enumerate(f, 1):
                if needle in line:
                    return i
        raise ValueError("%r not in %s" % (needle, self.conf_path))

    # -- process ----------------------------------------------------------

    def _limits(self):
        """In the child before exec: the descriptor limit the test asked for (soft and hard)."""
        if self.nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, self.nofile))

    def command(self, *args):
        return [self.bin, "-d", self.root, "-f", self.conf_path] + list(args)

    def run(self, *args, timeout=15):
        """Runs the binary with -d/-f and @args; returns CompletedProcess (text)."""
        return subprocess.run(self.command(*args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout, text=True,
                              errors="replace")

    def start(self):
        if not os.path.exists(self.bin):
            raise ServerError("HTTPD_BIN %s does not exist (build it first)" % self.bin)
        for attempt in range(5):
            if attempt:
                self.port = free_port()
                self.write_conf()
            if self._start_once():
                return self
        raise ServerError("could not bind a free port after 5 attempts\n" + self.diagnostics())

    def _start_once(self):
        out = open(self.stdout_path, "wb")
        err = open(self.stderr_path, "wb")
        try:
            # A session of its own: a master that signals its process group
            # (Apache's prefork does at shutdown) must not hit the test runner.
            self.proc = subprocess.Popen(self.command("-D", "FOREGROUND", *self.args),
                                         stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         start_new_session=True, preexec_fn=self._limits)
        finally:
            out.close()
            err.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                diag = self.diagnostics()
                if "in use" in diag.lower():
                    return False
                raise ServerError("server exited with status %s at start\n%s"
                                  % (self.proc.returncode, diag))
            if port_accepts(self.port):
                self._known_children.update(self.children())
                return True
            time.sleep(0.05)
        self.stop()
        raise ServerError("server did not accept on port %d within %.0f s\n%s"
                          % (self.port, START_TIMEOUT, self.diagnostics()))

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def children(self):
        if not self.alive():
            return []
        kids = children_of(self.proc.pid)
        self._known_children.update(kids)
        return kids

    def signal(self, sig):
        """Sends @sig to the master (by PID)."""
        os.kill(self.proc.pid, sig)

    def pid_from_file(self):
        try:
            with open(self.pid_file) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def wait_exit(self, timeout=STOP_TIMEOUT):
        try:
            self.proc.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def stop(self):
        """TERM to the master, KILL after 5 s; then KILL any child left behind."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.children()
            try:
                os.kill(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            if not self.wait_exit(STOP_TIMEOUT):
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        # Children whose master died must not outlive the test. Only our own
        # PIDs, and only while they still run our binary.
        for kid in sorted(self._known_children):
            if pid_alive(kid) and _exe_is(kid, self.bin):
                if wait_for(lambda: not pid_alive(kid), 2.0):
                    continue
                try:
                    os.kill(kid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def cleanup(self):
        self.stop()
        if not os.environ.get("HDTEST_KEEP"):
            shutil.rmtree(self.root, ignore_errors=True)

    # -- logs ---------------------------------------------------------------

    def read_log(self, name):
        path = name if os.path.isabs(name) else os.path.join(self.logs_dir, name)
        try:
            with open(path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def error_log(self):
        return self.read_log("error_log")

    def access_log(self, name="access_log"):
        return self.read_log(name)

    def wait_log(self, pattern, name="access_log", timeout=5.0):
        """Polls log @name until regex @pattern matches a line; the match or None."""
        rx = re.compile(pattern, re.M)
        return wait_for(lambda: rx.search(self.read_log(name)), timeout, 0.1)

    def diagnostics(self):
        parts = []
        for label, path in (("stderr", self.stderr_path), ("stdout", self.stdout_path),
                            ("error_log", self.error_log_path)):
            text = self.read_log(path)
            if text:
                parts.append("--- %s ---\n%s" % (label, text[-4000:]))
        parts.append("--- httpd.conf (%s) ---\n%s" % (self.conf_path, self.read_log(self.conf_path)))
        return "\n".join(parts)

    # -- requests ---------------------------------------------------------

    def get(self, path, headers=None, method="GET", body=None, timeout=client.DEFAULT_TIMEOUT):
        return client.get(self.port, path, headers, method, body, timeout)

    def conn(self, timeout=client.DEFAULT_TIMEOUT):
        return client.Conn(self.port, timeout=timeout)

    def raw(self, data, **kw):
        return client.raw(self.port, data, **kw)

    def request(self, method, target, headers=None, body=None, version="HTTP/1.1",
                host="test.local", **kw):
        return client.raw(self.port, client.build_request(method, target, headers, body,
                                                          version, host), method=method, **kw)

    def pipeline(self, requests, methods=None):
        return client.pipeline(self.port, requests, methods)
