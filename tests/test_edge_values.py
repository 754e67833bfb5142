"""Values one schema allows and the other forbids: each is mapped to a valid value with a loss,
or kept verbatim where it stands (docs/losses.md, "Where the two schemas disagree"). Every case
converts with exit 0, gives a valid output and comes back exactly."""

from __future__ import annotations

import json

import pytest

from asif_convert import InvalidInput, Limits, convert
from asif_convert import _jsonio as jsonio
from asif_convert._limits import nesting
from asif_convert._registry import get

from .conftest import CORPUS

_B64 = "aGVsbG8="


def export(content_json) -> dict:
    return {"format": "agent-continuity-export",
            "session": {"session_id": "s", "title": "", "status": "active", "active_branch_id": "b"},
            "messages": [{"message_id": "m1", "session_id": "s", "role": "user", "status": "complete",
                          "text_content": "", "sequence": 1, "content_json": content_json}],
            "events": [], "checkpoints": []}


def round_trip(doc: dict) -> dict:
    """The ASIF output of ``doc``: valid, and converting back to ``doc`` exactly."""
    result = convert(json.dumps(doc).encode(), to="asif")
    out = json.loads(result.output)
    assert [p for p in get("asif").validate(out) if p.severity == "error"] == []
    back = json.loads(convert(result.output, to="continuity").output)
    assert json.dumps(back, sort_keys=True) == json.dumps(doc, sort_keys=True)
    return out


@pytest.mark.parametrize("content_json", [
    [{"type": "image", "source": {"type": "base64", "media_type": "", "data": _B64}}],
    [{"type": "document", "source": {"type": "base64", "media_type": "", "data": _B64}}],
], ids=["anthropic-image", "anthropic-document"])
def test_an_empty_media_type_is_not_an_embedded_resource(content_json):
    """ASIF requires a media type of at least one character; an empty one leaves the block as written."""
    out = round_trip(export(content_json))
    assert all(r["media_type"] for r in out["resources"])
    assert not any(r["availability"] == "embedded" and r.get("data") == _B64 for r in out["resources"])


# -- ASIF values on their way to continuity ---------------------------------------------------

PLAIN_CHAT = CORPUS / "golden" / "02-plain-chat.asif.json"


@pytest.mark.parametrize(("key", "value"), [("sequence", 0), ("sequence", 1.5), ("sequence", [1]),
                                            ("status", "bogus"), ("status", "")])
def test_a_continuity_state_the_schema_forbids_travels_in_the_residual(key, value):
    """An event's agent-continuity/1 status or sequence the continuity schema forbids is foreign:
    the export is written without it, and the residual brings it back."""
    doc = json.loads(PLAIN_CHAT.read_bytes())
    doc["events"][0]["extensions"]["agent-continuity/1"][key] = value
    middle = convert(json.dumps(doc).encode(), to="continuity")
    assert get("continuity").validate(json.loads(middle.output)) == []
    back = json.loads(convert(middle.output, to="asif").output)
    assert json.dumps(back, sort_keys=True) == json.dumps(doc, sort_keys=True)


def test_an_artifact_whose_location_is_empty_stays_in_the_residual():
    """ASIF allows an empty original_location; a continuity artifact's path is never empty."""
    doc = json.loads((CORPUS / "golden" / "10-artifacts.asif.json").read_bytes())
    resource = next(r for r in doc["resources"] if r.get("purpose") == "artifact")
    resource["original_location"] = ""
    middle = convert(json.dumps(doc).encode(), to="continuity")
    export = json.loads(middle.output)
    assert get("continuity").validate(export) == []
    assert resource["id"] not in {a["artifact_id"] for a in export.get("artifacts", [])}
    back = json.loads(convert(middle.output, to="asif").output)
    assert json.dumps(back, sort_keys=True) == json.dumps(doc, sort_keys=True)


# -- an output read back with the limits it was written with -------------------------------------


def _nested(levels: int):
    value = 1
    for _ in range(levels):
        value = [value]
    return value


def _needed(exc: InvalidInput) -> int:
    message = exc.problems[0].message
    assert "so it could not be read back with the same limits" in message
    return int(message.split("; --max-depth ")[1].split(" ")[0])


def _refused_then_converted(data: bytes, to: str, back: str) -> None:
    """Refused under the default limits, naming the --max-depth it needs; with that limit it
    converts, reads back under the same limit, and comes back exactly."""
    with pytest.raises(InvalidInput) as refused:
        convert(data, to=to)
    limits = Limits(max_depth=_needed(refused.value))
    out = convert(data, to=to, limits=limits)
    assert nesting(json.loads(out.output)) == limits.max_depth  # exactly the limit it named
    again = convert(out.output, to=back, limits=limits)
    assert json.dumps(json.loads(again.output), sort_keys=True) == json.dumps(json.loads(data), sort_keys=True)


def test_an_export_near_the_depth_limit_is_refused_with_the_limit_it_needs():
    doc = export(_nested(253))  # 256 in all: within the default limit, 259 as ASIF
    assert nesting(doc) == 256
    _refused_then_converted(json.dumps(doc).encode(), "asif", "continuity")


def test_a_session_near_the_depth_limit_is_refused_with_the_limit_it_needs():
    doc = json.loads((CORPUS / "asif" / "tool-call-completed.session.json").read_bytes())
    doc["events"][0]["x_deep"] = _nested(250)  # 253 in all; the residual holds it deeper
    assert nesting(doc) == 253
    _refused_then_converted(json.dumps(doc).encode(), "continuity", "asif")


def test_a_streamed_output_names_the_depth_of_its_deepest_item():
    """A slice too deep is refused with the nesting of the whole output, later slices included."""
    encoding = jsonio.StreamedEncoding({"events": []}, "events", iter([_nested(5), _nested(8), 1]), compact=True,
                                       limits=Limits(max_depth=4), source="t", slice_size=1)
    with pytest.raises(InvalidInput) as refused:
        b"".join(encoding)
    assert _needed(refused.value) == 10  # the document (1), its list (2), the second item's 8
