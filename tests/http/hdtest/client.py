"""HTTP client helpers for the black-box tests.

A raw-socket connection (Conn) that reads responses off the wire exactly
(Content-Length, chunked, or until close; no body for HEAD, 1xx, 204, 304),
so tests can pipeline requests, send malformed bytes and see whether the
server closed the connection. http.client is used only for plain requests.
"""

import email.utils
import http.client
import re
import select
import socket
import time

DEFAULT_TIMEOUT = 10.0

IMF_FIXDATE_RE = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} "
    r"\d{2}:\d{2}:\d{2} GMT$")


class ProtocolError(Exception):
    """The server sent something that is not an HTTP/1.x response."""


class IncompleteResponse(Exception):
    """The connection ended (or timed out) in the middle of a response."""


class Response:
    """One response: status, headers in order, body, and how it ended."""

    def __init__(self):
        self.version = None      # "HTTP/1.1"
        self.status = None       # int
        self.reason = ""
        self.headers = []        # [(name, value)] in order received
        self.body = b""
        self.head = b""          # the raw head, status line included
        self.interim = []        # 1xx responses that came before this one
        self.closed = None       # True/False when the caller checked, else None
        self.extra = b""         # bytes that followed the response (raw())

    def header(self, name, default=None):
        """First value of header @name (case-insensitive), or @default."""
        n = name.lower()
        for k, v in self.headers:
            if k.lower() == n:
                return v
        return default

    def header_all(self, name):
        n = name.lower()
        return [v for k, v in self.headers if k.lower() == n]

    def has_header(self, name):
        return bool(self.header_all(name))

    def tokens(self, name):
        """Lower-cased comma-separated tokens of every @name header."""
        out = set()
        for v in self.header_all(name):
            for t in v.split(","):
                t = t.strip().lower()
                if t:
                    out.add(t)
        return out

    @property
    def connection_close(self):
        return "close" in self.tokens("connection")

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def __iter__(self):
        """Unpacks as (status, headers, body, closed)."""
        return iter((self.status, self.headers, self.body, self.closed))

    def __repr__(self):
        body = self.body[:200]
        return ("<Response %s %s headers=%r body[%d]=%r closed=%r>"
                % (self.status, self.reason, self.headers, len(self.body), body, self.closed))


def build_request(method, target, headers=None, body=None, version="HTTP/1.1",
                  host="test.local"):
    """Bytes of a request. @headers: dict or list of pairs (values may be bytes).
    A Host header is added first unless @host is None or one is given; a
    Content-Length is added for a body unless a framing header is given."""
    if isinstance(headers, dict):
        headers = list(headers.items())
    headers = list(headers or [])
    names = {(k.decode() if isinstance(k, bytes) else k).lower() for k, _ in headers}
    if host is not None and "host" not in names:
        headers.insert(0, ("Host", host))
    if body is not None and "content-length" not in names \
            and "transfer-encoding" not in names:
        headers.append(("Content-Length", str(len(body))))
    out = bytearray()
    out += b"%s %s %s\r\n" % (_b(method), _b(target), _b(version))
    for k, v in headers:
        out += _b(k) + b": " + _b(v) + b"\r\n"
    out += b"\r\n"
    if body is not None:
        out += _b(body)
    return bytes(out)


def _b(x):
    if isinstance(x, (bytes, bytearray)):
        return bytes(x)
    return str(x).encode("latin-1")


def request_method(data):
    """The method token of raw request bytes (for knowing when to expect no body)."""
    first = data.lstrip(b"\r\n").split(b" ", 1)[0]
    return first.decode("latin-1", "replace")


