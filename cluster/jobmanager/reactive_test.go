package jobmanager

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/cluster/taskmanager"
)

// TestGrowth: the slots an attempt could be redeployed at are the best
// single offer, capped by what the job asked; 0 unless more than it runs
// at.
func TestGrowth(t *testing.T) {
	for _, c := range []struct {
		asked, cur int
		offers     []int
		want       int
	}{
		{asked: 2, cur: 1, offers: []int{1}, want: 0},          // its own TaskManager alone
		{asked: 2, cur: 1, offers: []int{1, 2}, want: 2},       // a 2-slot TaskManager came
		{asked: 2, cur: 1, offers: []int{1, 5}, want: 2},       // capped by the ask
		{asked: 4, cur: 1, offers: []int{1, 2, 3}, want: 3},    // the best offer, not their sum
		{asked: 2, cur: 2, offers: []int{2, 8}, want: 0},       // granted what it asked
		{asked: 3, cur: 1, offers: []int{3}, want: 3},          // its own TaskManager freed slots
		{asked: 0, cur: 2, offers: []int{2, 4}, want: 4},       // asked for all: any more
		{asked: 0, cur: 2, offers: []int{2, 2}, want: 0},       // none offers more
		{asked: 3, cur: 1, offers: nil, want: 0},               // no TaskManager
		{asked: 3, cur: 2, offers: []int{1, 1, 1}, want: 0},    // slots scattered
		{asked: 8, cur: 3, offers: []int{3, 4, 2}, want: 4},    // one more slot is more
		{asked: 8, cur: 6, offers: []int{6, 5, 2}, want: 0},    // all offers smaller
		{asked: 1, cur: 1, offers: []int{1, 16}, want: 0},      // parallelism 1 stays
		{asked: 5, cur: 0, offers: []int{0, 2}, want: 2},       // degenerate: no slots yet
		{asked: 2, cur: 1, offers: []int{2, 2, 1}, want: 2},    // several equal offers
		{asked: 6, cur: 2, offers: []int{4, 6, 5}, want: 6},    // exactly the ask
		{asked: 0, cur: 1, offers: []int{16}, want: 16},        // no cap
		{asked: 2, cur: 3, offers: []int{3, 4}, want: 0},       // already above the ask
		{asked: 7, cur: 4, offers: []int{4, 5, 7, 6}, want: 7}, // the largest wins
	} {
		if got := growth(c.asked, c.cur, c.offers); got != c.want {
			t.Errorf("growth(asked %d, at %d, offers %v) = %d, want %d", c.asked, c.cur, c.offers, got, c.want)
		}
	}
}

// waitLog waits for a line of the JobManager's log containing s.
func (c *testCluster) waitLog(s string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%q in the JobManager's log", s), func() bool { return strings.Contains(c.log.String(), s) })
}

// noRun fails when an attempt ran.
func (c *testCluster) noRun(why string) {
	c.t.Helper()
	select {
	case r := <-c.runs:
		c.t.Fatalf("%s: attempt %s ran on %s with %d slots restoring %q", why, r.env.Attempt, r.tm, r.env.Slots, r.env.Restore)
	default:
	}
}

// parallelism returns the parallelism the job's vertices show, 0 while
// the attempt did not report them.
func (c *testCluster) parallelism(jid string) int {
	d, err := c.jm.Job(context.Background(), jid)
	if err != nil || len(d.Vertices) != 2 {
		return 0
	}
	return d.Vertices[0].Parallelism
}

