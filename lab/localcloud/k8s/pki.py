"""The local cluster's certificates and keys, generated with ``cryptography`` (openstacksdk's dependency), per cluster.

Two CAs, as kubeadm keeps them: the cluster CA (API servers' serving certificates, client certificates, the admin's)
and the etcd CA (etcd's serving and peer certificates, the API servers' etcd client certificate), so that no
Kubernetes client certificate opens etcd. ECDSA P-256 keys throughout (fast to make, accepted by every component);
the service-account token signing key beside them. Files are written 0600 in a 0700 directory and reused when present
(a restart keeps the cluster's identity); nothing here is ever committed: the directory is under the cluster's state.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_DAYS = 365
SERVICE_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
"""The in-cluster names of the API (the ``kubernetes`` Service): in every API server's certificate, as kubeadm
puts them."""
ADMIN_GROUP = "system:masters"
"""The group the authorizer grants everything without any RBAC object (what kubeadm's first admin certificate had)."""


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path

    def pem(self) -> tuple[str, str]:
        return self.cert.read_text(), self.key.read_text()


def subject_alternative_names(names: Iterable[str]) -> x509.SubjectAlternativeName:
    """DNS names and IP addresses (IPv4 or IPv6) in one extension, each where it belongs; duplicates dropped."""
    entries: list[x509.GeneralName] = []
    for name in dict.fromkeys(names):
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


def write_private(path: Path, data: bytes) -> None:
    """Write ``path`` readable by its owner only, atomically."""
    tmp = path.with_name(path.name + ".tmp")
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
        out.write(data)
    tmp.replace(path)


def _new_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = ec.generate_private_key(ec.SECP256R1())
    write_private(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))
    return key


def _load_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey), f"{path}: not an EC key"
    return key


def _builder(common_name: str, organization: str | None, public_key, issuer: x509.Name) -> x509.CertificateBuilder:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(x509.Name(attributes)).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS)))


class Authority:
    """A CA in ``directory`` (``<name>.crt``/``<name>.key``), created on first use, that issues leaf certificates."""

    def __init__(self, directory: Path, name: str, common_name: str):
        self.directory = directory
        self.pair = KeyPair(directory / f"{name}.crt", directory / f"{name}.key")
        if self.pair.cert.exists() and self.pair.key.exists():
            self.key = _load_key(self.pair.key)
            self.cert = x509.load_pem_x509_certificate(self.pair.cert.read_bytes())
            return
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o700)
        self.key = _new_key(self.pair.key)
        name_ = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        self.cert = (_builder(common_name, None, self.key.public_key(), name_)
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                  content_commitment=False, key_encipherment=False,
                                                  data_encipherment=False, key_agreement=False, encipher_only=False,
                                                  decipher_only=False), critical=True)
                     .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
                     .sign(self.key, hashes.SHA256()))
        write_private(self.pair.cert, self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, name: str, common_name: str, *, server: bool = False, client: bool = False,
              organization: str | None = None, sans: Iterable[str] = ()) -> KeyPair:
        """``<name>.crt``/``<name>.key`` signed by this CA, for serving (``server``, with ``sans``) and/or client
        authentication; reused when both files exist and the certificate has the same SANs."""
        pair = KeyPair(self.directory / f"{name}.crt", self.directory / f"{name}.key")
        wanted = subject_alternative_names(sans) if sans else None
        if pair.cert.exists() and pair.key.exists() and _sans(pair.cert) == wanted:
            return pair
        key = _new_key(pair.key)
        usages = [*([ExtendedKeyUsageOID.SERVER_AUTH] if server else []),
                  *([ExtendedKeyUsageOID.CLIENT_AUTH] if client else [])]
        builder = (_builder(common_name, organization, key.public_key(), self.cert.subject)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=False,
                                                crl_sign=False, content_commitment=False, data_encipherment=False,
                                                key_agreement=False, encipher_only=False, decipher_only=False),
                                  critical=True)
                   .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                                  critical=False))
        if wanted is not None:
            builder = builder.add_extension(wanted, critical=False)
        write_private(pair.cert, builder.sign(self.key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))
        return pair


def _sans(cert_path: Path) -> x509.SubjectAlternativeName | None:
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    try:
        return cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def service_account_keys(directory: Path) -> KeyPair:
    """The service-account token signing key (``sa.key``) and its public key (``sa.pub``), made once."""
    pair = KeyPair(directory / "sa.pub", directory / "sa.key")
    if not (pair.cert.exists() and pair.key.exists()):
        key = _new_key(pair.key)
        write_private(pair.cert, key.public_key().public_bytes(serialization.Encoding.PEM,
                                                        serialization.PublicFormat.SubjectPublicKeyInfo))
    return pair
