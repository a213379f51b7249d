"""`python -m seq2seq_attn.evaluate`: runs `seq2seq_attn.cli.evaluate`, the
command's first name (importing this module gives that module)."""

from seq2seq_attn.cli import first_name

first_name(__name__, "seq2seq_attn.cli.evaluate")
