"""`python -m seq2seq_attn.export`: runs `seq2seq_attn.cli.export`."""

import runpy

runpy.run_module("seq2seq_attn.cli.export", run_name="__main__", alter_sys=True)
