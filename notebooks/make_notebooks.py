"""Writes the tutorial notebooks from the cells below, and runs them.

    python notebooks/make_notebooks.py            # write and run, full mode
    SEQ2SEQ_ATTN_SHORT=1 python notebooks/make_notebooks.py --no-save

Edit the cells here, not in the .ipynb files: each notebook is written fresh
and executed top to bottom, so the committed outputs come from one full run.
With SEQ2SEQ_ATTN_SHORT=1 the notebooks use little data and few steps (what
CI runs, through tests/test_notebooks.py).
"""

import argparse
import pathlib
import time

import nbformat
from nbclient import NotebookClient

HERE = pathlib.Path(__file__).resolve().parent

SETUP = """\
import os, pathlib, warnings
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
warnings.filterwarnings("ignore")
import keras, numpy as np
from IPython.display import Image, Markdown, display

SHORT = os.environ.get("SEQ2SEQ_ATTN_SHORT") == "1"   # CI runs the notebooks short
# The corpora: the package's download cache if $SEQ2SEQ_ATTN_DATA_DIR names one,
# else a local copy (the project's shared data) if there is one, else the
# cache in ~/.cache/seq2seq_attn, which the package fills once.
CACHE = os.environ.get("SEQ2SEQ_ATTN_DATA_DIR")
DATA_DIR = None if CACHE else next(
    (str(p) for p in [pathlib.Path("../../shared/data"), pathlib.Path("../shared/data")]
     if p.is_dir()), None)
WORK = pathlib.Path("notebook_runs"); WORK.mkdir(exist_ok=True)
keras.utils.set_random_seed(0)
print("short mode" if SHORT else "full mode", "| data:",
      DATA_DIR or f"{CACHE or '~/.cache/seq2seq_attn'} (downloaded there once)")"""

DATA = """\
from seq2seq_attn.data import (WordTokenizer, encode_corpus, load_corpus,
                               make_dataset)

train = load_corpus("multi30k", "train", "en", "de", variant="tok", data_dir=DATA_DIR)
val = load_corpus("multi30k", "val", "en", "de", variant="tok", data_dir=DATA_DIR)
if SHORT:
    train, val = train.subset(range(1500)), val.subset(range(100))
print(train.report.summary())
print(len(train), "training pairs;", len(val), "validation pairs")
print("example:", train.sources[0], "->", train.targets[0])

source_vocab = WordTokenizer.build(train.sources, WORK / "vocab_en", max_size=6000)
target_vocab = WordTokenizer.build(train.targets, WORK / "vocab_de", max_size=8000)
encoded = encode_corpus(train, source_vocab, target_vocab, 50, 50)
batches = make_dataset(encoded, batch_size=64, sort_window=20, seed=0)
(source_ids, target_in), target_out = next(iter(batches))
print("one batch:", source_ids.shape, target_in.shape, target_out.shape)"""