// belowAsk starts a JobManager on a manual clock with reactive scaling
// after stab, and a 1-slot TaskManager running a job that asks for 2 and
// recorded chk-1; it returns the cluster, the clock, the job and its
// first attempt.
func belowAsk(t *testing.T, stab time.Duration) (*testCluster, *clock.Manual, string, run) {
	t.Helper()
	clk := clock.NewManual(time.Unix(1000, 0))
	c := newCluster(t, Options{Clock: clk, HeartbeatTimeout: time.Hour, RescaleStabilization: stab})
	c.startTM("a", 1, cluster.Fingerprint{})
	c.registered(1)
	jid, err := c.jm.Submit(context.Background(), rest.Submission{Args: []string{"wait", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	return c, clk, jid, c.next()
}

// TestRescaleUp: a job asked for 2 slots runs at 1 on a 1-slot
// TaskManager; a 2-slot TaskManager registers. Not before the
// stabilization interval passed on the JobManager's clock, the attempt is
// canceled and a new one runs on the 2-slot TaskManager with 2 slots,
// restoring the checkpoint the first recorded. The rescale is no failure:
// no restart is counted and the job goes on RUNNING at parallelism 2.
func TestRescaleUp(t *testing.T) {
	const stab = 3 * time.Second
	c, clk, jid, first := belowAsk(t, stab)
	ctx := context.Background()
	if first.tm != "a" || first.env.Slots != 1 || first.env.Restore != "" {
		t.Fatalf("the first attempt ran on %s with %d slots restoring %q, want a with 1 and nothing", first.tm, first.env.Slots, first.env.Restore)
	}
	c.waitFor("parallelism 1", func() bool { return c.parallelism(jid) == 1 })
	c.startTM("b", 2, cluster.Fingerprint{})
	c.registered(2)
	c.waitLog(fmt.Sprintf("attempt %s could run at 2 slots, not 1", first.env.Attempt))
	// the timer is set under the lock the log line was written under
	clk.Advance(stab - time.Millisecond)
	if s := c.state(jid); s != rest.StateRunning {
		t.Fatalf("before the stabilization interval the job is %s", s)
	}
	c.noRun("before the stabilization interval")
	clk.Advance(time.Millisecond)
	second := c.next()
	if second.tm != "b" || second.env.Slots != 2 || second.env.Restore != "chk-1" || second.env.Attempt == first.env.Attempt {
		t.Fatalf("the rescale ran attempt %s on %s with %d slots restoring %q, want a new attempt on b with 2 restoring chk-1",
			second.env.Attempt, second.tm, second.env.Slots, second.env.Restore)
	}
	c.waitFor("RUNNING at parallelism 2", func() bool { return c.state(jid) == rest.StateRunning && c.parallelism(jid) == 2 })
	cks, _ := c.jm.Checkpoints(ctx, jid)
	if cks.Latest.Restored == nil || cks.Latest.Restored.ID != 1 || cks.Latest.Completed.ID != 2 {
		t.Fatalf("checkpoints %+v", cks)
	}
	c.jm.mu.Lock()
	failures, deployed := c.jm.jobs[jid].failures, c.jm.jobs[jid].deployed
	c.jm.mu.Unlock()
	if failures != 0 || deployed != 2 {
		t.Fatalf("%d failures and %d attempts, want 0 and 2", failures, deployed)
	}
	if tms, _ := c.jm.TaskManagers(ctx); len(tms) != 2 || tms[0].FreeSlots != 1 || tms[1].FreeSlots != 0 {
		t.Fatalf("TaskManagers after the rescale %+v, want a free and b full", tms)
	}
}

// TestRescaleUpSpread: a job that spreads asks for 3 slots and runs at 1
// on a 1-slot TaskManager; a 2-slot TaskManager registers, with a data
// plane as the first: no one TaskManager offers 3, but the two together
// do, so after the stabilization interval the attempt is canceled and the
// next runs spread over both with 3 slots, every share restoring the
// checkpoint the first recorded.
func TestRescaleUpSpread(t *testing.T) {
	const stab = 2 * time.Second
	clk := clock.NewManual(time.Unix(1000, 0))
	c := newCluster(t, Options{Clock: clk, HeartbeatTimeout: time.Hour, RescaleStabilization: stab})
	c.startTMWith(taskmanager.Options{ID: "a", Slots: 1, HeartbeatInterval: time.Hour, DataAddress: "127.0.0.1:0"})
	c.registered(1)
	jid, err := c.jm.Submit(context.Background(), rest.Submission{Args: []string{"spread-wait", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	first := c.next()
	if first.tm != "a" || first.env.Slots != 1 || first.env.Spread != nil {
		t.Fatalf("the first attempt ran on %s with %d slots, spread %+v: want a alone with 1", first.tm, first.env.Slots, first.env.Spread)
	}
	c.waitFor("a recorded checkpoint", func() bool {
		cks, _ := c.jm.Checkpoints(context.Background(), jid)
		return cks.Counts.Completed == 1
	})
	c.startTMWith(taskmanager.Options{ID: "b", Slots: 2, HeartbeatInterval: time.Hour, DataAddress: "127.0.0.1:0"})
	c.registered(2)
	c.waitLog(fmt.Sprintf("attempt %s could run at 3 slots, not 1", first.env.Attempt))
	clk.Advance(stab)
	got := map[string]run{}
	for range 2 {
		r := c.next()
		got[r.tm] = r
	}
	a, b := got["a"].env, got["b"].env
	if a.Spread == nil || b.Spread == nil || b.Spread.Part != 0 || a.Spread.Part != 1 || !slices.Equal(b.Spread.Slots, []int{2, 1}) ||
		a.Restore != "chk-1" || b.Restore != "chk-1" || a.Attempt != b.Attempt || a.Attempt == first.env.Attempt {
		t.Fatalf("after the rescale: a %+v restoring %q, b %+v restoring %q", a.Spread, a.Restore, b.Spread, b.Restore)
	}
	c.waitFor("RUNNING again", func() bool { return c.state(jid) == rest.StateRunning })
}

// TestNoRescaleWithoutCheckpoint: an attempt that recorded no checkpoint
// stays at its slots when more come: a new attempt would start over.
func TestNoRescaleWithoutCheckpoint(t *testing.T) {
	c := newCluster(t, Options{RescaleStabilization: 10 * time.Millisecond})
	c.startTM("a", 1, cluster.Fingerprint{})
	c.registered(1)
	jid, err := c.jm.Submit(context.Background(), rest.Submission{Args: []string{"idle", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	first := c.next()
	c.startTM("b", 2, cluster.Fingerprint{})
	c.registered(2)
	c.waitLog(fmt.Sprintf("attempt %s is not rescaled: its attempt has recorded no checkpoint", first.env.Attempt))
	c.noRun("without a checkpoint")
	if s := c.state(jid); s != rest.StateRunning {
		t.Fatalf("the job is %s", s)
	}
}

// TestNoRescaleAtAsk: a job granted the slots it asked for stays when a
// larger TaskManager registers, while one that asked for all a
// TaskManager has (0) moves there, on the same clock and event.
func TestNoRescaleAtAsk(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	c := newCluster(t, Options{Clock: clk, HeartbeatTimeout: time.Hour, RescaleStabilization: time.Second})
	c.startTM("a", 2, cluster.Fingerprint{})
	c.registered(1)
	ctx := context.Background()
	asked, _ := c.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "2"}})
	if r := c.next(); r.env.Slots != 2 || r.env.JobID != asked {
		t.Fatalf("job asking 2 ran with %d slots", r.env.Slots)
	}
	c.startTM("c", 1, cluster.Fingerprint{})
	c.registered(2)
	all, _ := c.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "0"}})
	if r := c.next(); r.env.Slots != 1 || r.env.JobID != all || r.tm != "c" {
		t.Fatalf("job asking all ran on %s with %d slots", r.tm, r.env.Slots)
	}
	c.startTM("b", 3, cluster.Fingerprint{})
	c.registered(3)
	c.waitLog("could run at 3 slots, not 1")
	clk.Advance(time.Second)
	r := c.next()
	if r.env.JobID != all || r.tm != "b" || r.env.Slots != 3 || r.env.Restore != "chk-1" {
		t.Fatalf("job %s ran on %s with %d slots restoring %q, want job %s on b with 3 restoring chk-1", r.env.JobID, r.tm, r.env.Slots, r.env.Restore, all)
	}
	clk.Advance(time.Minute)
	c.waitFor("the job at its ask RUNNING", func() bool { return c.state(asked) == rest.StateRunning && c.parallelism(asked) == 2 })
	c.noRun("at the ask")
	for _, l := range strings.Split(c.log.String(), "\n") {
		if strings.Contains(l, "job "+asked) && strings.Contains(l, "rescale") {
			t.Fatalf("the job at its ask was considered for a rescale: %s", l)
		}
	}
}

// TestNoRescaleDuringSavepoint: while its attempt takes a savepoint a job
// is not rescaled; after a savepoint it is, after a stop it finishes.
func TestNoRescaleDuringSavepoint(t *testing.T) {
	for _, stop := range []bool{false, true} {
		t.Run(fmt.Sprintf("stop=%v", stop), func(t *testing.T) {
			c := newCluster(t, Options{RescaleStabilization: 10 * time.Millisecond})
			c.release = make(chan struct{})
			c.startTM("a", 1, cluster.Fingerprint{})
			c.registered(1)
			ctx := context.Background()
			jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "2"}})
			if err != nil {
				t.Fatal(err)
			}
			first := c.next()
			c.waitFor("the vertices", func() bool { return c.parallelism(jid) == 1 })
			trigger, err := c.jm.TriggerSavepoint(ctx, jid, "/sp", stop)
			if err != nil {
				t.Fatal(err)
			}
			c.startTM("b", 2, cluster.Fingerprint{})
			c.registered(2)
			why := "a savepoint is in progress"
			if stop {
				why = "it is stopping with a savepoint"
			}
			c.waitLog(fmt.Sprintf("attempt %s is not rescaled: %s", first.env.Attempt, why))
			c.noRun("during the savepoint")
			close(c.release)
			c.waitFor("the savepoint", func() bool {
				sp, err := c.jm.Savepoint(ctx, jid, trigger)
				return err == nil && sp.Status == "COMPLETED" && sp.Failure == ""
			})
			if stop {
				c.waitFor("the job finished", func() bool { return c.state(jid) == rest.StateFinished })
				c.noRun("after the stop")
				return
			}
			r := c.next()
			if r.tm != "b" || r.env.Slots != 2 || r.env.Restore != "chk-1" {
				t.Fatalf("after the savepoint attempt %s ran on %s with %d slots restoring %q, want b with 2 restoring chk-1", r.env.Attempt, r.tm, r.env.Slots, r.env.Restore)
			}
		})
	}
}

