// The Go driver's token-aware policy against a 3-node Tessera cluster (issue
// 28 item 5): gocql.TokenAwareHostPolicy reads the ring from system.local and
// system.peers, whose tokens follow the tablet placement, and sends each
// prepared request of an RF 1 table to the node holding its partition. The
// nodes' /metrics must show no forwarded request (a coordinator without the
// replica), while the same requests sent round robin are forwarded two in
// three. Exits 1 with the reason on the first failure.
// Usage: go run gocql_routing.go PORT ADMIN_PORT (nodes on 127.0.0.1-3)
package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
)

const keys = 200

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// The sum over the three nodes of a /metrics counter.
func clusterMetric(adminPort int, name string) float64 {
	total := 0.0
	for n := 1; n <= 3; n++ {
		r, err := http.Get(fmt.Sprintf("http://127.0.0.%d:%d/metrics", n, adminPort))
		if err != nil {
			fail("metrics of node %d: %v", n, err)
		}
		found := false
		s := bufio.NewScanner(r.Body)
		for s.Scan() {
			if f := strings.Fields(s.Text()); len(f) == 2 && f[0] == name {
				v, _ := strconv.ParseFloat(f[1], 64)
				total += v
				found = true
			}
		}
		r.Body.Close()
		if !found {
			fail("no metric %s on node %d", name, n)
		}
	}
	return total
}

func session(port int, policy gocql.HostSelectionPolicy) *gocql.Session {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = port
	cluster.ProtoVersion = 4
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.Consistency = gocql.One
	cluster.PoolConfig.HostSelectionPolicy = policy
	s, err := cluster.CreateSession()
	if err != nil {
		fail("connect: %v", err)
	}
	return s
}

// Writes and reads `keys` rows; the forwarded and coordinated tablet requests they caused.
func run(port, adminPort int, policy gocql.HostSelectionPolicy) (float64, float64) {
	s := session(port, policy)
	defer s.Close()
	f0 := clusterMetric(adminPort, "tessera_coordinator_forwarded_requests_total")
	c0 := clusterMetric(adminPort, "tessera_coordinator_requests_total")
	for k := 0; k < keys; k++ {
		q := s.Query("INSERT INTO go_route.kv (k, v) VALUES (?, ?)", k, k)
		if err := q.Exec(); err != nil {
			fail("insert %d: %v", k, err)
		}
	}
	for k := 0; k < keys; k++ {
		var v int
		q := s.Query("SELECT v FROM go_route.kv WHERE k = ?", k)
		if err := q.Scan(&v); err != nil || v != k {
			fail("read %d: %v (v=%d)", k, err, v)
		}
	}
	return clusterMetric(adminPort, "tessera_coordinator_forwarded_requests_total") - f0,
		clusterMetric(adminPort, "tessera_coordinator_requests_total") - c0
}

func main() {
	if len(os.Args) != 3 {
		fail("usage: gocql_routing PORT ADMIN_PORT")
	}
	port, _ := strconv.Atoi(os.Args[1])
	adminPort, _ := strconv.Atoi(os.Args[2])
	setup := session(port, gocql.RoundRobinHostPolicy())
	for _, ddl := range []string{
		"CREATE KEYSPACE go_route WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE go_route.kv (k int PRIMARY KEY, v int) WITH initial_tablets = 16",
	} {
		if err := setup.Query(ddl).Exec(); err != nil {
			fail("%s: %v", ddl, err)
		}
	}
	// Every node learns the new placement through its etcd watch: wait until node 1 reports 16 tokens.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var local []string
		if err := setup.Query("SELECT tokens FROM system.local").Scan(&local); err != nil {
			fail("system.local: %v", err)
		}
		count := len(local)
		iter := setup.Query("SELECT tokens FROM system.peers").Iter()
		var peer []string
		for iter.Scan(&peer) {
			count += len(peer)
		}
		if err := iter.Close(); err != nil {
			fail("system.peers: %v", err)
		}
		if count == 16 {
			break
		}
		if time.Now().After(deadline) {
			fail("the ring has %d tokens, not 16", count)
		}
		time.Sleep(100 * time.Millisecond)
	}
	setup.Close()

	forwarded, coordinated := run(port, adminPort, gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()))
	fmt.Printf("token-aware: %.0f of %.0f tablet requests forwarded\n", forwarded, coordinated)
	if coordinated < 2*keys || forwarded != 0 {
		fail("token-aware: %.0f of %.0f tablet requests forwarded, want 0 of at least %d", forwarded, coordinated, 2*keys)
	}
	forwarded, coordinated = run(port, adminPort, gocql.RoundRobinHostPolicy())
	fmt.Printf("round robin: %.0f of %.0f tablet requests forwarded\n", forwarded, coordinated)
	if coordinated < 2*keys || forwarded/coordinated < 0.4 {
		fail("round robin: %.0f of %.0f forwarded, want more than 40%%", forwarded, coordinated)
	}
	fmt.Println("OK")
}