class Conn:
    """A client connection read exactly as HTTP/1.x frames it."""

    def __init__(self, port, host="127.0.0.1", timeout=DEFAULT_TIMEOUT):
        self.port = port
        self.timeout = timeout
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.eof = False
        self.reset = False
        self.nread = 0           # bytes received on this connection so far

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def send(self, data):
        self.sock.sendall(data)

    def request(self, method, target, headers=None, body=None, version="HTTP/1.1",
                host="test.local", timeout=None):
        """Sends one request and reads its final response."""
        self.send(build_request(method, target, headers, body, version, host))
        return self.read_response(method, timeout=timeout)

    # -- reading ---------------------------------------------------------

    def _deadline(self, timeout):
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def _fill(self, deadline):
        """Reads more bytes into buf. False at EOF (or reset); raises TimeoutError."""
        if self.eof:
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("timed out waiting for data; have %r" % bytes(self.buf[:300]))
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(262144)
        except socket.timeout:
            raise TimeoutError("timed out waiting for data; have %r"
                               % bytes(self.buf[:300])) from None
        except ConnectionResetError:
            self.eof = True
            self.reset = True
            return False
        if not data:
            self.eof = True
            return False
        self.buf += data
        self.nread += len(data)
        return True

    def _read_line(self, deadline, what):
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[:i + 1])
                del self.buf[:i + 1]
                return line
            if len(self.buf) > 1 << 20:
                raise ProtocolError("line too long while reading %s" % what)
            if not self._fill(deadline):
                raise IncompleteResponse("connection closed%s while reading %s; got %r"
                                         % (" (reset)" if self.reset else "", what,
                                            bytes(self.buf[:300])))

    def read_exact(self, n, timeout=None):
        deadline = self._deadline(timeout)
        while len(self.buf) < n:
            if not self._fill(deadline):
                raise IncompleteResponse("connection closed after %d of %d body bytes"
                                         % (len(self.buf), n))
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def read_some(self, max_bytes=65536, timeout=None):
        """Returns buffered bytes, or at least one recv()'s worth; b"" at EOF."""
        if not self.buf:
            self._fill(self._deadline(timeout))
        data = bytes(self.buf[:max_bytes])
        del self.buf[:max_bytes]
        return data

    def _read_to_eof(self, deadline):
        while self._fill(deadline):
            pass
        data = bytes(self.buf)
        self.buf.clear()
        return data

    def read_head(self, timeout=None):
        """Reads only a response head; the body stays to be read (read_some)."""
        return self._read_head(self._deadline(timeout))

    def _read_head(self, deadline):
        r = Response()
        head = bytearray()
        line = self._read_line(deadline, "status line")
        head += line
        m = re.match(rb"^HTTP/(\d)\.(\d) (\d{3})(?: ([^\r\n]*))?\r?\n$", line)
        if not m:
            raise ProtocolError("bad status line %r (buffer %r)" % (line, bytes(self.buf[:200])))
        r.version = "HTTP/%s.%s" % (m.group(1).decode(), m.group(2).decode())
        r.status = int(m.group(3))
        r.reason = (m.group(4) or b"").decode("latin-1")
        while True:
            line = self._read_line(deadline, "headers")
            head += line
            if line in (b"\r\n", b"\n"):
                break
            if line[:1] in (b" ", b"\t"):
                raise ProtocolError("obs-fold in response header: %r" % line)
            if b":" not in line:
                raise ProtocolError("bad header line %r" % line)
            k, v = line.split(b":", 1)
            r.headers.append((k.decode("latin-1"), v.strip().decode("latin-1")))
        r.head = bytes(head)
        return r

    def read_response(self, method="GET", timeout=None, interim=False):
        """Reads one response. 1xx responses are collected in .interim unless
        @interim is true, in which case a 1xx is returned by itself."""
        deadline = self._deadline(timeout)
        collected = []
        while True:
            r = self._read_head(deadline)
            if 100 <= r.status < 200 and r.status != 101:
                if interim:
                    return r
                collected.append(r)
                continue
            break
        r.interim = collected
        if method.upper() == "HEAD" or r.status in (204, 304):
            return r
        te = r.tokens("transfer-encoding")
        if te:
            if r.header("transfer-encoding").split(",")[-1].strip().lower() != "chunked":
                r.body = self._read_to_eof(deadline)
            else:
                r.body = self._read_chunked(deadline)
            return r
        cl = r.header_all("content-length")
        if cl:
            if len(set(cl)) != 1 or not cl[0].isdigit():
                raise ProtocolError("bad Content-Length in response: %r" % cl)
            n = int(cl[0])
            while len(self.buf) < n:
                if not self._fill(deadline):
                    raise IncompleteResponse("closed after %d of %d body bytes (status %d)"
                                             % (len(self.buf), n, r.status))
            r.body = bytes(self.buf[:n])
            del self.buf[:n]
            return r
        r.body = self._read_to_eof(deadline)
        return r

    def _read_chunked(self, deadline):
        body = bytearray()
        while True:
            line = self._read_line(deadline, "chunk size")
            size_s = line.split(b";", 1)[0].strip()
            try:
                size = int(size_s, 16)
            except ValueError:
                raise ProtocolError("bad chunk size line %r" % line) from None
            if size == 0:
                while True:
                    t = self._read_line(deadline, "trailers")
                    if t in (b"\r\n", b"\n"):
                        return bytes(body)
            while len(self.buf) < size + 2:
                if not self._fill(deadline):
                    raise IncompleteResponse("closed inside a chunk")
            body += self.buf[:size]
            if self.buf[size:size + 2] != b"\r\n":
                raise ProtocolError("chunk not followed by CRLF")
            del self.buf[:size + 2]

    # -- connection state ------------------------------------------------

    def wait_closed(self, timeout=3.0):
        """True if the server closes (EOF or reset) within @timeout seconds.
        Bytes that arrive meanwhile stay in .buf (see pending())."""
        deadline = time.monotonic() + timeout
        try:
            while self._fill(deadline):
                pass
        except TimeoutError:
            return False
        return True

    def is_open(self, wait=0.3):
        """True if the server has not closed the connection after @wait seconds."""
        return not self.wait_closed(wait)

    def pending(self):
        return bytes(self.buf)

    def readable(self, wait):
        if self.buf:
            return True
        r, _, _ = select.select([self.sock], [], [], wait)
        return bool(r)


