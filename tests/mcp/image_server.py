"""A local HTTPS server for kb_save_image downloads, trusted only by the test.

trustme makes a throw-away certificate authority and a certificate for 127.0.0.1 and
localhost; the authority's PEM goes to `folio mcp` through FOLIO_TEST_FETCH_CA and the
server's socket address through FOLIO_TEST_FETCH_LOOPBACK (both test-only, read from the
environment by the binary). Nothing here listens anywhere but 127.0.0.1.
"""

import io
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import trustme
from PIL import Image

CAP = 25 * 1024 * 1024


def png(w: int, h: int, rgb) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), rgb).save(out, "PNG")
    return out.getvalue()


def jpeg(w: int, h: int, rgb) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), rgb).save(out, "JPEG", quality=90)
    return out.getvalue()


def webp(w: int, h: int, rgb) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), rgb).save(out, "WEBP", lossless=True)
    return out.getvalue()


def gif(w: int, h: int, first, second) -> bytes:
    out = io.BytesIO()
    frames = [Image.new("RGB", (w, h), first), Image.new("RGB", (w, h), second)]
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    return out.getvalue()


COVER = png(8, 6, (200, 40, 40))
PHOTO = jpeg(10, 10, (10, 120, 200))


class ImageServer:
    """Serves fixed routes over HTTPS on 127.0.0.1 and records the paths asked for."""

    def __init__(self, workdir: Path, other_port: int):
        self.ca = trustme.CA()
        cert = self.ca.issue_cert("127.0.0.1", "localhost")
        self.ca_pem = workdir / "test-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_pem))
        self.requests: list[str] = []
        self.other_port = other_port
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send(self, status, body=b"", ctype="image/png", headers=None, length=True):
                self.send_response(status)
                if ctype:
                    self.send_header("Content-Type", ctype)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                if body:
                    self.wfile.write(body)

            def do_GET(self):
                server.requests.append(self.path)
                path = self.path.split("?")[0]
                port = server.port
                routes = {
                    "/files/cover.png": lambda: self.send(200, COVER),
                    "/files/photo.jpg": lambda: self.send(200, PHOTO, "image/jpeg"),
                    "/files/blob": lambda: self.send(200, COVER, "application/octet-stream"),
                    "/files/mislabeled.jpg": lambda: self.send(200, COVER, "image/jpeg"),
                    "/files/text.png": lambda: self.send(200, b"this is not an image", "image/png"),
                    "/files/empty.png": lambda: self.send(200, b"", "image/png"),
                    "/files/missing.png": lambda: self.send(404, b"gone", "text/plain"),
                    "/files/redirect": lambda: self.send(302, ctype=None, headers={"Location": "/files/cover.png"}),
                    "/files/to-loopback": lambda: self.send(
                        302, ctype=None, headers={"Location": f"https://127.0.0.1:{server.other_port}/cover.png"}),
                    "/files/to-localhost": lambda: self.send(
                        302, ctype=None, headers={"Location": f"https://localhost:{server.other_port}/cover.png"}),
                    "/files/to-private": lambda: self.send(
                        302, ctype=None, headers={"Location": "https://10.255.255.1/cover.png"}),
                    "/files/to-http": lambda: self.send(
                        302, ctype=None, headers={"Location": f"http://127.0.0.1:{port}/files/cover.png"}),
                }
                if path in routes:
                    routes[path]()
                elif path == "/files/huge-announced.png":
                    # Announces more than 25 MiB: refused before the body is read.
                    self.send_response(200)
                    self.send_header("Content-Type", "image/png")
                    self.send_header("Content-Length", str(CAP + 1))
                    self.end_headers()
                    try:
                        self.wfile.write(COVER)
                    except OSError:
                        pass
                elif path == "/files/huge-streamed.png":
                    # No length: the body runs past 25 MiB and the download stops there.
                    self.send_response(200)
                    self.send_header("Content-Type", "image/png")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    chunk = COVER + bytes(1024 * 1024 - len(COVER))
                    try:
                        for _ in range(27):
                            self.wfile.write(chunk)
                            chunk = bytes(1024 * 1024)
                    except OSError:
                        pass
                    self.close_connection = True
                else:
                    self.send(404, b"no such route", "text/plain")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(context)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
