"""The reserved ids every vocabulary of the package starts with.

| id | token  | meaning                                        |
|----|--------|------------------------------------------------|
| 0  | <pad>  | padding; masked everywhere, never predicted    |
| 1  | <unk>  | a word outside the vocabulary                  |
| 2  | <s>    | start of the target sentence (decoder input)   |
| 3  | </s>   | end of the target sentence (decoder output)    |

Word and WordPiece vocabulary files list these four first, so a token's id is
its line number; SentencePiece models are trained with the same ids.
"""

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
RESERVED_TOKENS = (PAD, UNK, BOS, EOS)
