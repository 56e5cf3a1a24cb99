"""A length limit set in words reads a Chinese or Japanese character as a fraction of a word
(slmgraph.text.prose.word_length): a long Chinese sentence is quoted; a run too long to be a sentence is not."""

from conftest import FakeEmbedder

from slmgraph.query.extractive import quotable, sentence_points
from slmgraph.text.prose import UNSPACED_CHARS_PER_WORD, word_count, word_length
from slmgraph.text.shape import LONG_STRETCH

#: One clause of 18 Han characters and a comma; ten of them make a sentence of 180 characters (120 words).
CLAUSE = "董事会在三月的会议上讨论了明年的渡轮时刻表，"
LONG_ZH = CLAUSE * 10 + "最后决定保持不变。"


def test_a_character_is_a_fraction_of_a_word_for_a_length_limit():
    assert word_length("Grace Hopper joined the Navy.") == 5
    assert word_length("王小明在北京大学学习物理学。") == 13 / UNSPACED_CHARS_PER_WORD
    assert word_length("Acme 在北京 opened an office.") == 4 + 3 / UNSPACED_CHARS_PER_WORD
    assert word_count(LONG_ZH) > LONG_STRETCH >= word_length(LONG_ZH)


def test_a_chinese_sentence_of_more_than_150_characters_is_quoted():
    assert quotable(LONG_ZH, 6)
    assert not quotable(CLAUSE * 20 + "。", 6)  # 360 characters, 240 words long: no sentence
    assert quotable(" ".join(["word"] * LONG_STRETCH) + ".", 6)
    assert not quotable(" ".join(["word"] * (LONG_STRETCH + 1)) + ".", 6)


def test_the_long_chinese_sentence_becomes_a_point():
    emb = FakeEmbedder()
    pts = sentence_points([(1, LONG_ZH)], emb.encode(["董事会决定了什么？"])[0], emb)
    assert [p.ids for p in pts] == [[1]] and "渡轮时刻表" in pts[0].text
