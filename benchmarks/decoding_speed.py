"""Greedy and beam-5 decoding speed of a trained model on Multi30k test2016.

    python benchmarks/decoding_speed.py --model_dir=runs/m30k_rnnsearch \
        [--data_dir=../shared/data] [--batch_size=64] \
        [--length_penalty=average --alpha=0.75] [--output_prefix=PREFIX]

Prints sentences/s for greedy search and beam search (K = 5) over the 1,000
test sentences, each after one warm-up pass (tracing), and the BLEU of both
with the run's `--bleu_tokenize` (cased 13a against the raw references for a
raw-text run, `none` on the tokenised text for a tok run). With
--output_prefix the translations go to PREFIX.greedy and PREFIX.beam5.
"""

import argparse
import os
import pathlib
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument(
        "--length_penalty",
        default="average",
        choices=("none", "average", "gnmt"),
        help="beam search length normalisation (JoeyNMT's is gnmt, alpha 1)",
    )
    parser.add_argument("--alpha", type=float, default=0.75)
    parser.add_argument("--output_prefix", default=None)
    parser.add_argument(
        "--precision", default="float32", choices=("float32", "bfloat16")
    )
    args = parser.parse_args()

    from multi30k_inputs import test2016

    from seq2seq_attn.config.scoring import Scoring
    from seq2seq_attn.evaluation.bleu import corpus_bleu
    from seq2seq_attn.model_dir import load_translator

    data, test = test2016(args.model_dir, args.data_dir)
    print(
        f"{args.model_dir}: {len(test)} test2016 sentences, "
        f"batch {args.batch_size}, {args.precision}"
    )
    scoring = Scoring(length_penalty=args.length_penalty, alpha=args.alpha)
    for name, beam in (("greedy", 1), ("beam 5", 5)):
        translator = load_translator(
            [args.model_dir],
            precision=args.precision,
            beam_size=beam,
            batch_size=args.batch_size,
            scoring=scoring,
        )
        translator.translate(test.sources[: args.batch_size])  # trace
        started = time.perf_counter()
        results = translator.translations(test.sources)
        elapsed = time.perf_counter() - started
        bleu = corpus_bleu(
            [r.text for r in results], test.targets, data.bleu_tokenize
        )
        if args.output_prefix:
            suffix = "greedy" if beam == 1 else f"beam{beam}"
            if args.precision != "float32":
                suffix += f".{args.precision}"
            pathlib.Path(f"{args.output_prefix}.{suffix}").write_text(
                "".join(r.text + "\n" for r in results)
            )
        print(
            f"{name}: {len(test) / elapsed:.1f} sentences/s ({elapsed:.1f} s), "
            f"BLEU {bleu.value:.2f} ({bleu.signature})"
        )


if __name__ == "__main__":
    main()