NB1 = [
    (
        "md",
        """\
# 1. RNNsearch: learning to align and translate

Bahdanau, Cho and Bengio (2015) let the decoder look back at every source
word. This notebook builds their model from the package's layers, trains it
on Multi30k English to German, looks at its alignments (their Fig. 3) and
compares it with the RNN Encoder-Decoder that reads the source through one
fixed vector (their Table 1 and Fig. 2).""",
    ),
    ("code", SETUP),
    (
        "md",
        """\
## The data

Multi30k (Elliott et al. 2016): image captions, 29,000 training pairs. We use
the lowercased, tokenised text and a word shortlist per language (Bahdanau
4.1 uses the 30,000 most frequent words; Multi30k needs far fewer). Batches
are sorted by length in windows of 20 (Bahdanau B.2), which keeps padding
low. Ids 0-3 are `<pad>`, `<unk>`, `<s>`, `</s>`.""",
    ),
    ("code", DATA),
    (
        "md",
        """\
## The three pieces of RNNsearch

**The encoder** (A.2.1) is a bidirectional GRU; each annotation is
$h_j = [\\overrightarrow{h}_j; \\overleftarrow{h}_j]$. Padding is masked: the
backward GRU starts at each sentence's last real word.

**The alignment model** (A.1.2) scores each annotation against the previous
decoder state, $e_{ij} = v_a^\\top \\tanh(W_a s_{i-1} + U_a h_j)$, and a softmax
over $j$ gives the weights $\\alpha_{ij}$ of the context
$c_i = \\sum_j \\alpha_{ij} h_j$. $U_a h_j$ does not depend on $i$: it is
computed once per sentence (`project_keys`).

**The deep output** (A.2.2) is one maxout layer:
$\\tilde t_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i$, $t_i$ the maximum of
each pair, logits $W_o t_i$.""",
    ),
    (
        "code",
        """\
from seq2seq_attn.layers import BahdanauAttention, BidirectionalGRU, MaxoutDeepOutput

embeddings = keras.random.normal((2, 5, 8))            # 2 sentences, 5 words
mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)  # the first has 3
annotations, backward_first = BidirectionalGRU(6)(embeddings, sequence_mask=mask)
print("annotations:", annotations.shape, "(2n = 12)")

attention = BahdanauAttention(10)
state = keras.random.normal((2, 7))                     # s_{i-1}
context, alignment = attention(state, annotations, value_mask=mask)
print("alignment of sentence 1:", np.round(np.asarray(alignment[0]), 3))
print("context:", context.shape)

logits = MaxoutDeepOutput(4, vocab_size=20)(state, keras.random.normal((2, 8)), context)
print("logits:", logits.shape)""",
    ),
    (
        "md",
        """\
## Two models, one budget

`ModelConfig` describes a model; `build_model` returns a functional Keras
model from `[source_ids, target_input_ids]` to logits, which trains with
`compile` and `fit`. The loss ignores padding (`ignore_class=0`). Both models
get the same sizes, data and number of epochs.""",
    ),
    (
        "code",
        """\
import time
from seq2seq_attn.models import ModelConfig, build_model

def train_model(architecture, epochs):
    config = ModelConfig(architecture=architecture,
                         source_vocab_size=source_vocab.vocab_size,
                         target_vocab_size=target_vocab.vocab_size,
                         embedding_dim=128, hidden_units=128,
                         attention_units=128, maxout_units=128,
                         initializer="glorot")
    model = build_model(config)
    model.compile(optimizer=keras.optimizers.Adam(2e-3, global_clipnorm=1.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(
                      from_logits=True, ignore_class=0))
    started = time.time()
    model.fit(batches, epochs=epochs, verbose=2)
    print(f"{architecture}: {model.count_params():,} parameters, "
          f"{time.time() - started:.0f} s")
    return model

EPOCHS = 1 if SHORT else 2
rnnsearch = train_model("rnnsearch", EPOCHS)
rnnencdec = train_model("rnnencdec", EPOCHS)""",
    ),
    (
        "md",
        """\
## Translating, and where the model looks

`Translator` tokenizes, runs beam search in one TensorFlow graph and
detokenizes. Every hypothesis comes with its attention matrix: row $i$ is the
alignment $\\alpha_{i\\cdot}$ that produced output word $i$.""",
    ),
    (
        "code",
        """\
from seq2seq_attn.decoding.translator import Translator
from seq2seq_attn.evaluation.plots import attention_heatmap

translator = Translator(rnnsearch, source_vocab, target_vocab, beam_size=5)
for index in (0, 5):
    result = translator.translations([val.sources[index]])[0]
    print(val.sources[index], "->", result.text)
    words = [w.decode() for w in target_vocab.id_to_token(result.tokens).numpy()]
    path = attention_heatmap(result.alignment, val.sources[index].split(),
                             words + ["</s>"], WORK / f"attention_{index}.png")
    display(Image(filename=str(path)))""",
    ),
    (
        "md",
        """\
## RNNsearch against RNNencdec

BLEU on the validation sentences (sacreBLEU on the tokenised text, the
Multi30k convention), then BLEU by source length, as in Bahdanau Fig. 2: the
fixed-vector model should suffer most on long sentences.""",
    ),
    (
        "code",
        """\
from seq2seq_attn.evaluation.bleu import corpus_bleu
from seq2seq_attn.evaluation.length_buckets import bleu_by_length, buckets_table
from seq2seq_attn.evaluation.plots import bleu_by_length_plot

buckets, rows = {}, []
for name, model in (("RNNsearch", rnnsearch), ("RNNencdec", rnnencdec)):
    hypotheses = Translator(model, source_vocab, target_vocab,
                            beam_size=5).translate(val.sources)
    bleu = corpus_bleu(hypotheses, val.targets, tokenize="none")
    rows.append(f"| {name} | {bleu.value:.2f} |")
    buckets[name] = bleu_by_length(val.sources, hypotheses, val.targets,
                                   edges=(8, 12, 16, 20), tokenize="none")
display(Markdown("| model | BLEU |\\n|---|---:|\\n" + "\\n".join(rows)))
display(Markdown(buckets_table(buckets)))
display(Image(filename=str(bleu_by_length_plot(buckets, WORK / "bleu_by_length.png"))))""",
    ),
    (
        "md",
        """\
With a few epochs on a CPU both models are far from converged; the package's
`python -m seq2seq_attn.train --recipe=multi30k/rnnsearch`
trains the full recipe (see `benchmarks/RESULTS.md`).""",
    ),
]

