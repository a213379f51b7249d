"""The one way the package reads the lines of a text file (plain or
gzipped) in Python: in chunks of whole lines, split on "\\n" only (never
on the Unicode line separators that `str.splitlines` also honours, which
would break the alignment of two files), a last line without its newline
counted, and a damaged `.gz` named with the line reached. The pre-pass of
`text_stream` hashes as it reads; its in-memory `read` takes the lines as
bytes. (`tf.data`'s `TextLineDataset` reads the training stream itself.)"""

import gzip
import io
import pathlib
import zlib

from seq2seq_attn.config.run import INVALID_UTF8

CHUNK_BYTES = 1 << 24


class _HashingReader(io.RawIOBase):
    """A binary file that hashes the bytes read through it, as stored
    (compressed, for `.gz`), so that one read both hashes and decodes."""

    def __init__(self, path, digest):
        self._file = open(path, "rb")
        self._digest = digest

    def readable(self):
        return True

    def readinto(self, buffer):
        count = self._file.readinto(buffer)
        if self._digest is not None:
            self._digest.update(memoryview(buffer)[:count])
        return count

    def close(self):
        self._file.close()
        super().close()


def line_chunks(path, digest=None):
    """Chunks of whole lines of a plain or gzipped file (bytes, each ending
    at a newline but the last), read `CHUNK_BYTES` at a time; the stored
    bytes are hashed into `digest` (a hashlib object) if given."""
    raw = _HashingReader(path, digest)
    stream = io.BufferedReader(raw, CHUNK_BYTES)
    if pathlib.Path(path).suffix == ".gz":
        stream = gzip.GzipFile(fileobj=stream, mode="rb")
    with raw, stream:
        rest = b""
        while True:
            try:
                block = stream.read(CHUNK_BYTES)
            except (EOFError, gzip.BadGzipFile, zlib.error) as error:
                raise damaged_file_error(path, error) from None
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n") + 1
            if cut == 0:
                rest = block
                continue
            yield block[:cut]
            rest = block[cut:]
        if rest:
            yield rest + b"\n"


def _lines_before_damage(path):
    """The whole lines a damaged gzip file gives before its damage."""
    lines = 0
    try:
        with gzip.open(path, "rb") as stream:
            for line in stream:
                lines += line.endswith(b"\n")
    except (EOFError, OSError, zlib.error):
        pass
    return lines


def damaged_file_error(path, error):
    """The ValueError of a `.gz` file that cannot be read to its end: cut
    short, with trailing bytes, or not gzip at all; it names the file and
    the last line read."""
    with open(path, "rb") as stream:
        gzip_data = stream.read(2) == b"\x1f\x8b"
    if not gzip_data:
        return ValueError(
            f"{path}: not gzip data, although the name ends in .gz"
        )
    if isinstance(error, EOFError):
        what = "the gzip data end before their end marker (a file cut short)"
    elif isinstance(error, gzip.BadGzipFile):
        what = f"bytes that are not gzip data follow the gzip data ({error})"
    else:
        what = f"{error} (damaged gzip data)"
    lines = _lines_before_damage(path)
    return ValueError(f"{path}: unreadable after line {lines:,}: {what}")


def read_byte_lines(path):
    """The lines of a plain or gzipped file as bytes, without their "\\n";
    a damaged `.gz` is a ValueError naming the file and the line reached."""
    lines = []
    for chunk in line_chunks(path):
        lines += chunk.split(b"\n")[:-1]
    return lines


def invalid_utf8_error(where, line, error):
    """ "WHERE: invalid UTF-8 at byte N (the bytes there)" for a line that
    failed to decode with `error` (a UnicodeDecodeError)."""
    return (
        f"{where}: invalid UTF-8 at byte {error.start} "
        f"({line[error.start : error.start + 4]!r})"
    )


def check_invalid_utf8_policy(invalid_utf8):
    """Refuses an `invalid_utf8` policy that is not one of `INVALID_UTF8`."""
    if invalid_utf8 not in INVALID_UTF8:
        raise ValueError(
            f"invalid_utf8 must be one of {INVALID_UTF8}, got {invalid_utf8!r}"
        )


def invalid_utf8_refused(message):
    """The error of the "error" policy for the line `message` describes
    (`invalid_utf8_error`), saying how to read past it."""
    return ValueError(
        f"{message}; set invalid_utf8 (the commands' --invalid_utf8) to "
        "'replace' or 'skip' to read past it"
    )
