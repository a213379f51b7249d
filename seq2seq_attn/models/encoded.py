"""What an inference encoder hands its decoder steps, in the two kinds a
search treats differently."""

from typing import NamedTuple


class Encoded(NamedTuple):
    """What a form's `encode` gives its steps, split by how a search must
    treat it when it keeps K hypotheses per sentence.

    Attributes:
        rows: tensors with one row per hypothesis (keys, masks): a search
            tiles them K times and gathers them as hypotheses move
            (`map_rows`).
        sentences: tensors with one row per source sentence, which all its
            hypotheses share (RNNsearch's projected annotations C h_j): a
            search leaves them alone; `rows["sentence"]` gives each row's.
    """

    rows: dict
    sentences: dict
