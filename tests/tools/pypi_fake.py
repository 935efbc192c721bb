"""An Http for tools.refresh_knowledge.pypi that replays responses recorded from pypi.org on 2026-12-03 (einops, whose
0.6.2rc0 PyPI lists as yanked: 2026-12-05) (tests/tools/pypi_recorded/: the project JSON, trimmed to a few releases,
and each release's METADATA headers).
Wheels and sdists are rebuilt around the recorded METADATA, so the byte-range and tar readers run for real."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

from tools.refresh_knowledge.pypi import API, PyPIError

RECORDED = Path(__file__).parent / "pypi_recorded"


class RecordedPyPI:
    def __init__(self, root: Path = RECORDED, down: bool = False) -> None:
        self.root, self.down = root, down
        self.requests: list[tuple[str, str | None]] = []
        self.files: dict[str, tuple[str, str, str]] = {}  # url tail -> (project, version, filename)
        for f in root.glob("*.json"):
            d = json.loads(f.read_text())
            for v, files in d["releases"].items():
                for x in files:
                    self.files[x["url"].rsplit("/", 1)[-1]] = (f.stem, v, x["filename"])

    def _body(self, url: str) -> bytes:
        if self.down:
            raise PyPIError(f"{url}: no answer ([Errno 101] Network is unreachable)")
        if url.startswith(API + "/") and url.endswith("/json"):
            p = url[len(API) + 1:-len("/json")]
            f = self.root / f"{p}.json"
            if "/" in p or not f.exists():
                raise PyPIError(f"{url}: HTTP 404 Not Found")
            return f.read_bytes()
        project, version, filename = self.files[url.rsplit("/", 1)[-1]]
        meta = (self.root / f"{project}-{version}.METADATA").read_bytes()
        buf = io.BytesIO()
        if filename.endswith(".whl"):
            dist = filename.split("-")[0] + "-" + filename.split("-")[1]
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr(f"{dist.split('-')[0]}/__init__.py", "x = 1\n" * 50000)  # bulk before the metadata
                z.writestr(f"{dist}.dist-info/METADATA", meta)
                z.writestr(f"{dist}.dist-info/RECORD", "")
        else:
            top = filename[: -len(".tar.gz")]
            with tarfile.open(fileobj=buf, mode="w:gz") as t:
                info = tarfile.TarInfo(f"{top}/PKG-INFO")
                info.size = len(meta)
                t.addfile(info, io.BytesIO(meta))
        return buf.getvalue()

    def get(self, url: str) -> bytes:
        self.requests.append((url, None))
        return self._body(url)

    def get_range(self, url: str, start: int, end: int) -> tuple[bytes, int]:
        self.requests.append((url, f"{start}-{end}"))
        body = self._body(url)
        return (body[start:] if start < 0 else body[start:end + 1]), len(body)

    def stream(self, url: str) -> io.BytesIO:
        self.requests.append((url, "stream"))
        return io.BytesIO(self._body(url))
