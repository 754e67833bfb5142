"""Detached Ed25519 signatures of ASIF packages (package transport 0.1).

The signed message is ``UTF8("ASIF-PACKAGE-MANIFEST-v1") || 0x00 || SHA256(manifest bytes)``:
the manifest inventories every other member by size and SHA-256, so a signature covers every
byte the package carries. A valid signature proves that these bytes were signed by the holder
of the key the caller trusts; nothing about whether the session is complete or true.

The signature object never carries a key: the verifier names the public key it trusts, and the
object's ``key_id`` must be that key's. Signing needs the optional ``cryptography`` package.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any

from asif_convert import _jsonio as jsonio
from asif_convert._errors import InvalidInput, Problem, UsageError, pointer

try:  # an optional extra: only signing and verifying need it
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
except ImportError:  # the commands then say what to install (tested by setting these to None)
    Ed25519PrivateKey = Ed25519PublicKey = None  # type: ignore[assignment,misc]

DOMAIN = b"ASIF-PACKAGE-MANIFEST-v1\x00"
SIGNATURE_VERSION = "0.1"
ALGORITHM = "Ed25519"
FIELDS = ("algorithm", "key_id", "manifest_sha256", "signature", "signature_version")
MAX_KEY_FILE = 64 * 1024
PROVES = ("these exact package bytes (the manifest and every file it inventories) were signed with the "
          "private key of the public key you trusted; it says nothing about whether the session is "
          "complete, true or safe to continue")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def available() -> bool:
    return Ed25519PrivateKey is not None


def _require() -> None:
    if not available():
        raise UsageError("signing and verifying packages need the 'cryptography' package: "
                         "pip install 'asif-convert[sign]'")


def signed_message(manifest: bytes) -> bytes:
    return DOMAIN + hashlib.sha256(manifest).digest()


def key_id(public_raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(public_raw).hexdigest()


def _key_problem(name: str, message: str) -> InvalidInput:
    return InvalidInput([Problem(rule="key", path="", message=message)], name)


def private_key(data: bytes, name: str = "<key>") -> Ed25519PrivateKey:
    """An Ed25519 private key from its raw 32 bytes or a PEM ``PRIVATE KEY`` (PKCS #8, unencrypted)."""
    _require()
    if len(data) == 32:
        return Ed25519PrivateKey.from_private_bytes(data)
    if b"-----BEGIN" in data[:100]:
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise _key_problem(name, f"not a readable unencrypted PEM private key ({exc})") from None
        if isinstance(key, Ed25519PrivateKey):
            return key
        raise _key_problem(name, f"a {type(key).__name__.lstrip('_')}, not an Ed25519 private key")
    raise _key_problem(name, f"{len(data)} bytes: not an Ed25519 private key (raw 32 bytes or PEM PRIVATE KEY)")


def public_key(data: bytes, name: str = "<key>") -> bytes:
    """The raw 32 bytes of an Ed25519 public key given raw or as a PEM ``PUBLIC KEY``."""
    _require()
    if len(data) == 32:
        Ed25519PublicKey.from_public_bytes(data)
        return data
    if b"-----BEGIN" in data[:100]:
        try:
            key = serialization.load_pem_public_key(data)
        except (ValueError, TypeError) as exc:
            raise _key_problem(name, f"not a readable PEM public key ({exc})") from None
        if isinstance(key, Ed25519PublicKey):
            return key.public_bytes_raw()
        raise _key_problem(name, f"a {type(key).__name__.lstrip('_')}, not an Ed25519 public key")
    raise _key_problem(name, f"{len(data)} bytes: not an Ed25519 public key (raw 32 bytes or PEM PUBLIC KEY)")


def sign(manifest: bytes, key: Ed25519PrivateKey) -> bytes:
    """The signature object for a package's exact manifest bytes (compact JSON, sorted keys)."""
    _require()
    public = key.public_key().public_bytes_raw()
    signature = key.sign(signed_message(manifest))
    return jsonio.encode({
        "algorithm": ALGORITHM,
        "key_id": key_id(public),
        "manifest_sha256": hashlib.sha256(manifest).hexdigest(),
        "signature": base64.b64encode(signature).decode("ascii"),
        "signature_version": SIGNATURE_VERSION,
    }, compact=True)


def verify(manifest: bytes, signature_object: bytes, trusted: bytes, name: str = "<signature>") -> dict[str, Any]:
    """Check a signature object against a package's manifest and the raw public key the caller
    trusts; raises ``InvalidInput`` (rule ``signature``) saying which check failed."""
    _require()
    sig = jsonio.decode(signature_object, name)

    def refuse(message: str, *where: str) -> InvalidInput:
        return InvalidInput([Problem(rule="signature", path=pointer(*where), message=message)], name)

    if not isinstance(sig, dict):
        raise refuse("a signature object must be a JSON object")
    missing = [f for f in FIELDS if not isinstance(sig.get(f), str)]
    if missing:
        raise refuse(f"a signature object needs the string field {missing[0]!r}", missing[0])
    unknown = sorted(set(sig) - set(FIELDS))
    if unknown:
        raise refuse("is not a field of a signature object 0.1", unknown[0])
    if sig["signature_version"] != SIGNATURE_VERSION:
        raise refuse(f"must be {SIGNATURE_VERSION!r}, not {sig['signature_version']!r}", "signature_version")
    if sig["algorithm"] != ALGORITHM:
        raise refuse(f"must be {ALGORITHM!r}, not {sig['algorithm']!r}", "algorithm")
    digest = hashlib.sha256(manifest).hexdigest()
    if sig["manifest_sha256"] != digest:
        raise refuse(f"the signature is for manifest {sig['manifest_sha256'][:80]}, but this package's manifest "
                     f"is {digest}: the package is not the one signed", "manifest_sha256")
    trusted_id = key_id(trusted)
    if sig["key_id"] != trusted_id:
        raise refuse(f"signed with key {sig['key_id'][:80]}, not the trusted key {trusted_id}", "key_id")
    try:
        raw = base64.b64decode(sig["signature"], validate=True)
    except (binascii.Error, ValueError):
        raise refuse("is not base64", "signature") from None
    if len(raw) != 64:
        raise refuse(f"decodes to {len(raw)} bytes; an Ed25519 signature has 64", "signature")
    try:
        Ed25519PublicKey.from_public_bytes(trusted).verify(raw, signed_message(manifest))
    except InvalidSignature:
        raise refuse("does not verify: the manifest or the signature was changed, or another key signed it",
                     "signature") from None
    return {"status": "verified", "key_id": trusted_id, "manifest_sha256": digest, "proves": PROVES}
