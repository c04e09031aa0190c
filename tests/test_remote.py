"""Journals and documents read by URL (docs/cluster.md, "Object storage"): a real S3-protocol
server on loopback (moto's standalone server, as s3fs tests itself) and an HTTP server serving
byte ranges (``http.server``), read locally and on a real Dask ``LocalCluster``. Reports equal
the local files' on both backends; a missing, denied or dropped object is a one-line error
naming the (redacted) URL while the other files are still checked; credentials never show."""

from __future__ import annotations

import http.server
import json
import logging
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_python

import pairling_fast as pf
from pairling_fast import _backend, cli, remote
from pairling_fast.generate.journal import generate_journal
from pairling_fast.journal.state_file import JournalStates

moto_server = pytest.importorskip("moto.server", reason="needs moto[server] (the test extra)")
pytest.importorskip("s3fs", reason="needs the [s3] extra: pip install 'pairling_fast[s3]'")

SECRET_KEY = "s3cr3t-key-never-shown"
PASSWORD = "pa55-never-shown"
BUCKET = "journals"


def _journals() -> dict[str, bytes]:
    clean, _ = generate_journal(150, seed=11, chain=True)
    defects, _ = generate_journal(200, seed=12, chain=True, defects=18)
    tampered, _ = generate_journal(150, seed=13, chain=True)
    tampered[40] = tampered[40].replace(b'"data":{', b'"data":{"x":1,', 1)
    del tampered[90]
    return {
        "clean.jsonl": b"".join(clean),
        "defects.jsonl": b"".join(defects),
        "tampered.jsonl": b"".join(tampered),
    }


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fleet as local files: what every remote report is compared with."""
    directory = tmp_path_factory.mktemp("fleet")
    for name, data in _journals().items():
        (directory / name).write_bytes(data)
    example_map = Path(__file__).parents[1] / "examples" / "maps" / "capability-map.json"
    (directory / "map.json").write_bytes(example_map.read_bytes())
    return directory


@pytest.fixture(scope="module")
def s3(local: Path) -> Iterator[Any]:
    """moto's S3 server on 127.0.0.1, found by s3fs through the usual variables (as a user's
    own endpoint and keys would be); yields the s3fs filesystem the test writes with."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {
            "AWS_ENDPOINT_URL_S3": f"http://{host}:{port}",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
            # The suite points proxies at a black hole (network_guard); loopback goes direct.
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }.items():
            patch.setenv(name, value)
        import s3fs

        filesystem = s3fs.S3FileSystem(skip_instance_cache=True)
        filesystem.mkdir(BUCKET)
        for file in sorted(local.iterdir()):
            filesystem.pipe(f"{BUCKET}/fleet/{file.name}", file.read_bytes())
        try:
            yield filesystem
        finally:
            server.stop()


