"""HTTP for extender calls: one kept-alive connection per extender, Go's error texts."""

from __future__ import annotations

import base64
import http.client
import socket
import ssl
import threading
import time
from urllib.parse import unquote, urlsplit

from kwhatif import __version__
from kwhatif.extenders.tls import TLSSettings

TLS_HANDSHAKE_TIMEOUT = 10.0  # utilnet.SetTransportDefaults
USER_AGENT = f"kwhatif/{__version__} (kube-scheduler v1.34.1 extender protocol, read-only)"


class HTTPFailure(Exception):
    """A transport-level failure; ``unreachable`` ones map to exit status 3. Failures of Client.Do
    come wrapped in a url.Error ('Post "<url>": ...'); reading the body fails unwrapped."""

    def __init__(self, message: str, unreachable: bool, wrapped: bool = True) -> None:
        super().__init__(message)
        self.unreachable = unreachable
        self.wrapped = wrapped


class Connection:
    """One kept-alive connection to an extender, with Go's http.Client.Timeout (a whole-call deadline)."""

    def __init__(self, tls: TLSSettings) -> None:
        self.tls = tls
        self.conn: http.client.HTTPConnection | None = None
        self.key: tuple | None = None
        self.lock = threading.Lock()

    def post(self, url: str, body: bytes, timeout: float | None) -> tuple[int, bytes]:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise HTTPFailure(f'unsupported protocol scheme "{parts.scheme}"', unreachable=False)
        if not parts.hostname:
            raise HTTPFailure("http: no Host in request URL", unreachable=False)
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise HTTPFailure(f'invalid port "{parts.netloc.rsplit(":", 1)[-1]}" after host',
                               unreachable=False) from None
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        deadline = time.monotonic() + timeout if timeout is not None else None
        with self.lock:
            key = (scheme, parts.hostname, port)
            reused = self.conn is not None and self.key == key
            if not reused:
                self.close()
            for attempt in (0, 1):
                if self.conn is None:
                    self.conn = self._connect(scheme, parts.hostname, port, deadline)
                    self.key = key
                try:
                    return self._exchange(target, parts, body, deadline)
                except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                    self.close()
                    # A kept-alive connection the server has since closed: Go notices the idle close
                    # and dials again; do the same once.
                    if reused and attempt == 0:
                        continue
                    raise self._read_failure(exc, parts.hostname, port) from None
                except socket.timeout:
                    self.close()
                    raise HTTPFailure("context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                                       unreachable=True) from None
                except HTTPFailure:
                    self.close()
                    raise
                except (OSError, http.client.HTTPException) as exc:
                    self.close()
                    raise HTTPFailure(f"read tcp {parts.hostname}:{port}: {exc}", unreachable=True) from None
        raise AssertionError("unreachable")

    @staticmethod
    def _remaining(deadline: float | None, while_: str) -> float | None:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise HTTPFailure(f"context deadline exceeded (Client.Timeout exceeded {while_})", unreachable=True,
                               wrapped=while_ != "while reading body")
        return left

    def _connect(self, scheme: str, host: str, port: int, deadline: float | None) -> http.client.HTTPConnection:
        hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        timeout = self._remaining(deadline, "while awaiting headers")
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except socket.timeout:
            raise HTTPFailure(f"dial tcp {hostport}: i/o timeout (Client.Timeout exceeded while awaiting headers)",
                               unreachable=True) from None
        except socket.gaierror:
            raise HTTPFailure(f"dial tcp: lookup {host}: no such host", unreachable=True) from None
        except ConnectionRefusedError:
            raise HTTPFailure(f"dial tcp {hostport}: connect: connection refused", unreachable=True) from None
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
            raise HTTPFailure(f"dial tcp {hostport}: connect: {reason}", unreachable=True) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if scheme == "https":
            ctx = self.tls.context or ssl.create_default_context()
            if self.tls.context is None:
                ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            server_name = self.tls.server_name or host
            # The transport gives the handshake 10s (SetTransportDefaults); the client's deadline may be sooner.
            remaining = self._remaining(deadline, "while awaiting headers")
            handshake_first = remaining is None or remaining > TLS_HANDSHAKE_TIMEOUT
            try:
                sock.settimeout(TLS_HANDSHAKE_TIMEOUT if handshake_first else remaining)
                sock = ctx.wrap_socket(sock, server_hostname=server_name)
            except socket.timeout:
                sock.close()
                raise HTTPFailure("net/http: TLS handshake timeout" if handshake_first else
                                   "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                                   unreachable=True) from None
            except ssl.SSLCertVerificationError as exc:
                sock.close()
                raise HTTPFailure(_x509_message(exc, server_name), unreachable=False) from None
            except (ssl.SSLError, OSError) as exc:
                sock.close()
                raise HTTPFailure(f"remote error: tls: {getattr(exc, 'reason', None) or exc}",
                                   unreachable=False) from None
        conn = http.client.HTTPConnection(host, port)
        conn.sock = sock
        return conn

    def _exchange(self, target: str, parts, body: bytes, deadline: float | None) -> tuple[int, bytes]:
        conn = self.conn
        conn.sock.settimeout(self._remaining(deadline, "while awaiting headers"))
        conn.putrequest("POST", target, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", parts.netloc.rsplit("@", 1)[-1])
        if parts.username is not None:  # net/http sends URL user info as basic auth
            token = base64.b64encode(f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode())
            conn.putheader("Authorization", "Basic " + token.decode())
        conn.putheader("User-Agent", USER_AGENT)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        chunks = []
        try:
            while True:
                conn.sock.settimeout(self._remaining(deadline, "while reading body"))
                chunk = response.read(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        except socket.timeout:
            raise HTTPFailure("context deadline exceeded (Client.Timeout exceeded while reading body)",
                               unreachable=True, wrapped=False) from None
        finally:
            response.close()
        if response.will_close:
            self.close()
        return response.status, b"".join(chunks)

    @staticmethod
    def _read_failure(exc: Exception, host: str, port: int) -> HTTPFailure:
        if isinstance(exc, http.client.RemoteDisconnected):
            return HTTPFailure("EOF", unreachable=True)
        return HTTPFailure(f"read tcp {host}:{port}: read: connection reset by peer", unreachable=True)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
            self.key = None


def _x509_message(exc: ssl.SSLCertVerificationError, server_name: str) -> str:
    code = getattr(exc, "verify_code", None)
    if code in (18, 19, 20, 21):  # self-signed / unknown issuer
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if code == 10:
        return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
    if code == 62:
        return f"tls: failed to verify certificate: x509: certificate is not valid for {server_name}"
    return f"tls: failed to verify certificate: x509: {getattr(exc, 'verify_message', None) or exc}"
