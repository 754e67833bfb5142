"""The public ASIF reference's example package, rebuilt here from its recipe: the session is
corpus/asif/image-and-document.session.json, and its two files are made by the code below (a
16 x 16 PNG and a one-page PDF, byte for byte what the recipe makes). The recipe signs the
package with a published synthetic test key: the private key is the bytes 0, 1, ..., 31. That
key is public, so it proves nothing about real data; here it proves interoperability."""

from __future__ import annotations

import struct
import zlib

from .conftest import CORPUS

SESSION = CORPUS / "asif" / "image-and-document.session.json"
TEST_PRIVATE_KEY = bytes(range(32))
# Published beside the recipe: the signature object of the example package, as the reference writes it.
PUBLISHED_SIGNATURE = (
    b'{"algorithm":"Ed25519","key_id":"sha256:56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c",'
    b'"manifest_sha256":"9e710efd97190b5b5c080bd3812e0b7fc93a78669810a52ab66de9cb0e4118b8",'
    b'"signature":"hEho1le84p6HtLwOd7a96SGVAjfyWepY0CznpJYT4zhSGLUI1Fbx5sXUQLiXBVZ4DFdR44EmxezzvtjZoS2kDQ==",'
    b'"signature_version":"0.1"}\n')


def color_grid_png() -> bytes:
    """16 x 16 RGB: four quadrants, written as one IDAT chunk at zlib's default level."""
    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))

    scanlines = bytearray()
    for y in range(16):
        scanlines.append(0)  # filter type: none
        for x in range(16):
            scanlines += bytes((240 if x < 8 else 40, 180 if y < 8 else 60, 90))
    header = struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(scanlines)))
            + chunk(b"IEND", b""))


def meeting_notes_pdf() -> bytes:
    """A one-page PDF 1.4 with five objects and a cross-reference table."""
    text = (b"BT /F1 14 Tf 40 160 Td (Synthetic meeting notes) Tj 0 -24 Td "
            b"(Decision: review the draft on Friday.) Tj ET\n")
    bodies = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 220] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(text) + text + b"endstream",
    ]
    pdf = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(bodies) + 1)
    pdf += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(bodies) + 1, xref)
    return bytes(pdf)


def files() -> dict[str, bytes]:
    return {"assets/color-grid.png": color_grid_png(), "assets/meeting-notes.pdf": meeting_notes_pdf()}

# The reference's later revision of the example (its session moved to asif_version 0.5): the
# published manifest and its published signature, as files beside the recipe.
LATER_MANIFEST = (
    b'{"files":[{"bytes":90,"path":"assets/color-grid.png","sha256":"9f557d344ce3af594e132efb0015748c336fb2daf0df7bd364f868fe5362affe"},'
    b'{"bytes":651,"path":"assets/meeting-notes.pdf","sha256":"f73e34811d4480589c693aaf98f630c5478f786992f9410eeac4cb1b8144ed22"},'
    b'{"bytes":7652,"path":"session.json","sha256":"eb8f249dad0a3adae72e2595a4e9705fa375ead9724d3eefc7eaae5bb02a22d9"}],'
    b'"package_version":"0.1","session":"session.json"}\n')
LATER_SIGNATURE = (
    b'{"algorithm":"Ed25519","key_id":"sha256:56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c",'
    b'"manifest_sha256":"f7b9987aec63a18d93ea4528d63f229434515ef15adb038b9d6b6bf20fe70d45",'
    b'"signature":"8DO+94td8f0tgENs9L8oL8p+AoBUJqxC/1rSrDKe+77+Iig7cQ56EPXzsF+XLChpyZSUN6DnYhtDrjZsTuptDw==",'
    b'"signature_version":"0.1"}\n')
