import json
import os
import sys

import commands
import numpy as np
import pytest
from conftest import SHARED_DATA, sacrebleu_cache

from seq2seq_attn.evaluation.alignment_error_rate import (
    alignment_error_rate,
    links_from_attention,
    parse_naacl,
    parse_talp,
    word_ids,
)
from seq2seq_attn.evaluation.bleu import corpus_bleu, corpus_chrf
from seq2seq_attn.evaluation.length_buckets import bleu_by_length, buckets_table


def test_aer_of_a_hand_made_gold_set(tmp_path):
    # Sentence 1: sure {(0,0), (1,2)}, possible also {(2,1)}.
    # Sentence 2: sure {(0,1)}, possible also {(1,1)}.
    gold_file = tmp_path / "gold.talp"
    gold_file.write_text("0-0 1-2 2p1\n0-1 1?1\n")
    gold = parse_talp(gold_file)
    assert gold[0].sure == {(0, 0), (1, 2)}
    assert gold[0].possible == {(0, 0), (1, 2), (2, 1)}
    predicted = [{(0, 0), (2, 1), (1, 1)}, {(1, 1)}]
    # |A| = 4, |S| = 3; A & S = {(0,0)}: 1;
    # A & P = {(0,0), (2,1)} in sentence 1 and {(1,1)} in sentence 2: 3.
    # AER = 1 - (1 + 3) / (4 + 3) = 3/7.
    assert alignment_error_rate(predicted, gold) == pytest.approx(3 / 7)
    perfect = [{(0, 0), (1, 2)}, {(0, 1)}]
    assert alignment_error_rate(perfect, gold) == 0.0


def test_talp_options_and_naacl_format(tmp_path):
    talp = tmp_path / "g.talp"
    talp.write_text("1-2 3p1\n")
    gold = parse_talp(talp, source_first=False, one_based=True)
    assert gold[0].sure == {(1, 0)} and gold[0].possible == {(1, 0), (0, 2)}
    naacl = tmp_path / "g.naacl"
    naacl.write_text("1 1 2 S\n1 3 1 P\n3 2 2\n")
    gold = parse_naacl(naacl, sentences=3)
    assert gold[0].sure == {(0, 1)} and gold[0].possible == {(0, 1), (2, 0)}
    assert gold[1].possible == set()
    assert gold[2].sure == {(1, 1)}
    talp.write_text("1-2 x\n")
    with pytest.raises(ValueError, match="g.talp:1: cannot read link 'x'"):
        parse_talp(talp)


def test_subwords_map_back_to_words():
    assert word_ids(["the", "house"], "word") == [0, 1]
    assert word_ids(["play", "##ing", "dogs"], "wordpiece") == [0, 0, 1]
    assert word_ids(["\u2581play", "ing", "\u2581dogs"], "sentencepiece") == [
        0,
        0,
        1,
    ]
    # Target words: "spielende"(pieces 0,1) "hunde"(piece 2);
    # source words: "playing"(pieces 0,1) "dogs"(piece 2).
    attention = np.array([[0.3, 0.3, 0.4], [0.4, 0.2, 0.4], [0.1, 0.0, 0.9]])
    links = links_from_attention(attention, [0, 0, 1], [0, 0, 1])
    assert links == {(0, 0), (1, 1)}


def test_bleu_by_length_buckets():
    sources = ["a b", "a b c d e f g h i j k l", "x y z"]
    references = [
        "das ist ein test",
        "noch ein langer satz hier",
        "kurz und gut .",
    ]
    hypotheses = ["das ist ein test", "völlig anders", "kurz und gut ."]
    buckets = bleu_by_length(sources, hypotheses, references, edges=(10,))
    assert [(b.label, b.sentences) for b in buckets] == [
        ("1-10", 2),
        (">10", 1),
    ]
    assert buckets[0].bleu == pytest.approx(100.0)
    assert buckets[1].bleu == pytest.approx(0.0)
    table = buckets_table({"m": buckets})
    assert "| 1-10 | 2 | 100.00 |" in table


def test_bleu_and_chrf_carry_signatures():
    score = corpus_bleu(["a b c d"], ["a b c d"], tokenize="none")
    assert score.value == pytest.approx(100.0) and "tok:none" in score.signature
    assert "chrF" in str(corpus_chrf(["a b"], ["a c"]))
    with pytest.raises(ValueError, match="1 hypotheses but 2 references"):
        corpus_bleu(["a"], ["a", "b"])


