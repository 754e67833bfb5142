"""``asif-convert view``: self-contained HTML pages of a session, of two documents side by side and
of a batch manifest. The pages are parsed here (escaping, links, CSP, no external assets) and
opened in a real headless Chromium (console, network, injected markup, paging, screenshots)."""

from __future__ import annotations

import base64
import copy
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
import zlib
from html.parser import HTMLParser
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from asif_convert import batch
from asif_convert._cli.app import app
from asif_convert._errors import ConversionError, InvalidInput
from asif_convert._limits import Limits
from asif_convert._pipeline import convert
from asif_convert._view import diff_page, session_page, write_report
from asif_convert._view._html import PAGE_SIZE
from asif_convert._view._report import report_page

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES, GOLDEN, ROOT
from .strategies import asif_sessions, continuity_exports

ALL_INPUTS = CONTINUITY_FILES + ASIF_EXAMPLES + sorted(GOLDEN.glob("*.json"))
PAYLOAD = '</div></pre><script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">"\'&amp;'
runner = CliRunner()


# --------------------------------------------------------------------------------------------
# Reading a page


class Page(HTMLParser):
    """What a page is made of: element ids, links, scripts, attributes, and its text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.srcs: list[str] = []
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.metas: list[dict[str, str | None]] = []
        self.text_parts: list[str] = []
        self._in: str | None = None
        self.feed(html)
        self.close()
        self.text = "".join(self.text_parts)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            self.attrs.append((tag, name, value))
            if name == "id":
                self.ids.append(value)
            elif name == "href":
                self.hrefs.append(value)
            elif name == "src":
                self.srcs.append(value)
        if tag == "meta":
            self.metas.append(dict(attrs))
        if tag in ("script", "style"):
            self._in = tag

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)
        else:
            self.text_parts.append(data)

    def csp(self) -> str:
        (meta,) = [m for m in self.metas if (m.get("http-equiv") or "").lower() == "content-security-policy"]
        return meta["content"] or ""


def texts_of(doc: dict) -> list[str]:
    """Every text part of every event, and the session title: what a reader must find on the page."""
    out = [doc["session"]["title"]] if doc["session"].get("title") else []
    for ev in doc["events"]:
        data = ev.get("data") or {}
        for part in [*(data.get("parts") or ()), *(data.get("prompt") or ()), *(data.get("answer") or ())]:
            if part.get("kind") == "text":
                out.append(part["text"])
    return out


def asif_form(path: Path) -> dict:
    doc = json.loads(path.read_bytes())
    if "asif_version" in doc:
        return doc
    return convert(path.read_bytes(), to="asif").document


def check_self_contained(page: Page) -> None:
    """The page's frame: one script and one style, both allowed by hash; nothing from elsewhere."""
    csp = page.csp()
    assert "default-src 'none'" in csp and "connect-src" not in csp
    assert len(page.scripts) == 1 and len(page.styles) == 1
    for body, directive in ((page.scripts[0], "script-src"), (page.styles[0], "style-src")):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert re.search(rf"{directive} 'sha256-{re.escape(digest)}'", csp), directive
    assert not [a for a in page.attrs if a[1].startswith("on")], "inline event handlers"
    assert not [a for a in page.attrs if a[1] == "style"], "inline style attributes (blocked by the CSP)"
    assert all(h.startswith("#") or not re.match(r"^[a-z][a-z0-9+.-]*:|^//", h) for h in page.hrefs), page.hrefs
    assert all(s.startswith("data:") for s in page.srcs), page.srcs
    assert not {"link", "iframe", "object", "embed", "form", "base"} & set(page.tags)


def check_links(page: Page) -> None:
    assert len(page.ids) == len(set(page.ids)), "duplicate element ids"
    targets = {h[1:] for h in page.hrefs if h.startswith("#")}
    assert targets <= set(page.ids), sorted(targets - set(page.ids))[:5]


# --------------------------------------------------------------------------------------------
# Session pages


