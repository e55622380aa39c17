// Package hatest holds the contract tests every ha.Store backend passes:
// election and fencing, and the jobs and their checkpoint pointers. A
// backend's tests call them with a way to open stores and to pause a
// leader (stop its lease renewal without giving it up, as SIGSTOP would).
package hatest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/ha"
)

// Backend opens the stores of one backend for the contract tests.
type Backend struct {
	// Open returns a new store of the cluster with id cluster, whose
	// leadership's lease lasts about a second; the test closes it.
	Open func(t *testing.T, cluster string) ha.Store
	// Pause stops s renewing its leadership without giving it up.
	Pause func(s ha.Store)
	// LeaseWait bounds how long a standby waits for a paused leader's
	// lease to run out.
	LeaseWait time.Duration
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Election: one of two JobManagers leads; the other waits. The leader
// pauses past its lease: the standby takes over with a larger epoch, the
// old leader's Lost closes once it can tell, and every write it tries with
// its epoch is fenced, while the new leader's succeed. A watcher sees both
// leaders in turn; after the last resigns, none.
func Election(t *testing.T, be Backend) {
	a, b, watcher := be.Open(t, "c1"), be.Open(t, "c1"), be.Open(t, "c1")
	if _, err := watcher.Leader(ctxFor(t, 5*time.Second)); !errors.Is(err, ha.ErrNoLeader) {
		t.Fatalf("Leader before any campaign: %v", err)
	}
	watch := watcher.WatchLeader(ctxFor(t, 60*time.Second))
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
	if _, err := b.Campaign(ctxFor(t, 300*time.Millisecond), "jm-b:6123"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("b's campaign while a leads: %v", err)
	}
	job := ha.Job{ID: strings.Repeat("ab", 16), Incarnation: "i1", Name: "wordcount", Spec: []byte(`{"job":"wordcount"}`), Submitted: 1}
	if err := a.PutJob(ctxFor(t, 5*time.Second), la.Epoch, job); err != nil {
		t.Fatal(err)
	}
	if err := b.PutJob(ctxFor(t, 5*time.Second), la.Epoch, job); !errors.Is(err, ha.ErrFenced) {
		t.Fatalf("a write by a non-leader with the leader's epoch: %v", err)
	}

	be.Pause(a)
	lb, err := b.Campaign(ctxFor(t, be.LeaseWait), "jm-b:6123")
	if err != nil {
		t.Fatal(err)
	}
	if lb.Epoch <= la.Epoch {
		t.Fatalf("b's epoch %d, a's %d: want it larger", lb.Epoch, la.Epoch)
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
	if err := a.PutJob(ctx, la.Epoch, zombie); !errors.Is(err, ha.ErrFenced) {
		t.Fatalf("the old leader's PutJob: %v, want fenced", err)
	}
	if err := a.SetCheckpoint(ctx, la.Epoch, job.ID, "i1", ha.Checkpoint{ID: 9, Path: "s3://x/chk-9"}); !errors.Is(err, ha.ErrFenced) {
		t.Fatalf("the old leader's SetCheckpoint: %v, want fenced", err)
	}
	if err := a.RemoveJob(ctx, la.Epoch, job.ID, "i1"); !errors.Is(err, ha.ErrFenced) {
		t.Fatalf("the old leader's RemoveJob: %v, want fenced", err)
	}
	select {
	case <-la.Lost:
	case <-time.After(10 * time.Second):
		t.Fatal("a's Lost did not close after its lease ran out")
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

// Jobs: the pointer only grows and only for the incarnation stored;
// RemoveJob takes the pointers with the job, so the same id submitted
// again starts with none; another cluster id sees nothing.
func Jobs(t *testing.T, be Backend) {
	st, other := be.Open(t, "prod"), be.Open(t, "staging")
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
	if c, ok, err := st.LatestCheckpoint(ctx, id, "i1"); err != nil || !ok || c != (ha.Checkpoint{ID: 4, Path: "/ck/chk-4"}) {
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
