"""``sign`` and ``verify``: detached Ed25519 signatures of ASIF packages."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Annotated

import typer

from asif_convert import _jsonio as jsonio
from asif_convert import _signature as signature
from asif_convert._cli.common import OutPath, QuietOpt, err, guard, path_option, path_text
from asif_convert._errors import InvalidInput, Problem
from asif_convert._package import read_package

PackageArg = Annotated[str, typer.Argument(metavar="PACKAGE", parser=path_text, help="An ASIF package (.asif.zip).")]


def _read_key(path: Path) -> bytes:
    """A key file: a small regular file, never a device or a pipe."""
    try:
        # (non-blocking: opening a FIFO would wait for a writer before the check below could refuse it)
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > signature.MAX_KEY_FILE:
                raise InvalidInput([Problem(rule="key", path="", message="a key file is a regular file of at most "
                                            f"{signature.MAX_KEY_FILE:,} bytes")], str(path))
            return fh.read()
    except OSError as exc:
        raise InvalidInput([Problem(rule="io", path="", message=f"cannot read: {exc.strerror}")], str(path)) from None


def sign(package: PackageArg,
         key: Annotated[Path, typer.Option("--key", metavar="KEY", parser=path_option,
                                           help="Ed25519 private key: raw 32 bytes, or PEM (PKCS #8, unencrypted).")],
         output: OutPath = "-", quiet: QuietOpt = False) -> None:
    """Write the detached signature object of a package (checked whole first)."""

    def run() -> None:
        jsonio.check_paths(package, output)
        jsonio.check_paths(str(key), output)  # the key is an input too: never written over
        private = signature.private_key(_read_key(key), str(key))
        data, name = jsonio.read_input(package)
        pkg = read_package(data, name)
        jsonio.write_output(output, signature.sign(pkg.manifest, private))
        if not quiet:
            err(f"{name}: signed its manifest (sha256 {hashlib.sha256(pkg.manifest).hexdigest()}) "
                f"with key {signature.key_id(private.public_key().public_bytes_raw())}")

    guard(run)


def verify(package: PackageArg,
           sig: Annotated[Path, typer.Option("--signature", metavar="SIG", parser=path_option,
                                             help="The detached signature object.")],
           public: Annotated[Path, typer.Option("--public-key", metavar="PUB", parser=path_option,
                                                help="The Ed25519 public key you trust: raw 32 bytes, or PEM.")],
           quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print nothing: the exit code says whether it "
                                                                     "verified (errors are still printed).")] = False
           ) -> None:
    """Check a package and its detached signature under a public key you trust; exit 1 if it fails."""

    def run() -> None:
        trusted = signature.public_key(_read_key(public), str(public))
        data, name = jsonio.read_input(package)
        pkg = read_package(data, name)
        sig_data, sig_name = jsonio.read_input(str(sig))
        report = signature.verify(pkg.manifest, sig_data, trusted, sig_name)
        if quiet:
            return
        typer.echo(f"{name}: verified: signed by key {report['key_id']} (manifest sha256 {report['manifest_sha256']})")
        typer.echo(f"this proves {report['proves']}.")

    guard(run)