@pytest.mark.parametrize("path", ALL_INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_document_and_public_example_renders(path):
    html = session_page(path.read_bytes(), path.name)
    page = Page(html)
    check_self_contained(page)
    check_links(page)
    doc = asif_form(path)
    for text in texts_of(doc):
        assert text in page.text
    for ev in doc["events"]:
        assert ev["id"] in page.text
    for loss in doc.get("losses", ()):
        assert loss["explanation"] in page.text
    for cov in doc.get("coverage", ()):
        assert cov["detail"] in page.text
    assert html == session_page(path.read_bytes(), path.name), "the same input gives the same page"


def _hostile_asif() -> dict:
    doc = json.loads((ROOT / "corpus/asif/tool-call-completed.session.json").read_bytes())
    doc["session"]["title"] = "title " + PAYLOAD
    for ev in doc["events"]:
        for part in (ev.get("data") or {}).get("parts") or ():
            if part.get("kind") == "text":
                part["text"] = "text " + PAYLOAD
    doc["losses"] = [{"id": "loss " + PAYLOAD, "stage": "capture", "kind": "dropped",
                      "explanation": "why " + PAYLOAD, "references": [{"type": "event", "id": doc["events"][0]["id"]}]}]
    doc["resources"][0]["name"] = "name " + PAYLOAD
    doc["resources"][0]["text"] = "resource " + PAYLOAD
    return doc


def test_document_strings_are_escaped_text():
    html = session_page(json.dumps(_hostile_asif()).encode(), 'file "<b>".json')
    page = Page(html)
    check_self_contained(page)
    assert "<script>window.__pwned" not in html and 'onerror="window' not in html
    assert page.text.count("text " + PAYLOAD) >= 2  # shown as written, several messages
    for where in ("title ", "why ", "loss ", "name ", "resource "):
        assert where + PAYLOAD in page.text, where
    assert 'file "<b>".json' in page.text


def test_losses_link_to_records_and_records_back_to_losses():
    page_html = session_page((ROOT / "corpus/continuity/13-id-collisions.json").read_bytes(), "13")
    doc = asif_form(ROOT / "corpus/continuity/13-id-collisions.json")
    page = Page(page_html)
    check_links(page)
    event_losses = [(i, loss) for i, loss in enumerate(doc["losses"])
                    if any(r["type"] == "event" for r in loss.get("references", ()))]
    assert event_losses
    index = {ev["id"]: n for n, ev in enumerate(doc["events"])}
    for i, loss in event_losses:
        row = re.search(rf'<tr id="l{i}">(.*?)</tr>', page_html, re.S).group(1)
        for ref in loss["references"]:
            if ref["type"] == "event":
                n = index[ref["id"]]
                assert f'href="#e{n}"' in row
                article = re.search(rf'<article [^>]*id="e{n}">(.*?)</article>', page_html, re.S).group(1)
                assert re.search(rf'href="#l\d+"[^>]*>⚠ {re.escape(loss["kind"])}', article)


def test_tool_calls_and_results_link_both_ways():
    html = session_page((ROOT / "corpus/continuity/03-anthropic-tools.json").read_bytes(), "03")
    doc = asif_form(ROOT / "corpus/continuity/03-anthropic-tools.json")
    anchor = {ev["id"]: f"e{n}" for n, ev in enumerate(doc["events"])}
    calls = {ev["data"]["call_id"]: ev["id"] for ev in doc["events"] if ev["kind"] == "tool_call"}
    results = [ev for ev in doc["events"] if ev["kind"] == "tool_result"]
    assert results
    for res in results:
        call, result = anchor[calls[res["data"]["call_id"]]], anchor[res["id"]]
        call_html = re.search(rf'id="{call}">(.*?)</article>', html, re.S).group(1)
        result_html = re.search(rf'id="{result}">(.*?)</article>', html, re.S).group(1)
        assert f'href="#{result}"' in call_html and f'href="#{call}"' in result_html


def test_reasoning_is_folded():
    html = session_page((ROOT / "corpus/continuity/03-anthropic-tools.json").read_bytes(), "03")
    assert re.search(r'<details class="reasoning"><summary>reasoning \(folded\)', html)
    assert '<details class="reasoning" open' not in html


def test_branch_tree_shows_forks_in_tree_order():
    html = session_page((ROOT / "corpus/continuity/05-forks.json").read_bytes(), "05")
    tree = re.search(r'<ul class="tree">(.*?)</ul>', html, re.S).group(1)
    items = re.findall(r'<li class="depth-(\d)"><a href="#(b\d+)-tl">([^<]+)</a>', tree)
    assert [(d, name) for d, _, name in items] == [("0", "br-05-main"), ("1", "br-05-alt-token-bucket"),
                                                   ("2", "br-05-alt-redis")]
    assert "forked from" in tree and "msg-05-main-3" in tree


def test_embedded_media_previews_only_valid_base64():
    doc = json.loads((ROOT / "corpus/asif/audio-and-transcript.session.json").read_bytes())
    html = session_page(json.dumps(doc).encode(), "audio")
    assert '<audio class="preview" controls preload="none" src="data:audio/wav;base64,' in html
    png = base64.b64encode(bytes.fromhex("89504e470d0a1a0a")).decode()
    doc["resources"][0].update(media_type="image/png", data=png)
    assert f'src="data:image/png;base64,{png}"' in session_page(json.dumps(doc).encode(), "png")
    doc["resources"][0]["data"] = png[:-2] + '"><script>x</script>'
    assert "data:image/png" not in session_page(json.dumps(doc).encode(), "bad")


def _long_export(n: int, payload_every: int = 0) -> bytes:
    doc = json.loads((ROOT / "corpus/continuity/02-plain-chat.json").read_bytes())
    first = doc["messages"][0]
    messages = []
    for i in range(n):
        text = f"message {i}: the quick brown fox jumps over the lazy dog"
        if payload_every and i % payload_every == 0:
            text += " " + PAYLOAD
        messages.append({**first, "message_id": f"m{i:05d}", "role": "user" if i % 2 == 0 else "assistant",
                         "text_content": text, "sequence": i + 1})
    doc["messages"] = messages
    return json.dumps(doc).encode()


def test_long_timelines_are_paged():
    n = PAGE_SIZE * 2 + 7
    html = session_page(_long_export(n), "long")
    page = Page(html)
    check_links(page)
    assert 'data-pages="3"' in html
    assert len(re.findall(r'<div class="page" data-page="\d+">', html)) == 3
    assert len(re.findall(r"<article ", html)) == n
    for i in (0, n // 2, n - 1):
        assert f"message {i}: " in page.text


def test_continuity_is_converted_in_memory_and_its_losses_shown():
    path = ROOT / "corpus/continuity/14-mixed-everything.json"
    html = session_page(path.read_bytes(), path.name)
    result = convert(path.read_bytes(), to="asif")
    assert "converted in memory from continuity" in html
    assert len(re.findall(r'<tr id="l\d+">', html)) == len(result.document["losses"]) > 0


def test_problems_of_a_readable_document_are_listed():
    doc = json.loads((ROOT / "corpus/asif/tool-call-completed.session.json").read_bytes())
    doc["branches"][0]["event_ids"].append("no-such-event")
    html = session_page(json.dumps(doc).encode(), "dangling")
    assert "the document has" in html and "problem" in html
    assert "event no-such-event is listed by this branch but not in the document" in Page(html).text


def test_a_schema_invalid_document_is_refused_with_its_path():
    doc = json.loads((ROOT / "corpus/asif/tool-call-completed.session.json").read_bytes())
    del doc["events"][0]["kind"]
    with pytest.raises(InvalidInput) as exc:
        session_page(json.dumps(doc).encode(), "broken.json")
    assert any(p.path.startswith("/events/0") for p in exc.value.problems)


@settings(max_examples=40)
@given(doc=st.one_of(continuity_exports(), continuity_exports(broken=True), asif_sessions()))
def test_any_document_gives_a_sound_page_or_a_clean_refusal(doc):
    data = json.dumps(doc).encode()
    try:
        html = session_page(data, "generated.json")
    except ConversionError:
        return
    page = Page(html)
    check_self_contained(page)
    check_links(page)
    shown = doc if "asif_version" in doc else convert(data, to="asif").document
    for text in texts_of(shown):
        assert text in page.text


# --------------------------------------------------------------------------------------------
# ASIF packages


def _png(width: int = 4, height: int = 3) -> bytes:
    """A real PNG (red pixels), made here so the test needs no binary fixture."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (len(body).to_bytes(4, "big") + kind + body
                + (zlib.crc32(kind + body) & 0xFFFFFFFF).to_bytes(4, "big"))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _package(members: dict[str, bytes] | None = None, *, inventory: list[dict] | None = None,
             compress: bool = False) -> bytes:
    """An ASIF package of the public image-and-document example, its files made here."""
    if members is None:
        doc = json.loads((ROOT / "corpus/asif/image-and-document.session.json").read_bytes())
        files = {"assets/color-grid.png": _png(), "assets/meeting-notes.pdf": b"%PDF-1.4 made for a test\n"}
        for res in doc["resources"]:
            if res.get("path") in files:
                content = files[res["path"]]
                res["bytes"], res["sha256"] = len(content), hashlib.sha256(content).hexdigest()
        members = {"session.json": json.dumps(doc).encode(), **files}
    if inventory is None:
        inventory = [{"path": k, "bytes": len(v), "sha256": hashlib.sha256(v).hexdigest()}
                     for k, v in sorted(members.items())]
    manifest = json.dumps({"package_version": "0.1", "session": "session.json", "files": inventory}).encode()
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", compression=method) as zf:
        for member, content in sorted({**members, "asif-package.json": manifest}.items()):
            zf.writestr(member, content)
    return out.getvalue()


def test_a_package_is_read_in_memory_and_its_image_previewed(tmp_path):
    data = _package()
    html = session_page(data, "example.asif.zip")
    page = Page(html)
    check_self_contained(page)
    check_links(page)
    assert "an ASIF package: session.json and 2 resource files" in page.text
    assert f'src="data:image/png;base64,{base64.b64encode(_png()).decode()}"' in html
    assert "in the package: assets/color-grid.png" in page.text
    assert "data:application/pdf" not in html  # listed, not inlined
    path = tmp_path / "example.asif.zip"
    path.write_bytes(data)
    res = runner.invoke(app, ["view", str(path), "-o", str(tmp_path / "p.html")])
    assert res.exit_code == 0 and (tmp_path / "p.html").read_text() == session_page(data, str(path))


def test_a_package_whose_files_differ_from_their_resources_is_refused():
    doc = json.loads((ROOT / "corpus/asif/image-and-document.session.json").read_bytes())
    members = {"session.json": json.dumps(doc).encode(), "assets/color-grid.png": _png(),
               "assets/meeting-notes.pdf": b"%PDF"}
    with pytest.raises(InvalidInput, match="/session.json/resources/0/bytes: declares"):
        session_page(_package(members), "p.zip")  # the example's digests name other bytes: not its package


@pytest.mark.parametrize("case", ["compressed", "climbing", "digest", "unlisted", "no-manifest", "size", "not-zip"])
def test_a_package_outside_the_format_is_refused(case):
    png = _png()
    session = (ROOT / "corpus/asif/image-and-document.session.json").read_bytes()
    if case == "compressed":
        data = _package(compress=True)
    elif case == "climbing":
        data = _package({"session.json": session, "../evil.png": png})
    elif case == "digest":
        data = _package({"session.json": session, "a.png": png},
                        inventory=[{"path": "session.json", "bytes": len(session),
                                    "sha256": hashlib.sha256(session).hexdigest()},
                                   {"path": "a.png", "bytes": len(png), "sha256": "0" * 64}])
    elif case == "unlisted":
        data = _package({"session.json": session, "a.png": png},
                        inventory=[{"path": "session.json", "bytes": len(session),
                                    "sha256": hashlib.sha256(session).hexdigest()}])
    elif case == "no-manifest":
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zf:
            zf.writestr("session.json", session)
        data = out.getvalue()
    elif case == "size":
        data = _package({"session.json": session, "a.png": png})
    else:
        data = b"PK\x03\x04 this is no zip"
    limits = Limits(max_bytes=len(session) + 10) if case == "size" else None
    with pytest.raises(InvalidInput) as exc:
        session_page(data, "bad.asif.zip", limits)
    assert exc.value.problems and exc.value.problems[0].rule == "package", exc.value.problems


# --------------------------------------------------------------------------------------------
# Side by side


def test_diff_of_a_conversion_and_its_golden_output_is_empty():
    a, b = ROOT / "corpus/continuity/05-forks.json", GOLDEN / "05-forks.asif.json"
    html = diff_page(a.read_bytes(), a.name, b.read_bytes(), b.name)
    page = Page(html)
    check_self_contained(page)
    check_links(page)
    assert "<h1>No differences</h1>" in html and "each is compared in its ASIF form" in html


def test_diff_highlights_changed_added_and_removed_events():
    path = ROOT / "corpus/asif/tool-call-completed.session.json"
    doc = json.loads(path.read_bytes())
    edited = copy.deepcopy(doc)
    edited["events"][0]["data"]["parts"][0]["text"] = "edited " + PAYLOAD
    removed = edited["events"].pop(1)
    html = diff_page(path.read_bytes(), "a.json", json.dumps(doc).encode(), "same.json")
    assert "<h1>No differences</h1>" in html
    for br in edited["branches"]:
        br["event_ids"] = [e for e in br["event_ids"] if e != removed["id"]]
        if br.get("head_event_id") == removed["id"]:
            br["head_event_id"] = br["event_ids"][-1]
    html = diff_page(path.read_bytes(), "a.json", json.dumps(edited).encode(), "b.json")
    page = Page(html)
    check_self_contained(page)
    check_links(page)
    assert "<script>window.__pwned" not in html and "edited " + PAYLOAD in page.text
    assert len(re.findall(r'<div class="drow changed">', html)) == 1
    assert len(re.findall(r'<div class="drow removed">', html)) == 1
    assert re.search(r'<td class="change-removed">removed</td>', html)


# --------------------------------------------------------------------------------------------
# Migration report


@pytest.fixture()
def migrated(tmp_path):
    """A small batch over part of the corpus, one invalid and one unreadable file among them."""
    src = tmp_path / "in"
    src.mkdir()
    for path in CONTINUITY_FILES[:6]:
        shutil.copy(path, src / path.name)
    (src / "bad.json").write_text('{"format": "agent-continuity-export"}')
    (src / "broken.json").write_text("{nope")
    out = tmp_path / "out"
    res = runner.invoke(app, ["batch", str(src), "-o", str(out), "--to", "asif"])
    assert (out / "manifest.jsonl").exists(), res.output
    return out


def test_report_counts_outcomes_losses_and_failures(migrated, tmp_path):
    records = batch.read_manifest(migrated / "manifest.jsonl")
    html = report_page(records, title="manifest.jsonl")
    page = Page(html)
    check_self_contained(page)
    check_links(page)
    ok = [r for r in records if r.status == "ok"]
    failed = [r for r in records if r.status == "invalid"]
    assert len(ok) == 6 and len(failed) == 2
    assert re.search(r"<b>6</b>ok", html) and re.search(r"<b>2</b>invalid", html)
    totals: dict[str, int] = {}
    for r in ok:
        for kind, n in r.losses.items():
            totals[kind] = totals.get(kind, 0) + n
    for kind, n in totals.items():
        assert re.search(rf">{kind}</text>\s*<rect [^>]*></rect>\s*<text [^>]*>{n:,} in", html), kind
    for r in failed:
        assert r.input in page.text and (r.problems[0]["message"] in page.text)
    assert html.count("<tr data-status=") == 8


def test_report_counts_a_file_once_with_its_last_line(migrated):
    records = batch.read_manifest(migrated / "manifest.jsonl")
    bad = next(r for r in records if r.status == "invalid")
    fixed = batch.FileResult(**{f: getattr(bad, f) for f in bad.__struct_fields__})
    fixed.status, fixed.error, fixed.problems = "ok", None, []
    html = report_page([*records, fixed], title="m")
    assert re.search(r"<b>7</b>ok", html) and re.search(r"<b>1</b>invalid", html)
    assert html.count("<tr data-status=") == 8


def test_report_with_pages_links_each_converted_file(migrated, tmp_path):
    report, pages = tmp_path / "site" / "report.html", tmp_path / "site" / "pages"
    report.parent.mkdir()
    res = runner.invoke(app, ["view", str(migrated / "manifest.jsonl"), "-o", str(report), "--pages", str(pages)])
    assert res.exit_code == 0, res.output
    assert "8 files, 2 failed; 6 pages" in res.output
    page = Page(report.read_text())
    check_self_contained(page)
    links = [h for h in page.hrefs if not h.startswith("#")]
    assert len(set(links)) == 6
    for href in links:
        target = (report.parent / href).resolve()
        assert target.is_relative_to(pages.resolve()) and target.exists()
        check_self_contained(Page(target.read_text()))


def test_report_pages_stay_inside_their_folders(migrated, tmp_path):
    manifest = migrated / "manifest.jsonl"
    records = batch.read_manifest(manifest)
    ok = [r for r in records if r.status == "ok"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.asif.json").write_bytes((GOLDEN / "01-minimal.asif.json").read_bytes())
    (migrated / "link").symlink_to(outside)
    ok[0].output = "../outside/x.asif.json"
    ok[1].output = str(outside / "x.asif.json")
    ok[2].output = "link/x.asif.json"
    manifest.write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in records))
    report, pages = tmp_path / "report.html", tmp_path / "pages"
    done = write_report(manifest, report, pages_dir=pages)
    assert done["pages"] == 3 and done["page_errors"] == 3
    assert sorted(p.name for p in outside.iterdir()) == ["x.asif.json"]
    html = report.read_text()
    assert html.count(">no page</span>") == 3
    assert "unsafe path" in html and "symlink" in html


def test_a_report_whose_pages_cannot_all_be_written_says_so_and_exits_1(migrated, tmp_path):
    pages = tmp_path / "pages"
    for rec in batch.read_manifest(migrated / "manifest.jsonl"):
        if rec.status == "ok":
            (pages / f"{rec.output}.html").mkdir(parents=True)  # in the way of every page
    report = tmp_path / "report.html"
    res = runner.invoke(app, ["view", str(migrated / "manifest.jsonl"), "-o", str(report), "--pages", str(pages)])
    assert res.exit_code == 1, res.output
    assert f"8 files, 2 failed; 0 pages in {pages}, 6 files without a page (see the report)" in res.output
    assert report.read_text().count(">no page</span>") == 6


def test_a_manifest_on_standard_input_gives_its_report(migrated, tmp_path):
    """`view - -o page.html` with a manifest piped in was "not valid JSON ... trailing characters"."""
    manifest = (migrated / "manifest.jsonl").read_bytes()
    report, pages = tmp_path / "report.html", tmp_path / "pages"
    res = runner.invoke(app, ["view", "-", "-o", str(report)], input=manifest)
    assert res.exit_code == 0, res.output
    assert "8 files, 2 failed" in res.stderr
    assert report.read_text() == report_page(batch.read_manifest(migrated / "manifest.jsonl"), title="<stdin>")
    res = runner.invoke(app, ["view", "-", "-o", str(report), "--pages", str(pages)], input=manifest)
    assert res.exit_code == 2 and "give --outdir OUTDIR" in res.stderr, res.output  # no folder to read from
    res = runner.invoke(app, ["view", "-", "-o", str(report), "--pages", str(pages), "--outdir", str(migrated)],
                        input=manifest)
    assert res.exit_code == 0 and "6 pages in" in res.stderr, res.output
    document = (GOLDEN / "01-minimal.asif.json").read_bytes()
    res = runner.invoke(app, ["view", "-", "-o", str(report), "--pages", str(pages)], input=document)
    assert res.exit_code == 2 and "go with a batch manifest" in res.stderr, res.output
    res = runner.invoke(app, ["view", "-", "-o", str(tmp_path / "doc.html")], input=document)
    assert res.exit_code == 0 and "<html" in (tmp_path / "doc.html").read_text()
    one_line = json.dumps(json.loads(document)).encode()  # a document on one line is no manifest
    res = runner.invoke(app, ["view", "-", "-o", str(tmp_path / "one.html")], input=one_line)
    assert res.exit_code == 0, res.output


def test_view_refuses_a_file_that_is_not_a_manifest(tmp_path):
    bogus = tmp_path / "m.jsonl"
    bogus.write_text('\n{"hello": 1}\n')
    res = runner.invoke(app, ["view", str(bogus), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 1 and "m.jsonl" in res.output and "line 2 is not a file record" in res.output
    assert not (tmp_path / "r.html").exists()
    res = runner.invoke(app, ["view", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 1 and "cannot read" in res.output


def test_a_transcript_is_read_as_a_session_as_convert_reads_it(tmp_path):
    """A *.jsonl file whose first line no format claims was taken for a batch manifest: a
    transcript `convert` reads failed, and a broken first line was told as "not a file record"."""
    user = {"type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hi"}}
    untyped = tmp_path / "untyped.jsonl"  # its first record has no type; the second is the client's
    untyped.write_text(json.dumps({"uuid": "u0", "message": {"content": "x"}}) + "\n" + json.dumps(user) + "\n")
    res = runner.invoke(app, ["view", str(untyped), "-o", str(tmp_path / "u.html")])
    assert res.exit_code == 0, res.output
    huge = tmp_path / "huge.jsonl"  # a first line beyond --max-string: the limit is the reason
    huge.write_text(json.dumps({**user, "message": {"role": "user", "content": "x" * (2 << 20)}}) + "\n")
    res = runner.invoke(app, ["view", str(huge), "-o", str(tmp_path / "h.html"), "--max-string", "1M"])
    assert res.exit_code == 1 and "--max-string" in res.output and "file record" not in res.output, res.output
    assert not (tmp_path / "h.html").exists()
    # a line nested deeper than a decoder recurses (second, first, on standard input): refused at
    # its line, no traceback (a process of its own: a test's deep stack would change the depth)
    nested = "[" * 5000 + "]" * 5000
    deep = tmp_path / "deep.jsonl"
    for content, source in ((json.dumps(user) + "\n" + nested + "\n", str(deep)),
                            (nested + "\n" + json.dumps(user) + "\n", str(deep)), (nested + "\n", "-")):
        deep.write_text(content)
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        run = subprocess.run([sys.executable, "-m", "asif_convert", "view", source, "-o", str(tmp_path / "d.html")],
                             input=content.encode(), capture_output=True, env=env)
        assert run.returncode == 1 and b"Traceback" not in run.stderr, run.stderr[-600:]
        assert b"nested more than" in run.stderr and not (tmp_path / "d.html").exists()


def test_two_files_of_json_lines_side_by_side(tmp_path):
    """It ended in an internal error (exit 3): the comparison expected one JSON object."""
    a, b = ROOT / "corpus/codex/hello.jsonl", ROOT / "corpus/codex/parallel.jsonl"
    res = runner.invoke(app, ["view", str(a), str(b), "-o", str(tmp_path / "d.html")])
    assert res.exit_code == 0, res.output
    assert "Both are codex documents" in (tmp_path / "d.html").read_text()


# --------------------------------------------------------------------------------------------
# Command line


def test_view_command_writes_pages_and_reports_errors(tmp_path):
    out = tmp_path / "page.html"
    res = runner.invoke(app, ["view", str(CONTINUITY_FILES[2]), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text() == session_page(CONTINUITY_FILES[2].read_bytes(), str(CONTINUITY_FILES[2]))
    res = runner.invoke(app, ["view", str(CONTINUITY_FILES[4]), str(GOLDEN / "05-forks.asif.json"), "-o", str(out)])
    assert res.exit_code == 0 and "No differences" in out.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    res = runner.invoke(app, ["view", str(bad), "-o", str(tmp_path / "none.html")])
    assert res.exit_code == 1 and "bad.json" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "none.html").exists()
    for args in (["a", "b", "c"], [str(bad), "--pages", str(tmp_path)], [str(bad), str(bad)]):
        res = runner.invoke(app, ["view", *args, "-o", str(tmp_path / "x.html")])
        assert res.exit_code in (1, 2) and "Traceback" not in res.output, args
    res = runner.invoke(app, ["view", str(bad), "-o", str(bad)])
    assert res.exit_code == 2 and bad.read_text() == "[1, 2"
    golden = GOLDEN / "01-minimal.asif.json"
    copy_of = tmp_path / "copy.json"
    copy_of.write_bytes(golden.read_bytes())
    res = runner.invoke(app, ["view", str(golden), str(copy_of), "-o", str(copy_of)])
    assert res.exit_code == 2 and copy_of.read_bytes() == golden.read_bytes()
    res = runner.invoke(app, ["view", str(golden), str(golden), "-o", str(out)])
    assert res.exit_code == 0 and "No differences" in out.read_text()
    res = runner.invoke(app, ["view", str(golden), "-o", "-"])
    assert res.exit_code == 0 and res.stdout.startswith("<!DOCTYPE html>")


def test_the_wheel_carries_the_templates(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path, ROOT],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("asif_convert-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {f"asif_convert/_view/templates/{p.name}"
                 for p in (ROOT / "src/asif_convert/_view/templates").iterdir()}
    assert templates and templates <= names


# --------------------------------------------------------------------------------------------
# In a real browser

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]


def _browser_path() -> str | None:
    named = os.environ.get("ASIF_CONVERT_CHROMIUM")
    if named:
        return named
    return next(filter(None, map(shutil.which, BROWSER_NAMES)), None)


BROWSER = _browser_path()
# Skipped only where no browser can be found, and never in CI (CI=true), which installs one.
needs_browser = pytest.mark.skipif(
    BROWSER is None and os.environ.get("CI") != "true",
    reason=f"no Chromium found (looked for {', '.join(BROWSER_NAMES)} on PATH and ASIF_CONVERT_CHROMIUM); "
           ".ci/run installs Debian's chromium")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if BROWSER is None:
        pytest.fail("CI=true but no Chromium was found: .ci/run should have installed Debian's chromium")

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=BROWSER, args=BROWSER_ARGS)
        yield instance
        instance.close()


class Opened:
    """A page opened from file://, with what it logged and every request it made."""

    def __init__(self, browser, path: Path, fragment: str = "") -> None:
        self.page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        started = time.perf_counter()
        self.page.goto(path.as_uri() + fragment, wait_until="load")
        self.seconds = time.perf_counter() - started
        self.url = path.as_uri()

    def check_clean(self) -> None:
        assert self.console == [], self.console
        assert [u for u in self.requests if u.split("#")[0] != self.url] == []

    def close(self) -> None:
        self.page.close()


def _write(tmp_path: Path, name: str, html: str) -> Path:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return path


BROWSER_INPUTS = [ROOT / "corpus/continuity/03-anthropic-tools.json", ROOT / "corpus/continuity/05-forks.json",
                  ROOT / "corpus/continuity/14-mixed-everything.json",
                  ROOT / "corpus/asif/image-and-document.session.json",
                  ROOT / "corpus/asif/continuation-action-specific.session.json"]


@needs_browser
@pytest.mark.parametrize("path", BROWSER_INPUTS, ids=lambda p: p.name)
def test_browser_shows_every_message_without_errors_or_requests(browser, tmp_path, path):
    html_path = _write(tmp_path, path.name + ".html", session_page(path.read_bytes(), path.name))
    opened = Opened(browser, html_path)
    try:
        opened.check_clean()
        dom = opened.page.evaluate("document.body.textContent")
        for text in texts_of(asif_form(path)):
            assert " ".join(text.split()) in " ".join(dom.split())
        assert opened.page.locator("article.ev").first.is_visible()
        opened.page.screenshot(path=tmp_path / f"{path.name}.png", full_page=True)
    finally:
        opened.close()


@needs_browser
def test_browser_draws_a_packaged_image(browser, tmp_path):
    html_path = _write(tmp_path, "package.html", session_page(_package(), "example.asif.zip"))
    opened = Opened(browser, html_path)
    try:
        opened.check_clean()
        image = opened.page.locator("img.preview").first
        image.scroll_into_view_if_needed()
        assert opened.page.evaluate("document.querySelector('img.preview').naturalWidth") == 4
        opened.page.screenshot(path=tmp_path / "package.png", full_page=True)
    finally:
        opened.close()


@needs_browser
def test_browser_injected_markup_stays_text(browser, tmp_path):
    html_path = _write(tmp_path, "hostile.html", session_page(json.dumps(_hostile_asif()).encode(), "hostile"))
    opened = Opened(browser, html_path)
    try:
        opened.check_clean()
        assert opened.page.evaluate("window.__pwned") is None
        assert opened.page.evaluate("document.querySelectorAll('script').length") == 1
        assert opened.page.evaluate("document.querySelectorAll('[onerror]').length") == 0
        first = opened.page.locator("article.ev .text").first
        assert first.is_visible() and first.inner_text() == "text " + PAYLOAD
        opened.page.screenshot(path=tmp_path / "hostile.png", full_page=True)
    finally:
        opened.close()


@needs_browser
def test_browser_ten_thousand_events_page_and_follow_links(browser, tmp_path, capsys):
    n = 10_000
    started = time.perf_counter()
    html = session_page(_long_export(n, payload_every=997), "ten-thousand.json")
    rendered = time.perf_counter() - started
    html_path = _write(tmp_path, "big.html", html)
    opened = Opened(browser, html_path)
    try:
        opened.check_clean()
        timing = opened.page.evaluate("""() => { const t = performance.getEntriesByType('navigation')[0];
            const fcp = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');
            return {load: t.loadEventEnd, dcl: t.domContentLoadedEventEnd, fcp: fcp ? fcp.startTime : null}; }""")
        assert opened.page.evaluate("window.__pwned") is None
        pages = -(-n // PAGE_SIZE)
        assert opened.page.locator(".pager span").first.inner_text() == f"page 1 of {pages}"
        assert opened.page.locator("#e0").is_visible() and not opened.page.locator(f"#e{PAGE_SIZE}").is_visible()
        opened.page.locator(".pager button", has_text="next").first.click()
        assert opened.page.locator(f"#e{PAGE_SIZE}").is_visible() and not opened.page.locator("#e0").is_visible()
        opened.page.evaluate("location.hash = '#e9999'")
        opened.page.wait_for_function("!document.getElementById('e9999').closest('.page').hidden")
        assert opened.page.locator("#e9999").is_visible()
        assert opened.page.evaluate("document.querySelectorAll('article.ev').length") == n
        opened.page.screenshot(path=tmp_path / "big.png")
        with capsys.disabled():  # a measured figure, reported in the run's output, never asserted
            print(f"\n10,000-event page: {len(html) / 1e6:.1f} MB, rendered in {rendered:.2f} s; browser: "
                  f"load event {timing['load'] / 1000:.2f} s, first paint {(timing['fcp'] or 0) / 1000:.2f} s, "
                  f"goto {opened.seconds:.2f} s")
    finally:
        opened.close()


@needs_browser
def test_browser_diff_and_report_pages(browser, tmp_path, migrated):
    a, b = ROOT / "corpus/continuity/05-forks.json", ROOT / "corpus/continuity/03-anthropic-tools.json"
    diff = _write(tmp_path, "diff.html", diff_page(a.read_bytes(), a.name, b.read_bytes(), b.name))
    report = tmp_path / "report.html"
    write_report(migrated / "manifest.jsonl", report, pages_dir=tmp_path / "pages")
    for path in (diff, report):
        opened = Opened(browser, path)
        try:
            opened.check_clean()
            assert opened.page.locator("h1").first.is_visible()
            opened.page.screenshot(path=tmp_path / f"{path.stem}.png", full_page=True)
        finally:
            opened.close()
    opened = Opened(browser, report)
    try:
        opened.page.select_option("#row-filter", "invalid")
        assert opened.page.locator("tr[data-status]:visible").count() == 2
    finally:
        opened.close()



def test_branches_listing_their_whole_history_draw_each_event_once():
    path = ROOT / "corpus/asif/task-dependencies.session.json"
    doc = json.loads(path.read_bytes())
    html = session_page(path.read_bytes(), path.name)
    check_links(Page(html))
    assert len(re.findall(r"<article ", html)) == len(doc["events"])
    tree = re.search(r'<ul class="tree">(.*?)</ul>', html, re.S).group(1)
    items = re.findall(r'<li class="depth-(\d)"><a href="#b\d+-tl">([^<]+)</a>', tree)
    assert items == [("0", "baseline"), ("1", "reopened"), ("2", "main"), ("1", "retired"), ("0", "dependent-only")]
    assert "the first 3 events of this branch are the history it shares with reopened" in html


@needs_browser
def test_browser_report_of_ten_thousand_files_pages_and_filters(browser, tmp_path, migrated, capsys):
    records = batch.read_manifest(migrated / "manifest.jsonl")
    many = []
    for i in range(10_000):
        rec = msgspec.structs.replace(records[i % len(records)])
        rec.input = f"archive/{i:05d}/{Path(rec.input).name}"
        rec.output = None if rec.output is None else f"{i:05d}/{rec.output}"
        many.append(rec)
    failed = sum(1 for r in many if r.status == "invalid")
    path = _write(tmp_path, "report.html", report_page(many, title="archive"))
    opened = Opened(browser, path)
    try:
        opened.check_clean()
        load = opened.page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        table = opened.page.locator("table.pages[data-label='all files']")
        pager = table.locator("xpath=preceding-sibling::div[@class='pager'][1]")
        assert pager.locator("span").inner_text() == f"page 1 of {-(-10_000 // PAGE_SIZE)}"
        assert opened.page.locator("tr[data-status]:visible").count() == PAGE_SIZE
        opened.page.select_option("#row-filter", "invalid")
        assert opened.page.locator("tr[data-status]:visible").count() == failed
        opened.page.select_option("#row-filter", "")
        assert opened.page.locator("tr[data-status]:visible").count() == PAGE_SIZE
        opened.page.screenshot(path=tmp_path / "report.png")
        with capsys.disabled():  # reported, never asserted
            print(f"\n10,000-file report: load event {load / 1000:.2f} s")
    finally:
        opened.close()