NB2 = [
    (
        "md",
        """\
# 2. Luong attention: scores, global and local

Luong, Pham and Manning (2015) compare four ways to score a source state
$\\bar h_s$ against the target state $h_t$ (Eq. 8 and the location
function), global attention over every source word against local attention
over a window $[p_t - D, p_t + D]$ (Sec. 3.2), and input feeding (Sec. 3.3).
Here are all of them, on toy tensors first and then trained on Multi30k.""",
    ),
    ("code", SETUP),
    (
        "code",
        """\
from seq2seq_attn.layers import LuongAttention

rng = np.random.default_rng(0)
source_states = rng.normal(size=(1, 12, 16)).astype("float32")
mask = np.arange(12)[None] < 10          # 10 real source words
target_state = rng.normal(size=(1, 16)).astype("float32")
for score in ("dot", "general", "concat", "location"):
    layer = LuongAttention(score=score, max_source_length=12)
    _, alignment = layer(target_state, source_states, value_mask=mask)
    print(f"{score:8s}", np.round(np.asarray(alignment[0]), 2))""",
    ),
    (
        "md",
        """\
## The local window

local-m centres the window on $p_t = t$; local-p predicts
$p_t = S \\cdot \\mathrm{sigmoid}(v_p^\\top \\tanh(W_p h_t))$ (Eq. 9) and multiplies
the window's softmax by a Gaussian $\\exp(-(s - p_t)^2 / 2\\sigma^2)$,
$\\sigma = D/2$ (Eq. 10). Weights outside the window are exactly zero.""",
    ),
    (
        "code",
        """\
import matplotlib.pyplot as plt

figure, axes = plt.subplots(1, 3, figsize=(12, 3), sharey=True)
for axis, mode in zip(axes, ("global", "local-m", "local-p")):
    layer = LuongAttention(score="general", mode=mode, window=2)
    _, alignment = layer(target_state, source_states, value_mask=mask, position=4)
    axis.bar(range(12), np.asarray(alignment[0]))
    if mode == "local-p":
        p_t = float(layer.predicted_position(target_state[:, None], mask)[0, 0])
        s = np.arange(12)
        axis.plot(s, np.exp(-(s - p_t) ** 2 / (2 * 1.0 ** 2)), "r--",
                  label=f"Gaussian, p_t = {p_t:.1f}")
        axis.legend()
    axis.set_title(mode); axis.set_xlabel("source position")
plt.tight_layout(); plt.show()""",
    ),
    ("code", DATA),
    (
        "md",
        """\
## A small comparison

Each variant trains with the same data, sizes and budget: a 1-layer LSTM of
128 cells, source reversed as in Luong's Table 1, uniform initialisation in
[-0.1, 0.1] (Sec. 4.1), two epochs of Adam at 3e-3 (the LSTM stack starts
slowly at Adam's usual 1e-3; see `benchmarks/history/multi30k.md`). Perplexity and
BLEU (beam 5) are on the validation sentences.""",
    ),
    (
        "code",
        """\
import math, time
from seq2seq_attn.models import ModelConfig, build_model
from seq2seq_attn.decoding.translator import Translator
from seq2seq_attn.evaluation.bleu import corpus_bleu

valid_batches = make_dataset(encode_corpus(val, source_vocab, target_vocab, None, None),
                             batch_size=64, sort_window=1, shuffle=False)
VARIANTS = [("none", "global", False), ("general", "global", False),
            ("general", "global", True), ("dot", "global", True),
            ("location", "global", True), ("general", "local-m", True),
            ("general", "local-p", True)]
if SHORT:
    VARIANTS = VARIANTS[:2] + VARIANTS[-1:]
LUONG_EPOCHS = 1 if SHORT else 2
rows, models = [], {}
for score, mode, feed in VARIANTS:
    keras.utils.set_random_seed(0)
    model = build_model(ModelConfig(
        architecture="luong", source_vocab_size=source_vocab.vocab_size,
        target_vocab_size=target_vocab.vocab_size, embedding_dim=128,
        hidden_units=128, num_layers=1, score=score, attention_mode=mode,
        input_feeding=feed, reverse_source=True, window=4, initializer="luong"))
    model.compile(optimizer=keras.optimizers.Adam(3e-3, global_clipnorm=5.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(
                      from_logits=True, ignore_class=0))
    started = time.time()
    model.fit(batches, epochs=LUONG_EPOCHS, verbose=0)
    seconds = time.time() - started
    loss = model.evaluate(valid_batches, verbose=0)
    hypotheses = Translator(model, source_vocab, target_vocab,
                            beam_size=5).translate(val.sources)
    bleu = corpus_bleu(hypotheses, val.targets, tokenize="none").value
    name = "base (no attention)" if score == "none" else f"{mode} ({score})"
    name += " + feed" if feed else ""
    models[name] = model
    rows.append(f"| {name} | {math.exp(loss):.2f} | {bleu:.2f} | {seconds:.0f} |")
    print(rows[-1])
display(Markdown("| model | val ppl | val BLEU | train s |\\n|---|---:|---:|---:|\\n"
                 + "\\n".join(rows)))""",
    ),
    (
        "md",
        """\
The loss here averages over target tokens of the padded batches the way
Keras does; the train CLI normalises by the exact number of target tokens.

**Read this table with care.** Two epochs of a 1-layer, 128-cell model are
far from the paper's setting (4 layers of 1,000 cells, 10 to 12 epochs over
4.5 million sentence pairs). Still, in this run most attention variants are
ahead of the base model, and several of the paper's findings (Sec. 5.4,
Table 4) show: dot is the best score for global attention ("dot works well
for the global attention"), the location score is behind dot, input feeding
helps (global general: BLEU 4.70 without, 7.07 with), and general does better
with local-m attention than with global. Two things do not: global (general)
without feeding is behind the base model, and local-p, the paper's best, is
behind local-m. `benchmarks/luong_table4.sh` trains every row longer and
bigger on the same data.""",
    ),
]

