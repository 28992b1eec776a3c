"""Starting and stopping the servers under comparison.

A Workspace owns one temporary directory per comparison: a shared document
root (a 4 KiB file, a large file, a copy of htdocs/manual) and one
ServerRoot per side. Each run starts a fresh server on a free loopback port
(so that what one process instance happens to be — its address layout, its
warm caches — varies between rounds instead of becoming a fake difference
between the sides), and stops it by PID: TERM to the master, KILL after
5 s, then KILL any child of ours left behind. Nothing is killed by name.
"""

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

START_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0
LARGE_SIZE = 1 << 20

# Sizing that keeps the set of workers fixed during a run: enough workers
# for every connection of the load generators, and MaxSpare so high that
# idle ones are never reaped (a fork in the middle of a run would be billed
# to whichever side happened to need it).
MPM_SIZING = """\
<IfModule mpm_prefork_module>
    ServerLimit              160
    StartServers             64
    MinSpareServers          8
    MaxSpareServers          160
    MaxRequestWorkers        160
    MaxConnectionsPerChild   0
</IfModule>
<IfModule mpm_worker_module>
    StartServers             2
    ThreadsPerChild          32
    MinSpareThreads          16
    MaxSpareThreads          192
    MaxRequestWorkers        192
    MaxConnectionsPerChild   0
</IfModule>
<IfModule mpm_event_module>
    StartServers             2
    ThreadsPerChild          32
    MinSpareThreads          16
    MaxSpareThreads          192
    MaxRequestWorkers        192
    MaxConnectionsPerChild   0
</IfModule>
"""

STATUS_LOAD = "LoadModule status_module modules/mod_status.so"
STATUS_LOCATION = """\
<Location /server-status>
    SetHandler server-status
    Require ip 127.0.0.1
</Location>"""

BASE_TEMPLATE = """\
# Written by perf/compare (side {side}: {label})
ServerRoot "{root}"
Listen 127.0.0.1:{port}
ServerName localhost
LoadModule mpm_{mpm}_module modules/mod_mpm_{mpm}.so
{status_load}
PidFile "{root}/logs/httpd.pid"
ErrorLog "{root}/logs/error_log"
LogLevel warn
TypesConfig "{mime}"
Timeout 60
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 15
EnableSendfile On
ServerTokens Full
DocumentRoot "{docroot}"
<Directory />
    Options None
    Require all denied
</Directory>
<Directory "{docroot}">
    Options FollowSymLinks
    Require all granted
</Directory>
DirectoryIndex index.html
# No access log: a cost both sides would pay alike (add CustomLog with --directive).
{sizing}
{status_location}
# --- this side's own directives ---
{directives}
"""


class ServerError(Exception):
    pass


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


def proc_stat(pid):
    """(state, ppid) of @pid from /proc, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def pid_alive(pid):
    st = proc_stat(pid)
    return st is not None and st[0] != "Z"


def children_of(pid):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None and st[0] != "Z" and st[1] == pid:
                out.append(int(name))
    return sorted(out)


def exe_is(pid, path):
    try:
        return os.path.realpath("/proc/%d/exe" % pid) == os.path.realpath(path)
    except OSError:
        return False


def mime_types(source=REPO):
    for p in (os.path.join(source, "conf", "mime.types"), "/etc/mime.types"):
        if os.path.exists(p):
            return p
    raise ServerError("no mime.types (looked in %s/conf and /etc)" % source)


def make_docroot(path, manual_source=REPO):
    """The shared content: 4k.bin, large.bin, index.html, manual/, missing nothing else."""
    os.makedirs(path, exist_ok=True)
    rnd = random.Random(4096)
    with open(os.path.join(path, "4k.bin"), "wb") as f:
        f.write(rnd.randbytes(4096))
    with open(os.path.join(path, "large.bin"), "wb") as f:
        f.write(rnd.randbytes(LARGE_SIZE))
    with open(os.path.join(path, "index.html"), "wb") as f:
        f.write(b"<!DOCTYPE html>\n<html><head><title>compare</title></head>"
                b"<body><p>perf/compare document root</p></body></html>\n")
    man = os.path.join(manual_source, "htdocs", "manual")
    if os.path.isdir(man):
        shutil.copytree(man, os.path.join(path, "manual"), dirs_exist_ok=True)
    return path


def manual_pages(docroot):
    """URL paths of the manual's HTML pages in @docroot, sorted."""
    out = []
    base = os.path.join(docroot, "manual")
    for dirpath, _dirs, files in os.walk(base):
        for name in files:
            if name.endswith(".html"):
                rel = os.path.relpath(os.path.join(dirpath, name), docroot)
                out.append("/" + rel.replace(os.sep, "/"))
    return sorted(out)


