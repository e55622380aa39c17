package etcd

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/ha"
)

// TestElectionAndFencing: one of two JobManagers leads; the other waits.
// The leader pauses past its lease (its keep-alive stops, as under SIGSTOP):
// the standby takes over with a larger epoch, the old leader's Lost
// closes, and every write it tries with its epoch is fenced, while the new
// leader's succeed. A watcher sees both leaders in turn.
func TestElectionAndFencing(t *testing.T) {
	srv := startEtcd(t)
	a, b, watcher := open(t, srv, "c1", time.Second), open(t, srv, "c1", time.Second), open(t, srv, "c1", time.Second)
	if _, err := watcher.Leader(ctxFor(t, 5*time.Second)); !errors.Is(err, ha.ErrNoLeader) {
		t.Fatalf("Leader before any campaign: %v", err)
	}
	watch := watcher.WatchLeader(ctxFor(t, 30*time.Second))
	if l := <-watch; l != (ha.Leader{}) {
		t.Fatalf("first watched leader %+v, want none", l)
	}
	la, err := a.Campaign(ctxFor(t, 5*time.Second), "jm-a:6123")
	if err != nil {
		t.Fatal(err)
	}
	if l := <-watch; l != (ha.Leader{Address: "jm-a:6123", Epoch: la.Epoch}) {
		t.Fatalf("watched %+v, want a at epoch %d", l, la.Epoch)
	}
	// b waits while a leads.
	if _, err := b.Campaign(ctxFor(t, 300*time.Millisecond), "jm-b:6123"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("b's campaign while a leads: %v", err)
	}
	job := ha.Job{ID: strings.Repeat("ab", 16), Incarnation: "i1", Name: "wordcount", Spec: []byte(`{"job":"wordcount"}`), Submitted: 1}
	if err := a.PutJob(ctxFor(t, 5*time.Second), la.Epoch, job); err != nil {
		t.Fatal(err)
	}
	if err := b.PutJob(ctxFor(t, 5*time.Second), la.Epoch, job); !isFenced(err) {
		t.Fatalf("a write by a non-leader with the leader's epoch: %v", err)
	}

	pauseKeepAlive(a) // a's process stops answering; its lease runs out
	lb, err := b.Campaign(ctxFor(t, 15*time.Second), "jm-b:6123")
	if err != nil {
		t.Fatal(err)
	}
	if lb.Epoch <= la.Epoch {
		t.Fatalf("b's epoch %d, a's %d: want it larger", lb.Epoch, la.Epoch)
	}
	select {
	case <-la.Lost:
	case <-time.After(10 * time.Second):
		t.Fatal("a's Lost did not close after its lease expired")
	}
	for l := range watch {
		if l == (ha.Leader{Address: "jm-b:6123", Epoch: lb.Epoch}) {
			break
		}
		if l.Epoch != 0 && l.Epoch != la.Epoch {
			t.Fatalf("watched %+v between a and b", l)
		}
	}
	ctx := ctxFor(t, 5*time.Second)
	zombie := job
	zombie.Incarnation = "zombie"
	if err := a.PutJob(ctx, la.Epoch, zombie); !isFenced(err) {
		t.Fatalf("the old leader's PutJob: %v, want fenced", err)
	}
	if err := a.SetCheckpoint(ctx, la.Epoch, job.ID, "i1", ha.Checkpoint{ID: 9, Path: "s3://x/chk-9"}); !isFenced(err) {
		t.Fatalf("the old leader's SetCheckpoint: %v, want fenced", err)
	}
	if err := a.RemoveJob(ctx, la.Epoch, job.ID, "i1"); !isFenced(err) {
		t.Fatalf("the old leader's RemoveJob: %v, want fenced", err)
	}
	if err := b.SetCheckpoint(ctx, lb.Epoch, job.ID, "i1", ha.Checkpoint{ID: 3, Path: "s3://x/chk-3"}); err != nil {
		t.Fatal(err)
	}
	jobs, err := b.Jobs(ctx)
	if err != nil || !reflect.DeepEqual(jobs, []ha.Job{job}) {
		t.Fatalf("Jobs = %+v, %v; want only a's write before its pause", jobs, err)
	}
	if l, err := watcher.Leader(ctx); err != nil || l != (ha.Leader{Address: "jm-b:6123", Epoch: lb.Epoch}) {
		t.Fatalf("Leader = %+v, %v", l, err)
	}
	if err := b.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := watcher.Leader(ctx); !errors.Is(err, ha.ErrNoLeader) {
		t.Fatalf("Leader after b resigned: %v", err)
	}
}

// TestJobsAndCheckpoints: the pointer only grows and only for the
// incarnation stored; RemoveJob takes the pointers with the job, so the
// same id submitted again starts with none; another cluster id sees
// nothing.
func TestJobsAndCheckpoints(t *testing.T) {
	srv := startEtcd(t)
	st, other := open(t, srv, "prod", 2*time.Second), open(t, srv, "staging", 2*time.Second)
	ctx := ctxFor(t, 20*time.Second)
	l, err := st.Campaign(ctx, "jm:1")
	if err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("0f", 16)
	set := func(inc string, c int64) error {
		return st.SetCheckpoint(ctx, l.Epoch, id, inc, ha.Checkpoint{ID: c, Path: "/ck/chk-" + string(rune('0'+c))})
	}
	if err := set("i1", 1); !errors.Is(err, ha.ErrNotFound) {
		t.Fatalf("a pointer of a job not stored: %v", err)
	}
	if err := st.PutJob(ctx, l.Epoch, ha.Job{ID: id, Incarnation: "i1", Name: "q5"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []int64{1, 4} {
		if err := set("i1", c); err != nil {
			t.Fatal(err)
		}
	}
	if err := set("i1", 4); err == nil || !strings.Contains(err.Error(), "checkpoint 4 is stored already") {
		t.Fatalf("the same pointer again: %v", err)
	}
	if err := set("i1", 2); err == nil {
		t.Fatal("a pointer back to an older checkpoint was set")
	}
	if err := set("i0", 7); !errors.Is(err, ha.ErrNotFound) {
		t.Fatalf("a pointer of another incarnation: %v", err)
	}
	if c, ok, err := st.LatestCheckpoint(ctx, id, "i1"); err != nil || !ok || c.ID != 4 {
		t.Fatalf("LatestCheckpoint = %+v, %v, %v", c, ok, err)
	}
	if jobs, err := other.Jobs(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("another cluster sees %+v, %v", jobs, err)
	}
	if err := st.RemoveJob(ctx, l.Epoch, id, "i0"); !errors.Is(err, ha.ErrNotFound) {
		t.Fatalf("RemoveJob of another incarnation: %v", err)
	}
	if err := st.RemoveJob(ctx, l.Epoch, id, "i1"); err != nil {
		t.Fatal(err)
	}
	if jobs, err := st.Jobs(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("Jobs after RemoveJob = %+v, %v", jobs, err)
	}
	if _, ok, err := st.LatestCheckpoint(ctx, id, "i1"); err != nil || ok {
		t.Fatalf("the removed job's pointer: %v, %v", ok, err)
	}
	if err := st.PutJob(ctx, l.Epoch, ha.Job{ID: id, Incarnation: "i2", Name: "q5"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.LatestCheckpoint(ctx, id, "i2"); err != nil || ok {
		t.Fatalf("the new incarnation has a pointer: %v, %v", ok, err)
	}
	if err := st.PutJob(ctx, l.Epoch, ha.Job{ID: "a/b", Incarnation: "i"}); err == nil {
		t.Fatal("a job id with '/' was put")
	}
}

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
