"""Blob conversion functions (part of issue 12) through the DataStax Python
driver: <type>AsBlob and blobAs<type> in values, WHERE clauses and selections,
for every native type, and Cassandra's errors."""
import datetime
import decimal
import uuid

import pytest
from cassandra import InvalidRequest

from tablet_queries import connect

VALUES = [
    ("int", "int", "42", 42), ("bigint", "bigint", "-7", -7), ("text", "text", "'héllo'", "héllo"),
    ("ascii", "ascii", "'abc'", "abc"), ("boolean", "boolean", "true", True), ("double", "double", "1.5", 1.5),
    ("float", "float", "2.5", 2.5), ("smallint", "smallint", "-3", -3), ("tinyint", "tinyint", "7", 7),
    ("varint", "varint", "123456789012345678901234567890", 123456789012345678901234567890),
    ("decimal", "decimal", "12.345", decimal.Decimal("12.345")),
    ("uuid", "uuid", "5132b130-ae79-11e4-ab27-0800200c9a66", uuid.UUID("5132b130-ae79-11e4-ab27-0800200c9a66")),
    ("timestamp", "timestamp", "'2020-01-02 03:04:05+0000'", datetime.datetime(2020, 1, 2, 3, 4, 5)),
    ("inet", "inet", "'10.0.0.1'", "10.0.0.1"),
]


@pytest.fixture(scope="module")
def session(server):
    cluster, s = connect(server, "bf")
    cols = ", ".join("c_%s %s" % (name, cql_type) for name, cql_type, _, _ in VALUES)
    s.execute("CREATE TABLE bf.t (k blob PRIMARY KEY, raw blob, %s)" % cols)
    yield s
    cluster.shutdown()


@pytest.mark.parametrize("name, cql_type, literal, value", VALUES)
def test_round_trips_through_blobs(session, name, cql_type, literal, value):
    key = "%sAsBlob(%s)" % (name, literal)
    session.execute("INSERT INTO bf.t (k, raw, c_%s) VALUES (%s, %s, blobAs%s(%sAsBlob(%s)))"
                    % (name, key, key, name, name, literal))
    row = session.execute("SELECT c_%s, blobAs%s(raw) AS back, %sAsBlob(c_%s) AS bytes, raw FROM bf.t WHERE k = %s"
                          % (name, name, name, name, key)).one()
    assert row[0] == value and row.back == value, row
    assert row.bytes == row.raw and isinstance(row.raw, bytes), row


def test_blob_function_errors(session):
    with pytest.raises(InvalidRequest) as e:
        session.execute("INSERT INTO bf.t (k, c_int) VALUES (0x01, blobAsInt(0x0102))")
    assert "is not a valid binary representation for type int" in str(e.value), str(e.value)
    with pytest.raises(InvalidRequest) as e:
        session.execute("INSERT INTO bf.t (k, c_int) VALUES (0x01, textAsBlob('x'))")
    assert "Type error" in str(e.value), str(e.value)
    with pytest.raises(InvalidRequest) as e:
        session.execute("SELECT intAsBlob(c_text) FROM bf.t")
    assert "c_text cannot be passed as argument 0 of function system.intasblob of type int" in str(e.value)


def test_blob_as_type_in_a_selection_fails_on_bytes_that_are_no_value_of_the_type(session):
    """Issue 31: as Cassandra, the query fails (it used to read null)."""
    session.execute("INSERT INTO bf.t (k, raw) VALUES (0x0bad, 0x0102)")
    with pytest.raises(InvalidRequest) as e:
        session.execute("SELECT blobAsInt(raw) FROM bf.t WHERE k = 0x0bad")
    assert "In call to function system.blobasint, value 0x0102 is not a valid binary representation for type int" \
        in str(e.value), str(e.value)
    assert session.execute("SELECT blobAsSmallint(raw) FROM bf.t WHERE k = 0x0bad").one()[0] == 0x0102