class Side:
    """One of the things compared: a binary plus how its config differs.

    key         "A", "B", ...
    label       what the report calls it ("rev 13a4740", "EnableSendfile Off", "mpm event")
    binary      the httpd to run
    mpm         the MPM to load
    directives  lines appended to the generated base config
    conf_file   a config of the user's: a template if it contains @PORT@ (then
                @PORT@ @DOCROOT@ @ROOT@ @MIME@ are replaced and nothing is
                generated), else a fragment appended like directives
    """

    def __init__(self, key, label, binary, mpm="prefork", directives=(), conf_file=None,
                 revision=None):
        self.key = key
        self.label = label
        self.binary = os.path.abspath(binary)
        self.mpm = mpm
        self.directives = list(directives)
        self.conf_file = conf_file
        self.revision = revision
        self.identity = {}
        self.status = None       # True once a config with the status module passed -t

    def describe(self):
        commit = self.identity.get("git_commit") or "unknown"
        return "%s (%s, commit %s)" % (self.label, self.identity.get("mpm") or self.mpm, commit)

    def to_json(self):
        return {"key": self.key, "label": self.label, "binary": self.binary, "mpm": self.mpm,
                "directives": self.directives, "conf_file": self.conf_file,
                "revision": self.revision, "identity": self.identity,
                "status_module": self.status}