NB3 = [
    (
        "md",
        """\
# 3. Decoding and evaluation

Greedy search against beam search, length normalisation and n-best lists,
unknown-word replacement (Luong 4.2), sacreBLEU with its signature, and BLEU
by sentence length (Bahdanau Fig. 2, Luong Fig. 6). The model is trained
here with the package's own training loop (`Trainer`, what
`python -m seq2seq_attn.train` runs).""",
    ),
    ("code", SETUP),
    (
        "code",
        """\
from seq2seq_attn.models import ModelConfig
from seq2seq_attn.training import DataConfig, RunConfig, TrainConfig, Trainer

run = RunConfig(
    model=ModelConfig(architecture="rnnsearch", embedding_dim=128, hidden_units=128,
                      attention_units=128, maxout_units=128, initializer="glorot"),
    data=DataConfig(corpus="multi30k", variant="tok", tokenizer="word",
                    bleu_tokenize="none", source="en", target="de",
                    data_dir=DATA_DIR, source_vocab_size=4000, target_vocab_size=4000,
                    batch_size=64, valid_max_sentences=200),
    train=TrainConfig(optimizer="adam", learning_rate=2e-3, epochs=2,
                      max_steps=60 if SHORT else 0, checkpoint_every=300))
model_dir = WORK / ("decoding_short" if SHORT else "decoding")
trainer = Trainer(run, model_dir)
print(trainer.fit())""",
    ),
    (
        "code",
        """\
import time
from seq2seq_attn.data import load_corpus
from seq2seq_attn.decoding import Scoring
from seq2seq_attn import load_translator
from seq2seq_attn.evaluation.bleu import corpus_bleu, corpus_chrf

test = load_corpus("multi30k", "test2016", "en", "de", variant="tok", data_dir=DATA_DIR)
if SHORT:
    test = test.subset(range(100))
rows = []
for name, options in [
        ("greedy", dict(beam_size=1)),
        ("beam 5, no normalisation", dict(beam_size=5, scoring=Scoring("none"))),
        ("beam 5, 1/L^0.75", dict(beam_size=5, scoring=Scoring("average", 0.75))),
        ("beam 5, GNMT alpha 0.6", dict(beam_size=5, scoring=Scoring("gnmt", 0.6))),
        ("beam 5, GNMT + coverage 0.2", dict(beam_size=5, scoring=Scoring("gnmt", 0.6, 0.2)))]:
    translator = load_translator(model_dir, **options)
    started = time.time()
    hypotheses = translator.translate(test.sources)
    seconds = time.time() - started
    bleu = corpus_bleu(hypotheses, test.targets, tokenize="none")
    length = np.mean([len(h.split()) for h in hypotheses])
    rows.append(f"| {name} | {bleu.value:.2f} | {length:.1f} | {len(test) / seconds:.0f} |")
display(Markdown("| search | BLEU | mean length | sentences/s |\\n|---|---:|---:|---:|\\n"
                 + "\\n".join(rows)))
print(bleu)
print(corpus_chrf(hypotheses, test.targets))""",
    ),
    (
        "md",
        """\
Without length normalisation beam search favours short outputs; the
signature printed under the table pins down how BLEU was computed
(`tok:none`: the text is already tokenised).

## n-best lists""",
    ),
    (
        "code",
        """\
translator = load_translator(model_dir, beam_size=5, nbest=5)
result = translator.translations(["a little girl is climbing a tree ."])[0]
for text, score in result.nbest:
    print(f"{score:7.3f}  {text}")""",
    ),
    (
        "md",
        """\
## Unknown-word replacement

Words outside the shortlist come out as `<unk>`; Luong 4.2 replaces each with
the source word the model attended to most when producing it (optionally
through a dictionary).""",
    ),
    (
        "code",
        """\
sentence = "a man named jonathan plays the didgeridoo in manhattan ."
plain = load_translator(model_dir, beam_size=5).translate(sentence)
replaced = load_translator(model_dir, beam_size=5,
                           replace_unk=True).translate(sentence)
print("plain:   ", plain)
print("replaced:", replaced)""",
    ),
    ("md", "## BLEU by sentence length"),
    (
        "code",
        """\
from seq2seq_attn.evaluation.length_buckets import bleu_by_length, buckets_table
from seq2seq_attn.evaluation.plots import bleu_by_length_plot

buckets = {"beam 5": bleu_by_length(test.sources, hypotheses, test.targets,
                                    edges=(8, 12, 16, 20), tokenize="none")}
display(Markdown(buckets_table(buckets)))
display(Image(filename=str(bleu_by_length_plot(buckets, WORK / "bleu_by_length_3.png"))))""",
    ),
]

