"""The bottom-up scheduler: children before parents, a parent released as soon as its last child is done."""

from slmgraph.indexing.executors.bottom_up import bottom_up

# 1 and 2 are roots; 10, 11 children of 1; 20 child of 2; 100 child of 10.
PARENT = {1: None, 2: None, 10: 1, 11: 1, 20: 2, 100: 10}
ORDER = [100, 10, 11, 20, 1, 2]  # deepest level first, as the report stage lists them


def run(no_task=(), pool=None):
    """Events in order: ("prepare", node), ("call", payload), ("commit", node, result, calls, puts)."""
    log = []

    def prepare(n):
        log.append(("prepare", n))
        return None if n in no_task else f"n{n}"

    def call(payload):
        log.append(("call", payload))
        return payload.upper()

    for node, result, calls, puts in bottom_up(ORDER, PARENT, prepare, call, pool):
        log.append(("commit", node, result, calls, puts))
    return log


def test_every_node_runs_once_and_is_prepared_only_after_its_children_are_committed():
    log = run()
    committed = [e[1] for e in log if e[0] == "commit"]
    assert sorted(committed) == sorted(ORDER)
    for child, parent in PARENT.items():
        if parent is not None:
            assert log.index(("prepare", parent)) > max(i for i, e in enumerate(log) if e[:2] == ("commit", child))
    assert log[3:5] == [("call", "n100"), ("commit", 100, "N100", (), ())]


def test_a_parent_is_released_when_its_last_child_is_done_not_at_the_end_of_its_level():
    log = run()
    # 10 is prepared right after 100 is committed, before 11 and 20 (prepared earlier) are.
    assert [e[1] for e in log if e[0] == "prepare"] == [100, 11, 20, 10, 2, 1]
    assert [e[1] for e in log if e[0] == "commit"] == [100, 11, 20, 10, 2, 1]
    assert log.index(("prepare", 10)) < log.index(("commit", 11, "N11", (), ()))


def test_a_node_without_a_task_is_done_at_once_and_releases_its_parent():
    log = run(no_task=(100, 11))
    # 100 and 11 need no task: 10 is released at once (by 100), 1 once 10 is committed.
    assert [e[1] for e in log if e[0] == "call"] == ["n20", "n10", "n2", "n1"]
    assert [e[1] for e in log if e[0] == "commit"] == [20, 10, 2, 1]


class FakePool:
    """Answers tasks in order, reading the list as it grows (as WorkerPool.results does)."""

    def __init__(self):
        self.sent = []

    def results(self, tasks):
        i = 0
        while i < len(tasks):
            node, payload, key = tasks[i]
            i += 1
            self.sent.append(node)
            yield node, key, payload + "!", [("row", node)], [("put", node)], 0


def test_with_a_pool_tasks_released_while_it_runs_are_sent_and_ledger_rows_come_back():
    pool = FakePool()
    log = run(pool=pool)
    assert not [e for e in log if e[0] == "call"]
    assert pool.sent == [100, 11, 20, 10, 2, 1]
    commits = [e for e in log if e[0] == "commit"]
    assert [c[1:] for c in commits] == [(n, f"n{n}!", [("row", n)], [("put", n)]) for n in pool.sent]
