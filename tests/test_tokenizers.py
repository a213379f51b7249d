import gc
import json
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import SHARED_DATA

from seq2seq_attn.data import (
    BOS_ID,
    EOS_ID,
    UNK_ID,
    SentencePieceTokenizer,
    WordTokenizer,
    build_tokenizer,
    load_corpus,
    load_tokenizer,
)
from seq2seq_attn.data.tokenizers import unk_rate
from seq2seq_attn.export.ops import disallowed_ops, saved_model_ops


@pytest.fixture(scope="module")
def multi30k_tok():
    return {
        split: load_corpus(
            "multi30k", split, "en", "de", variant="tok", data_dir=SHARED_DATA
        )
        for split in ("train", "val")
    }


@pytest.fixture(scope="module")
def multi30k_raw():
    return {
        split: load_corpus("multi30k", split, "en", "de", data_dir=SHARED_DATA)
        for split in ("train", "val")
    }


def test_word_shortlist_ids_and_unknown_words(tmp_path):
    texts = ["b a c a", "a b", "d"]
    tokenizer = WordTokenizer.build(texts, tmp_path, max_size=6)
    assert tokenizer.vocab_size == 6
    lines = (tmp_path / "vocab.txt").read_text().split("\n")
    assert lines[:6] == ["<pad>", "<unk>", "<s>", "</s>", "a", "b"]
    ids = tokenizer.tokenize(["a b zzz c", "d"]).to_list()
    # Unknown words get <unk> (1), never len(vocabulary).
    assert ids == [[4, 5, UNK_ID, UNK_ID], [UNK_ID]]
    text = tokenizer.detokenize(tf.constant([[BOS_ID, 4, 5, EOS_ID, 4, 0]]))
    assert text.numpy().tolist() == [b"a b"]


def test_word_lowercasing_and_save_load(tmp_path):
    tokenizer = WordTokenizer.build(
        ["Das Haus", "das Boot"], tmp_path, lowercase=True
    )
    reloaded = load_tokenizer(tmp_path)
    assert isinstance(reloaded, WordTokenizer) and reloaded.lowercase
    for t in (tokenizer, reloaded):
        assert t.tokenize(["DAS haus"]).to_list() == [[4, 6]]
    assert reloaded.fingerprint() == tokenizer.fingerprint()


def test_word_split_at_punctuation_reads_raw_text(multi30k_raw, tmp_path):
    train, val = multi30k_raw["train"], multi30k_raw["val"]
    tokenizer = WordTokenizer.build(
        train.targets, tmp_path, max_size=30000, split_punctuation=True
    )
    reloaded = load_tokenizer(tmp_path)
    assert reloaded.split_punctuation and reloaded.options == {
        "lowercase": False,
        "split_punctuation": True,
    }
    words = tokenizer.tokens(["Ein T-Shirt (rot), 3,5\u00a0m: „gut“."])
    assert words.to_list()[0] == [
        w.encode()
        for w in "Ein T - Shirt ( rot ) , 3 , 5 m : „ gut “ .".split()
    ]
    vocabulary = set((tmp_path / "vocab.txt").read_text().split("\n"))
    assert {".", ",", "Hund"} <= vocabulary and "Hund." not in vocabulary
    # A whitespace split on raw text learns "Hund." and "Hund" apart.
    plain = WordTokenizer.build(train.targets, tmp_path / "plain")
    print(
        f"raw Multi30k val de <unk>: split at punctuation "
        f"{unk_rate(tokenizer, val.targets):.2%}, at whitespace only "
        f"{unk_rate(plain, val.targets):.2%}"
    )
    assert unk_rate(tokenizer, val.targets) < unk_rate(plain, val.targets)
    # Words are put back together by rule: the sentences without <unk>
    # come back as they were (but for quotes and the like).
    ids = tokenizer.tokenize(val.targets)
    back = tokenizer.detokenize(ids.to_tensor()).numpy()
    known = [
        (restored.decode(), text)
        for restored, text, row in zip(
            back, val.targets, ids.to_list(), strict=True
        )
        if UNK_ID not in row
    ]
    same = sum(restored == text for restored, text in known)
    print(f"{same} of {len(known)} raw val sentences restored exactly")
    assert same > 0.99 * len(known) and len(known) > 0.5 * len(val)


def test_word_split_at_whitespace_keeps_multibyte_spaces_whole(tmp_path):
    # tensorflow-text 2.20's WhitespaceTokenizer cuts U+00A0 in half.
    tokenizer = WordTokenizer.build(["Madagascar\u00a02 a\u2009b"], tmp_path)
    assert tokenizer.tokens(["Madagascar\u00a02 a\u2009b"]).to_list() == [
        [b"Madagascar", b"2", b"a", b"b"]
    ]
    assert UNK_ID not in tokenizer.tokenize(["Madagascar\u00a02"]).flat_values


