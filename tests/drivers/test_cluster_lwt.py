"""Lightweight transactions across replicas (issue 30, item 1): Paxos per
partition on a local cluster of etcd and three nodes, keyspace RF 3, each
client bound to one node (its coordinator), with no driver retries.

- INSERT ... IF NOT EXISTS raced through every node applies exactly once;
  the losers see the winner's row.
- A compare-and-set counter (read, then UPDATE ... SET v = ? IF v = ?) from
  8 clients through all 3 nodes while node 3 is killed (-9) and restarted:
  each applied update also adds its own token to a set, so the final value
  equals the number of tokens (no update lost, none applied twice), every
  acknowledged update's token is there, none of a refused one; a time-out's
  outcome is whatever the final SERIAL read shows (issue 30, must-show 2,
  first part).
- The register workload (Jepsen's read / write / compare-and-set) of 5
  clients on 5 keys with a nemesis that kills -9 and restarts a node and
  pauses one with SIGSTOP, and (as root, nodes in network namespaces the
  test makes) one that also cuts a node off from its peers: the
  Wing-Gong-Lowe checker finds the history linearizable (must-show 1's short
  run; scripts/lwt-register-rounds.sh runs the 60 s ones).
- The same through a tablet move and an RF change (must-show 3).
- SELECT at SERIAL reads one partition through Paxos; several are refused
  as Cassandra refuses them; conditional batches on one partition."""
import json
import os
import random
import shutil
import signal
import threading
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel, InvalidRequest, WriteTimeout, WriteType
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import FallthroughRetryPolicy, WhiteListRoundRobinPolicy
from cassandra.query import SimpleStatement

from linearizability import Op, check_by_key
from local_cluster import running_cluster_resumed_at_end, stop_process, wait_until
from netns_cluster import ADMIN_PORT, CQL_PORT, NetnsCluster

BINARY = os.environ["TESSERA_BINARY"]
SERIAL, Q = ConsistencyLevel.SERIAL, ConsistencyLevel.QUORUM
WORKLOAD_SECONDS = float(os.environ.get("TESSERA_LWT_SECONDS", "12"))


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster_resumed_at_end(BINARY, 3, ["--cluster-lease-seconds=3"])


