"""``request``: a captured session as the request body of one provider's API (never sent)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from asif_convert import _jsonio as jsonio
from asif_convert._cli.common import DEFAULT_LIMITS as LIM
from asif_convert._cli.common import (
    FailOnOpt,
    InPath,
    LossPolicy,
    MaxBytesOpt,
    MaxDepthOpt,
    MaxStringOpt,
    OnLossOpt,
    OutPath,
    QuietOpt,
    ReportOpt,
    StrictOpt,
    TrustedInputOpt,
    build_limits,
    build_options,
    err,
    guard,
    input_name,
    point_of_no_return,
    usage_error,
    warn_input_problems,
)
from asif_convert._request.api import PROVIDERS, RequestResult, request


class PendingMode(StrEnum):
    refuse = "refuse"
    drop = "drop"
    as_error = "as-error"


ForOpt = Annotated[str, typer.Option("--for", metavar="PROVIDER",
                                     help=f"The API to continue on: {', '.join(PROVIDERS)}.")]
ContextOpt = Annotated[str | None, typer.Option("--context", metavar="ID",
                                                help="Continue from this recorded context's inputs.")]
BranchOpt = Annotated[str | None, typer.Option("--branch", metavar="ID",
                                               help="Continue this branch's history (default: the active branch).")]
PendingOpt = Annotated[PendingMode, typer.Option(
    "--pending", help="A tool call with no recorded result: refuse the request (refuse, the default), leave "
                      "the call out (drop) or answer it with an error result (as-error).")]


def request_command(input_path: InPath, provider: ForOpt, output: OutPath = "-", context: ContextOpt = None,
                    branch: BranchOpt = None, pending: PendingOpt = PendingMode.refuse, report: ReportOpt = None,
                    strict: StrictOpt = False, on_loss: OnLossOpt = LossPolicy.warn, fail_on: FailOnOpt = None,
                    max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
                    max_string: MaxStringOpt = LIM.max_string, trusted_input: TrustedInputOpt = False,
                    quiet: QuietOpt = False) -> None:
    """Write the request that continues a captured session on a provider's API (the create call's
    keyword arguments, without model and sampling settings); nothing is sent."""
    if provider not in PROVIDERS:
        usage_error(f"unknown provider {provider!r} for --for; known providers: {', '.join(PROVIDERS)}")
    if context is not None and branch is not None:
        usage_error("--context and --branch both choose what to continue from: give one")
    opts = build_options(strict=strict, no_validate=False, on_loss=on_loss, fail_on=fail_on)
    limits = build_limits(max_bytes, max_depth, max_string, trusted_input)

    def run() -> None:
        jsonio.check_paths(input_path, output, report)
        data: bytes | Path = Path(input_path) if input_path != "-" else jsonio.read_input(input_path, limits)[0]
        name = input_name(input_path)
        result = request(data, provider=provider, context=context, branch=branch,
                         pending=pending.value, options=opts, name=name,
                         limits=limits)
        body = jsonio.encode(result.body)
        pending_out = jsonio.PendingOutput(output) if output != "-" else None
        pending_report = jsonio.PendingOutput(report) if report is not None and report != "-" else None
        try:
            if pending_out is not None:
                pending_out.write(body)
            if pending_report is not None:
                pending_report.write(jsonio.encode(_report(result, name, provider)))
            for target in (pending_out, pending_report):
                if target is not None:
                    target.commit()
            point_of_no_return()
            if pending_out is None:
                jsonio.write_output("-", body)
            if report == "-":
                jsonio.write_output("-", jsonio.encode(_report(result, name, provider)))
        finally:
            for target in (pending_out, pending_report):
                if target is not None:
                    target.discard()
        if quiet:
            return
        if opts.on_loss != "ignore":
            counts = ", ".join(f"{k} {v}" for k, v in sorted(result.loss_counts().items()))
            err(f"{name} -> {'stdout' if output == '-' else output} ({provider} request): "
                f"{len(result.losses)} losses" + (f" ({counts})" if counts else ""))
        warn_input_problems(result.warnings)

    guard(run)


def _report(result: RequestResult, name: str, provider: str) -> dict[str, Any]:
    return {"source": Path(name).name, "provider": provider,
            "loss_counts": dict(sorted(result.loss_counts().items())),
            "losses": msgspec.to_builtins(result.losses)}