def raw(port, data, method=None, timeout=DEFAULT_TIMEOUT, wait_close=None):
    """Sends @data on a new connection and reads one response.

    Returns a Response (it also unpacks as status, headers, body, closed)
    whose .closed says whether the server closed the connection afterwards:
    waited for up to 3 s when the response says "Connection: close" or the
    exchange is HTTP/1.0 without keep-alive, else 0.2 s (override with
    @wait_close). .extra holds any bytes that followed the response.
    """
    if method is None:
        method = request_method(data)
    first_line = data.lstrip(b"\r\n").split(b"\n", 1)[0].rstrip(b"\r")
    http10 = first_line.endswith(b"HTTP/1.0")
    with Conn(port, timeout=timeout) as c:
        c.send(data)
        r = c.read_response(method)
        if wait_close is None:
            ka = "keep-alive" in r.tokens("connection")
            wait_close = 3.0 if (r.connection_close or
                                 ((http10 or r.version == "HTTP/1.0") and not ka)) else 0.2
        r.closed = c.wait_closed(wait_close)
        r.extra = c.pending()
        return r


def pipeline(port, requests, methods=None, timeout=DEFAULT_TIMEOUT):
    """Sends every request in one send() and reads as many responses."""
    methods = methods or [request_method(q) for q in requests]
    with Conn(port, timeout=timeout) as c:
        c.send(b"".join(requests))
        return [c.read_response(m) for m in methods]


def get(port, path, headers=None, method="GET", body=None, timeout=DEFAULT_TIMEOUT):
    """A plain request through http.client on a new connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        r = Response()
        r.version = "HTTP/1.1" if resp.version == 11 else "HTTP/1.0"
        r.status = resp.status
        r.reason = resp.reason
        r.headers = resp.getheaders()
        r.body = data
        return r
    finally:
        conn.close()


def parse_http_date(value):
    """Seconds since the epoch of an IMF-fixdate; raises ValueError otherwise."""
    if not IMF_FIXDATE_RE.match(value or ""):
        raise ValueError("not an IMF-fixdate: %r" % value)
    return email.utils.parsedate_to_datetime(value).timestamp()


def http_date(ts):
    """IMF-fixdate for @ts seconds since the epoch."""
    return email.utils.formatdate(ts, usegmt=True)


def parse_multipart_byteranges(response):
    """Parts of a multipart/byteranges body: [(headers dict lower-cased, data)]."""
    ctype = response.header("content-type", "")
    m = re.match(r'^multipart/byteranges;\s*boundary="?([^";]+)"?', ctype, re.I)
    if not m:
        raise ProtocolError("not multipart/byteranges: %r" % ctype)
    delim = b"--" + m.group(1).encode("latin-1")
    body = response.body
    parts = []
    pos = body.find(delim)
    if pos < 0:
        raise ProtocolError("no boundary in body")
    while True:
        pos += len(delim)
        if body[pos:pos + 2] == b"--":
            return parts
        if body[pos:pos + 2] != b"\r\n":
            raise ProtocolError("boundary not followed by CRLF at %d" % pos)
        pos += 2
        end_head = body.find(b"\r\n\r\n", pos)
        if end_head < 0:
            raise ProtocolError("part head not terminated")
        hdrs = {}
        for line in body[pos:end_head].split(b"\r\n"):
            k, v = line.split(b":", 1)
            hdrs[k.strip().lower().decode()] = v.strip().decode("latin-1")
        data_start = end_head + 4
        nxt = body.find(b"\r\n" + delim, data_start)
        if nxt < 0:
            raise ProtocolError("part not terminated by a boundary")
        parts.append((hdrs, body[data_start:nxt]))
        pos = nxt + 2
