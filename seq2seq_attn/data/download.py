"""Named corpora: where they come from, and a checked, atomic download.

Files are fetched once into a cache (`$SEQ2SEQ_ATTN_DATA_DIR`, else
`~/.cache/seq2seq_attn`; a gzipped copy of a plain file is used as it is),
checked against the sha256 listed here and only then
moved into place, so a failed or corrupted download leaves nothing behind. A
local directory laid out like the cache (or with `.gz` copies of the plain
files) works offline. `$SEQ2SEQ_ATTN_MIRROR` (or `mirror=`) replaces the
official hosts by one base URL under which the files keep their cache paths.
"""

import dataclasses
import hashlib
import os
import pathlib
import sys
import tempfile
import urllib.request

MULTI30K = (
    "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1"
)


@dataclasses.dataclass(frozen=True)
class RemoteFile:
    """One file of a named corpus.

    Attributes:
        path: where it lives in the cache, e.g. "multi30k/train.en.gz".
        url: its official address.
        sha256: the checksum of the bytes at `url`.
    """

    path: str
    url: str
    sha256: str


_RAW_SHA256 = {
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "test_2016_flickr.fr.gz": "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90",
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.fr.gz": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.fr.gz": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
}
# Upstream ships the tokenised files plain; these are the sha256 of those bytes.
_TOK_SHA256 = {
    "test_2016_flickr.lc.norm.tok.de": "c6a33d39d48f9f510de147651316cd9d918e09ad0219df734a2f16b6baccacc4",
    "test_2016_flickr.lc.norm.tok.en": "5b7f32627cf99eced828311b955dae9800bb52bc8b91cf8b6526829e605b29d2",
    "test_2016_flickr.lc.norm.tok.fr": "1463bd5960f9bfe098ec3cd752d3df0c49c84dc646fb518964a29232658cd836",
    "train.lc.norm.tok.de": "cb5a23529b65ec2061f1dc446192a9c37382b63cc75f81a0be59d34894b3a505",
    "train.lc.norm.tok.en": "08925f8e0572bcd5a006702fc5fe20e2d77c6917d4eebd576fc20de6693c2119",
    "train.lc.norm.tok.fr": "8fa41bb718412bcb7c5dfa58603842810a01543eae86a51279f9886b901266e1",
    "val.lc.norm.tok.de": "97232bd273eceb7207f689527386a97e4be2616b18ada47576bdaf96c8ae1f00",
    "val.lc.norm.tok.en": "46573ce391ae227f1c72f873392436a20ef18e0a6d518098cfbd70b77c8572ec",
    "val.lc.norm.tok.fr": "b303e301aa21fe7822a846b2b3fb2d5a1121ec807cd5b1d006fb7b2b5507168a",
}

REGISTRY = {
    **{
        f"multi30k/{name}": RemoteFile(
            f"multi30k/{name}", f"{MULTI30K}/raw/{name}", sha256
        )
        for name, sha256 in _RAW_SHA256.items()
    },
    **{
        f"multi30k/tok/{name}": RemoteFile(
            f"multi30k/tok/{name}", f"{MULTI30K}/tok/{name}", sha256
        )
        for name, sha256 in _TOK_SHA256.items()
    },
    "anki/spa-eng.zip": RemoteFile(
        "anki/spa-eng.zip",
        "http://storage.googleapis.com/download.tensorflow.org/data/spa-eng.zip",
        "f80e581ae291aa34dd3aba7bd98b5e9505234da4318e2f3295df70a1520c7f61",
    ),
    "anki/fra-eng.zip": RemoteFile(
        "anki/fra-eng.zip",
        "https://www.manythings.org/anki/fra-eng.zip",
        "16c4f7d0df9e7c5e6c54cdb0447f3f4a18a55052ff5e2e0b27dd4a06c0e49d04",
    ),
}


class DownloadError(RuntimeError):
    """A corpus file could not be fetched or did not match its checksum."""


def cache_dir():
    """`$SEQ2SEQ_ATTN_DATA_DIR`, or `~/.cache/seq2seq_attn`."""
    configured = os.environ.get("SEQ2SEQ_ATTN_DATA_DIR")
    if configured:
        return pathlib.Path(configured).expanduser()
    return pathlib.Path.home() / ".cache" / "seq2seq_attn"


def sha256_of(path):
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _progress(done, total, name):
    if not sys.stderr.isatty():
        return
    if total:
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(
            f"\r{name} [{bar}] {done / 1e6:.1f}/{total / 1e6:.1f} MB"
        )
    else:
        sys.stderr.write(f"\r{name} {done / 1e6:.1f} MB")
    sys.stderr.flush()


def download(remote, destination, mirror=None, timeout=60):
    """Fetches `remote` to `destination` atomically, checking its sha256.

    The bytes go to a temporary file beside `destination` and are renamed
    into place only once the checksum matches; on any failure the temporary
    file is removed and `DownloadError` says what went wrong.
    """
    destination = pathlib.Path(destination)
    mirror = mirror or os.environ.get("SEQ2SEQ_ATTN_MIRROR")
    url = f"{mirror.rstrip('/')}/{remote.path}" if mirror else remote.url
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=destination.parent, prefix=f".{destination.name}.", suffix=".part"
    )
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as output:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    total = int(response.headers.get("Content-Length") or 0)
                    done = 0
                    for block in iter(lambda: response.read(1 << 20), b""):
                        output.write(block)
                        digest.update(block)
                        done += len(block)
                        _progress(done, total, remote.path)
                    if total and done != total:
                        raise DownloadError(
                            f"{url}: got {done} of {total} bytes"
                        )
            except OSError as error:
                raise DownloadError(
                    f"could not download {url}: {error}. Offline? Point "
                    "--data_dir (or $SEQ2SEQ_ATTN_DATA_DIR) at a copy of "
                    f"the corpora that holds {remote.path}"
                ) from error
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        if digest.hexdigest() != remote.sha256:
            raise DownloadError(
                f"checksum mismatch for {url}: expected sha256 {remote.sha256}, "
                f"got {digest.hexdigest()}; nothing was saved"
            )
        os.replace(temporary, destination)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return destination


def fetch(path, data_dir=None, mirror=None):
    """The local path of a registered corpus file, downloading it if needed.

    Args:
        path: a key of `REGISTRY`, e.g. "multi30k/tok/val.lc.norm.tok.de".
        data_dir: a local directory to read instead of the cache; it must
            hold `path` or `path + ".gz"`, and nothing is downloaded.
        mirror: a base URL to download from instead of the official hosts.

    Returns:
        A `pathlib.Path` to a readable file (possibly gzipped).
    """
    if path not in REGISTRY:
        raise KeyError(
            f"unknown corpus file {path!r}; known: {sorted(REGISTRY)}"
        )
    if data_dir is not None:
        data_dir = pathlib.Path(data_dir)
        for candidate in (data_dir / path, data_dir / f"{path}.gz"):
            if candidate.is_file():
                return candidate
        raise FileNotFoundError(
            f"{path} is not in --data_dir {data_dir} (looked for {path} and "
            f"{path}.gz)"
        )
    destination = cache_dir() / path
    for candidate in (
        destination,
        destination.with_name(destination.name + ".gz"),
    ):
        if candidate.is_file():
            return candidate
    return download(REGISTRY[path], destination, mirror=mirror)
