"""Helpers for the black-box HTTP tests of httpd (standard library only)."""

from .client import (Conn, IncompleteResponse, ProtocolError, Response, build_request,
                     get, http_date, parse_http_date, parse_multipart_byteranges,
                     pipeline, raw)
from .server import (BIN_4K, BIN_MTIME, DIR_INDEX_HTML, ERR403_HTML, ERR404_HTML,
                     HTTPD_BIN, HTTPD_MPM, HTTPD_SOURCE, INDEX_HTML, INDEX_MTIME,
                     MIME_FILES, MPM_DIRECTIVES, SECRET, SPACE_TXT, Server, ServerError,
                     children_of, free_port, pid_alive, port_accepts, thread_count,
                     wait_for)

__all__ = [
    "Conn", "IncompleteResponse", "ProtocolError", "Response", "build_request", "get",
    "http_date", "parse_http_date", "parse_multipart_byteranges", "pipeline", "raw",
    "BIN_4K", "BIN_MTIME", "DIR_INDEX_HTML", "ERR403_HTML", "ERR404_HTML", "HTTPD_BIN",
    "HTTPD_MPM", "HTTPD_SOURCE", "INDEX_HTML", "INDEX_MTIME", "MIME_FILES", "MPM_DIRECTIVES",
    "SECRET", "SPACE_TXT", "Server", "ServerError", "children_of", "free_port", "pid_alive",
    "port_accepts", "thread_count", "wait_for",
]
