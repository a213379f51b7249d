"""What the default output length limit changes on Multi30k test2016.

    python benchmarks/length_guard.py runs/quickstart runs/m30k_rnnsearch \
        [--data_dir=../shared/data] [--beam_size=5]

For each trained model: test2016 translated with the default limit,
ceil(1.5 |x| + 5) tokens with </s> (`SearchConfig.max_length_a/b`), and with
a limit far beyond any output (a = 0, b = 1,000: the search then stops only
at </s>, up to 1,000 tokens). Prints the lines that differ, the outputs that
reach the default limit, the longest output of each, and both BLEU scores
with the run's `--bleu_tokenize`; with `--no_repeat_ngram_size=n` a third
pass with the n-gram block on top of the default limit.
"""

import argparse
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
LOOSE = dict(max_length_a=0.0, max_length_b=1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dirs", nargs="+")
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
    parser.add_argument("--beam_size", type=int, default=5)
    parser.add_argument("--no_repeat_ngram_size", type=int, default=0)
    args = parser.parse_args()

    from multi30k_inputs import test2016

    from seq2seq_attn.config import SearchConfig
    from seq2seq_attn.evaluation.bleu import corpus_bleu
    from seq2seq_attn.model_dir import load_translator

    default = SearchConfig()
    print(
        f"default limit: ceil({default.max_length_a:g} |x| + "
        f"{default.max_length_b:g}); loose: a = 0, b = 1,000; beam "
        f"{args.beam_size}"
    )
    passes = {"default": {}, "loose": LOOSE}
    if args.no_repeat_ngram_size:
        passes[f"block {args.no_repeat_ngram_size}"] = dict(
            no_repeat_ngram_size=args.no_repeat_ngram_size
        )
    for model_dir in args.model_dirs:
        data, test = test2016(model_dir, args.data_dir)
        outputs = {}
        for name, options in passes.items():
            translator = load_translator(
                [model_dir], beam_size=args.beam_size, **options
            )
            outputs[name] = translator.translations(test.sources)
        texts = {name: [r.text for r in rs] for name, rs in outputs.items()}
        # The limit counts </s>; `tokens` excludes it.
        capped = sum(
            len(r.tokens) + 1 >= _limit(len(r.source_ids), default)
            for r in outputs["default"]
            if len(r.source_ids)
        )
        print(f"{model_dir}: {len(test)} sentences, {data.bleu_tokenize}")
        for name, lines in texts.items():
            bleu = corpus_bleu(lines, test.targets, data.bleu_tokenize)
            changed = sum(
                a != b for a, b in zip(lines, texts["default"], strict=True)
            )
            longest = max(len(r.tokens) for r in outputs[name])
            print(
                f"  {name}: BLEU {bleu.value:.2f}, {changed} line(s) differ "
                f"from the default, longest output {longest} tokens (</s> "
                "excluded)"
            )
        print(f"  {capped} output(s) reach the default limit")


def _limit(source_tokens, config):
    import math

    return math.ceil(config.max_length_a * source_tokens + config.max_length_b)


if __name__ == "__main__":
    main()
