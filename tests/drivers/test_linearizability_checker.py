"""The linearizability checker (linearizability.py) on histories whose answer
is known: hand-written ones from the literature's classic cases, and random
histories of a simulated atomic register (linearizable by construction), then
corrupted so that they are not."""
import random

from linearizability import Op, check, check_by_key


def W(client, t0, t1, v, key=None):
    return Op(client, t0, t1, ("write", v), None, key)


def R(client, t0, t1, v, key=None):
    return Op(client, t0, t1, ("read",), v, key)


def CAS(client, t0, t1, expected, v, applied, key=None):
    return Op(client, t0, t1, ("cas", expected, v), applied, key)


def test_sequential_histories():
    assert check([W(1, 0, 1, 5), R(2, 2, 3, 5)], initial=0)[0]
    assert not check([W(1, 0, 1, 5), R(2, 2, 3, 0)], initial=0)[0]  # a stale read
    assert check([R(1, 0, 1, None)])[0]
    assert not check([R(1, 0, 1, 7)])[0]  # a value nobody wrote


def test_a_read_overlapping_a_write_may_see_either_value():
    assert check([W(1, 0, 10, 1), R(2, 2, 3, 0)], initial=0)[0]
    assert check([W(1, 0, 10, 1), R(2, 2, 3, 1)], initial=0)[0]


def test_reads_may_not_go_back_once_a_newer_value_was_read():
    # Both reads overlap the write, but the second starts after the first
    # saw the new value: it cannot see the old one.
    h = [W(1, 0, 10, 1), R(2, 1, 2, 1), R(3, 3, 4, 0)]
    ok, prefix = check(h, initial=0)
    assert not ok
    assert prefix  # the failure names how far it got
    assert check([W(1, 0, 10, 1), R(2, 1, 2, 0), R(3, 3, 4, 1)], initial=0)[0]


def test_compare_and_set():
    # Two concurrent cas(0 -> x) cannot both apply.
    assert not check([CAS(1, 0, 5, 0, 1, True), CAS(2, 0, 5, 0, 2, True)], initial=0)[0]
    assert check([CAS(1, 0, 5, 0, 1, True), CAS(2, 0, 5, 0, 2, False)], initial=0)[0]
    # A failed cas must have seen another value.
    assert not check([CAS(1, 0, 1, 0, 1, False)], initial=0)[0]
    # An applied cas after a completed write of another value is impossible.
    assert not check([W(1, 0, 1, 3), CAS(2, 2, 3, 0, 1, True)], initial=0)[0]


def test_unknown_outcomes_may_take_effect_late_or_never():
    # A write that timed out may show up in a later read ...
    assert check([W(1, 0, None, 2), R(2, 5, 6, 2)], initial=0)[0]
    # ... or never.
    assert check([W(1, 0, None, 2), R(2, 5, 6, 0)], initial=0)[0]
    # But not before it was invoked.
    assert not check([R(2, 0, 1, 2), W(1, 5, None, 2)], initial=0)[0]
    # Once seen it stays: a later read cannot go back.
    assert not check([W(1, 0, None, 2), R(2, 5, 6, 2), R(2, 7, 8, 0)], initial=0)[0]
    # A timed-out cas applies only if it could.
    assert check([CAS(1, 0, None, 0, 9, None), R(2, 5, 6, 9)], initial=0)[0]
    assert not check([W(3, 0, 1, 4), CAS(1, 2, None, 0, 9, None), R(2, 5, 6, 9)], initial=0)[0]
    # A read that timed out observed nothing.
    assert check([R(1, 0, None, 123)], initial=0)[0]


def test_keys_are_checked_apart():
    h = [W(1, 0, 1, 1, key="a"), R(2, 2, 3, 1, key="a"), W(1, 0, 1, 1, key="b"), R(2, 2, 3, 0, key="b")]
    results = check_by_key(h, initial=0)
    assert results["a"][0] and not results["b"][0]


def simulated_history(seed, clients=5, ops_per_client=60, unknown_rate=0.05):
    """Clients run operations on an atomic register one after another; each
    takes effect at a random instant inside its [invoke, complete] (so the
    history is linearizable), and some end unknown (a time-out)."""
    rng = random.Random(seed)
    plans = []
    for c in range(clients):
        t = rng.random()
        for _ in range(ops_per_client):
            invoke = t
            effect = invoke + rng.random() * 2
            complete = effect + rng.random() * 2
            t = complete + rng.random()
            kind = rng.choice(["read", "write", "cas"])
            plans.append([effect, c, invoke, complete, kind, rng.randrange(5), rng.randrange(5)])
    state, history = 0, []
    for effect, c, invoke, complete, kind, a, b in sorted(plans):
        unknown = kind != "read" and rng.random() < unknown_rate
        if kind == "read":
            op = R(c, invoke, complete, state)
        elif kind == "write":
            op, state = W(c, invoke, complete, a), a
        else:
            applied = state == a
            op = CAS(c, invoke, complete, a, b, applied)
            state = b if applied else state
        if unknown:
            op.complete, op.result = None, None
        history.append(op)
    return history


def test_simulated_atomic_registers_are_linearizable():
    for seed in range(20):
        ok, prefix = check(simulated_history(seed), initial=0)
        assert ok, (seed, prefix)


def test_a_corrupted_read_is_found():
    found = 0
    for seed in range(20):
        # Proving a history is not linearizable explores every order, which
        # doubles with each operation of unknown outcome: few of them here.
        h = simulated_history(seed, ops_per_client=30, unknown_rate=0.02)
        # The last read of the history returns a value no one ever wrote.
        last = max((op for op in h if op.kind[0] == "read"), key=lambda op: op.invoke)
        last.result = 99
        ok, _ = check(h, initial=0)
        assert not ok, seed
        found += 1
    assert found == 20
