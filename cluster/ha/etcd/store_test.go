package etcd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/ha/hatest"
)

// etcdBackend opens stores on srv with a one-second lease.
func etcdBackend(srv *etcdServer) hatest.Backend {
	return hatest.Backend{
		Open:      func(t *testing.T, cluster string) ha.Store { return open(t, srv, cluster, time.Second) },
		Pause:     func(s ha.Store) { pauseKeepAlive(s.(*Store)) },
		LeaseWait: 15 * time.Second,
	}
}

// TestElection: hatest.Election on etcd: the paused leader's keep-alive
// stops, as under SIGSTOP.
func TestElection(t *testing.T) { hatest.Election(t, etcdBackend(startEtcd(t))) }

// TestJobs: hatest.Jobs on etcd.
func TestJobs(t *testing.T) { hatest.Jobs(t, etcdBackend(startEtcd(t))) }

// TestEtcdKilledAndRestarted: etcd killed with SIGKILL and restarted on
// its data directory within the lease: the leader keeps its leadership and
// epoch, and its writes go through again once etcd answers.
func TestEtcdKilledAndRestarted(t *testing.T) {
	srv := startEtcd(t)
	st := open(t, srv, "c", 10*time.Second)
	l, err := st.Campaign(ctxFor(t, 5*time.Second), "jm:1")
	if err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("1e", 16)
	if err := st.PutJob(ctxFor(t, 5*time.Second), l.Epoch, ha.Job{ID: id, Incarnation: "i", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	srv.kill()
	if err := st.SetCheckpoint(ctxFor(t, 500*time.Millisecond), l.Epoch, id, "i", ha.Checkpoint{ID: 1}); err == nil {
		t.Fatal("a write while etcd is down succeeded")
	}
	srv.start()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := st.SetCheckpoint(ctxFor(t, 2*time.Second), l.Epoch, id, "i", ha.Checkpoint{ID: 1})
		if err == nil {
			break
		}
		if isFenced(err) || time.Now().After(deadline) {
			t.Fatalf("the leader's write after etcd restarted: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case <-l.Lost:
		t.Fatal("the leadership was lost over a restart shorter than its lease")
	default:
	}
	if got, err := st.Leader(ctxFor(t, 5*time.Second)); err != nil || got.Epoch != l.Epoch {
		t.Fatalf("Leader after the restart = %+v, %v; want epoch %d", got, err, l.Epoch)
	}
}

// TestOpenUnreachable: no etcd at the endpoint is an error naming it
// within the dial timeout.
func TestOpenUnreachable(t *testing.T) {
	addr := "http://127.0.0.1:" + itoa(freePort(t))
	start := time.Now()
	_, err := Open(context.Background(), Config{Endpoints: []string{addr}, ClusterID: "c", DialTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Open of an unreachable etcd: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if _, err := Open(context.Background(), Config{Endpoints: []string{addr}, ClusterID: "a/b"}); err == nil {
		t.Fatal("a cluster id with '/' was accepted")
	}
}
