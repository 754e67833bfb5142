"""Detached Ed25519 signatures of packages: the reference's example package and its published
signature verify here, our signature of it is the published one byte for byte, and any changed
byte fails verification."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from asif_convert import _signature as signature
from asif_convert._cli.app import app
from asif_convert._errors import InvalidInput
from asif_convert._package import encode_manifest, read_package, write_package
from asif_convert._pipeline import validate

from . import reference_example as example

runner = CliRunner()
TEST_KEY = Ed25519PrivateKey.from_private_bytes(example.TEST_PRIVATE_KEY)
TEST_PUBLIC = TEST_KEY.public_key().public_bytes_raw()


def _example_package() -> bytes:
    return write_package(example.SESSION.read_bytes(), example.files())


def test_the_reference_example_package_is_rebuilt_read_and_its_published_signature_verified():
    pkg = read_package(_example_package(), "package-example.asif.zip")
    assert hashlib.sha256(pkg.manifest).hexdigest() == json.loads(example.PUBLISHED_SIGNATURE)["manifest_sha256"]
    report = signature.verify(pkg.manifest, example.PUBLISHED_SIGNATURE, TEST_PUBLIC)
    assert report["status"] == "verified"
    assert report["key_id"] == "sha256:56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c"
    assert [e for e in validate(pkg.document) if e.severity == "error"] == []


def test_our_signature_of_the_example_is_the_published_one_byte_for_byte():
    manifest = read_package(_example_package()).manifest
    assert signature.sign(manifest, TEST_KEY) == example.PUBLISHED_SIGNATURE  # Ed25519 is deterministic


def test_the_later_published_manifest_and_signature_verify_and_sign_alike():
    assert signature.verify(example.LATER_MANIFEST, example.LATER_SIGNATURE, TEST_PUBLIC)["status"] == "verified"
    assert signature.sign(example.LATER_MANIFEST, TEST_KEY) == example.LATER_SIGNATURE
    records = [(r["path"], r["bytes"], r["sha256"]) for r in json.loads(example.LATER_MANIFEST)["files"]]
    assert encode_manifest(records) == example.LATER_MANIFEST  # our manifest form is the reference's


def test_the_signed_message_is_the_domain_a_nul_and_the_binary_manifest_digest():
    manifest = b'{"files":[]}\n'
    assert signature.signed_message(manifest) == b"ASIF-PACKAGE-MANIFEST-v1\x00" + hashlib.sha256(manifest).digest()
    raw = base64.b64decode(json.loads(signature.sign(manifest, TEST_KEY))["signature"])
    TEST_KEY.public_key().verify(raw, signature.signed_message(manifest))


def test_any_changed_byte_of_the_manifest_or_the_signature_fails():
    manifest = read_package(_example_package()).manifest
    sig = signature.sign(manifest, TEST_KEY)
    raw = base64.b64decode(json.loads(sig)["signature"])
    for i in range(len(manifest)):
        changed = manifest[:i] + bytes([manifest[i] ^ 1]) + manifest[i + 1:]
        with pytest.raises(InvalidInput, match="the package is not the one signed"):
            signature.verify(changed, sig, TEST_PUBLIC)
    for i in range(len(raw)):
        forged = dict(json.loads(sig), signature=base64.b64encode(raw[:i] + bytes([raw[i] ^ 1]) + raw[i + 1:]).decode())
        with pytest.raises(InvalidInput, match="does not verify"):
            signature.verify(manifest, json.dumps(forged).encode(), TEST_PUBLIC)


def test_another_key_an_unknown_version_or_a_bad_encoding_is_refused_with_its_path():
    manifest = read_package(_example_package()).manifest
    sig = json.loads(signature.sign(manifest, TEST_KEY))
    other = Ed25519PrivateKey.from_private_bytes(bytes(32)).public_key().public_bytes_raw()
    cases = [
        (other, {}, "/key_id: signed with key sha256:5647"),
        (TEST_PUBLIC, {"signature_version": "0.2"}, "/signature_version: must be '0.1'"),
        (TEST_PUBLIC, {"algorithm": "RSA"}, "/algorithm: must be 'Ed25519'"),
        (TEST_PUBLIC, {"signature": "not base64!"}, "/signature: is not base64"),
        (TEST_PUBLIC, {"signature": "AAAA"}, "/signature: decodes to 3 bytes"),
        (TEST_PUBLIC, {"public_key": "embedded keys are never trusted"}, "/public_key: is not a field"),
    ]
    for trusted, change, expected in cases:
        with pytest.raises(InvalidInput) as caught:
            signature.verify(manifest, json.dumps({**sig, **change}).encode(), trusted)
        assert caught.value.problems[0].render().startswith(expected), caught.value.problems[0].render()


def test_keys_are_read_raw_or_pem_and_anything_else_is_refused():
    pem = TEST_KEY.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    pub_pem = TEST_KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo)
    assert signature.private_key(pem).private_bytes_raw() == example.TEST_PRIVATE_KEY
    assert signature.private_key(example.TEST_PRIVATE_KEY).private_bytes_raw() == example.TEST_PRIVATE_KEY
    assert signature.public_key(pub_pem) == TEST_PUBLIC == signature.public_key(TEST_PUBLIC)
    with pytest.raises(InvalidInput, match="not an Ed25519 private key"):
        signature.private_key(b"x" * 31)
    with pytest.raises(InvalidInput, match="not a readable PEM public key"):
        signature.public_key(pem)  # a private key where the public one belongs
    with pytest.raises(InvalidInput, match="not an Ed25519 public key"):
        signature.public_key(b"x" * 33)


def test_sign_and_verify_on_the_command_line(tmp_path):
    pkg, key, pub, sig = (tmp_path / n for n in ("p.asif.zip", "test.key", "test.pub", "p.sig.json"))
    pkg.write_bytes(_example_package())
    key.write_bytes(example.TEST_PRIVATE_KEY)
    pub.write_bytes(TEST_PUBLIC)
    res = runner.invoke(app, ["sign", str(pkg), "--key", str(key), "-o", str(sig)])
    assert res.exit_code == 0, res.output
    assert sig.read_bytes() == example.PUBLISHED_SIGNATURE
    res = runner.invoke(app, ["verify", str(pkg), "--signature", str(sig), "--public-key", str(pub)])
    assert res.exit_code == 0, res.output
    assert "verified: signed by key sha256:56475aa7" in res.stdout
    assert "says nothing about whether the session is complete" in res.stdout
    data = bytearray(pkg.read_bytes())
    at = data.find(b"Synthetic meeting notes")  # a byte of a packaged file: its digest no longer matches
    data[at] ^= 0x20
    pkg.write_bytes(bytes(data))
    res = runner.invoke(app, ["verify", str(pkg), "--signature", str(sig), "--public-key", str(pub)])
    assert res.exit_code == 1
    assert "verified" not in res.stdout and "[package]" in res.stderr


def test_sign_never_writes_over_its_key(tmp_path):
    """The key is an input like the package: an output naming it (or a link to it) is refused
    before anything is read, and the private key stays as it was."""
    pkg, key = tmp_path / "p.asif.zip", tmp_path / "test.key"
    pkg.write_bytes(_example_package())
    key.write_bytes(example.TEST_PRIVATE_KEY)
    (tmp_path / "link.key").symlink_to(key)
    for output in (key, tmp_path / "link.key"):
        res = runner.invoke(app, ["sign", str(pkg), "--key", str(key), "-o", str(output)])
        assert res.exit_code == 2 and "never writes over its input" in res.stderr, res.output
    assert key.read_bytes() == example.TEST_PRIVATE_KEY


def test_a_key_that_is_a_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    """(Opening a FIFO waits for a writer: the command hung before the check could refuse it.
    In a process of its own, so that a hang fails the test instead of stopping the suite.)"""
    pkg, fifo = tmp_path / "p.asif.zip", tmp_path / "k.fifo"
    pkg.write_bytes(_example_package())
    os.mkfifo(fifo)
    run = ("import sys; from asif_convert._cli.app import app; app(sys.argv[1:], prog_name='asif-convert')",)
    for args in (["sign", str(pkg), "--key", str(fifo)],
                 ["verify", str(pkg), "--signature", str(fifo), "--public-key", str(fifo)]):
        proc = subprocess.run([sys.executable, "-c", *run, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1 and "a key file is a regular file" in proc.stderr, proc.stderr


def test_a_changed_session_byte_with_a_consistent_new_manifest_fails_the_signature(tmp_path):
    session = example.SESSION.read_bytes().replace(b"Friday", b"Monday")
    pkg, sig, pub = tmp_path / "p.asif.zip", tmp_path / "p.sig", tmp_path / "k.pub"
    pkg.write_bytes(write_package(session, example.files()))  # a well-formed package, re-inventoried
    sig.write_bytes(example.PUBLISHED_SIGNATURE)
    pub.write_bytes(TEST_PUBLIC)
    res = runner.invoke(app, ["verify", str(pkg), "--signature", str(sig), "--public-key", str(pub)])
    assert res.exit_code == 1
    assert "/manifest_sha256: the signature is for manifest 9e710efd" in res.stderr


def test_without_cryptography_the_commands_say_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(signature, "Ed25519PrivateKey", None)
    key = tmp_path / "k"
    key.write_bytes(example.TEST_PRIVATE_KEY)
    res = runner.invoke(app, ["sign", str(tmp_path / "p.asif.zip"), "--key", str(key)])
    assert res.exit_code == 2
    assert "need the 'cryptography' package: pip install 'asif-convert[sign]'" in res.stderr
