"""TLS for extender calls (makeTransport -> restclient.TLSConfigFor)."""

from __future__ import annotations

import ssl
import tempfile
from dataclasses import dataclass

from kwhatif.errors import InputError
from kwhatif.extenders.config import ExtenderConfig, pem_data, go_bool, go_string


@dataclass(frozen=True)
class TLSSettings:
    context: ssl.SSLContext | None  # None: Go's default TLS config (system roots, verify)
    server_name: str


def tls_for(cfg: ExtenderConfig, path: str) -> TLSSettings:
    """The TLS settings kube-scheduler's transport would use for https:// URLs.

    enableHTTPS without a CA means "don't verify" (makeTransport sets Insecure); a CA together with
    insecure is refused, as client-go refuses it.
    """
    tls = cfg.tls or {}
    insecure = go_bool(tls.get("insecure"), f"{path}.tlsConfig.insecure")
    server_name = go_string(tls.get("serverName"), f"{path}.tlsConfig.serverName")
    ca_file = go_string(tls.get("caFile"), f"{path}.tlsConfig.caFile")
    cert_file = go_string(tls.get("certFile"), f"{path}.tlsConfig.certFile")
    key_file = go_string(tls.get("keyFile"), f"{path}.tlsConfig.keyFile")
    ca_data = pem_data(tls.get("caData"), f"{path}.tlsConfig.caData")
    cert_data = pem_data(tls.get("certData"), f"{path}.tlsConfig.certData")
    key_data = pem_data(tls.get("keyData"), f"{path}.tlsConfig.keyData")
    has_ca = bool(ca_data or ca_file)
    has_cert_auth = bool(cert_data or cert_file) and bool(key_data or key_file)
    if cfg.enable_https and not has_ca:
        insecure = True
    if not (has_ca or has_cert_auth or insecure or server_name):
        return TLSSettings(None, "")
    if has_ca and insecure:
        raise InputError(f"{path}: specifying a root certificates file with the insecure flag is not allowed")

    # every file is read before any is parsed, as client-go's loadTLSFiles reads them
    ca_data = _read_pem(ca_data, ca_file, path)
    cert_data = _read_pem(cert_data, cert_file, path)
    key_data = _read_pem(key_data, key_file, path)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_roots(ctx, insecure, ca_data, path)
    if has_cert_auth:
        _load_client_pair(ctx, cert_data, key_data, path)
    return TLSSettings(ctx, server_name)


def _read_pem(data: bytes, file: str, path: str) -> bytes:
    """client-go's dataFromSliceOrFile: the inline data, else the file's bytes."""
    if data or not file:
        return data
    try:
        with open(file, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{path}: open {file}: {exc.strerror.lower() if exc.strerror else exc}") from None


def _load_roots(ctx: ssl.SSLContext, insecure: bool, ca_data: bytes, path: str) -> None:
    """What the server's certificate is verified against: nothing when insecure, the CA when given, else
    the system's roots (client-go's rootCertPool)."""
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca_data:
        try:
            ctx.load_verify_locations(cadata=ca_data.decode("latin-1"))
        except (ssl.SSLError, ValueError):
            raise InputError(f"{path}: unable to load root certificates: unable to parse bytes as PEM block") from None
    else:
        ctx.load_default_certs()


def _load_client_pair(ctx: ssl.SSLContext, cert_data: bytes, key_data: bytes, path: str) -> None:
    """tls.X509KeyPair: the client certificate and key. ssl only loads them from files, so the PEM data is
    staged in private temporary files."""
    with tempfile.NamedTemporaryFile() as cert_tmp, tempfile.NamedTemporaryFile() as key_tmp:
        cert_tmp.write(cert_data)
        key_tmp.write(key_data)
        cert_tmp.flush()
        key_tmp.flush()
        try:
            ctx.load_cert_chain(cert_tmp.name, key_tmp.name)
        except ssl.SSLError as exc:
            raise InputError(f"{path}: tls: failed to load client certificate/key pair: {exc.reason or exc}") from None
