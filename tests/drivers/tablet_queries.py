"""What the driver tests of tablets and key design ask a server: a session with a
keyspace, a table's tablets and tablet events, and a query's rows through pages."""
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement


def connect(server, keyspace):
    """A cluster and session on `server`, with `keyspace` created (SimpleStrategy, RF 1)."""
    c = Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10)
    s = c.connect()
    s.execute("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', "
              "'replication_factor': 1}" % keyspace)
    return c, s


def tablets(session, keyspace, table):
    return list(session.execute("SELECT * FROM system.tablets WHERE keyspace_name = %s AND table_name = %s",
                                (keyspace, table)))


def events(session, keyspace, table):
    return list(session.execute("SELECT * FROM system.tablet_events WHERE keyspace_name = %s AND table_name = %s",
                                (keyspace, table)))


def rows_of(session, cql, page_size):
    """Every row of a query as tuples, fetched `page_size` rows at a time."""
    return [tuple(r) for r in session.execute(SimpleStatement(cql, fetch_size=page_size))]


class Keyspace:
    """The same queries bound to one keyspace, for a test file that works in it."""

    def __init__(self, name):
        self.name = name

    def connect(self, server):
        return connect(server, self.name)

    def tablets(self, session, table):
        return tablets(session, self.name, table)

    def events(self, session, table):
        return events(session, self.name, table)
