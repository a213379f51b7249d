"""The named corpora (Multi30k, Anki's Tatoeba pairs) and the in-memory
readers of line-aligned files and tab-separated pairs: thin layers over
`ParallelText.read`, for the notebooks and the public `seq2seq_attn.data`
API.

Every reader returns a `ParallelCorpus` with a `ReadReport` that counts what
was read, kept and dropped, and why (`parallel_corpus`, the one decoding
policy). Lines are split on "\\n" only (never on the Unicode line separators
that `str.splitlines` also honours, which would break the alignment of two
files) and stripped of surrounding whitespace.
"""

import pathlib
import zipfile

import numpy as np

from seq2seq_attn.data.download import fetch
from seq2seq_attn.data.parallel_corpus import decoded_pairs, tsv_pairs
from seq2seq_attn.data.text_stream import ParallelText

MULTI30K_LANGUAGES = ("en", "de", "fr")
MULTI30K_SPLITS = {
    "train": "train",
    "val": "val",
    "test": "test_2016_flickr",
    "test2016": "test_2016_flickr",
    "test_2016_flickr": "test_2016_flickr",
}
ANKI_FILES = {
    "es": ("anki/spa-eng.zip", "spa-eng/spa.txt"),
    "fr": ("anki/fra-eng.zip", "fra.txt"),
}
ANKI_SPLIT_SEED = 2015
ANKI_HELD_OUT_FRACTION = 0.05


def read_parallel_files(source_path, target_path, invalid_utf8="error"):
    """Reads two line-aligned files (plain or `.gz`) into memory: the pairs
    of `ParallelText.from_files([source_path], [target_path]).read()`.

    Args:
        source_path, target_path: the files; line i of one translates line i
            of the other.
        invalid_utf8: "error" (default: raise, naming the file and line),
            "replace" (U+FFFD, counted) or "skip" (drop the pair, counted).

    Raises:
        ValueError: if the files have different numbers of lines (naming both
            and both counts) or, with "error", on invalid UTF-8.
    """
    text = ParallelText.from_files([source_path], [target_path])
    return text.read(invalid_utf8)


def _zip_member(archive, member):
    names = [n for n in archive.namelist() if n.endswith(".txt")]
    if member is not None:
        if member not in archive.namelist():
            raise ValueError(
                f"{archive.filename} has no member {member!r}: {names}"
            )
        return member
    candidates = [
        n for n in names if not pathlib.PurePath(n).name.startswith("_")
    ]
    if len(candidates) != 1:
        raise ValueError(
            f"{archive.filename}: name the member to read, one of {candidates}"
        )
    return candidates[0]


def read_tsv_pairs(
    path, member=None, source_column=0, target_column=1, invalid_utf8="error"
):
    """Reads tab-separated pairs (the Tatoeba/Anki format), also from a zip:
    the pairs of `ParallelText.from_tsv([path]).read()`, or of the zip's
    member, decoded alike.

    Args:
        path: a `.txt`, `.txt.gz` or `.zip` file.
        member: the file inside a zip; by default its only `.txt` that does
            not start with "_" (the Anki archives hold `_about.txt` beside).
        source_column, target_column: which columns hold the pair (Anki files
            are "English<TAB>other language[<TAB>attribution]").
        invalid_utf8: as in `read_parallel_files`.

    Raises:
        ValueError: on a line with too few columns (naming file and line), or
            invalid UTF-8 with "error".
    """
    path = pathlib.Path(path)
    if path.suffix != ".zip":
        text = ParallelText.from_tsv([path], source_column, target_column)
        return text.read(invalid_utf8)
    with zipfile.ZipFile(path) as archive:
        member = _zip_member(archive, member)
        lines = archive.read(member).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    where = f"{path}!{member}"
    pairs = tsv_pairs(lines, where, source_column, target_column)
    return decoded_pairs(pairs, invalid_utf8, where)