NB4 = [
    (
        "md",
        """\
# 4. Export and serve

A trained model becomes a SavedModel that takes raw strings and returns
beam-search translations: tokenization, search and detokenization all run in
the graph, with core TensorFlow and tensorflow-text ops only, so the stock
TF Serving image can serve it.""",
    ),
    ("code", SETUP),
    (
        "code",
        """\
from seq2seq_attn.models import ModelConfig
from seq2seq_attn.training import DataConfig, RunConfig, TrainConfig, Trainer

run = RunConfig(
    model=ModelConfig(architecture="rnnsearch", embedding_dim=96, hidden_units=96,
                      attention_units=96, maxout_units=96, initializer="glorot"),
    data=DataConfig(corpus="multi30k", variant="tok", tokenizer="word",
                    bleu_tokenize="none", source="en", target="de",
                    data_dir=DATA_DIR, source_vocab_size=4000, target_vocab_size=4000,
                    batch_size=64, valid_max_sentences=100),
    train=TrainConfig(optimizer="adam", learning_rate=2e-3, epochs=1,
                      max_steps=40 if SHORT else 0))
model_dir = WORK / ("serve_short" if SHORT else "serve")
Trainer(run, model_dir).fit();""",
    ),
    (
        "code",
        """\
import shutil
from seq2seq_attn import load_translator
from seq2seq_attn.export import export

# The translation task: model, tokenizers and search; the export traces its
# generate function, the one translate() runs.
translator = load_translator(model_dir, beam_size=5, nbest=3)
export_dir = WORK / "exports"
shutil.rmtree(export_dir, ignore_errors=True)
path = export(translator, export_dir)
print("exported to", path)
print(sorted(p.name for p in (path / "assets").iterdir()), "in the assets")""",
    ),
    ("md", "The signatures, as `saved_model_cli show --all` lists them:"),
    (
        "code",
        """\
import subprocess, sys, pathlib
cli = pathlib.Path(sys.executable).parent / "saved_model_cli"
shown = subprocess.run([str(cli), "show", "--dir", str(path), "--all"],
                       capture_output=True, text=True).stdout
print(shown[shown.index("signature_def['align']"):][:2500])""",
    ),
    (
        "md",
        """\
## Calling the loaded model

This is what a server does: load the SavedModel with TensorFlow (and the
tensorflow-text ops) and call a signature; no Keras, no seq2seq_attn.""",
    ),
    (
        "code",
        """\
import tensorflow as tf
import tensorflow_text  # registers the TF Text ops

loaded = tf.saved_model.load(str(path))
out = loaded.signatures["serving_default"](
    text=tf.constant(["a man is riding a bicycle .", "", "two dogs play in the snow ."]))
for text, score in zip(out["translation"].numpy(), out["score"].numpy()):
    print(f"{score:7.3f}  {text.decode()!r}")
nbest = loaded.signatures["translate_nbest"](text=tf.constant(["a dog runs ."]))
print([t.decode() for t in nbest["translations"].numpy()[0]])""",
    ),
    (
        "code",
        """\
aligned = loaded.signatures["align"](text=tf.constant(["a dog runs on the beach ."]),
                                     target=tf.constant(["ein hund läuft am strand ."]))
source = [t.decode() for t in aligned["source_tokens"].numpy()[0]]
target = [t.decode() for t in aligned["target_tokens"].numpy()[0]]
import matplotlib.pyplot as plt
plt.imshow(aligned["alignment"].numpy()[0], cmap="gray")
plt.xticks(range(len(source)), source, rotation=90); plt.yticks(range(len(target)), target)
plt.show()""",
    ),
    (
        "md",
        """\
## TF Serving

```
docker run -p 8501:8501 -v "$PWD/notebook_runs/exports:/models/translate" \\
  -e MODEL_NAME=translate tensorflow/serving:2.20.0
```

The REST API takes the row form (`instances`) or the column form (`inputs`);
its responses wrap what the signature returns. Below, both requests and the
responses built from the signatures' outputs (the container itself does not
run in this notebook).""",
    ),
    (
        "code",
        """\
import json
request_rows = {"instances": ["a man is riding a bicycle ."]}
request_columns = {"signature_name": "translate_nbest",
                   "inputs": {"text": ["two dogs play in the snow ."]}}
print("POST /v1/models/translate:predict", json.dumps(request_rows))
out = loaded.signatures["serving_default"](text=tf.constant(request_rows["instances"]))
print(json.dumps({"predictions": [
    {"translation": t.decode(), "score": round(float(s), 4)}
    for t, s in zip(out["translation"].numpy(), out["score"].numpy())]},
    ensure_ascii=False))
print("POST /v1/models/translate:predict", json.dumps(request_columns))
out = loaded.signatures["translate_nbest"](text=tf.constant(request_columns["inputs"]["text"]))
print(json.dumps({"outputs": {
    "translations": [[t.decode() for t in row] for row in out["translations"].numpy()],
    "scores": np.round(out["scores"].numpy(), 4).tolist()}}, ensure_ascii=False))""",
    ),
]