def node_session(cluster, node, timeout=10):
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([cluster.address(node)]),
                               retry_policy=FallthroughRetryPolicy(), request_timeout=timeout,
                               consistency_level=Q, serial_consistency_level=SERIAL)
    driver = Cluster([cluster.address(node)], port=cluster.port, protocol_version=4, connect_timeout=10,
                     execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    return driver, driver.connect()


@pytest.fixture(scope="module")
def sessions(cluster):
    pairs = [node_session(cluster, n) for n in (1, 2, 3)]
    pairs[0][1].execute("CREATE KEYSPACE IF NOT EXISTS lwt3 WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    pairs[0][1].execute("CREATE TABLE IF NOT EXISTS lwt3.users (name text PRIMARY KEY, email text, n int)")
    pairs[0][1].execute("CREATE TABLE IF NOT EXISTS lwt3.counter (k int PRIMARY KEY, v int, tokens set<text>)")
    pairs[0][1].execute("CREATE TABLE IF NOT EXISTS lwt3.registers (k int PRIMARY KEY, v int)")
    pairs[0][1].execute("CREATE TABLE IF NOT EXISTS lwt3.events (p int, c int, v text, PRIMARY KEY (p, c))")
    for _, s in pairs:
        wait_until(lambda: s.execute("SELECT * FROM lwt3.registers LIMIT 1") is not None, 30, "schema everywhere")
    yield [s for _, s in pairs]
    for d, _ in pairs:
        d.shutdown()


def test_insert_if_not_exists_applies_once_through_every_node(sessions):
    """9 clients, 3 per node, race for each name. A proposal that a later
    round overtook has an unknown outcome (WriteTimeout, write type CAS, as
    Cassandra): it may be the one that applied."""
    timed_out = 0
    for round_ in range(5):
        name = "user%d" % round_
        results, unknown = [], []

        def claim(session, who):
            try:
                r = session.execute("INSERT INTO lwt3.users (name, email) VALUES (%s, %s) IF NOT EXISTS",
                                    (name, who))
                results.append((who, r.one()))
            except WriteTimeout as e:
                assert e.write_type == WriteType.CAS, e
                unknown.append(who)

        threads = [threading.Thread(target=claim, args=(sessions[i % 3], "client%d" % i)) for i in range(9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(results) + len(unknown) == 9
        timed_out += len(unknown)
        owner = sessions[0].execute(SimpleStatement("SELECT email FROM lwt3.users WHERE name = %s",
                                                    consistency_level=SERIAL), (name,)).one().email
        winners = [who for who, row in results if row[0] is True]
        assert winners == [owner] or (not winners and owner in unknown), (owner, results, unknown)
        for who, row in results:
            if row[0] is False:
                assert row.email == owner and row.name == name
        for s in sessions:
            assert s.execute("SELECT email FROM lwt3.users WHERE name = %s", (name,)).one().email == owner
    print("\n5 races of 9: one owner each, %d of 45 outcomes unknown (WriteTimeout CAS)" % timed_out)


def test_conditions_and_serial_reads_across_replicas(sessions):
    s1, s2, s3 = sessions
    assert s1.execute("INSERT INTO lwt3.users (name, n) VALUES ('cond', 1) IF NOT EXISTS").one()[0] is True
    r = s2.execute("UPDATE lwt3.users SET n = 2 WHERE name = 'cond' IF n = 5").one()
    assert r[0] is False and r.n == 1
    assert s3.execute("UPDATE lwt3.users SET n = 2 WHERE name = 'cond' IF n = 1").one()[0] is True
    assert s1.execute(SimpleStatement("SELECT n FROM lwt3.users WHERE name = 'cond'",
                                      consistency_level=SERIAL)).one().n == 2
    assert s2.execute(SimpleStatement("SELECT n FROM lwt3.users WHERE name = 'cond'",
                                      consistency_level=ConsistencyLevel.LOCAL_SERIAL)).one().n == 2
    assert s3.execute("DELETE FROM lwt3.users WHERE name = 'cond' IF EXISTS").one()[0] is True
    assert s1.execute("DELETE FROM lwt3.users WHERE name = 'cond' IF EXISTS").one()[0] is False
    with pytest.raises(InvalidRequest, match="SERIAL/LOCAL_SERIAL consistency may only be requested for one partition"):
        s1.execute(SimpleStatement("SELECT n FROM lwt3.users WHERE name IN ('a', 'b')", consistency_level=SERIAL))
    # A conditional batch on one partition, through another node.
    s2.execute("BEGIN BATCH INSERT INTO lwt3.events (p, c, v) VALUES (1, 1, 'a') IF NOT EXISTS; "
               "INSERT INTO lwt3.events (p, c, v) VALUES (1, 2, 'b') IF NOT EXISTS; APPLY BATCH")
    r = s3.execute("BEGIN BATCH UPDATE lwt3.events SET v = 'x' WHERE p = 1 AND c = 1 IF v = 'a'; "
                   "UPDATE lwt3.events SET v = 'y' WHERE p = 1 AND c = 2 IF v = 'zzz'; APPLY BATCH")
    assert r.one()[0] is False
    assert sorted((x.c, x.v) for x in s1.execute("SELECT c, v FROM lwt3.events WHERE p = 1")) == [(1, "a"), (2, "b")]
    # Every replica shows its Paxos state in system.paxos (Cassandra's columns): a promise
    # for each partition that ran a round, and the last commits.
    users = s1.execute("SELECT id FROM system_schema.tables WHERE keyspace_name = 'lwt3' AND table_name = 'users'").one().id
    for s in sessions:
        rows = [r for r in s.execute("SELECT row_key, cf_id, in_progress_ballot, most_recent_commit_at, "
                                     "most_recent_commit, proposal_ballot FROM system.paxos") if r.cf_id == users]
        assert rows, "no Paxos state of lwt3.users"
        assert all(r.in_progress_ballot is not None for r in rows), rows
        assert any(r.most_recent_commit_at is not None and r.most_recent_commit for r in rows), rows


def _state_seen_by(cluster, node, by):
    """"up" or "down": node `node` as node `by` sees it (admin /cluster/status)."""
    url = "http://%s:%d/cluster/status" % (cluster.address(by), getattr(cluster, "admin_port", ADMIN_PORT))
    with urllib.request.urlopen(url, timeout=5) as r:
        return {n["address"]: n["state"] for n in json.load(r)["nodes"]}[cluster.address(node)]


def _until_seen(cluster, node, state):
    """A fault lasts until a peer's failure detector noticed it, and ends
    when the peer sees the node up again."""
    by = 2 if node == 1 else 1
    wait_until(lambda: _state_seen_by(cluster, node, by) == state, 30, "node %d %s to node %d" % (node, state, by))


def kill_and_restart(cluster, node):
    cluster.kill(node)
    _until_seen(cluster, node, "down")
    cluster.start_node(node)
    _until_seen(cluster, node, "up")
    return "kill -9 %d" % node


def pause(cluster, node):
    stop_process(cluster.pid(node))
    try:
        _until_seen(cluster, node, "down")
    finally:
        os.kill(cluster.pid(node), signal.SIGCONT)
    _until_seen(cluster, node, "up")
    return "SIGSTOP %d" % node


def cut_off(cluster, node):
    cluster.partition(node)
    try:
        _until_seen(cluster, node, "down")
    finally:
        cluster.heal(node)
    _until_seen(cluster, node, "up")
    return "partition %d" % node


def rotating_nemesis(faults, gap_operations):
    """A nemesis for run_register_workload: until the clients stop, the next
    of `faults` (functions of no argument) each time the clients completed
    `gap_operations` more operations since the last fault ended. Returns the
    faults' names."""
    def run(progress, ends):
        names = []
        while time.monotonic() < ends - 1:
            target = progress() + gap_operations
            wait_until(lambda: progress() >= target or time.monotonic() >= ends, ends - time.monotonic() + 5, "operations")
            if time.monotonic() >= ends - 1:
                break
            names.append(faults[len(names) % len(faults)]())
        return names
    return run


def test_compare_and_set_counter_through_a_kill(cluster, sessions):
    """8 clients, all 3 coordinators; node 3 is killed -9 and restarted
    while they run. Each applied update sets v = v + 1 and adds its token."""
    sessions[0].execute("INSERT INTO lwt3.counter (k, v, tokens) VALUES (0, 0, {})")
    stop = time.monotonic() + WORKLOAD_SECONDS
    acknowledged, refused_tokens, unknown = [], [], []
    lock = threading.Lock()

    def client(i):
        node = i % 3 + 1
        driver, session = node_session(cluster, node, timeout=5)
        read = SimpleStatement("SELECT v FROM lwt3.counter WHERE k = 0", consistency_level=SERIAL)
        update = session.prepare("UPDATE lwt3.counter SET v = ?, tokens = tokens + ? WHERE k = 0 IF v = ?")
        seq = 0
        try:
            while time.monotonic() < stop:
                try:
                    current = session.execute(read).one().v
                except Exception:
                    time.sleep(0.05)
                    continue
                seq += 1
                token = "c%d-%d" % (i, seq)
                try:
                    applied = session.execute(update, (current + 1, {token}, current)).one()[0]
                except Exception:
                    with lock:
                        unknown.append(token)
                    continue
                with lock:
                    (acknowledged if applied else refused_tokens).append(token)
        finally:
            driver.shutdown()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    wait_until(lambda: len(acknowledged) >= 50, WORKLOAD_SECONDS, "50 increments before the kill")
    kill_and_restart(cluster, 3)
    for t in threads:
        t.join(WORKLOAD_SECONDS + 120)
    assert not any(t.is_alive() for t in threads)
    row = sessions[0].execute(SimpleStatement("SELECT v, tokens FROM lwt3.counter WHERE k = 0",
                                              consistency_level=SERIAL)).one()
    tokens = set(row.tokens or ())
    assert len(acknowledged) > 50, "too few increments applied: %d" % len(acknowledged)
    assert row.v == len(tokens), "v = %d but %d updates applied" % (row.v, len(tokens))
    assert set(acknowledged) <= tokens, "acknowledged updates lost: %s" % (set(acknowledged) - tokens)
    assert not (set(refused_tokens) & tokens), "refused updates applied"
    assert tokens <= set(acknowledged) | set(unknown), "an update applied that nobody sent"
    late = len(tokens) - len(acknowledged)
    print("\ncompare-and-set counter: %d acknowledged, %d refused, %d timed out of which %d applied; final %d"
          % (len(acknowledged), len(refused_tokens), len(unknown), late, row.v))


def run_register_workload(cluster, seconds, nemesis=None, clients=5, keys=5, seed=None, table="lwt3.registers"):
    """Jepsen's register workload: each client picks a key and reads it at
    SERIAL, writes a value with a conditional update (UPDATE ... IF EXISTS:
    the rows exist), or compares and sets it. `nemesis`: None for kill -9 of
    node 2 and SIGSTOP of node 3 in turn, or a function of (the number of
    operations completed so far, a function; the time the clients stop) run
    while they work. Returns the history and what the nemesis returned."""
    rng = random.Random(seed)
    first = node_session(cluster, 1)
    for k in range(keys):
        first[1].execute("INSERT INTO %s (k, v) VALUES (%%s, 0) IF NOT EXISTS" % table, (k,))
    first[0].shutdown()
    history, lock = [], threading.Lock()
    stop = time.monotonic() + seconds
    t0 = time.monotonic()

    def client(i):
        crng = random.Random(rng.random())
        node = i % 3 + 1
        driver, session = node_session(cluster, node, timeout=5)
        read = SimpleStatement("SELECT v FROM %s WHERE k = %%s" % table, consistency_level=SERIAL)
        cas = session.prepare("UPDATE %s SET v = ? WHERE k = ? IF v = ?" % table)
        write = session.prepare("UPDATE %s SET v = ? WHERE k = ? IF EXISTS" % table)
        try:
            while time.monotonic() < stop:
                k = crng.randrange(keys)
                kind = crng.choice(("read", "write", "cas"))
                invoke = time.monotonic() - t0
                try:
                    if kind == "read":
                        row = session.execute(read, (k,)).one()
                        op = Op(i, invoke, time.monotonic() - t0, ("read",), row.v if row else None, key=k)
                    elif kind == "write":
                        v = crng.randrange(5)
                        session.execute(write, (v, k))
                        op = Op(i, invoke, time.monotonic() - t0, ("write", v), key=k)
                    else:
                        expected, v = crng.randrange(5), crng.randrange(5)
                        applied = session.execute(cas, (v, k, expected)).one()[0]
                        op = Op(i, invoke, time.monotonic() - t0, ("cas", expected, v), applied, key=k)
                except Exception:
                    if kind == "read":
                        continue  # a failed read observed nothing
                    op = Op(i, invoke, None, ("write", v) if kind == "write" else ("cas", expected, v), key=k)
                    with lock:
                        history.append(op)
                    time.sleep(0.05)
                    continue
                with lock:
                    history.append(op)
        finally:
            driver.shutdown()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    if nemesis is None:
        nemesis = rotating_nemesis([lambda: kill_and_restart(cluster, 2), lambda: pause(cluster, 3)],
                                   max(300, int(seconds * 40)))
    faults = nemesis(lambda: len(history), stop)
    for t in threads:
        t.join(seconds + 120)
    assert not any(t.is_alive() for t in threads)
    return history, faults


def test_register_workload_is_linearizable_under_a_nemesis(cluster, sessions):
    history, faults = run_register_workload(cluster, WORKLOAD_SECONDS, seed=30)
    assert faults, "no fault happened while the clients ran"
    done = [op for op in history if op.complete is not None]
    unknown = len(history) - len(done)
    applied = sum(1 for op in done if op.kind[0] == "cas" and op.result)
    assert len(done) > 100, "too few operations completed: %d" % len(done)
    for key, (ok, prefix) in check_by_key(history, initial=0).items():
        assert ok, "key %s is not linearizable; its longest linearizable prefix: %s" % (key, prefix)
    print("\nregister workload under %s: %d operations (%d of unknown outcome, %d compare-and-set applied), "
          "linearizable" % (", ".join(faults), len(history), unknown, applied))


def test_register_check_holds_through_a_migration_and_an_rf_change(cluster, sessions):
    """Issue 30, must-show 3: an RF 2 table's only tablet has one replica
    moved to the node that held none (`tessera admin move`, every stage),
    then ALTER KEYSPACE raises the factor to 3, while the register workload
    runs; the history stays linearizable."""
    s = sessions[0]
    s.execute("CREATE KEYSPACE IF NOT EXISTS lwt2 WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 2}")
    s.execute("CREATE TABLE IF NOT EXISTS lwt2.registers (k int PRIMARY KEY, v int) WITH initial_tablets = 1")
    for other in sessions:
        wait_until(lambda: other.execute("SELECT * FROM lwt2.registers LIMIT 1") is not None, 30, "schema everywhere")
    done = {}
    seconds = max(WORKLOAD_SECONDS, 20)
    began = time.monotonic()

    def move_then_change_rf(progress, ends):
        wait_until(lambda: progress() >= 200, 30, "some history before the move")
        code, out, err = cluster.admin(1, "tablets", "--keyspace", "lwt2", "--table", "registers", "--json")
        assert code == 0, err
        tablet = json.loads(out)["tablets"][0]
        holders = [r["address"] for r in tablet["replicas"]]
        target = next(a for a in ("127.0.0.1", "127.0.0.2", "127.0.0.3") if a not in holders)
        code, out, err = cluster.admin(2, "move", "--keyspace", "lwt2", "--table", "registers", "--start",
                                       tablet["start"], "--from", holders[0], "--to", target, "--json", timeout=300)
        assert code == 0, (out, err)
        done["move"] = json.loads(out)
        moved_at = progress()
        wait_until(lambda: progress() >= moved_at + 200, 30, "some history between the move and the RF change")
        driver, session = node_session(cluster, 3, timeout=120)
        try:
            session.execute("ALTER KEYSPACE lwt2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        finally:
            driver.shutdown()
        done["rf"] = time.monotonic() - began

    history, _ = run_register_workload(cluster, seconds, nemesis=move_then_change_rf, seed=31, table="lwt2.registers")
    assert done.get("move", {}).get("completed") and done.get("rf")
    # The move carried the old replicas' Paxos state of the tablet to the new one.
    assert done["move"]["paxos_rows"] >= 1, done["move"]
    assert done["rf"] < seconds - 1, "the RF change ended after the workload (%.1f s)" % done["rf"]
    done_ops = [op for op in history if op.complete is not None]
    assert len(done_ops) > 100, "too few operations completed: %d" % len(done_ops)
    for key, (ok, prefix) in check_by_key(history, initial=0).items():
        assert ok, "key %s is not linearizable; its longest linearizable prefix: %s" % (key, prefix)
    code, out, err = cluster.admin(1, "tablets", "--keyspace", "lwt2", "--table", "registers", "--json")
    assert len(json.loads(out)["tablets"][0]["replicas"]) == 3
    print("\nregister workload through a move (%s; %d Paxos rows carried) and RF 2 -> 3: %d operations "
          "(%d of unknown outcome), linearizable"
          % (", ".join(st["stage"] for st in done["move"]["stages"]), done["move"]["paxos_rows"], len(history),
             len(history) - len(done_ops)))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"), reason="network namespaces need root and iproute2")
def test_register_workload_is_linearizable_under_kills_pauses_and_partitions():
    """Nodes in network namespaces: in turn, node 3 cut off from its peers
    (etcd and the clients still reach it), node 2 killed -9 and restarted,
    node 1 paused with SIGSTOP, each until a peer sees it down."""
    c = NetnsCluster(BINARY, 3, ["--write-request-timeout-ms=2000", "--read-request-timeout-ms=2000"])
    c.port, c.admin_port = CQL_PORT, ADMIN_PORT  # what node_session and _state_seen_by read
    try:
        c.start()
        d, s = node_session(c, 1)
        s.execute("CREATE KEYSPACE lwtn WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE lwtn.registers (k int PRIMARY KEY, v int)")
        d.shutdown()
        for n in (1, 2, 3):
            dn, sn = node_session(c, n)
            wait_until(lambda: sn.execute("SELECT * FROM lwtn.registers LIMIT 1") is not None, 30, "schema on %d" % n)
            dn.shutdown()
        seconds = max(WORKLOAD_SECONDS, 15)
        nemesis = rotating_nemesis([lambda: cut_off(c, 3), lambda: kill_and_restart(c, 2), lambda: pause(c, 1)],
                                   max(300, int(seconds * 40)))
        history, faults = run_register_workload(c, seconds, nemesis=nemesis, seed=32, table="lwtn.registers")
        assert "partition 3" in faults and "kill -9 2" in faults, faults
        done = [op for op in history if op.complete is not None]
        assert len(done) > 100, "too few operations completed: %d" % len(done)
        for key, (ok, prefix) in check_by_key(history, initial=0).items():
            assert ok, "key %s is not linearizable; its longest linearizable prefix: %s" % (key, prefix)
        print("\nregister workload under %s: %d operations (%d of unknown outcome), linearizable"
              % (", ".join(faults), len(history), len(history) - len(done)))
    finally:
        for p in c.procs.values():
            try:
                os.kill(p.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        c.stop()
        shutil.rmtree(c.dir, ignore_errors=True)