def multi30k_files(
    split, source, target, variant="raw", data_dir=None, mirror=None
):
    """The (downloaded or local) source and target files of a Multi30k
    split, checked by name."""
    if split not in MULTI30K_SPLITS:
        raise ValueError(
            f"multi30k split must be one of {sorted(MULTI30K_SPLITS)}, "
            f"got {split!r}"
        )
    for language in (source, target):
        if language not in MULTI30K_LANGUAGES:
            raise ValueError(
                f"multi30k languages are {MULTI30K_LANGUAGES}, got {language!r}"
            )
    name = MULTI30K_SPLITS[split]
    if variant == "raw":
        paths = [f"multi30k/{name}.{lang}.gz" for lang in (source, target)]
    elif variant == "tok":
        paths = [
            f"multi30k/tok/{name}.lc.norm.tok.{lang}"
            for lang in (source, target)
        ]
    else:
        raise ValueError(
            f"multi30k variant must be 'raw' or 'tok', got {variant!r}"
        )
    return [fetch(path, data_dir=data_dir, mirror=mirror) for path in paths]


def _multi30k(split, source, target, variant, data_dir, mirror, invalid_utf8):
    files = multi30k_files(split, source, target, variant, data_dir, mirror)
    return read_parallel_files(*files, invalid_utf8=invalid_utf8)


def anki_split(corpus, split, seed=ANKI_SPLIT_SEED):
    """The documented split of an Anki corpus.

    The kept pairs, in file order, are permuted with
    `numpy.random.default_rng(seed).permutation`; the first 5% are "test", the
    next 5% "val", the rest "train". The same seed gives the same split.
    """
    order = np.random.default_rng(seed).permutation(len(corpus))
    held_out = int(round(ANKI_HELD_OUT_FRACTION * len(corpus)))
    parts = {
        "test": order[:held_out],
        "val": order[held_out : 2 * held_out],
        "train": order[2 * held_out :],
    }
    if split not in parts:
        raise ValueError(
            f"anki split must be one of {sorted(parts)}, got {split!r}"
        )
    return corpus.subset(sorted(parts[split]))


def _anki(split, source, target, data_dir, mirror, invalid_utf8, seed):
    languages = {source, target}
    other = (languages - {"en"}).pop() if "en" in languages else None
    if len(languages) != 2 or other not in ANKI_FILES:
        raise ValueError(
            "anki pairs English with 'es' or 'fr', got "
            f"source={source!r}, target={target!r}"
        )
    path, member = ANKI_FILES[other]
    english_first = source == "en"
    corpus = read_tsv_pairs(
        fetch(path, data_dir=data_dir, mirror=mirror),
        member=member,
        source_column=0 if english_first else 1,
        target_column=1 if english_first else 0,
        invalid_utf8=invalid_utf8,
    )
    return anki_split(corpus, split, seed)


def load_corpus(
    name,
    split,
    source,
    target,
    variant="raw",
    data_dir=None,
    mirror=None,
    invalid_utf8="error",
    seed=ANKI_SPLIT_SEED,
):
    """A split of a named corpus, downloaded (once) or read from `data_dir`.

    Args:
        name: "multi30k" (Task 1: en, de, fr; splits train, val,
            test_2016_flickr, also called test2016 or test) or "anki" (Tatoeba
            pairs: en with es or fr; splits train, val, test; see
            `anki_split`).
        split: the split's name.
        source, target: language codes.
        variant: multi30k only: "raw" text or "tok" (upstream's lowercased,
            normalised, Moses-tokenised text).
        data_dir: a local directory in the cache layout (e.g. a copy of the
            project's shared data); nothing is downloaded.
        mirror: a base URL to download from instead of the official hosts.
        invalid_utf8: as in `read_parallel_files`.
        seed: anki only: the split's seed.

    Returns:
        A `ParallelCorpus`.
    """
    if name == "multi30k":
        return _multi30k(
            split, source, target, variant, data_dir, mirror, invalid_utf8
        )
    if name == "anki":
        if variant != "raw":
            raise ValueError("anki has only the 'raw' variant")
        return _anki(
            split, source, target, data_dir, mirror, invalid_utf8, seed
        )
    raise ValueError(f"unknown corpus {name!r}; known: 'multi30k', 'anki'")