// TestRescaleWaitsForCheckpoint: an attempt that recorded checkpoints 2 s
// apart is due for a rescale; the JobManager waits up to 1.5 times that
// for its next checkpoint (Flink's rescale on checkpoint). When one comes
// the rescale restores it at once; when none comes within the wait the
// rescale restores the latest.
func TestRescaleWaitsForCheckpoint(t *testing.T) {
	for _, comes := range []bool{true, false} {
		t.Run(fmt.Sprintf("checkpoint=%v", comes), func(t *testing.T) {
			const stab, gap = 3 * time.Second, 2 * time.Second
			c, clk, jid, first := belowAsk(t, stab)
			ctx := context.Background() // the first attempt recorded chk-1
			clk.Advance(gap)
			if err := first.env.Gate(ctx, 2, "chk-2"); err != nil {
				t.Fatal(err)
			}
			c.startTM("b", 2, cluster.Fingerprint{})
			c.registered(2)
			c.waitLog(fmt.Sprintf("attempt %s could run at 2 slots, not 1", first.env.Attempt))
			clk.Advance(stab)
			c.waitLog(fmt.Sprintf("attempt %s waits for its next checkpoint, at most 3s, to rescale from", first.env.Attempt))
			clk.Advance(time.Second)
			c.noRun("before the next checkpoint and within the wait")
			want := "chk-2"
			if comes {
				if err := first.env.Gate(ctx, 3, "chk-3"); err != nil {
					t.Fatal(err)
				}
				want = "chk-3"
				c.waitLog("restore the checkpoint it recorded after the slots came")
			} else {
				clk.Advance(2*time.Second - time.Millisecond)
				c.noRun("within the wait")
				clk.Advance(time.Millisecond)
				c.waitLog("restore its latest checkpoint (none came within 3s)")
			}
			second := c.next()
			if second.tm != "b" || second.env.Slots != 2 || second.env.Restore != want {
				t.Fatalf("the rescale ran on %s with %d slots restoring %q, want b with 2 restoring %s", second.tm, second.env.Slots, second.env.Restore, want)
			}
			c.waitFor("RUNNING at parallelism 2", func() bool { return c.state(jid) == rest.StateRunning && c.parallelism(jid) == 2 })
		})
	}
}
