"""A linearizability checker for compare-and-set registers (issue 30, item 3):
the Wing-Gong algorithm with Lowe's memoization, as Knossos and Porcupine
check Jepsen's register workload.

A history is a list of `Op`s, each with the client that ran it, its invoke
and complete times (any monotonic clock; `complete=None` when the outcome is
unknown: a time-out), its kind and arguments, and what it returned:
  - ("read",)            result: the value read (None: no value)
  - ("write", v)         result: ignored (acknowledged)
  - ("cas", expected, v) result: True (applied), False (not applied)

Linearizability is local (Herlihy and Wing), so a history over several keys
is checked key by key (`check_by_key`). An operation whose outcome is unknown
may have taken effect at any point after its invocation, or never: it is
given a completion after every other operation (where taking effect changes
nothing anyone observed), and a compare-and-set of unknown outcome may apply
or not. Reads of unknown outcome observe nothing and are dropped.

`check` returns (True, None) or (False, the longest prefix of operations,
by invoke time, that could be linearized), for the failure message. Its cost
grows with the operations that overlap, above all those of unknown outcome
(each may take effect anywhere after its invocation): proving a history NOT
linearizable explores every order left, so per-key histories with many
time-outs get slow (Knossos and Porcupine share this)."""
import math
from dataclasses import dataclass
from typing import Any, Optional, Tuple


@dataclass
class Op:
    client: int
    invoke: float
    complete: Optional[float]  # None: the outcome is unknown
    kind: Tuple                # ("read",), ("write", v) or ("cas", expected, v)
    result: Any = None         # read: the value; cas: True / False; unknown: ignored
    key: Any = None


def step(state, op):
    """(legal, next state) of applying `op` to a register holding `state`."""
    name = op.kind[0]
    if name == "read":
        return op.result == state, state
    if name == "write":
        return True, op.kind[1]
    if name == "cas":
        expected, new = op.kind[1], op.kind[2]
        if op.complete is None:  # applied if it could, or not at all
            return True, new if state == expected else state
        if op.result:
            return state == expected, new if state == expected else state
        return state != expected, state
    raise ValueError("unknown operation %r" % (op.kind,))


class _Entry:
    __slots__ = ("op", "index", "is_call", "match", "prev", "next")

    def __init__(self, op, index, is_call):
        self.op, self.index, self.is_call = op, index, is_call
        self.match = self.prev = self.next = None


def check(history, initial=None):
    """Wing-Gong-Lowe over one register's history."""
    ops = [op for op in history if not (op.kind[0] == "read" and op.complete is None)]
    if not ops:
        return True, None
    events = []
    for i, op in enumerate(ops):
        call, ret = _Entry(op, i, True), _Entry(op, i, False)
        call.match, ret.match = ret, call
        done = math.inf if op.complete is None else op.complete
        # At equal times a call sorts before a return: the two operations
        # overlap, which allows the more orders (a checker must not invent
        # an order the clock could not see).
        events.append((op.invoke, 0, call))
        events.append((done, 1, ret))
    events.sort(key=lambda e: (e[0], e[1]))
    head = _Entry(None, -1, False)
    prev = head
    for _, _, entry in events:
        prev.next, entry.prev = entry, prev
        prev = entry

    def lift(call):
        call.prev.next = call.next
        if call.next:
            call.next.prev = call.prev
        ret = call.match
        ret.prev.next = ret.next
        if ret.next:
            ret.next.prev = ret.prev

    def unlift(call):
        ret = call.match
        ret.prev.next = ret
        if ret.next:
            ret.next.prev = ret
        call.prev.next = call
        if call.next:
            call.next.prev = call

    state, linearized = initial, 0
    cache = {(0, initial)}
    stack = []
    best = 0
    entry = head.next
    while head.next is not None:
        if entry.is_call:
            legal, after = step(state, entry.op)
            if legal:
                marked = linearized | (1 << entry.index)
                if (marked, after) not in cache:
                    cache.add((marked, after))
                    stack.append((entry, state))
                    state, linearized = after, marked
                    best = max(best, len(stack))
                    lift(entry)
                    entry = head.next
                    continue
            entry = entry.next
        else:
            # A return whose call is not linearized yet: undo the last choice.
            if not stack:
                prefix = sorted(ops, key=lambda o: o.invoke)[:best + 1]
                return False, prefix
            entry, state = stack.pop()
            linearized &= ~(1 << entry.index)
            unlift(entry)
            entry = entry.next
    return True, None


def check_by_key(history, initial=None):
    """{key: (linearizable, prefix)} for a history over several registers."""
    keys = {}
    for op in history:
        keys.setdefault(op.key, []).append(op)
    return {key: check(ops, initial) for key, ops in keys.items()}
