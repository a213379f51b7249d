"""Alignment error rate (Och and Ney 2003), as used in Luong et al. 2015,
Sec. 5.4, with gold alignments in the TALP or the NAACL-2003 format.

AER = 1 - (|A & S| + |A & P|) / (|A| + |S|), with A the predicted links, S the
sure and P the possible gold links (sure links are possible too). Links are
`(source_index, target_index)` pairs counted from 0.
"""

import dataclasses
import pathlib
import re

_TALP_LINK = re.compile(r"^(\d+)([-p?])(\d+)$")


@dataclasses.dataclass
class GoldAlignment:
    """The sure and possible links of one sentence pair."""

    sure: set
    possible: set


def parse_talp(path, source_first=True, one_based=False):
    """Gold alignments, one line per sentence pair: `i-j` a sure link, `ipj`
    or `i?j` a possible one.

    Args:
        path: the file.
        source_first: whether i is the source index (else the target's).
        one_based: whether indices count from 1.

    Raises:
        ValueError: naming the file, line and link that cannot be read.
    """
    alignments = []
    offset = 1 if one_based else 0
    lines = pathlib.Path(path).read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        gold = GoldAlignment(set(), set())
        for link in line.split():
            match = _TALP_LINK.match(link)
            if not match:
                raise ValueError(f"{path}:{number}: cannot read link {link!r}")
            first, kind, second = int(match[1]), match[2], int(match[3])
            pair = (first, second) if source_first else (second, first)
            pair = (pair[0] - offset, pair[1] - offset)
            if min(pair) < 0:
                raise ValueError(
                    f"{path}:{number}: index below {offset} in {link!r}"
                )
            gold.possible.add(pair)
            if kind == "-":
                gold.sure.add(pair)
        alignments.append(gold)
    return alignments


def parse_naacl(path, sentences, source_first=True, one_based=True):
    """Gold alignments in the NAACL-2003 shared task format: lines
    `sentence_id first_index second_index [S|P] [confidence]`, sentence ids
    and indices counting from 1 by default; a missing S/P means sure.

    Args:
        path: the file.
        sentences: number of sentence pairs (sentences without links count).
        source_first, one_based: as in `parse_talp`.
    """
    alignments = [GoldAlignment(set(), set()) for _ in range(sentences)]
    offset = 1 if one_based else 0
    lines = pathlib.Path(path).read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        try:
            sentence, first, second = (int(field) for field in fields[:3])
        except ValueError:
            raise ValueError(f"{path}:{number}: cannot read {line!r}") from None
        kind = fields[3] if len(fields) > 3 else "S"
        if kind not in ("S", "P") or not 0 <= sentence - offset < sentences:
            raise ValueError(f"{path}:{number}: cannot read {line!r}")
        pair = (first, second) if source_first else (second, first)
        pair = (pair[0] - offset, pair[1] - offset)
        gold = alignments[sentence - offset]
        gold.possible.add(pair)
        if kind == "S":
            gold.sure.add(pair)
    return alignments


def alignment_error_rate(predicted, gold):
    """Corpus AER of predicted link sets against `GoldAlignment`s."""
    if len(predicted) != len(gold):
        raise ValueError(
            f"{len(predicted)} predictions but {len(gold)} gold alignments"
        )
    hits_sure = hits_possible = predicted_links = sure_links = 0
    for links, reference in zip(predicted, gold, strict=True):
        links = set(links)
        hits_sure += len(links & reference.sure)
        hits_possible += len(links & reference.possible)
        predicted_links += len(links)
        sure_links += len(reference.sure)
    if predicted_links + sure_links == 0:
        return 0.0
    return 1.0 - (hits_sure + hits_possible) / (predicted_links + sure_links)


def word_ids(tokens, kind):
    """For each token string, the index of the word it belongs to.

    Word tokenizers: one word per token. WordPiece: a piece starting with
    "##" continues the previous word. SentencePiece: a piece starting with
    "\u2581" starts a new word.
    """
    ids, word = [], -1
    for index, token in enumerate(tokens):
        if kind == "word":
            word += 1
        elif kind == "wordpiece":
            word += 0 if (token.startswith("##") and index) else 1
        elif kind == "sentencepiece":
            word += 1 if (token.startswith("\u2581") or index == 0) else 0
        else:
            raise ValueError(f"unknown tokenizer kind {kind!r}")
        ids.append(word)
    return ids


def links_from_attention(attention, source_words, target_words):
    """Luong 5.4: each target word is linked to the source word with the
    highest attention weight. Subword rows and columns are summed into words.

    Args:
        attention: [Ty, Tx] weights of the target tokens over source tokens.
        source_words, target_words: `word_ids` of the source and target tokens.

    Returns:
        A set of (source word, target word) links.
    """
    import numpy as np

    attention = np.asarray(attention)[: len(target_words), : len(source_words)]
    sources, targets = max(source_words) + 1, max(target_words) + 1
    words = np.zeros((targets, sources))
    for t, target in enumerate(target_words):
        for s, source in enumerate(source_words):
            words[target, source] += attention[t, s]
    return {(int(words[t].argmax()), t) for t in range(targets)}
