"""`python -m seq2seq_attn.evaluate`: translate a test set and score it.

    python -m seq2seq_attn.evaluate --model_dir=runs/m30k_rnnsearch \
        --src=test.en --ref=test.de --bleu_tokenize=none \
        [--gold_alignments=gold.talp] [--heatmaps=0,1,2]
    python -m seq2seq_attn.evaluate --model_dir=runs/rnnsearch50 \
        --test_set=wmt14        # newstest2014, from sacreBLEU's registry
    python -m seq2seq_attn.evaluate --model_dir=runs/quickstart \
        --test_set=multi30k     # the package's own: multi30k, anki

Prints sacreBLEU BLEU and chrF with their signatures and BLEU by source
length (Bahdanau Fig. 2, Luong Fig. 6) as a table, and writes to
`--output_dir` (default MODEL_DIR/eval): the hypotheses, `bleu_by_length.png`,
attention heatmaps of the chosen sentences (Bahdanau Fig. 3) and
`metrics.json`. With `--gold_alignments`, the alignment error rate of forced
decoding of the references (Luong 5.4).
"""

import json
import pathlib
import sys

from absl import app, flags, logging

from seq2seq_attn import cli
from seq2seq_attn.cli import search_flags, translator_flags
from seq2seq_attn.config.run import DataConfig, bleu_tokenizers

FLAGS = flags.FLAGS
flags.DEFINE_string("src", None, "Source sentences, one per line (.gz too).")
flags.DEFINE_string("ref", None, "Reference translations, line-aligned.")
flags.DEFINE_string(
    "test_set",
    None,
    "A named test set instead of --src/--ref: the package's own corpora's "
    "(multi30k: Multi30k's test2016, in the model's variant; anki: the "
    "Tatoeba test split), or a sacreBLEU one, e.g. wmt14 (newstest2014) or "
    "multi30k/2017 and multi30k/2018 (Multi30k's later Flickr test sets, raw "
    "text), downloaded once into ~/.sacrebleu ($SACREBLEU).",
)
flags.DEFINE_string(
    "langpair",
    None,
    "--test_set's language pair (default: the model's, e.g. en-fr).",
)
flags.DEFINE_string(
    "output_dir", None, "Where to write (default MODEL_DIR/eval)."
)
flags.DEFINE_enum(
    "bleu_tokenize",
    DataConfig.bleu_tokenize,
    list(bleu_tokenizers()),
    "sacreBLEU's tokenizer (the choices of the train command's "
    "--bleu_tokenize): 13a (the standard signature, detokenised output "
    "against raw references), none (the Multi30k convention on tok/ text), "
    "or another of sacreBLEU's.",
)
flags.DEFINE_list(
    "length_edges", ["10", "20", "30", "40", "50"], "Bucket edges."
)
flags.DEFINE_list("heatmaps", ["0", "1", "2"], "Sentence indices to draw.")
flags.DEFINE_string("gold_alignments", None, "Gold alignments for AER.")
flags.DEFINE_enum("alignment_format", "talp", ["talp", "naacl"], "Gold format.")
flags.DEFINE_bool("gold_source_first", True, "Gold links are source-target.")
flags.DEFINE_bool("gold_one_based", False, "Gold indices count from 1.")
flags.register_multi_flags_validator(
    ["src", "ref", "test_set"],
    lambda values: (
        bool(values["test_set"]) != bool(values["src"] and values["ref"])
    ),
    "give --src and --ref, or --test_set",
)


