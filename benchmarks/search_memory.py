"""Peak memory of one search call against `SearchConfig.search_bytes`.

    python benchmarks/search_memory.py

Each case runs in a fresh process: an untrained RNNsearch (word
vocabularies of Multi30k's training text from ../shared/data, cut to
`--vocab` words; untrained, so every hypothesis runs to the output limit,
the search's worst case) translates `batch` copies of a sentence of
`tokens` tokens with beam `beam`. Printed: the growth of the peak RSS
(`ru_maxrss`) over a one-sentence greedy warm-up, and the estimate that
`memory_budget_gb` is checked against.
"""

import argparse
import resource
import subprocess
import sys
import tempfile

CASES = [  # beam, batch, tokens, vocabulary, hidden units
    (500, 4, 20, 8000, 64),
    (1000, 4, 20, 8000, 64),
    (1000, 4, 60, 8000, 64),
    (1000, 2, 20, 20000, 64),
    (100, 16, 50, 8000, 256),
]


def measure(beam, batch, tokens, vocab, hidden):
    """Prints one case's measured growth and estimate (in this process)."""
    import gzip
    import pathlib

    from seq2seq_attn.config.model import ModelConfig
    from seq2seq_attn.config.search import SearchConfig
    from seq2seq_attn.data import build_tokenizer
    from seq2seq_attn.decoding.translator import Translator
    from seq2seq_attn.models.builder import build_model

    data = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
    train = data / "multi30k" / "tok" / "train.lc.norm.tok.en.gz"
    lines = gzip.decompress(train.read_bytes()).decode().splitlines()
    folder = tempfile.mkdtemp()
    tokenizer = build_tokenizer("word", lines, folder, vocab)
    model = build_model(
        ModelConfig(
            source_vocab_size=tokenizer.vocab_size,
            target_vocab_size=tokenizer.vocab_size,
            embedding_dim=hidden,
            hidden_units=hidden,
            maxout_units=hidden,
            initializer="glorot",
        )
    )
    search = SearchConfig(
        beam_size=beam,
        batch_size=batch,
        max_input_tokens=tokens,
        memory_budget_gb=1e9,
    )
    Translator(model, tokenizer, tokenizer, beam_size=1).translate(["a dog ."])
    translator = Translator(model, tokenizer, tokenizer, search=search)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sentence = " ".join((lines[0].split() * tokens)[:tokens])
    translator.translations([sentence] * batch)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    estimate = search.search_bytes(tokenizer.vocab_size) / 2**20
    print(
        f"| {beam} | {batch} | {tokens} | {tokenizer.vocab_size:,} | "
        f"{hidden} | {after - before:,.0f} | {estimate:,.0f} | "
        f"{estimate / max(after - before, 1):.2f} |",
        flush=True,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", help="beam,batch,tokens,vocab,hidden")
    args = parser.parse_args()
    if args.case:
        measure(*map(int, args.case.split(",")))
        return
    print(
        "| beam | batch | tokens | vocabulary | hidden | peak RSS growth "
        "(MB) | estimate (MB) | estimate / measured |\n"
        "|---|---|---|---|---|---|---|---|",
        flush=True,
    )
    for case in CASES:
        subprocess.run(
            [sys.executable, __file__, f"--case={','.join(map(str, case))}"],
            check=True,
            stderr=subprocess.DEVNULL,
        )


if __name__ == "__main__":
    main()
