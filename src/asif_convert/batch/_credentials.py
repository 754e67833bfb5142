"""Storage credentials stay in the process that was given them.

A batch's storage options travel with every task (a Dask cluster's scheduler holds each task's
arguments, where dashboards and logs can show them). So the options are split: the credentials
among them (by the names fsspec's file systems give them, at any depth) are held here, in this
process only, and merged back into every file system this process opens; the rest travel. A
worker of a cluster takes its credentials from its own environment or configuration, the way
fsspec and the cloud SDKs read them (``AWS_*`` variables, ``~/.aws``, instance roles,
``FSSPEC_S3_*``, ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_*``). Local worker
processes are given them when they start (see ``_scheduler.local_executor``), never in a task.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# The option names of s3fs (and botocore's client arguments), gcsfs and adlfs that hold a secret
# or name an identity. Compared without case, at any depth (``client_kwargs`` holds botocore's).
NAMES = frozenset({
    "key", "secret", "token", "session_token", "password", "passwd", "username",
    "aws_access_key_id", "aws_secret_access_key", "aws_session_token",
    "access_key", "secret_key", "access_key_id", "secret_access_key", "api_key", "private_key",
    "account_key", "sas_token", "connection_string", "client_secret", "credential", "credentials",
})

_held: dict[str, Any] = {}


def split(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``options`` as (what may travel, the credentials), each keeping the nesting it had."""
    shared: dict[str, Any] = {}
    secret: dict[str, Any] = {}
    for name, value in options.items():
        if name.lower() in NAMES:
            secret[name] = value
        elif isinstance(value, dict):
            inner_shared, inner_secret = split(value)
            shared[name] = inner_shared
            if inner_secret:
                secret[name] = inner_secret
        else:
            shared[name] = value
    return shared, secret


def merge(options: dict[str, Any], secret: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``secret`` put back at its places."""
    out = dict(options)
    for name, value in secret.items():
        inner = out.get(name)
        out[name] = merge(inner, value) if isinstance(value, dict) and isinstance(inner, dict) else value
    return out


def held() -> dict[str, Any]:
    """The credentials this process holds (none in a cluster's worker)."""
    return _held


def hold(secret: dict[str, Any]) -> None:
    """Hold ``secret`` in this process (a local worker process, as it starts)."""
    _held.clear()
    _held.update(secret)


@contextmanager
def holding(secret: dict[str, Any]) -> Iterator[None]:
    """Hold ``secret`` for the length of one batch, then what was held before."""
    before = dict(_held)
    hold(secret)
    try:
        yield
    finally:
        hold(before)