def test_word_unk_rate_on_multi30k_val(multi30k_tok, tmp_path):
    train, val = multi30k_tok["train"], multi30k_tok["val"]
    for side, texts, held_out in (
        ("en", train.sources, val.sources),
        ("de", train.targets, val.targets),
    ):
        tokenizer = WordTokenizer.build(texts, tmp_path / side, max_size=30000)
        rate = unk_rate(tokenizer, held_out)
        print(
            f"Multi30k val {side} <unk> rate, {tokenizer.vocab_size} words: "
            f"{rate:.2%}"
        )
        assert 0.0 < rate < 0.05


def test_sentencepiece_round_trips_all_of_multi30k_val(multi30k_raw, tmp_path):
    train, val = multi30k_raw["train"], multi30k_raw["val"]
    tokenizer = SentencePieceTokenizer.build(
        train.targets, tmp_path, vocab_size=4000, normalization="identity"
    )
    assert tokenizer.vocab_size == 4000
    for texts in (
        val.sources,
        val.targets,
        ["emoji 🙂 and ß, ğ,  two  spaces"],
    ):
        ids = tokenizer.tokenize(texts)
        assert not np.any(ids.flat_values.numpy() == UNK_ID)
        back = [t.decode("utf-8") for t in tokenizer.detokenize(ids).numpy()]
        assert back == list(texts)
    reloaded = load_tokenizer(tmp_path)
    assert (
        reloaded.tokenize(val.targets[:5]).to_list()
        == tokenizer.tokenize(val.targets[:5]).to_list()
    )


@pytest.mark.both_ends
def test_sentencepiece_normalizes_in_the_graph_and_outlives_a_seed(
    multi30k_raw, tmp_path
):
    texts = multi30k_raw["train"].targets[:3000]
    cased = build_tokenizer("sentencepiece", texts, tmp_path / "cased", 1000)
    folded = build_tokenizer(
        "sentencepiece", texts, tmp_path / "folded", 1000, lowercase=True
    )
    raw = [
        "  Ein  Mann fährt ein ﬁnes Ｆａｈｒｒａｄ.\t",
        "Cafe\u0301 déjà vu! 日本語, Привет.",
    ]
    # NFKC (ligature, full-width letters, combining accent), whitespace
    # collapsed and trimmed, by the op that the export runs as well.
    normalized = [
        "Ein Mann fährt ein fines Fahrrad.",
        "Café déjà vu! 日本語, Привет.",
    ]
    keras.utils.set_random_seed(1)  # clears TF's eager kernel cache
    for tokenizer, expected in (
        (cased, normalized),
        (folded, [t.lower() for t in normalized]),
        (load_tokenizer(tmp_path / "cased"), normalized),
    ):
        ids = tokenizer.tokenize(raw)
        assert not np.any(ids.flat_values.numpy() == UNK_ID)
        back = [t.decode() for t in tokenizer.detokenize(ids).numpy()]
        assert back == expected
    assert json.loads((tmp_path / "folded" / "tokenizer.json").read_text()) == {
        "kind": "sentencepiece",
        "options": {"normalization": "nmt_nfkc_cf"},
    }
    with pytest.raises(ValueError, match=r"lower the vocabulary size"):
        build_tokenizer("sentencepiece", texts[:50], tmp_path / "big", 30000)
    with pytest.raises(ValueError, match="normalization must be one of"):
        SentencePieceTokenizer.build(
            texts, tmp_path / "x", 100, normalization="nfc"
        )


def test_wordpiece_learns_and_detokenizes(multi30k_raw, tmp_path):
    texts = multi30k_raw["train"].sources[:3000]
    tokenizer = build_tokenizer(
        "wordpiece", texts, tmp_path, 2000, lowercase=True
    )
    assert 100 < tokenizer.vocab_size <= 2000
    assert (tmp_path / "wordpiece.txt").read_text().split("\n")[:4] == [
        "<pad>",
        "<unk>",
        "<s>",
        "</s>",
    ]
    ids = tokenizer.tokenize(["A dog runs through the grass."])
    assert np.all(ids.flat_values.numpy() >= 4)
    pieces = tokenizer.tokens(["A dog runs"]).to_list()[0]
    assert pieces[0] == b"a"
    text = tokenizer.detokenize(ids).numpy()[0].decode()
    assert text == "a dog runs through the grass."
    ids = tokenizer.tokenize(["A T-shirt (red), a man's hat; no."])
    text = tokenizer.detokenize(ids).numpy()[0].decode()
    assert text == "a t-shirt (red), a man's hat; no."
    assert isinstance(load_tokenizer(tmp_path), type(tokenizer))