class _Objects(http.server.BaseHTTPRequestHandler):
    """Objects over HTTP as stores and CDNs serve them: HEAD, ``Range`` (206), an ETag, Basic
    auth; ``forbidden/...`` answers 403 and ``drop/...`` closes the connection midway."""

    server: _ObjectServer

    def log_message(self, format: str, *args: Any) -> None:
        self.server.log.append(format % args)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _status(self, code: int) -> None:
        self.send_response(code)
        if code == 401:
            self.send_header("WWW-Authenticate", 'Basic realm="objects"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _answer(self, *, body: bool) -> None:
        if self.headers.get("Authorization") != self.server.authorization:
            return self._status(401)
        name = self.path.lstrip("/")
        if name.startswith("forbidden/"):
            return self._status(403)
        data = self.server.objects.get(name.removeprefix("drop/"))
        if data is None:
            return self._status(404)
        start, end = 0, len(data)
        ranged = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if ranged:
            start = int(ranged[1])
            end = min(len(data), int(ranged[2]) + 1) if ranged[2] else len(data)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{hash(data) & 0xFFFFFFFF:x}"')
        self.end_headers()
        if not body:
            return None
        if name.startswith("drop/"):
            self.wfile.write(data[start : start + (end - start) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return None
        self.wfile.write(data[start:end])
        return None


class _ObjectServer(http.server.ThreadingHTTPServer):
    objects: dict[str, bytes]
    authorization: str
    log: list[str]


@pytest.fixture(scope="module")
def web(local: Path) -> Iterator[str]:
    """The HTTP server on 127.0.0.1; yields ``http://user:PASSWORD@127.0.0.1:PORT``."""
    import base64

    server = _ObjectServer(("127.0.0.1", 0), _Objects)
    server.objects = {file.name: file.read_bytes() for file in local.iterdir()}
    token = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    server.authorization = f"Basic {token}"
    server.log = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://user:{PASSWORD}@127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _unpathed(report: pf.Report) -> dict[str, Any]:
    data = report.to_dict()
    data["findings"] = [{**f, "path": None} for f in data["findings"]]
    return data


def test_redaction() -> None:
    assert remote.redact("https://user:pw@host/a?x=1") == "https://***@host/a?x=1"
    assert remote.redact("s3://bucket/key") == "s3://bucket/key"
    signed = "https://h/k?X-Amz-Signature=abc&X-Amz-Credential=AKIA/x&a=1"
    assert remote.redact(signed) == "https://h/k?X-Amz-Signature=***&X-Amz-Credential=***&a=1"
    assert remote.is_url("s3://b/k") and remote.is_url("file:///tmp/x")
    assert not remote.is_url("/tmp/x") and not remote.is_url("C:\\x") and not remote.is_url("-")


def test_a_journal_object_gives_the_local_report(backend: str, s3: Any, local: Path) -> None:
    for name in ("clean.jsonl", "defects.jsonl", "tampered.jsonl"):
        url = f"s3://{BUCKET}/fleet/{name}"
        report = pf.check_journal(url, max_findings=None)
        assert _unpathed(report) == _unpathed(pf.check_journal(local / name, max_findings=None))
        assert {f.path for f in report.findings} <= {url}
    file_url = (local / "defects.jsonl").as_uri()
    assert _unpathed(pf.check_journal(file_url)) == _unpathed(
        pf.check_journal(local / "defects.jsonl")
    )


def _json_check(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, Any, str]:
    status = cli.main(["check", *arguments, "-f", "json"])
    captured = capsys.readouterr()
    return status, json.loads(captured.out), captured.err


def _files_by_name(report: Any) -> dict[str, Any]:
    files = {}
    for file in report["files"]:
        file = dict(file)
        name = file.pop("path").rsplit("/", 1)[-1]
        file.pop("seconds", None)
        for finding in file.get("findings", []):
            finding.pop("path", None)
        files[name] = file
    return files


def test_a_bucket_prefix_is_checked_as_a_directory(
    s3: Any, local: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, remote_report, _ = _json_check(capsys, f"s3://{BUCKET}/fleet/")
    local_status, local_report, _ = _json_check(capsys, str(local))
    assert status == local_status == 1
    assert _files_by_name(remote_report) == _files_by_name(local_report)
    assert [file["kind"] for file in remote_report["files"]] == [
        "journal",
        "journal",
        "map",
        "journal",
    ]
    assert remote_report["files"][0]["path"] == f"s3://{BUCKET}/fleet/clean.jsonl"


def test_missing_objects_and_buckets_are_one_line_errors_the_rest_is_checked(
    s3: Any, local: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report, err = _json_check(
        capsys,
        f"s3://{BUCKET}/fleet/clean.jsonl",
        f"s3://{BUCKET}/absent.jsonl",
        "s3://no-such-bucket/x.jsonl",
    )
    assert status == 2
    checked = {file["path"]: file for file in report["files"]}
    clean = pf.check_journal(local / "clean.jsonl").stats
    assert checked[f"s3://{BUCKET}/fleet/clean.jsonl"]["stats"] == clean
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert errors == [
        f"pairling-fast: error: s3://{BUCKET}/absent.jsonl: no such object or bucket",
        "pairling-fast: error: s3://no-such-bucket/x.jsonl: no such object or bucket",
    ]
    # Accounted as a missing local path is: not a checked file, listed as not checked.
    assert list(checked) == [f"s3://{BUCKET}/fleet/clean.jsonl"]
    assert report["skipped"] == [
        {"path": f"s3://{BUCKET}/absent.jsonl", "reason": "not checked: no such object or bucket"},
        {"path": "s3://no-such-bucket/x.jsonl", "reason": "not checked: no such object or bucket"},
    ]


@pytest.mark.parametrize("format_name", ["text", "json", "jsonl", "sarif", "junit", "github"])
def test_an_unreadable_object_is_not_a_checked_file_in_any_format(
    backend: str, s3: Any, format_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    absent = f"s3://{BUCKET}/nope.jsonl"
    status = cli.main(["check", absent, f"s3://{BUCKET}/fleet/clean.jsonl", "-f", format_name])
    out, err = capsys.readouterr()
    assert status == 2
    assert [line for line in err.splitlines() if "error:" in line] == [
        f"pairling-fast: error: {absent}: no such object or bucket"
    ]
    if format_name != "sarif":  # SARIF lists every rule, PF501 among them
        assert "unknown kind" not in out and "PF501" not in out
    if format_name in ("text", "github"):
        assert "1 file checked, 1 skipped" in out.splitlines()[-1]
    if format_name == "github":
        assert f"::error title=Unreadable::{absent}: no such object or bucket" in out
    if format_name == "sarif":
        (invocation,) = json.loads(out)["runs"][0]["invocations"]
        texts = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
        assert texts == [f"{absent}: no such object or bucket"]
        assert all(r["ruleId"] != "PF501" for r in json.loads(out)["runs"][0]["results"])
    if format_name == "junit":
        assert 'tests="1"' in out and "nope.jsonl" not in out.split("<testcase", 1)[1]


@pytest.mark.parametrize("format_name", ["text", "json"])
def test_an_empty_prefix_is_an_empty_folder(
    backend: str, s3: Any, tmp_path: Path, format_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    s3.pipe(f"{BUCKET}/other/x.jsonl", b"")  # the bucket has objects, none under empty/
    status = cli.main(["check", f"s3://{BUCKET}/empty/", "-f", format_name])
    out, err = capsys.readouterr()
    assert status == 5, err
    assert "no document checked" in err and "error" not in err
    (tmp_path / "empty").mkdir()
    assert cli.main(["check", str(tmp_path / "empty"), "-f", format_name]) == 5
    assert capsys.readouterr().out == out
    # A bucket that does not exist is still an error, prefix or not.
    assert cli.main(["check", "s3://no-such-bucket/empty/", "-f", format_name]) == 2


MISSING_S3FS = """
import sys
sys.modules["s3fs"] = None  # as if the [s3] extra were not installed
from pairling_fast import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_missing_protocol_package_names_the_extra(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    done = run_python(
        _backend.active_name(),
        "-c",
        MISSING_S3FS,
        "check",
        f"s3://{BUCKET}/fleet/",
        "-f",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"pairling-fast: error: s3://{BUCKET}/fleet/: s3:// needs the [s3] extra: "
        "pip install 'pairling_fast[s3]'"
    ]
    assert json.loads(done.stdout)["skipped"][0]["reason"].endswith(
        "pip install 'pairling_fast[s3]'"
    )


def test_http_objects_denied_dropped_and_credentials_never_shown(
    backend: str,
    web: str,
    local: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    shown = remote.redact(web)
    assert PASSWORD not in shown and shown.startswith("http://***@127.0.0.1:")
    report = pf.check_journal(f"{web}/defects.jsonl", max_findings=None)
    assert _unpathed(report) == _unpathed(
        pf.check_journal(local / "defects.jsonl", max_findings=None)
    )
    assert {f.path for f in report.findings} == {f"{shown}/defects.jsonl"}
    status, report_json, err = _json_check(
        capsys,
        f"{web}/tampered.jsonl",
        f"{web}/forbidden/clean.jsonl",
        f"{web}/absent.jsonl",
        f"{web}/drop/clean.jsonl",
    )
    assert status == 2
    tampered = _files_by_name(report_json)["tampered.jsonl"]
    assert {f["code"] for f in tampered["findings"]} >= {"PF310", "PF311"}
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 3, err
    assert errors[0].startswith(f"pairling-fast: error: {shown}/absent.jsonl: no such object")
    assert errors[1].startswith(f"pairling-fast: error: {shown}/drop/clean.jsonl: cannot be read")
    assert errors[2].startswith(f"pairling-fast: error: {shown}/forbidden/clean.jsonl: ")
    assert "403" in errors[2] or "denied" in errors[2]
    with pytest.raises(OSError, match="cannot be read") as dropped:
        pf.check_journal(f"{web}/drop/defects.jsonl")
    everything = err + json.dumps(report_json) + str(dropped.value) + caplog.text
    assert PASSWORD not in everything and SECRET_KEY not in everything


def test_state_keys_objects_by_url_and_etag(
    s3: Any, local: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"s3://{BUCKET}/state/defects.jsonl"
    s3.pipe(f"{BUCKET}/state/defects.jsonl", (local / "defects.jsonl").read_bytes())
    state = str(tmp_path / "state.json")
    _, first, _ = _json_check(capsys, url, "--state", state)
    _, second, _ = _json_check(capsys, url, "--state", state)
    (first_file,) = first["files"]
    (second_file,) = second["files"]
    resumed = second_file["stats"].pop("resumed")
    assert resumed["bytes_checked"] == 0 and resumed["object_version"].startswith("ETag:")
    assert first_file["findings"] == second_file["findings"]
    assert "resumed" not in first_file["stats"]
    assert first_file["stats"] == second_file["stats"]
    assert JournalStates.load(state).journals() == [url]
    s3.pipe(f"{BUCKET}/state/defects.jsonl", (local / "clean.jsonl").read_bytes())
    _, third, _ = _json_check(capsys, url, "--state", state)
    (third_file,) = third["files"]
    assert third_file["stats"] == pf.check_journal(local / "clean.jsonl").stats


def test_workers_read_their_own_byte_ranges(
    s3: Any, web: str, local: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a real LocalCluster (started after the S3 variables are set, as workers get theirs
    from their own environment): the same reports, chunked or whole, on both backends."""
    distributed = pytest.importorskip("distributed", reason="needs the [dask] extra")
    from pairling_fast import distributed as pfd

    with (
        distributed.LocalCluster(
            processes=True, n_workers=2, threads_per_worker=1, dashboard_address="127.0.0.1:0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        for backend_name in _backend.BACKENDS:
            with _backend.selected(backend_name):
                for name, chunk_bytes in (("tampered.jsonl", 4096), ("defects.jsonl", 1 << 20)):
                    url = f"s3://{BUCKET}/fleet/{name}"
                    report = pfd.check_journal_on_cluster(
                        url, client, chunk_bytes=chunk_bytes, max_findings=None
                    )
                    single = pf.check_journal(local / name, max_findings=None)
                    assert _unpathed(report) == _unpathed(single)
        status, on_cluster, _ = _json_check(
            capsys, f"s3://{BUCKET}/fleet/", "--dask", cluster.scheduler_address
        )
        _, here, _ = _json_check(capsys, f"s3://{BUCKET}/fleet/")
        assert status == 1 and on_cluster == here
        with pytest.raises(FileNotFoundError, match=f"s3://{BUCKET}/absent.jsonl"):
            pfd.check_journal_on_cluster(f"s3://{BUCKET}/absent.jsonl", client)
        # A failed task's arguments reach the workers' logs (Dask's "Compute Failed"): URLs
        # travel redacted there, and the error names the URL redacted too.
        shown = remote.redact(web)
        for url, reason in (
            (f"{web}/forbidden/clean.jsonl", "access denied"),
            (f"{web}/drop/defects.jsonl", "cannot be read"),
        ):
            with pytest.raises(OSError, match=reason) as failed:
                pfd.check_journal_on_cluster(url, client, chunk_bytes=4096)
            assert str(failed.value).endswith(f"'{shown}{url.removeprefix(web)}'")
        logs = json.dumps(client.get_worker_logs())
        assert "Compute Failed" in logs  # the failures were logged, with their tasks
        assert PASSWORD not in logs and SECRET_KEY not in logs
        assert PASSWORD not in repr(remote.Redacted(web)) and repr(remote.Redacted(web))
