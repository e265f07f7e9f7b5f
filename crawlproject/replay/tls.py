"""The replay's side of an https tunnel: for each host a client opens a
``CONNECT`` tunnel to, a certificate that names it (so the client's hostname
check passes), self-signed, made on the first request to that host."""

from __future__ import annotations

import datetime
import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from OpenSSL import crypto
from twisted.internet.ssl import CertificateOptions


class SelfSignedCertificates:
    """One key for the replay, one certificate per host, made when first asked for."""

    def __init__(self) -> None:
        self._by_host: dict[str, CertificateOptions] = {}
        self._key: ec.EllipticCurvePrivateKey | None = None

    def for_host(self, host: str) -> CertificateOptions:
        if host not in self._by_host:
            if self._key is None:
                self._key = ec.generate_private_key(ec.SECP256R1())
            self._by_host[host] = _self_signed(host, self._key)
        return self._by_host[host]


def _self_signed(host: str, key: ec.EllipticCurvePrivateKey) -> CertificateOptions:
    try:
        names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        names = [x509.DNSName(host)]
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64] or "replay")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertificateOptions(
        privateKey=crypto.PKey.from_cryptography_key(key), certificate=crypto.X509.from_cryptography(certificate)
    )