def test_vocabulary_of_another_model_is_a_clear_error(tmp_path):
    tokenizer = WordTokenizer.build(["a b c"], tmp_path)
    with pytest.raises(ValueError, match="does not belong to this model"):
        tokenizer.check_vocab_size(30000, "source")
    with pytest.raises(FileNotFoundError, match="tokenizer.json missing"):
        load_tokenizer(tmp_path / "nowhere")
    (tmp_path / "vocab.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match="must start with"):
        load_tokenizer(tmp_path)


def test_tokenizers_made_one_after_another_keep_their_own_vocabulary(tmp_path):
    # TensorFlow shares a file's table under str(filename); for an Asset that
    # was its memory address, which a freed tokenizer's successor could reuse
    # (and then look words up in the freed one's vocabulary).
    for i in range(40):
        word = f"word{i}"
        tokenizer = WordTokenizer.build([word], tmp_path / str(i))
        assert tokenizer.tokenize([word]).to_list() == [[4]], i
        del tokenizer
        gc.collect()
    # A vocabulary rewritten in place is a new table.
    for word in ("first", "second"):
        tokenizer = WordTokenizer.build([word], tmp_path / "same")
        assert tokenizer.tokenize([word]).to_list() == [[4]], word


def _python(code):
    """The lines `code` prints in a new interpreter (which must succeed)."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip().splitlines()


def _table_names(export_path):
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    saved_model.ParseFromString((export_path / "saved_model.pb").read_bytes())
    graph = saved_model.meta_graphs[0].graph_def
    nodes = list(graph.node)
    for function in graph.library.function:
        nodes += function.node_def
    return {
        node.attr["shared_name"].s.decode()
        for node in nodes
        if node.op == "HashTableV2"
    }


@pytest.mark.slow
def test_saved_model_carries_vocabulary_as_asset(tmp_path, multi30k_tok):
    tokenizer = WordTokenizer.build(
        multi30k_tok["train"].targets, tmp_path / "v", split_punctuation=True
    )
    module = tf.Module()
    module.tokenizer = tokenizer
    module.tokenize = tf.function(
        lambda text: tokenizer.tokenize(text).to_tensor(),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(module, str(tmp_path / "export"))
    assert (tmp_path / "export" / "assets" / "vocab.txt").is_file()
    # The punctuation split runs in stock TF Serving.
    assert "RegexSplitWithOffsets" in saved_model_ops(tmp_path / "export")
    assert disallowed_ops(tmp_path / "export") == []
    # The vocabulary's two tables are two resources.
    assert len(_table_names(tmp_path / "export")) == 2
    (tmp_path / "v" / "vocab.txt").unlink()
    code = textwrap.dedent(
        f"""
        import tensorflow as tf, tensorflow_text
        loaded = tf.saved_model.load({str(tmp_path / "export")!r})
        ids = loaded.tokenize(tf.constant(["ein hund läuft."]))
        print(ids.numpy().tolist())
        """
    )
    expected = tokenizer.tokenize(["ein hund läuft."]).to_list()
    assert _python(code)[-1] == str(expected)


_EXPORT_ONE_VOCABULARY = """
import sys, tensorflow as tf, tensorflow_text
from seq2seq_attn.data import WordTokenizer
tokenizer = WordTokenizer.build(sys.argv[2].split(), sys.argv[1] + "/v")
module = tf.Module()
module.tokenizer = tokenizer
module.tokenize = tf.function(
    lambda text: tokenizer.tokenize(text).to_tensor(),
    input_signature=[tf.TensorSpec([None], tf.string, name="text")],
)
tf.saved_model.save(module, sys.argv[1] + "/export",
                    signatures={"serving_default": module.tokenize})
"""


@pytest.mark.slow
def test_exports_of_two_processes_keep_their_vocabularies_in_one(tmp_path):
    # A process that loads two exports written by two processes (TF2, and
    # TF1 sessions as TF Serving does) looks each word up in its own
    # export's vocabulary.
    words = {
        "a": "red red red green green blue",
        "b": "blue blue blue green green red",
    }
    for name, vocabulary in words.items():
        subprocess.run(
            [
                sys.executable,
                "-c",
                _EXPORT_ONE_VOCABULARY,
                str(tmp_path / name),
                vocabulary,
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
    code = textwrap.dedent(
        f"""
        import tensorflow as tf, tensorflow_text
        exports = [{str(tmp_path / "a" / "export")!r},
                   {str(tmp_path / "b" / "export")!r}]
        loaded = [tf.saved_model.load(path) for path in exports]
        print([m.tokenize(tf.constant(["red blue"])).numpy().tolist()
               for m in loaded])
        tf.compat.v1.disable_eager_execution()
        answers = []
        for path in exports:
            with tf.Graph().as_default() as graph:
                session = tf.compat.v1.Session(graph=graph)
                meta = tf.compat.v1.saved_model.loader.load(
                    session, ["serve"], path
                )
                signature = meta.signature_def["serving_default"]
                (output,) = signature.outputs.values()
                for _ in range(2):
                    answers.append(session.run(
                        output.name,
                        {{signature.inputs["text"].name: ["red blue"]}},
                    ).tolist())
        print(answers)
        """
    )
    eager, session = _python(code)[-2:]
    assert eager == "[[[4, 6]], [[6, 4]]]"
    assert session == "[[[4, 6]], [[4, 6]], [[6, 4]], [[6, 4]]]"
