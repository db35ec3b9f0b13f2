"""A small local HTTP server for the built site that compresses text responses, as a real host would.

Used by the Lighthouse audit (``make audit``): the site is measured as served,
not as opened from disk. Serves one folder on 127.0.0.1 only; gzip for text
types when the client accepts it; long caching for ``_static/`` and images.

    python tests/browser/compressed_server.py _build/html --port 8765
"""  # noqa: E501  (its first line is the --help description)

from __future__ import annotations

import argparse
import gzip
import http.server
import threading
from functools import lru_cache, partial
from pathlib import Path

COMPRESSED = {
    ".html",
    ".js",
    ".css",
    ".json",
    ".svg",
    ".txt",
    ".inv",
    ".map",
    ".woff",
    ".ttf",
    ".otf",
}
CACHE_FOREVER = ("/_static/", "/_images/")


@lru_cache(maxsize=1024)
def _gzipped(path: str, mtime_ns: int) -> bytes:
    return gzip.compress(Path(path).read_bytes(), compresslevel=6, mtime=0)


class Handler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):  # type: ignore[no-untyped-def]
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        wants_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if not path.is_file() or path.suffix not in COMPRESSED or not wants_gzip:
            return super().send_head()
        body = _gzipped(str(path), path.stat().st_mtime_ns)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self._cache_header()
        self.end_headers()
        self._gzip_body = body
        return None

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        self._gzip_body = None
        self._cache_sent = False
        f = self.send_head()
        if self._gzip_body is not None:
            self.wfile.write(self._gzip_body)
        elif f:
            try:
                self.copyfile(f, self.wfile)
            finally:
                f.close()

    def end_headers(self) -> None:
        if not getattr(self, "_cache_sent", False):
            self._cache_header()
        super().end_headers()

    def _cache_header(self) -> None:
        self._cache_sent = True
        forever = self.path.split("?", 1)[0].startswith(CACHE_FOREVER)
        self.send_header(
            "Cache-Control",
            "public, max-age=31536000, immutable" if forever else "no-cache",
        )

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def serve(
    root: Path, port: int = 0
) -> tuple[http.server.ThreadingHTTPServer, threading.Thread]:
    """Start serving ``root`` on 127.0.0.1 (``port`` 0: any free one) in a thread;
    return the server and thread."""
    if not (root / "index.html").exists():
        raise ValueError(
            f"root={root} holds no index.html (expected a built site, e.g. _build/html)"
        )
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", port), partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    srv, th = serve(args.root, args.port)
    print(f"serving {args.root} at http://127.0.0.1:{srv.server_port}/ (Ctrl-C stops)")
    try:
        th.join()
    except KeyboardInterrupt:
        srv.shutdown()
