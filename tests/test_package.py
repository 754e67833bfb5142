"""ASIF package transport 0.1: deterministic writing, and a reader that refuses hostile archives
(built here, byte by byte where zipfile would not write them) before using anything in them."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import struct
import zipfile

import pytest

from asif_convert._errors import InvalidInput
from asif_convert._package import MANIFEST, SESSION, is_package, manifest_bytes, read_package, write_package

PNG = b"\x89PNG fake image bytes"
NOTES = b"notes\n"


def _session(files: dict[str, bytes]) -> bytes:
    resources = [{"id": f"r{i}", "availability": "embedded", "path": path, "bytes": len(content),
                  "sha256": hashlib.sha256(content).hexdigest()}
                 for i, (path, content) in enumerate(sorted(files.items()))]
    resources.append({"id": "inline", "availability": "embedded", "text": "hi", "bytes": 2,
                      "sha256": hashlib.sha256(b"hi").hexdigest()})
    return json.dumps({"asif_version": "0.4", "resources": resources}).encode()


FILES = {"assets/image.png": PNG, "notes.txt": NOTES}


def _zip(members: list[tuple[str, bytes]], *, tweak=None) -> bytes:
    """An archive of these members, in this order, stored; ``tweak(info)`` may change an entry."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o600) << 16
            if tweak:
                tweak(info)
            archive.writestr(info, content)
    return out.getvalue()


def _package_members(files: dict[str, bytes], session: bytes | None = None) -> list[tuple[str, bytes]]:
    session = _session(files) if session is None else session
    return [*files.items(), (SESSION, session), (MANIFEST, manifest_bytes(session, files))]


def _problems(data: bytes, **kwargs) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        read_package(data, "p.asif.zip", **kwargs)
    assert caught.value.source == "p.asif.zip"
    assert all(p.rule == "package" or p.rule == "json" for p in caught.value.problems)
    return [p.render() for p in caught.value.problems]


# -- writing ----------------------------------------------------------------------------------


def test_a_written_package_reads_back_exactly():
    session = _session(FILES)
    data = write_package(session, FILES)
    assert is_package(data)
    pkg = read_package(data, "p.asif.zip")
    assert pkg.session == session
    assert pkg.files == FILES
    assert pkg.document == json.loads(session)
    assert pkg.manifest == manifest_bytes(session, FILES)


def test_writing_is_deterministic_sorted_stored_dated_1980_and_mode_0600():
    session = _session(FILES)
    data = write_package(session, FILES)
    assert write_package(session, dict(reversed(list(FILES.items())))) == data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == sorted([*FILES, SESSION, MANIFEST])
    for info in infos:
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert info.compress_type == zipfile.ZIP_STORED
        assert info.external_attr >> 16 == stat.S_IFREG | 0o600
        assert info.flag_bits & 1 == 0


def test_the_manifest_inventories_every_member_but_itself():
    session = _session(FILES)
    manifest = json.loads(manifest_bytes(session, FILES))
    assert manifest == {
        "files": [{"bytes": len(c), "path": p, "sha256": hashlib.sha256(c).hexdigest()}
                  for p, c in sorted({**FILES, SESSION: session}.items())],
        "package_version": "0.1", "session": "session.json"}
    assert manifest_bytes(session, FILES).endswith(b"}\n") and b" " not in manifest_bytes(session, FILES)


@pytest.mark.parametrize("name", ["../evil", "/abs", "a\\b", "c:x", "CON", "a/./b", "trailing.", "a/"])
def test_the_writer_refuses_names_that_are_not_portable(name):
    with pytest.raises(InvalidInput, match="member name"):
        write_package(b"{}", {name: b"x"})


def test_the_writer_refuses_reserved_and_colliding_names():
    with pytest.raises(InvalidInput, match="reserved"):
        write_package(b"{}", {SESSION: b"x"})
    with pytest.raises(InvalidInput, match="differs only in case"):
        write_package(b"{}", {"a.txt": b"x", "A.TXT": b"y"})
    with pytest.raises(InvalidInput, match="also the folder"):
        write_package(b"{}", {"a": b"x", "a/b": b"y"})


