"""BLEU by source length for several systems in one table and one plot (the
analogue of Bahdanau et al. 2015, Fig. 2, and Luong et al. 2015, Fig. 6).

    python benchmarks/bleu_by_length.py --src=test2016.en --ref=test2016.de \
        --plot=benchmarks/figures/m30k_bleu_by_length.png \
        RNNsearch=runs/m30k_rnnsearch/eval/hypotheses.txt \
        RNNencdec=runs/m30k_rnnencdec/eval/hypotheses.txt

Each NAME=FILE holds one translation per source line (what
`python -m seq2seq_attn.evaluate` writes to eval/hypotheses.txt). Sources and
references may be gzipped. BLEU is sacreBLEU's, with --tokenize (default
"none": the text is already tokenised).
"""

import argparse
import gzip
import pathlib


def read_lines(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as stream:
        return [line.rstrip("\n") for line in stream]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", required=True)
    parser.add_argument("--ref", required=True)
    parser.add_argument("--plot", required=True)
    parser.add_argument("--tokenize", default="none")
    parser.add_argument(
        "--edges",
        default="10,20,30,40,50",
        help="bucket edges in source words (Multi30k: 8,12,16,20,25)",
    )
    parser.add_argument("systems", nargs="+", metavar="NAME=FILE")
    args = parser.parse_args()

    from seq2seq_attn.evaluation.length_buckets import (
        bleu_by_length,
        buckets_table,
    )
    from seq2seq_attn.evaluation.plots import bleu_by_length_plot

    sources, references = read_lines(args.src), read_lines(args.ref)
    named = {}
    for system in args.systems:
        name, _, path = system.partition("=")
        hypotheses = read_lines(path)
        if len(hypotheses) != len(sources):
            raise SystemExit(
                f"{path}: {len(hypotheses)} lines, but {args.src} has "
                f"{len(sources)}"
            )
        named[name] = bleu_by_length(
            sources,
            hypotheses,
            references,
            edges=[int(edge) for edge in args.edges.split(",")],
            tokenize=args.tokenize,
        )
    print(buckets_table(named))
    pathlib.Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
    print(f"wrote {bleu_by_length_plot(named, args.plot)}")


if __name__ == "__main__":
    main()