def identity_of(binary):
    """Build identity from `httpd -V`: version, git_commit, build_type, mpm, compiler."""
    try:
        out = subprocess.run([binary, "-V"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", timeout=15).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ServerError("%s -V failed: %s" % (binary, e))
    keys = {"Server version": "version", "Git commit": "git_commit", "Build type": "build_type",
            "Server MPM": "mpm", "Compiler": "compiler", "Compiler flags": "cflags",
            "Server built": "built"}
    ident = {"binary": os.path.abspath(binary), "raw": out}
    for line in out.splitlines():
        k, sep, v = line.partition(":")
        if sep and k.strip() in keys:
            ident[keys[k.strip()]] = v.strip()
    return ident


class Server:
    """One running instance of a side."""

    def __init__(self, side, root, conf_path, port):
        self.side = side
        self.root = root
        self.conf_path = conf_path
        self.port = port
        self.proc = None
        self.known = set()

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def pids(self):
        """The master and its live children (the processes perf stat attaches to)."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        kids = children_of(self.proc.pid)
        self.known.update(kids)
        return [self.proc.pid] + kids

    def error_log(self):
        try:
            with open(os.path.join(self.root, "logs", "error_log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.pids()
            try:
                os.kill(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        for kid in sorted(self.known):
            deadline = time.monotonic() + 2.0
            while pid_alive(kid) and exe_is(kid, self.side.binary) and \
                    time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(kid) and exe_is(kid, self.side.binary):
                try:
                    os.kill(kid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.proc = None


class Workspace:
    """The temporary tree of one comparison: docroot and a ServerRoot per side."""

    def __init__(self, base=None, keep=False, source=REPO):
        self.dir = tempfile.mkdtemp(prefix="hdcmp-", dir=base)
        os.chmod(self.dir, 0o755)
        self.keep = keep
        self.source = source
        self.docroot = make_docroot(os.path.join(self.dir, "htdocs"), source)
        self.mime = mime_types(source)

    def side_root(self, side):
        root = os.path.join(self.dir, "side-" + side.key)
        for sub in ("conf", "logs"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
        return root

    def conf_text(self, side, port, root, status=True):
        user = ""
        if side.conf_file:
            with open(side.conf_file) as f:
                user = f.read()
            if "@PORT@" in user:
                for k, v in (("@PORT@", str(port)), ("@DOCROOT@", self.docroot),
                             ("@ROOT@", root), ("@MIME@", self.mime)):
                    user = user.replace(k, v)
                return user
        directives = "\n".join(side.directives + ([user] if user else []))
        return BASE_TEMPLATE.format(
            side=side.key, label=side.label, root=root, port=port, mpm=side.mpm,
            mime=self.mime, docroot=self.docroot, sizing=MPM_SIZING,
            status_load=STATUS_LOAD if status else "# (no status module in this build)",
            status_location=STATUS_LOCATION if status else "", directives=directives)

    def write_conf(self, side, port, status=True):
        root = self.side_root(side)
        path = os.path.join(root, "conf", "httpd.conf")
        with open(path, "w") as f:
            f.write(self.conf_text(side, port, root, status))
        return root, path

    def check_conf(self, side, status=True):
        """Runs `httpd -t` on the side's config; (ok, output)."""
        root, path = self.write_conf(side, free_port(), status)
        args = [side.binary, "-d", root, "-f", path, "-t"]
        try:
            p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", timeout=30)
        except subprocess.TimeoutExpired:
            return False, "httpd -t timed out"
        return p.returncode == 0, p.stdout.strip()

    def prepare(self, side):
        """Decides whether the side's build has the status module; fails if its config is bad."""
        ok, out = self.check_conf(side, status=True)
        if ok:
            side.status = True
            return
        ok2, out2 = self.check_conf(side, status=False)
        if not ok2:
            raise ServerError("side %s (%s): the configuration does not pass httpd -t:\n%s"
                              % (side.key, side.label, out2))
        side.status = False

    def start(self, side, args=(), wrapper=(), timeout=START_TIMEOUT):
        """Starts @side on a free port, waits until it accepts; a Server."""
        last = ""
        for _attempt in range(5):
            port = free_port()
            root, path = self.write_conf(side, port, bool(side.status))
            srv = Server(side, root, path, port)
            logs = os.path.join(root, "logs")
            try:
                os.unlink(os.path.join(logs, "error_log"))
            except OSError:
                pass
            out = open(os.path.join(logs, "stdout"), "wb")
            err = open(os.path.join(logs, "stderr"), "wb")
            try:
                srv.proc = subprocess.Popen(
                    list(wrapper) + [side.binary, "-d", root, "-f", path, "-D", "FOREGROUND"]
                    + list(args), stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                    start_new_session=True)
            finally:
                out.close()
                err.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if srv.proc.poll() is not None:
                    break
                if port_accepts(port):
                    srv.pids()
                    return srv
                time.sleep(0.05)
            last = self._diag(srv)
            srv.stop()
            if "in use" not in last.lower():
                break
        raise ServerError("side %s (%s) did not start:\n%s" % (side.key, side.label, last))

    def _diag(self, srv):
        parts = []
        for name in ("stderr", "stdout", "error_log"):
            try:
                with open(os.path.join(srv.root, "logs", name), errors="replace") as f:
                    text = f.read()
            except OSError:
                continue
            if text.strip():
                parts.append("--- %s ---\n%s" % (name, text[-3000:]))
        return "\n".join(parts) or "(no output)"

    def cleanup(self):
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def short_commit(text):
    m = re.search(r"[0-9a-f]{7,40}(-dirty)?", text or "")
    return m.group(0) if m else (text or "unknown")