# -- reading hostile archives -------------------------------------------------------------------


def test_not_a_zip_or_a_truncated_one_is_refused():
    data = write_package(_session(FILES), FILES)
    assert "/: not a readable ZIP archive" in _problems(b"PK\x03\x04garbage")[0]
    assert "not a readable ZIP archive" in _problems(data[: len(data) // 2])[0]


@pytest.mark.parametrize("name,why", [
    ("../evil.txt", "has an empty, '.' or '..' segment"),
    ("a/../../evil.txt", "has an empty, '.' or '..' segment"),
    ("/etc/passwd", "is absolute"),
    ("dir\\evil.txt", "contains a backslash"),
    ("C:evil.txt", "contains ':'"),
    ("nul.txt", "reserved device name"),
    ("a\x01b", "control character"),
    ("what?.txt", "<>\"|?*"),
    ("dots...", "ending in a space or dot"),
])
def test_zip_slip_and_unportable_member_names_are_refused(name, why):
    data = _zip([*_package_members(FILES), (name, b"x")])
    found = _problems(data)
    assert any(why in p and "member name" in p for p in found), found


def test_a_nul_in_a_member_name_is_refused():
    data = _zip(_package_members(FILES))
    data = data.replace(b"notes.txt", b"notes\0txt")  # local header and central directory alike
    assert any("contains a NUL character" in p for p in _problems(data))


def test_a_nul_in_a_member_name_is_shown_escaped_never_sent_to_the_terminal():
    """The pointer to the member held the NUL itself, which the message then printed raw."""
    data = _zip(_package_members(FILES)).replace(b"notes.txt", b"notes\0txt")
    with pytest.raises(InvalidInput) as caught:
        read_package(data, "p.asif.zip")
    rendered = [p.render() for p in caught.value.problems]
    assert "/notes\\x00txt: member name 'notes\\x00txt' contains a NUL character [package]" in rendered, rendered
    assert not any("\0" in line for line in rendered)


def test_a_nul_in_the_local_header_name_only_is_refused():
    data = _zip(_package_members(FILES))
    local = data.index(b"notes.txt")  # its local header comes before any other mention
    data = data[:local] + b"notes\0txt" + data[local + 9:]
    assert any("not a readable ZIP archive" in p and "differ" in p for p in _problems(data))


def test_a_member_encrypted_in_its_local_header_only_is_refused():
    """zipfile reads the central directory's flags: such a member was read as if plain, where a
    reader that goes by the local header sees an encrypted one."""
    data = bytearray(_zip(_package_members(FILES)))
    data[data.index(b"PK\x03\x04") + 6] |= 1  # the first member's local header
    found = _problems(bytes(data))
    assert found == ["/assets~1image.png: is encrypted in its local header (not in the central directory); "
                     "packages are never encrypted [package]"], found


def test_a_member_compressed_otherwise_in_its_local_header_is_refused():
    data = bytearray(_zip(_package_members(FILES)))
    struct.pack_into("<H", data, data.index(b"PK\x03\x04") + 8, zipfile.ZIP_DEFLATED)
    found = _problems(bytes(data))
    assert any("/assets~1image.png: is compressed with method 8 in its local header but 0 in the central directory" in p
               for p in found), found


@pytest.mark.parametrize("extra", [b"x", b"PK\x03\x04 another archive?", b"\0" * 100])
def test_bytes_after_the_end_of_the_archive_are_refused(extra):
    data = write_package(_session(FILES), FILES)
    found = _problems(data + extra)
    assert found == [f"/: the package has {len(extra)} bytes after the end of its ZIP archive; a package ends "
                     "with its end-of-central-directory record [package]"], found


def test_an_archive_comment_is_no_trailing_bytes():
    out = io.BytesIO(write_package(_session(FILES), FILES))
    with zipfile.ZipFile(out, "a") as archive:
        archive.comment = b"a comment"
    assert read_package(out.getvalue()).files == FILES


def test_a_member_with_an_empty_name_is_refused():
    """(It was exit 3: zipfile's own check for a folder entry fails on an empty name.)"""
    found = _problems(_zip([*_package_members(FILES), ("", b"x")]))
    assert any("member name '' is empty" in p for p in found), found


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_case_fold_collisions_and_duplicates_are_refused():
    files = {"Notes.txt": b"a", "notes.TXT": b"b"}
    found = _problems(_zip(_package_members(files)))
    assert any("differs only in case from 'Notes.txt'" in p for p in found), found
    found = _problems(_zip([*_package_members(FILES), ("notes.txt", b"other")]))
    assert any("'notes.txt' appears twice" in p for p in found), found


def test_a_file_that_is_also_a_folder_is_refused():
    found = _problems(_zip(_package_members({"assets": b"a", "Assets/b.txt": b"b"})))
    assert any("'assets' is a file and also the folder of other members" in p for p in found), found


def test_compressed_encrypted_symlink_and_directory_members_are_refused():
    def deflate(info):
        if info.filename == "notes.txt":
            info.compress_type = zipfile.ZIP_DEFLATED

    def link(info):
        if info.filename == "notes.txt":
            info.external_attr = (stat.S_IFLNK | 0o777) << 16

    assert any("/notes.txt: is compressed" in p for p in _problems(_zip(_package_members(FILES), tweak=deflate)))
    assert any("/notes.txt: is a symbolic link" in p for p in _problems(_zip(_package_members(FILES), tweak=link)))
    found = _problems(_zip([("assets/", b""), *_package_members(FILES)]))
    assert any("is a directory entry" in p for p in found), found
    assert any("/notes.txt: is encrypted" in p for p in _problems(_set_encrypted(_zip(_package_members(FILES)))))


def _set_encrypted(data: bytes) -> bytes:
    """Set the 'encrypted' flag of notes.txt in its local header and its central directory entry."""
    out = bytearray(data)
    for signature, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        start = 0
        while (start := out.find(signature, start)) >= 0:
            if out[start + name_at: start + name_at + 9] == b"notes.txt":
                out[start + flag_at] |= 1
            start += 4
    return bytes(out)


def test_ten_thousand_members_are_refused_from_the_directory_alone():
    members = [(f"f{i:05}.txt", b"") for i in range(10_000)]
    found = _problems(_zip(members))
    assert found == ["/: the package has 10,000 members, more than the limit of 1,024 [package]"]


def test_a_member_over_the_size_limit_is_refused_before_it_is_read():
    found = _problems(_zip(_package_members(FILES)), max_file_bytes=10)
    assert any("/assets~1image.png: is 21 bytes, more than the limit of 10 per file" in p for p in found), found


def test_a_member_larger_than_its_directory_entry_declares_is_refused():
    data = bytearray(_zip(_package_members(FILES)))
    at = data.find(b"PK\x01\x02")  # the first central directory entry: assets/image.png
    assert data[at + 46: at + 46 + 16] == b"assets/image.png"
    struct.pack_into("<II", data, at + 20, len(PNG) - 5, len(PNG) - 5)  # compressed and uncompressed sizes
    assert _problems(bytes(data)) == [
        "/: not a readable ZIP archive (Bad CRC-32 for file 'assets/image.png') [package]"]


def test_overlapping_members_are_refused():
    data = bytearray(_zip(_package_members(FILES)))
    second = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02") + 4)
    struct.pack_into("<I", data, second + 42, 0)  # notes.txt's entry points at the first member's data
    assert any("overlaps the member before it" in p for p in _problems(bytes(data)))


def test_missing_metadata_is_refused():
    members = _package_members(FILES)
    assert _problems(_zip([m for m in members if m[0] != MANIFEST])) == [
        "/: the package has no asif-package.json (its manifest) [package]"]
    assert _problems(_zip([m for m in members if m[0] != SESSION])) == ["/: the package has no session.json [package]"]


def _with_manifest(manifest: object, files=FILES) -> bytes:
    session = _session(files)
    raw = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
    return _zip([*files.items(), (SESSION, session), (MANIFEST, raw)])


def _manifest(files=FILES) -> dict:
    return json.loads(manifest_bytes(_session(files), files))


def test_an_unlisted_member_is_refused():
    manifest = _manifest()
    manifest["files"] = [r for r in manifest["files"] if r["path"] != "notes.txt"]
    assert _problems(_with_manifest(manifest)) == [
        "/notes.txt: member 'notes.txt' is not listed in the manifest [package]"]


def test_inventory_mismatches_are_refused_with_their_path():
    manifest = _manifest()
    manifest["files"][0]["sha256"] = "0" * 64
    manifest["files"][1]["bytes"] = len(NOTES) - 1  # the member is larger than the manifest declares
    manifest["files"].append({"path": "ghost.txt", "bytes": 0, "sha256": "0" * 64})
    assert _problems(_with_manifest(manifest)) == [
        "/asif-package.json/files/0/sha256: does not match the SHA-256 of member 'assets/image.png' [package]",
        "/asif-package.json/files/1/bytes: declares 5 bytes but member 'notes.txt' has 6 [package]",
        "/asif-package.json/files/3/path: lists 'ghost.txt', which is not in the package [package]"]


def test_a_manifest_that_is_not_0_1_or_not_json_is_refused():
    manifest = _manifest()
    manifest["package_version"] = "0.2"
    manifest["extra"] = True
    found = _problems(_with_manifest(manifest))
    assert "/asif-package.json/extra: is not a field of a package manifest 0.1 [package]" in found
    assert any(p.startswith("/asif-package.json/package_version: must be '0.1'") for p in found)
    assert any("not valid JSON" in p for p in _problems(_with_manifest(b"{nope")))
    dup = b'{"package_version":"0.1","package_version":"0.1","session":"session.json","files":[]}'
    assert any("appears more than once" in p for p in _problems(_with_manifest(dup)))


def test_a_member_that_is_no_resource_of_the_session_is_refused():
    session = _session({"notes.txt": NOTES})
    files = {**FILES}
    data = _zip([*files.items(), (SESSION, session), (MANIFEST, manifest_bytes(session, files))])
    assert _problems(data) == ["/assets~1image.png: member 'assets/image.png' is no embedded resource of the "
                               "session [package]"]


def test_a_resource_missing_from_the_package_or_with_other_bytes_is_refused():
    session = _session({**FILES, "gone.txt": b"x"})
    doc = json.loads(session)
    doc["resources"][1]["sha256"] = "f" * 64  # notes.txt (sorted: assets/image.png, gone.txt, notes.txt)
    doc["resources"][2]["sha256"] = "f" * 64
    session = json.dumps(doc).encode()
    data = _zip([*FILES.items(), (SESSION, session), (MANIFEST, manifest_bytes(session, FILES))])
    assert _problems(data) == [
        "/session.json/resources/1/path: names 'gone.txt', which is not in the package [package]",
        "/session.json/resources/2/sha256: does not match the SHA-256 of member 'notes.txt' [package]"]


def test_a_session_that_names_a_reserved_path_is_refused():
    session = json.dumps({"resources": [{"id": "m", "availability": "embedded", "path": MANIFEST,
                                         "bytes": 1, "sha256": "0" * 64}]}).encode()
    data = _zip([(SESSION, session), (MANIFEST, manifest_bytes(session, {}))])
    assert _problems(data) == ["/session.json/resources/0/path: 'asif-package.json' is reserved for the package "
                               "itself [package]"]