def forced_alignment_links(translator, sources, references):
    """Luong 5.4: teacher-force each reference, link every target word to the
    source word it attends to most (subwords summed into words)."""
    import numpy as np

    from seq2seq_attn.data.text_to_ids import padded_ids, sentence_ids
    from seq2seq_attn.decoding.forced_alignment import forced_alignment
    from seq2seq_attn.evaluation.alignment_error_rate import (
        links_from_attention,
        word_ids,
    )
    from seq2seq_attn.models.builder import alignment_model
    from seq2seq_attn.models.inference import InferenceForm

    if not isinstance(translator.form, InferenceForm):
        raise ValueError("alignments are read from one model, not an ensemble")
    aligner = alignment_model(translator.form.model)
    source_ids = translator.encode(sources)
    target_ids = sentence_ids(translator.target_tokenizer, references)
    source_tokens = translator.source_tokenizer.tokens(sources).to_list()
    target_tokens = translator.target_tokenizer.id_to_token(
        target_ids
    ).to_list()
    links = []
    for i in range(len(sources)):
        if not len(source_ids[i]) or not len(target_ids[i]):
            links.append(set())
            continue
        _, attention = forced_alignment(
            aligner, padded_ids(source_ids[i : i + 1]), target_ids[i : i + 1]
        )
        source_words = word_ids(
            [t.decode() for t in source_tokens[i]],
            translator.source_tokenizer.kind,
        )
        target_words = word_ids(
            [t.decode() for t in target_tokens[i]],
            translator.target_tokenizer.kind,
        )
        links.append(
            links_from_attention(
                np.asarray(attention)[0], source_words, target_words
            )
        )
    return links


def _write_heatmaps(translator, corpus, results, output, indices):
    """The attention heatmaps of the sentences `indices`."""
    from seq2seq_attn.evaluation.plots import attention_heatmap

    for index in indices:
        result = results[index] if index < len(results) else None
        if result is None or result.alignment is None:
            continue
        source_tokens = translator.source_tokenizer.tokens(
            [corpus.sources[index]]
        )
        words = translator.target_tokenizer.id_to_token(result.tokens)
        path = attention_heatmap(
            result.alignment,
            [t.decode() for t in source_tokens.to_list()[0]],
            [w.decode() for w in words.numpy().tolist()] + ["</s>"],
            output / f"attention_{index}.png",
        )
        print(f"wrote {path}")


def _gold_alignments(corpus):
    """`--gold_alignments`, parsed (before any translation)."""
    from seq2seq_attn.evaluation import alignment_error_rate as aer

    if FLAGS.alignment_format == "talp":
        return aer.parse_talp(
            FLAGS.gold_alignments, FLAGS.gold_source_first, FLAGS.gold_one_based
        )
    return aer.parse_naacl(
        FLAGS.gold_alignments,
        len(corpus),
        FLAGS.gold_source_first,
        FLAGS.gold_one_based,
    )


def _alignment_error_rate(translator, corpus, gold):
    """AER of the forced alignments against the `gold` alignments."""
    from seq2seq_attn.evaluation import alignment_error_rate as aer

    links = forced_alignment_links(translator, corpus.sources, corpus.targets)
    rate = aer.alignment_error_rate(links, gold)
    print(f"AER = {rate:.4f} ({len(gold)} sentence pairs)")
    return rate


def _integers(name, values, ascending=False):
    """The non-negative integers of a list flag (at least one, ascending,
    if `ascending`), or a ValueError naming the flag and the value."""
    if ascending and not values:
        raise ValueError(f"--{name}: give at least one integer")
    numbers = []
    for value in values:
        if not value.strip().isdigit():
            raise ValueError(
                f"--{name}: {value!r} is not a non-negative integer"
            )
        numbers.append(int(value))
    if ascending and numbers != sorted(set(numbers)):
        raise ValueError(f"--{name} must ascend, got {','.join(values)}")
    return numbers


# The package's own test splits: --test_set name -> (corpus, split).
OWN_TEST_SETS = {"multi30k": ("multi30k", "test2016"), "anki": ("anki", "test")}


