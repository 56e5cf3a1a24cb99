"""The sentence splitter is right from several threads at once (the index embeds text units on a thread while
extraction splits sentences on another)."""

import threading

from slmgraph.text import prose as text


def test_two_threads_splitting_at_once_get_the_same_sentences_as_one():
    texts = [" ".join(f"Speaker {i} said sentence number {j} about topic {i * j}. Then Dr. Lee replied {j}!"
                      for j in range(40)) for i in range(12)]
    split = text._spans.__wrapped__  # uncached: every call runs the segmenter
    want = [split(t) for t in texts]
    got: dict[tuple[int, int], tuple] = {}
    barrier = threading.Barrier(2)

    def work(k):
        barrier.wait()
        for r in range(6):
            for i in range(k, len(texts), 2) if r % 2 else range(len(texts)):
                got[(k, r, i)] = split(texts[i])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(v == want[key[2]] for key, v in got.items())
