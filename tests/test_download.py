"""Downloads through a real HTTP server on 127.0.0.1."""

import functools
import gzip
import http.server
import os
import pathlib
import shutil
import sys
import threading

import commands
import pytest
from conftest import SHARED_DATA

from seq2seq_attn.data import DownloadError, fetch, load_corpus
from seq2seq_attn.data.download import REGISTRY, RemoteFile, download


class _Handler(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        _Handler.requests.append(self.path)
        if self.path.endswith("truncated.bin"):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"only part of it")
            return
        super().do_GET()


@pytest.fixture
def serve():
    servers = []

    def start(directory):
        handler = functools.partial(_Handler, directory=str(directory))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        _Handler.requests.clear()
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("SEQ2SEQ_ATTN_DATA_DIR", str(directory))
    monkeypatch.delenv("SEQ2SEQ_ATTN_MIRROR", raising=False)
    return directory


def test_multi30k_train_downloads_to_the_same_bytes_once(serve, cache):
    url = serve(SHARED_DATA)
    corpus = load_corpus("multi30k", "train", "en", "de", mirror=url)
    local = load_corpus("multi30k", "train", "en", "de", data_dir=SHARED_DATA)
    assert len(corpus) == 29000
    assert corpus.sources == local.sources and corpus.targets == local.targets
    for name in ("train.en.gz", "train.de.gz"):
        downloaded = (cache / "multi30k" / name).read_bytes()
        assert downloaded == (SHARED_DATA / "multi30k" / name).read_bytes()
    assert sorted(_Handler.requests) == [
        "/multi30k/train.de.gz",
        "/multi30k/train.en.gz",
    ]
    load_corpus("multi30k", "train", "en", "de", mirror=url)
    assert len(_Handler.requests) == 2, "a cached file was fetched again"
    assert not list(cache.rglob("*.part"))


def test_tokenised_files_and_anki_through_http(serve, cache, tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "multi30k" / "tok").mkdir(parents=True)
    for language in ("en", "de"):
        name = f"val.lc.norm.tok.{language}"
        with gzip.open(
            SHARED_DATA / "multi30k" / "tok" / f"{name}.gz"
        ) as source:
            (mirror / "multi30k" / "tok" / name).write_bytes(source.read())
    shutil.copytree(SHARED_DATA / "anki", mirror / "anki")
    url = serve(mirror)
    tok = load_corpus("multi30k", "val", "en", "de", variant="tok", mirror=url)
    assert len(tok) == 1014
    anki = load_corpus("anki", "test", "en", "es", mirror=url)
    assert len(anki) == 5948
    assert (cache / "anki" / "spa-eng.zip").read_bytes() == (
        SHARED_DATA / "anki" / "spa-eng.zip"
    ).read_bytes()


def test_checksum_mismatch_is_an_error_and_leaves_nothing(
    serve, cache, tmp_path
):
    mirror = tmp_path / "mirror"
    (mirror / "multi30k").mkdir(parents=True)
    (mirror / "multi30k" / "val.en.gz").write_bytes(b"not the real file")
    url = serve(mirror)
    with pytest.raises(DownloadError, match="checksum mismatch"):
        fetch("multi30k/val.en.gz", mirror=url)
    assert not (cache / "multi30k" / "val.en.gz").exists()
    assert [path for path in cache.rglob("*") if path.is_file()] == []


def test_truncated_download_leaves_nothing(serve, tmp_path):
    url = serve(tmp_path)
    remote = RemoteFile("truncated.bin", f"{url}/truncated.bin", "0" * 64)
    destination = tmp_path / "out" / "truncated.bin"
    with pytest.raises(DownloadError):
        download(remote, destination)
    assert not destination.exists()
    assert not list((tmp_path / "out").iterdir())


def test_unreachable_host_is_a_clear_error(cache):
    remote = RemoteFile("x.gz", "http://127.0.0.1:9/x.gz", "0" * 64)
    with pytest.raises(
        DownloadError, match="could not download http://127.0.0.1:9"
    ):
        download(remote, cache / "x.gz", timeout=5)
    assert not list(cache.rglob("*.part"))


def test_unknown_file_is_named():
    with pytest.raises(KeyError, match="unknown corpus file"):
        fetch("multi30k/train.cs.gz")
    assert all(
        entry.sha256 and len(entry.sha256) == 64 for entry in REGISTRY.values()
    )


def test_training_offline_without_local_data_says_so_in_one_line(tmp_path):
    # No network (the mirror is a closed port) and an empty cache: one
    # line on how to point at local data, no traceback, and none of
    # TensorFlow's start-up lines (CUDA probing, CPU features).
    environment = {
        key: value
        for key, value in os.environ.items()
        if key != "TF_CPP_MIN_LOG_LEVEL"
    }
    environment["SEQ2SEQ_ATTN_DATA_DIR"] = str(tmp_path / "empty")
    environment["SEQ2SEQ_ATTN_MIRROR"] = "http://127.0.0.1:9"
    result = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.train",
            "--flagfile=configs/quickstart.flags",
            f"--model_dir={tmp_path / 'run'}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        cwd=pathlib.Path(__file__).resolve().parents[1],
    )
    assert result.returncode == 2, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr
    assert lines[-1].startswith("error: could not download")
    assert "--data_dir (or $SEQ2SEQ_ATTN_DATA_DIR)" in lines[-1]
    assert "cpu_feature_guard" not in result.stderr
    assert "cuda" not in result.stderr.lower()
    assert not (tmp_path / "run").exists()
