"""`python -m seq2seq_attn.export`: runs `seq2seq_attn.cli.export`."""

from seq2seq_attn.cli import first_name

first_name(__name__, "seq2seq_attn.cli.export")
