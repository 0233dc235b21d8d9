// The Go driver (gocql 1.3.2, Debian golang-github-gocql-gocql-dev) against a
// real tessera server: connects, creates a keyspace and a table, writes and
// pages through rows, reads the keyspace's metadata (system_schema, as gocql
// queries it, user types among it), writes and reads user-defined type values,
// uses a lightweight transaction and JSON, and traces a query. Exits 1 with the
// reason on the first failure. Usage: go run gocql_check.go HOST PORT
package main

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 3 {
		fail("usage: gocql_check HOST PORT")
	}
	port, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fail("bad port %q", os.Args[2])
	}
	cluster := gocql.NewCluster(os.Args[1])
	cluster.Port = port
	cluster.ProtoVersion = 4
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	session, err := cluster.CreateSession()
	if err != nil {
		fail("connect: %v", err)
	}
	defer session.Close()

	for _, stmt := range []string{
		"CREATE KEYSPACE IF NOT EXISTS gocql_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS gocql_ks.events (device text, at timestamp, seq int, payload text, tags set<text>, PRIMARY KEY (device, at, seq)) WITH CLUSTERING ORDER BY (at DESC, seq ASC)",
		"CREATE TYPE IF NOT EXISTS gocql_ks.address (street text, zip int)",
		"CREATE TABLE IF NOT EXISTS gocql_ks.people (id int PRIMARY KEY, home frozen<address>, work address)",
	} {
		if err := session.Query(stmt).Exec(); err != nil {
			fail("%s: %v", stmt, err)
		}
	}
	base := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	const rows = 250
	for i := 0; i < rows; i++ {
		err := session.Query("INSERT INTO gocql_ks.events (device, at, seq, payload, tags) VALUES (?, ?, ?, ?, ?)",
			"d1", base.Add(time.Duration(i/3)*time.Second), i%3, fmt.Sprintf("p%03d", i), []string{"t", fmt.Sprint(i % 5)}).Exec()
		if err != nil {
			fail("insert %d: %v", i, err)
		}
	}

	// Paging: 7 rows a page, DESC by time then ASC by seq, every row once.
	iter := session.Query("SELECT at, seq, payload FROM gocql_ks.events WHERE device = ?", "d1").PageSize(7).Iter()
	var at time.Time
	var seq int
	var payload string
	seen := map[string]bool{}
	var prevAt time.Time
	prevSeq := -1
	for iter.Scan(&at, &seq, &payload) {
		if seen[payload] {
			fail("row %s returned twice", payload)
		}
		seen[payload] = true
		if !prevAt.IsZero() && (at.After(prevAt) || (at.Equal(prevAt) && seq <= prevSeq)) {
			fail("order broken at %s", payload)
		}
		prevAt, prevSeq = at, seq
	}
	if err := iter.Close(); err != nil {
		fail("paging: %v", err)
	}
	if len(seen) != rows {
		fail("paged %d rows, want %d", len(seen), rows)
	}

	// Metadata: what KeyspaceMetadata reads from system_schema.
	ks, err := session.KeyspaceMetadata("gocql_ks")
	if err != nil {
		fail("KeyspaceMetadata: %v", err)
	}
	table, ok := ks.Tables["events"]
	if !ok {
		fail("KeyspaceMetadata has no table events: %v", ks.Tables)
	}
	var names []string
	for name := range table.Columns {
		names = append(names, name)
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[at device payload seq tags]" {
		fail("columns %v", names)
	}
	if len(table.PartitionKey) != 1 || table.PartitionKey[0].Name != "device" ||
		len(table.ClusteringColumns) != 2 || table.ClusteringColumns[0].Name != "at" ||
		table.ClusteringColumns[0].ClusteringOrder != "desc" {
		fail("key metadata: partition %v clustering %v", table.PartitionKey, table.ClusteringColumns)
	}
	if ks.StrategyClass == "" {
		fail("no replication strategy in the keyspace metadata")
	}

	// User-defined types: the metadata gocql reads, and values marshalled from and to maps.
	udt, ok := ks.UserTypes["address"]
	if !ok || fmt.Sprint(udt.FieldNames) != "[street zip]" {
		fail("user types in the metadata: %v", ks.UserTypes)
	}
	err = session.Query("INSERT INTO gocql_ks.people (id, home, work) VALUES (?, ?, ?)", 1,
		map[string]interface{}{"street": "Main", "zip": 7}, map[string]interface{}{"street": "Mill"}).Exec()
	if err != nil {
		fail("insert user type values: %v", err)
	}
	if err := session.Query("UPDATE gocql_ks.people SET work.zip = ? WHERE id = 1", 9).Exec(); err != nil {
		fail("update a field: %v", err)
	}
	home, work := map[string]interface{}{}, map[string]interface{}{}
	if err := session.Query("SELECT home, work FROM gocql_ks.people WHERE id = 1").Scan(&home, &work); err != nil {
		fail("read user type values: %v", err)
	}
	if home["street"] != "Main" || home["zip"] != 7 || work["street"] != "Mill" || work["zip"] != 9 {
		fail("user type values read back as %v and %v", home, work)
	}

	// A lightweight transaction and JSON.
	var applied bool
	m := map[string]interface{}{}
	applied, err = session.Query("INSERT INTO gocql_ks.events (device, at, seq, payload) VALUES ('d2', ?, 0, 'x') IF NOT EXISTS", base).MapScanCAS(m)
	if err != nil || !applied {
		fail("IF NOT EXISTS: applied=%v err=%v", applied, err)
	}
	applied, err = session.Query("INSERT INTO gocql_ks.events (device, at, seq, payload) VALUES ('d2', ?, 0, 'y') IF NOT EXISTS", base).MapScanCAS(m)
	if err != nil || applied || m["payload"] != "x" {
		fail("second IF NOT EXISTS: applied=%v current=%v err=%v", applied, m, err)
	}
	var doc string
	if err := session.Query("SELECT JSON device, seq, payload FROM gocql_ks.events WHERE device = 'd2'").Scan(&doc); err != nil {
		fail("SELECT JSON: %v", err)
	}
	if doc != `{"device": "d2", "seq": 0, "payload": "x"}` {
		fail("SELECT JSON gave %s", doc)
	}

	// A session opened on keyspace system (issue 31), with its metadata from system_schema.
	sysCluster := gocql.NewCluster(os.Args[1])
	sysCluster.Port = port
	sysCluster.ProtoVersion = 4
	sysCluster.Timeout = 10 * time.Second
	sysCluster.ConnectTimeout = 10 * time.Second
	sysCluster.Keyspace = "system"
	sysSession, err := sysCluster.CreateSession()
	if err != nil {
		fail("connect on keyspace system: %v", err)
	}
	defer sysSession.Close()
	var key string
	if err := sysSession.Query("SELECT key FROM local").Scan(&key); err != nil || key != "local" {
		fail("SELECT key FROM local on keyspace system: %q %v", key, err)
	}
	sysMeta, err := sysSession.KeyspaceMetadata("system")
	if err != nil {
		fail("metadata of keyspace system: %v", err)
	}
	if local, ok := sysMeta.Tables["local"]; !ok || local.Columns["tokens"] == nil {
		fail("system.local or its tokens column missing from the metadata: %v", sysMeta.Tables)
	}
	// A traced query (issue 31 item 4): gocql's trace writer reads the session
	// and its events from system_traces right after the answer.
	var traced bytes.Buffer
	var tracedPayload string
	if err := session.Query("SELECT payload FROM gocql_ks.events WHERE device = 'd2'").
		Trace(gocql.NewTraceWriter(session, &traced)).Scan(&tracedPayload); err != nil || tracedPayload != "x" {
		fail("traced SELECT: %q %v", tracedPayload, err)
	}
	trace := traced.String()
	if !strings.Contains(trace, "Tracing session ") || !strings.Contains(trace, "coordinator: 127.0.0.1") ||
		!strings.Contains(trace, "Parsing SELECT payload FROM gocql_ks.events") ||
		!strings.Contains(trace, "Executing query on gocql_ks.events at QUORUM") {
		fail("trace of the SELECT: %s", trace)
	}
	// A materialized view (issue 31 item 2): kept by the base's writes, and in
	// the keyspace metadata gocql reads from system_schema.views.
	for _, stmt := range []string{
		"CREATE TABLE IF NOT EXISTS gocql_ks.orders (id int PRIMARY KEY, customer text, total int)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS gocql_ks.orders_by_customer AS SELECT * FROM gocql_ks.orders " +
			"WHERE customer IS NOT NULL AND id IS NOT NULL PRIMARY KEY (customer, id)",
	} {
		if err := session.Query(stmt).Exec(); err != nil {
			fail("%s: %v", stmt, err)
		}
	}
	for i, customer := range []string{"kim", "lee", "kim"} {
		if err := session.Query("INSERT INTO gocql_ks.orders (id, customer, total) VALUES (?, ?, ?)", i, customer, 10*i).Exec(); err != nil {
			fail("INSERT INTO orders: %v", err)
		}
	}
	if err := session.Query("UPDATE gocql_ks.orders SET customer = 'lee' WHERE id = 0").Exec(); err != nil {
		fail("UPDATE orders: %v", err)
	}
	var ids []int
	viewIter := session.Query("SELECT id FROM gocql_ks.orders_by_customer WHERE customer = ?", "lee").Iter()
	var orderID int
	for viewIter.Scan(&orderID) {
		ids = append(ids, orderID)
	}
	if err := viewIter.Close(); err != nil || fmt.Sprint(ids) != "[0 1]" {
		fail("orders of lee through the view: %v %v", ids, err)
	}
	// gocql caches a keyspace's metadata and drops it on the schema event of the
	// CREATE (debounced): ask until the view is in it, within a deadline.
	var view *gocql.MaterializedViewMetadata
	found := false
	for deadline := time.Now().Add(20 * time.Second); !found && time.Now().Before(deadline); {
		ksMeta, err := session.KeyspaceMetadata("gocql_ks")
		if err != nil {
			fail("metadata of gocql_ks: %v", err)
		}
		if view, found = ksMeta.MaterializedViews["orders_by_customer"]; !found {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !found || view.BaseTable == nil || view.BaseTable.Name != "orders" || !view.IncludeAllColumns {
		fail("view metadata: %+v", view)
	}
	fmt.Printf("gocql: %d rows paged 7 a page in order, metadata of %d columns and a user type, UDT values, LWT, JSON, keyspace system, a trace and a materialized view ok\n", len(seen), len(names))
}