def _test_corpus():
    """The test pairs: --src and --ref, or --test_set's in --langpair (by
    default the first model's languages): one of the package's corpora
    (`OWN_TEST_SETS`, read as the model's data config reads them), or a
    sacreBLEU test set."""
    from seq2seq_attn.data.corpora import load_corpus
    from seq2seq_attn.data.text_stream import ParallelText

    if not FLAGS.test_set:
        text = ParallelText.from_files([FLAGS.src], [FLAGS.ref])
        return text.read(FLAGS.invalid_utf8)
    from seq2seq_attn.config.run import RunConfig
    from seq2seq_attn.data.wmt_sets import named_test_set

    data = RunConfig.load(FLAGS.model_dir[0]).data
    langpair = FLAGS.langpair or f"{data.source}-{data.target}"
    if FLAGS.test_set in OWN_TEST_SETS:
        name, split = OWN_TEST_SETS[FLAGS.test_set]
        return load_corpus(
            name,
            split,
            *langpair.split("-", 1),
            variant=data.variant if name == "multi30k" else "raw",
            data_dir=data.data_dir,
            invalid_utf8=FLAGS.invalid_utf8,
        )
    source, reference = named_test_set(FLAGS.test_set, langpair)
    text = ParallelText.from_files([source], [reference])
    return text.read(FLAGS.invalid_utf8)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)
    from seq2seq_attn.evaluation.bleu import corpus_bleu, corpus_chrf
    from seq2seq_attn.evaluation.length_buckets import (
        bleu_by_length,
        buckets_table,
    )
    from seq2seq_attn.evaluation.plots import bleu_by_length_plot

    output = pathlib.Path(
        FLAGS.output_dir or pathlib.Path(FLAGS.model_dir[0]) / "eval"
    )
    try:
        # Everything that can be refused, before any translation.
        edges = _integers("length_edges", FLAGS.length_edges, ascending=True)
        heatmaps = _integers("heatmaps", FLAGS.heatmaps)
        if FLAGS.gold_alignments and len(FLAGS.model_dir) > 1:
            raise ValueError(
                "--gold_alignments: alignments are read from one model, not "
                "an ensemble; give one --model_dir"
            )
        cli.check_writable_folder(output)
        corpus = _test_corpus()
        gold = _gold_alignments(corpus) if FLAGS.gold_alignments else None
        translator = translator_flags.translator_from_flags("evaluate")
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    if corpus.report.kept != corpus.report.read:
        print(f"note: {corpus.report.summary()}", file=sys.stderr)
    output.mkdir(parents=True, exist_ok=True)
    results = translator.translations(corpus.sources, progress=True)
    search_flags.warn_if_cut(results, translator.config.max_input_tokens)
    hypotheses = [result.text for result in results]
    (output / "hypotheses.txt").write_text(
        "".join(h + "\n" for h in hypotheses)
    )
    bleu = corpus_bleu(hypotheses, corpus.targets, FLAGS.bleu_tokenize)
    chrf = corpus_chrf(hypotheses, corpus.targets)
    print(bleu)
    print(chrf)
    buckets = bleu_by_length(
        corpus.sources, hypotheses, corpus.targets, edges, FLAGS.bleu_tokenize
    )
    name = " + ".join(pathlib.Path(path).name for path in FLAGS.model_dir)
    if len(FLAGS.model_dir) > 1:
        name = f"ensemble of {name}"
    print(buckets_table({name: buckets}))
    bleu_by_length_plot({name: buckets}, output / "bleu_by_length.png")
    metrics = {
        "bleu": bleu.value,
        "bleu_signature": bleu.signature,
        "chrf": chrf.value,
        "chrf_signature": chrf.signature,
        "bleu_by_length": [vars(b) for b in buckets],
        "sentences": len(hypotheses),
    }
    _write_heatmaps(translator, corpus, results, output, heatmaps)
    if gold is not None:
        metrics["aer"] = _alignment_error_rate(translator, corpus, gold)
    (output / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"wrote {output / 'metrics.json'}")


def command():
    """The command line: `main` under `cli.run`."""
    cli.run(main)


if __name__ == "__main__":
    command()