@pytest.mark.slow
def test_evaluate_cli(trained_model_dir, tmp_path):
    sources = ["a man is riding a bike .", "two dogs run on the \xff grass ."]
    references = [
        "ein mann fährt fahrrad .",
        "zwei hunde laufen auf dem gras .",
    ]
    (tmp_path / "src").write_bytes("\n".join(sources).encode("latin-1") + b"\n")
    (tmp_path / "ref").write_text("\n".join(references) + "\n")
    (tmp_path / "gold").write_text("0-0 1-1 2-2\n0-0 1-1\n")
    out = tmp_path / "eval"
    command = [
        sys.executable,
        "-m",
        "seq2seq_attn.evaluate",
        f"--model_dir={trained_model_dir}",
        f"--src={tmp_path / 'src'}",
        f"--ref={tmp_path / 'ref'}",
        "--bleu_tokenize=none",
        "--beam_size=3",
        f"--output_dir={out}",
        f"--gold_alignments={tmp_path / 'gold'}",
        "--heatmaps=0,1",
    ]
    # The error names the flag that reads past the bad byte, which evaluate
    # has (it was translate's only: "Unknown command line flag").
    refused = commands.run(command, text=True, timeout=600)
    assert refused.returncode == 2
    assert "src:2: invalid UTF-8" in refused.stderr
    assert "--invalid_utf8" in refused.stderr
    result = commands.run(
        [*command, "--invalid_utf8=replace"], text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "BLEU = " in result.stdout and "tok:none" in result.stdout
    assert "chrF = " in result.stdout and "AER = " in result.stdout
    assert (out / "bleu_by_length.png").stat().st_size > 1000
    assert (out / "attention_0.png").stat().st_size > 1000
    metrics = json.loads((out / "metrics.json").read_text())
    assert 0.0 <= metrics["aer"] <= 1.0
    assert len((out / "hypotheses.txt").read_text().splitlines()) == 2


@pytest.mark.slow
def test_evaluate_cli_names_an_ensemble_and_reads_a_named_test_set(
    trained_model_dir, tmp_path
):
    # newstest2014 from sacreBLEU's registry, as it would be after its
    # download (two Multi30k lines standing in), in the model's en-de.
    sources = ["a man is riding a bike .", "two dogs run on the grass ."]
    references = ["ein mann fährt fahrrad .", "zwei hunde laufen ."]
    sacrebleu_cache(
        tmp_path / "sacrebleu", "wmt14", "en-de", sources, references
    )
    environment = {**os.environ, "SACREBLEU": str(tmp_path / "sacrebleu")}
    result = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.evaluate",
            f"--model_dir={trained_model_dir},{trained_model_dir}",
            "--test_set=wmt14",
            f"--output_dir={tmp_path / 'eval'}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    name = trained_model_dir.name
    assert f"ensemble of {name} + {name}" in result.stdout
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics["sentences"] == 2


@pytest.mark.slow
def test_evaluate_scores_the_package_s_own_test_split(
    trained_model_dir, tmp_path
):
    # Scoring Multi30k's test2016 (or the Tatoeba test split) meant writing
    # it out with load_corpus first.
    environment = {**os.environ, "SEQ2SEQ_ATTN_DATA_DIR": str(SHARED_DATA)}
    result = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.evaluate",
            f"--model_dir={trained_model_dir}",
            "--test_set=multi30k",
            "--beam_size=1",
            "--heatmaps=",
            f"--output_dir={tmp_path / 'eval'}",
        ],
        text=True,
        timeout=600,
        env=environment,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics["sentences"] == 1000  # test_2016_flickr
    hypotheses = (tmp_path / "eval" / "hypotheses.txt").read_text()
    assert len(hypotheses.splitlines()) == 1000


def test_multi30k_s_later_test_sets_are_named_test_sets(tmp_path, monkeypatch):
    # What the README offers beside the package's own test2016: the 2017
    # and 2018 Flickr sets of sacreBLEU's registry, as they would be after
    # its download (two lines standing in).
    from sacrebleu.dataset import DATASETS

    from seq2seq_attn.data.wmt_sets import named_test_set

    for name in ("multi30k/2017", "multi30k/2018"):
        lines = [f"{name} source {i}" for i in range(2)]
        references = [f"{name} reference {i}" for i in range(2)]
        outdir = sacrebleu_cache(tmp_path, name, "en-de", lines, references)
        monkeypatch.setattr(DATASETS[name], "_outdir", str(outdir))
        source, reference = named_test_set(name, "en-de")
        assert open(source).read().splitlines() == lines
        assert open(reference).read().splitlines() == references


def test_named_test_sets_fail_clearly():
    from seq2seq_attn.data.wmt_sets import named_test_set

    with pytest.raises(
        ValueError, match="no test set 'wmt99'.*multi30k/2018.*wmt14"
    ):
        named_test_set("wmt99", "en-de")
    with pytest.raises(ValueError, match="wmt14 has no language pair 'en-xx'"):
        named_test_set("wmt14", "en-xx")
