"""The search settings of a trained model chosen on validation, then test2016.

    python benchmarks/search_settings.py --model_dir=runs/m30k_best_tok \
        [--beams 5,10] [--penalties none,average:0.75,average:1.0,gnmt:1.0] \
        [--data_dir=../shared/data] [--batch_size=64]

Decodes Multi30k val with every beam width and length penalty of the grid
(`average:A` divides the log-probability by length^A, `gnmt:A` by GNMT's
((5 + length) / 6)^A, `none` leaves it), prints each one's val BLEU with the
run's `--bleu_tokenize`, then decodes test2016 once with the setting that
scored best on val, and once with beam 5 and `average:0.75` (what
`benchmarks/decoding_speed.py` reports), so that the test figure is not
chosen on the test set.
"""

import argparse
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
REFERENCE_SETTING = (5, "average:0.75")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--beams", default="5,10")
    parser.add_argument(
        "--penalties", default="none,average:0.75,average:1.0,gnmt:1.0"
    )
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args()

    from seq2seq_attn.config.run import RunConfig
    from seq2seq_attn.config.scoring import Scoring
    from seq2seq_attn.data import load_corpus
    from seq2seq_attn.evaluation.bleu import corpus_bleu
    from seq2seq_attn.model_dir import load_translator

    data = RunConfig.load(args.model_dir).data

    def corpus(split):
        return load_corpus(
            "multi30k",
            split,
            data.source,
            data.target,
            variant=data.variant,
            data_dir=args.data_dir,
        )

    def bleu(split_corpus, beam, penalty):
        kind, _, alpha = penalty.partition(":")
        translator = load_translator(
            [args.model_dir],
            beam_size=beam,
            batch_size=args.batch_size,
            scoring=Scoring(length_penalty=kind, alpha=float(alpha or 1.0)),
        )
        outputs = [
            r.text for r in translator.translations(split_corpus.sources)
        ]
        return corpus_bleu(outputs, split_corpus.targets, data.bleu_tokenize)

    val, test = corpus("val"), corpus("test2016")
    scores = {}
    for beam in (int(b) for b in args.beams.split(",")):
        for penalty in args.penalties.split(","):
            score = bleu(val, beam, penalty)
            scores[beam, penalty] = score.value
            print(
                f"val, beam {beam}, {penalty}: BLEU {score.value:.2f}",
                flush=True,
            )
    chosen = max(scores, key=scores.get)
    print(f"chosen on val: beam {chosen[0]}, {chosen[1]}")
    for beam, penalty in dict.fromkeys([chosen, REFERENCE_SETTING]):
        score = bleu(test, beam, penalty)
        print(
            f"test2016, beam {beam}, {penalty}: BLEU {score.value:.2f} "
            f"({score.signature})",
            flush=True,
        )


if __name__ == "__main__":
    main()