NOTEBOOKS = {
    "01_rnnsearch.ipynb": NB1,
    "02_luong_attention.ipynb": NB2,
    "03_decoding_and_evaluation.ipynb": NB3,
    "04_export_and_serve.ipynb": NB4,
}


def build(cells):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for kind, source in cells:
        make = (
            nbformat.v4.new_markdown_cell
            if kind == "md"
            else nbformat.v4.new_code_cell
        )
        notebook.cells.append(make(source))
    return notebook


def run(notebook, timeout=3600):
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(HERE)}},
    )
    client.execute()
    return notebook


STARTUP_NOISE = (
    "cuda_platform.cc",
    "cudart_stub.cc",
    "oneDNN supports DT_BOOL",
    "cuInit",
    "All log messages before absl::InitializeLog()",
)


def drop_startup_noise(notebook):
    """Removes TensorFlow's start-up log lines (no GPU here, oneDNN notes)
    from the stderr outputs; everything else stays."""
    for cell in notebook.cells:
        kept = []
        for output in cell.get("outputs", []):
            if output.get("name") == "stderr":
                lines = [
                    line
                    for line in output["text"].splitlines(keepends=True)
                    if not any(noise in line for noise in STARTUP_NOISE)
                ]
                if not "".join(lines).strip():
                    continue
                output["text"] = "".join(lines)
            kept.append(output)
        if cell.cell_type == "code":
            cell.outputs = kept
    return notebook


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="notebooks to build (all)")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    for name, cells in NOTEBOOKS.items():
        if args.names and name not in args.names:
            continue
        started = time.time()
        notebook = run(build(cells))
        print(f"{name}: ran in {time.time() - started:.0f} s")
        if not args.no_save:
            nbformat.write(drop_startup_noise(notebook), HERE / name)


if __name__ == "__main__":
    main()
