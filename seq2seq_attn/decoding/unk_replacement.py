"""Unknown-word replacement (Luong et al. 2015, Sec. 4.2, after Luong et al.
2015b): each <unk> in the output becomes the source word that received the
highest attention weight when it was produced, optionally translated
through a dictionary."""

import pathlib

from seq2seq_attn.special_tokens import UNK


def load_dictionary(path):
    """A word dictionary: one `source<TAB or space>target` pair per line.

    Raises:
        ValueError: naming the file and line of a malformed entry.
    """
    dictionary = {}
    lines = pathlib.Path(path).read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split("\t") if "\t" in line else line.split()
        if len(parts) != 2:
            raise ValueError(
                f"{path}:{number}: expected 'source<TAB>target', got {line!r}"
            )
        dictionary.setdefault(parts[0].strip(), parts[1].strip())
    return dictionary


def replace_unknown_words(
    target_tokens, alignment, source_tokens, dictionary=None
):
    """Replaces each <unk> of `target_tokens`.

    Args:
        target_tokens: output token strings (without </s>).
        alignment: attention weights, one row per output token and one column
            per source token (at least len(target_tokens) x len(source_tokens)).
        source_tokens: the source token strings.
        dictionary: optional source-word -> target-word mapping; words not in
            it are copied.

    Returns:
        The tokens with every <unk> replaced.
    """
    dictionary = dictionary or {}
    replaced = []
    for step, token in enumerate(target_tokens):
        if token == UNK and len(source_tokens):
            row = alignment[step][: len(source_tokens)]
            source = source_tokens[max(range(len(row)), key=row.__getitem__)]
            token = dictionary.get(source, source)
        replaced.append(token)
    return replaced
