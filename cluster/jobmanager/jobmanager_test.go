package jobmanager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/internal/rpc"
	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/cluster/taskmanager"
	"github.com/weirdata/weir/internal/proctest"
)

// run is an attempt a fakeProgram ran.
type run struct {
	tm  string
	env cluster.Env
}

// fakeProgram runs jobs named by their args (the "spread-" ones at
// Run): ["wait", slots] records
// checkpoint 1 (after the one it restores) through the gate and runs
// until canceled; ["finish", slots] records one and finishes; ["idle",
// slots] records none and runs until canceled. With the prefix "disk-"
// ("disk-wait", "disk-finish", "disk-bad") the checkpoint is a directory
// chk-<id> written under the attempt's CheckpointDir, and its path is the
// one recorded.
type fakeProgram struct {
	tm    string
	runs  chan run
	ended chan string // when set, hears the attempt of each run that returns
	// release, when set, holds every savepoint until it is closed
	release chan struct{}
}

func (p fakeProgram) Check(args []string) (string, int, error) {
	if len(args) != 2 {
		return "", 0, errors.New("want a mode and slots")
	}
	n, err := strconv.Atoi(args[1])
	return args[0], n, err
}

// Spreads: the jobs "spread-finish", "spread-fail" and "spread-wait"
// spread.
func (p fakeProgram) Spreads(args []string) bool { return strings.HasPrefix(args[0], "spread-") }

// badArgs is a failure no restart cures.
type badArgs struct{}

func (badArgs) Error() string       { return "bad arguments" }
func (badArgs) Unrecoverable() bool { return true }

func (p fakeProgram) Run(ctx context.Context, args []string, env cluster.Env) error {
	if p.ended != nil {
		defer func() { p.ended <- env.Attempt }()
	}
	if args[0] == "spread-wait" {
		// share 0 (or the whole job) records the checkpoint after the one
		// it restores; every share runs until canceled
		if env.Spread == nil || env.Spread.Part == 0 {
			id := int64(1)
			if env.Restore != "" {
				n, err := strconv.ParseInt(strings.TrimPrefix(env.Restore, "chk-"), 10, 64)
				if err != nil {
					return err
				}
				id = n + 1
			}
			if err := env.Gate(ctx, id, fmt.Sprintf("chk-%d", id)); err != nil {
				return err
			}
		}
		part := 0
		if env.Spread != nil {
			part = env.Spread.Part
		}
		env.Started(&fakeControl{stopped: make(chan struct{}), slots: env.Slots, attempt: fmt.Sprintf("%s/%d", env.Attempt, part)})
		p.runs <- run{tm: p.tm, env: env}
		<-ctx.Done()
		return ctx.Err()
	}
	if spread, ok := strings.CutPrefix(args[0], "spread-"); ok {
		// each share prints its index; "fail": share 1 of the first
		// attempt fails, and the others wait to be canceled
		p.runs <- run{tm: p.tm, env: env}
		part := -1
		if env.Spread != nil {
			part = env.Spread.Part
		}
		fmt.Fprintf(env.Stdout, "share %d\n", part)
		if spread == "fail" && strings.HasSuffix(env.Attempt, "-1") {
			if part == 1 {
				return errors.New("fake: share 1 fails")
			}
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	mode, disk := strings.CutPrefix(args[0], "disk-")
	if mode == "bad" && !disk {
		p.runs <- run{tm: p.tm, env: env}
		return fmt.Errorf("fake: %w", badArgs{})
	}
	if mode == "idle" {
		env.Started(&fakeControl{stopped: make(chan struct{}), slots: env.Slots, release: p.release})
		p.runs <- run{tm: p.tm, env: env}
		<-ctx.Done()
		return ctx.Err()
	}
	id := int64(1)
	if env.Restore != "" {
		n, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(env.Restore), "chk-"), 10, 64)
		if err != nil {
			return err
		}
		id = n + 1
	}
	path := fmt.Sprintf("chk-%d", id)
	if disk {
		path = filepath.Join(env.CheckpointDir, path)
		if err := os.MkdirAll(path, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(path, "_metadata"), []byte(env.Attempt), 0o644); err != nil {
			return err
		}
	}
	if err := env.Gate(ctx, id, path); err != nil {
		return err
	}
	stopped := make(chan struct{})
	if env.Started != nil {
		env.Started(&fakeControl{stopped: stopped, slots: env.Slots, release: p.release, attempt: env.Attempt})
	}
	p.runs <- run{tm: p.tm, env: env}
	switch mode {
	case "finish":
		return nil
	case "print": // the first attempt prints and fails; the next prints and finishes
		fmt.Fprintf(env.Stdout, "attempt %s\n", env.Attempt)
		if env.Restore == "" {
			return errors.New("fake: the first attempt fails")
		}
		return nil
	case "flood": // prints 100 bytes past cluster.MaxStdout
		env.Stdout.Write(bytes.Repeat([]byte("x"), cluster.MaxStdout-10))
		env.Stdout.Write(bytes.Repeat([]byte("y"), 110))
		return nil
	case "bad":
		return fmt.Errorf("fake: %w", badArgs{})
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-stopped:
		return nil
	}
}

// fakeControl takes savepoints named after their directory, once release
// (when set) is closed; a stop ends the run. Its vertices run at the
// attempt's slots.
type fakeControl struct {
	once    sync.Once
	stopped chan struct{}
	slots   int
	release chan struct{}
	attempt string
	reports atomic.Int64
}

// Report is "<attempt> <n>" for its n-th call.
func (c *fakeControl) Report() []byte {
	return fmt.Appendf(nil, "%s %d", c.attempt, c.reports.Add(1))
}

func (c *fakeControl) Savepoint(ctx context.Context, dir string, stop bool) (string, error) {
	if c.release != nil {
		select {
		case <-c.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if stop {
		c.once.Do(func() { close(c.stopped) })
	}
	return dir + "/savepoint-1", nil
}

func (c *fakeControl) Vertices() []cluster.Vertex {
	return []cluster.Vertex{{ID: "v1", Name: "Source", Parallelism: c.slots}, {ID: "v2", Name: "Window -> Sink", Parallelism: c.slots}}
}

// cluster is a JobManager and TaskManagers in process, with one
// channel of the runs of all.
type testCluster struct {
	t    *testing.T
	jm   *JobManager
	runs chan run
	ctx  context.Context
	wg   sync.WaitGroup
	tms  map[string]context.CancelFunc
	// stopJM stops the JobManager alone
	stopJM context.CancelFunc
	// release is the TaskManagers' programs' (see fakeProgram)
	release chan struct{}
	// log holds the JobManager's log
	log *proctest.Log
}

func newCluster(t *testing.T, opts Options) *testCluster {
	runs := make(chan run, 16)
	opts.Program = fakeProgram{tm: "jm", runs: runs}
	opts.RPCAddress = "127.0.0.1:0"
	opts.CheckpointDir = t.TempDir()
	log := &proctest.Log{}
	if opts.Log == nil {
		opts.Log = log
	}
	jm, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	jctx, stopJM := context.WithCancel(ctx)
	c := &testCluster{t: t, jm: jm, runs: runs, ctx: ctx, tms: map[string]context.CancelFunc{}, stopJM: stopJM, log: log}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		jm.Run(jctx)
	}()
	t.Cleanup(func() {
		cancel()
		c.wg.Wait()
	})
	return c
}

// startTM starts a TaskManager with slots and returns its Run's result
// channel.
func (c *testCluster) startTM(id string, slots int, fp cluster.Fingerprint) <-chan error {
	return c.startTMEvery(id, slots, fp, time.Hour)
}

// startTMEvery starts a TaskManager whose heartbeats (and reports) go out
// every interval.
func (c *testCluster) startTMEvery(id string, slots int, fp cluster.Fingerprint, interval time.Duration) <-chan error {
	return c.startTMWith(taskmanager.Options{ID: id, Slots: slots, Fingerprint: fp, HeartbeatInterval: interval})
}

// startTMWith starts a TaskManager of opts (its program and JobManager
// set here).
func (c *testCluster) startTMWith(opts taskmanager.Options) <-chan error {
	id := opts.ID
	ctx, cancel := context.WithCancel(c.ctx)
	c.tms[id] = cancel
	res := make(chan error, 1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		opts.Program, opts.JobManager = fakeProgram{tm: id, runs: c.runs, release: c.release}, c.jm.RPCAddress()
		res <- taskmanager.Run(ctx, opts)
	}()
	return res
}

// waitFor polls cond (the cluster's state moves on its own goroutines).
func (c *testCluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Fatalf("timed out waiting for %s", what)
}

func (c *testCluster) registered(n int) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%d TaskManagers", n), func() bool {
		tms, _ := c.jm.TaskManagers(context.Background())
		return len(tms) == n
	})
}

func (c *testCluster) next() run {
	c.t.Helper()
	select {
	case r := <-c.runs:
		return r
	case <-time.After(10 * time.Second):
		c.t.Fatal("no attempt ran")
		return run{}
	}
}

func (c *testCluster) state(jid string) string {
	d, err := c.jm.Job(context.Background(), jid)
	if err != nil {
		c.t.Fatal(err)
	}
	return d.State
}

// TestScheduling: a job goes to the TaskManager with the most free slots
// and gets min(asked, free); a job finding no free slot waits CREATED
// until a job ends and then runs in the slots it freed.
func TestScheduling(t *testing.T) {
	c := newCluster(t, Options{})
	c.startTM("a", 2, cluster.Fingerprint{})
	c.registered(1)
	c.startTM("b", 1, cluster.Fingerprint{})
	c.registered(2)
	ctx := context.Background()
	j1, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.next(); r.tm != "a" || r.env.Slots != 2 || r.env.JobID != j1 || r.env.Restore != "" {
		t.Fatalf("job 1 ran on %s with %d slots (restore %q), want a with 2", r.tm, r.env.Slots, r.env.Restore)
	}
	j2, _ := c.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "2"}})
	if r := c.next(); r.tm != "b" || r.env.Slots != 1 || r.env.JobID != j2 {
		t.Fatalf("job 2 ran on %s with %d slots, want b with 1", r.tm, r.env.Slots)
	}
	j3, _ := c.jm.Submit(ctx, rest.Submission{Args: []string{"finish", "0"}})
	c.waitFor("job 3 created", func() bool { return c.state(j3) == rest.StateCreated })
	if o, _ := c.jm.Overview(ctx); o.SlotsTotal != 3 || o.SlotsAvailable != 0 || o.JobsRunning != 3 {
		t.Fatalf("overview %+v", o)
	}
	if err := c.jm.Cancel(ctx, j1); err != nil {
		t.Fatal(err)
	}
	if r := c.next(); r.tm != "a" || r.env.Slots != 2 || r.env.JobID != j3 {
		t.Fatalf("job 3 ran on %s with %d slots, want a with 2 (all free)", r.tm, r.env.Slots)
	}
	c.waitFor("job 3 finished and job 1 canceled", func() bool {
		return c.state(j3) == rest.StateFinished && c.state(j1) == rest.StateCanceled
	})
	if err := c.jm.Cancel(ctx, j1); !errors.Is(err, rest.ErrConflict) {
		t.Fatalf("cancel of a canceled job: %v", err)
	}
	if cks, _ := c.jm.Checkpoints(ctx, j3); cks.Counts.Completed != 1 || cks.Latest.Completed.ExternalPath != "chk-1" {
		t.Fatalf("job 3's checkpoints %+v", cks)
	}
}

// TestHeartbeatLoss: a TaskManager silent past the timeout (a manual
// clock moved on) is lost; its job restarts on the other TaskManager from
// the checkpoint its gate recorded, and the lost attempt's gate is
// refused from then on. The JobManager refuses a gate of another epoch.
func TestHeartbeatLoss(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	c := newCluster(t, Options{Clock: clk, HeartbeatTimeout: 5 * time.Second, RestartDelay: time.Second})
	c.startTM("a", 1, cluster.Fingerprint{})
	c.registered(1)
	ctx := context.Background()
	jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	first := c.next()
	if first.tm != "a" {
		t.Fatalf("ran on %s", first.tm)
	}
	c.startTM("b", 1, cluster.Fingerprint{})
	c.registered(2)
	c.jm.mu.Lock()
	epoch := c.jm.lead.Epoch
	c.jm.mu.Unlock()
	if _, err := c.jm.Gate(ctx, &rpc.GateRequest{JobID: jid, Attempt: first.env.Attempt, Epoch: epoch + 1, Checkpoint: 5, Path: "chk-5"}); err == nil {
		t.Fatal("a gate of another epoch was accepted")
	}
	// b heard from just now; a last at registration
	c.jm.mu.Lock()
	c.jm.tms["b"].last = clk.Now().Add(5 * time.Second)
	c.jm.mu.Unlock()
	clk.Advance(6 * time.Second)
	c.jm.checkHeartbeats()
	c.waitFor("restarting", func() bool { return c.state(jid) == rest.StateRestarting })
	if tms, _ := c.jm.TaskManagers(ctx); len(tms) != 1 || tms[0].ID != "b" {
		t.Fatalf("TaskManagers after a's loss: %+v", tms)
	}
	clk.Advance(time.Second)
	second := c.next()
	for second.tm == "a" && second.env.JobID != jid { // a registered again: not this job
		second = c.next()
	}
	if second.env.Restore != "chk-1" || second.env.Attempt == first.env.Attempt {
		t.Fatalf("the restart ran on %s attempt %s restoring %q, want chk-1 in a new attempt", second.tm, second.env.Attempt, second.env.Restore)
	}
	if err := first.env.Gate(ctx, 9, "chk-9"); err == nil {
		t.Fatal("the lost attempt's gate was accepted")
	}
	if cks, _ := c.jm.Checkpoints(ctx, jid); cks.Latest.Completed.ID != 2 || cks.Latest.Restored.ID != 1 {
		t.Fatalf("checkpoints %+v", cks)
	}
}

// TestFingerprintRefused: a TaskManager of another build is refused; its
// Run returns an error naming both builds and it never counts.
func TestFingerprintRefused(t *testing.T) {
	c := newCluster(t, Options{})
	other := cluster.Fingerprint{Module: "github.com/weirdata/weir", Version: "v9.9.9", Revision: "feedface", Binary: strings.Repeat("ab", 32)}
	var err error
	select {
	case err = <-c.startTM("x", 4, other):
	case <-time.After(10 * time.Second):
		t.Fatal("the refused TaskManager kept running")
	}
	own, _ := cluster.Own()
	if !errors.Is(err, cluster.ErrFingerprint) || !strings.Contains(err.Error(), "v9.9.9") || !strings.Contains(err.Error(), own.Binary[:12]) {
		t.Fatalf("refusal: %v", err)
	}
	if tms, _ := c.jm.TaskManagers(context.Background()); len(tms) != 0 {
		t.Fatalf("TaskManagers %+v", tms)
	}
}

// TestStopWithSavepoint: the vertices the TaskManager reports are the
// job's; a stop with savepoint reaches the attempt's Control, the trigger
// completes with the savepoint's path, the job ends FINISHED and its
// checkpoints name the savepoint.
func TestStopWithSavepoint(t *testing.T) {
	c := newCluster(t, Options{})
	c.startTM("a", 2, cluster.Fingerprint{})
	c.registered(1)
	ctx := context.Background()
	jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	c.next()
	c.waitFor("the vertices", func() bool {
		d, _ := c.jm.Job(ctx, jid)
		return len(d.Vertices) == 2 && d.Vertices[1].Name == "Window -> Sink" && d.Vertices[1].Parallelism == 2
	})
	trigger, err := c.jm.TriggerSavepoint(ctx, jid, "/sp", true)
	if err != nil {
		t.Fatal(err)
	}
	c.waitFor("the savepoint", func() bool {
		sp, err := c.jm.Savepoint(ctx, jid, trigger)
		return err == nil && sp.Status == "COMPLETED" && sp.Location == "/sp/savepoint-1" && sp.Failure == ""
	})
	c.waitFor("the job finished", func() bool { return c.state(jid) == rest.StateFinished })
	if cks, _ := c.jm.Checkpoints(ctx, jid); cks.Latest.Savepoint == nil || cks.Latest.Savepoint.ExternalPath != "/sp/savepoint-1" {
		t.Fatalf("checkpoints %+v", cks)
	}
	if _, err := c.jm.TriggerSavepoint(ctx, jid, "/sp", false); !errors.Is(err, rest.ErrConflict) {
		t.Fatalf("a savepoint of a finished job: %v", err)
	}
}

// TestUnrecoverable: an attempt failing with an unrecoverable error fails
// its job at once, naming the cause; a job of a plain failure is restarted.
func TestUnrecoverable(t *testing.T) {
	c := newCluster(t, Options{RestartDelay: time.Millisecond})
	c.startTM("a", 1, cluster.Fingerprint{})
	c.registered(1)
	ctx := context.Background()
	jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"bad", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	c.next()
	c.waitFor("the job failed", func() bool { return c.state(jid) == rest.StateFailed })
	d, _ := c.jm.Job(ctx, jid)
	if !strings.Contains(d.Failure, "bad arguments") || !strings.Contains(d.Failure, "no restart") {
		t.Fatalf("failure %q", d.Failure)
	}
	select {
	case r := <-c.runs:
		t.Fatalf("the job ran again: %+v", r.env)
	default:
	}
}

// TestTaskManagerCutOff: a TaskManager that cannot reach its JobManager
// (stopped: its stream broken, its port closed) for longer than the
// timeout cancels the attempt it runs.
func TestTaskManagerCutOff(t *testing.T) {
	c := newCluster(t, Options{HeartbeatTimeout: 300 * time.Millisecond, HeartbeatInterval: 50 * time.Millisecond})
	ended := make(chan string, 4)
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	res := make(chan error, 1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		res <- taskmanager.Run(ctx, taskmanager.Options{Program: fakeProgram{tm: "a", runs: c.runs, ended: ended},
			JobManager: c.jm.RPCAddress(), ID: "a", Slots: 1, HeartbeatInterval: 50 * time.Millisecond})
	}()
	c.registered(1)
	if _, err := c.jm.Submit(context.Background(), rest.Submission{Args: []string{"wait", "1"}}); err != nil {
		t.Fatal(err)
	}
	r := c.next()
	select {
	case a := <-ended:
		t.Fatalf("attempt %s ended while the JobManager ran", a)
	default:
	}
	c.stopJM()
	select {
	case a := <-ended:
		if a != r.env.Attempt {
			t.Fatalf("attempt %s ended, want %s", a, r.env.Attempt)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cut-off TaskManager kept its attempt running")
	}
	cancel()
	if err := <-res; err != nil {
		t.Fatal(err)
	}
}

// listing returns the names under dir, nil when dir does not exist.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestCheckpointDirs: each attempt checkpoints under its own directory;
// once a restarted attempt's checkpoint is recorded, the superseded
// attempt's directory is gone and the recorded one is on disk. A job
// CANCELED or FINISHED leaves no directory; a FAILED one keeps its.
func TestCheckpointDirs(t *testing.T) {
	c := newCluster(t, Options{RestartDelay: time.Millisecond, HeartbeatTimeout: time.Hour})
	c.startTM("a", 1, cluster.Fingerprint{})
	c.registered(1)
	ctx := context.Background()
	jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"disk-wait", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	jobDir := filepath.Join(c.jm.opts.CheckpointDir, jid)
	first := c.next()
	if got := listing(t, jobDir); !slices.Equal(got, []string{first.env.Attempt}) {
		t.Fatalf("after the first attempt's checkpoint: %v, want [%s]", got, first.env.Attempt)
	}
	if got := listing(t, filepath.Join(jobDir, first.env.Attempt)); !slices.Equal(got, []string{"chk-1"}) {
		t.Fatalf("the first attempt's directory: %v, want [chk-1]", got)
	}
	c.startTM("b", 1, cluster.Fingerprint{})
	c.registered(2)
	c.tms["a"]() // a's connection breaks: the job restarts on b
	second := c.next()
	if second.tm != "b" || second.env.Restore != filepath.Join(jobDir, first.env.Attempt, "chk-1") {
		t.Fatalf("the restart ran on %s restoring %q, want b restoring the first attempt's chk-1", second.tm, second.env.Restore)
	}
	// the superseded attempts' directories go beside the job
	c.waitFor("the first attempt's directory removed", func() bool {
		return slices.Equal(listing(t, jobDir), []string{second.env.Attempt})
	})
	c.jm.mu.Lock()
	inc := c.jm.jobs[jid].incarnation
	c.jm.mu.Unlock()
	ptr, ok, err := c.jm.opts.HA.LatestCheckpoint(ctx, jid, inc)
	if err != nil || !ok || ptr.Path != filepath.Join(jobDir, second.env.Attempt, "chk-2") {
		t.Fatalf("the recorded pointer %+v %v %v", ptr, ok, err)
	}
	if _, err := os.Stat(filepath.Join(ptr.Path, "_metadata")); err != nil {
		t.Fatalf("the recorded checkpoint: %v", err)
	}
	if err := c.jm.Cancel(ctx, jid); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the job canceled", func() bool { return c.state(jid) == rest.StateCanceled })
	if got := listing(t, jobDir); got != nil {
		t.Fatalf("a canceled job's directory holds %v", got)
	}

	fin, _ := c.jm.Submit(ctx, rest.Submission{Args: []string{"disk-finish", "1"}})
	c.next()
	c.waitFor("the job finished", func() bool { return c.state(fin) == rest.StateFinished })
	if got := listing(t, filepath.Join(c.jm.opts.CheckpointDir, fin)); got != nil {
		t.Fatalf("a finished job's directory holds %v", got)
	}

	bad, _ := c.jm.Submit(ctx, rest.Submission{Args: []string{"disk-bad", "1"}})
	r := c.next()
	c.waitFor("the job failed", func() bool { return c.state(bad) == rest.StateFailed })
	if got := listing(t, filepath.Join(c.jm.opts.CheckpointDir, bad, r.env.Attempt)); !slices.Equal(got, []string{"chk-1"}) {
		t.Fatalf("a failed job's attempt directory holds %v, want [chk-1]", got)
	}
}

// TestReports: the JobManager keeps the latest Report of the running
// attempt, sent every heartbeat interval, and the last one sent with the
// attempt's end; a restart adds the next attempt's, and Reports counts
// the restart.
func TestReports(t *testing.T) {
	c := newCluster(t, Options{})
	c.startTMEvery("a", 1, cluster.Fingerprint{}, 10*time.Millisecond)
	c.registered(1)
	ctx := context.Background()
	jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	first := c.next().env.Attempt
	// a TaskManager that names no address is shown at its connection's
	tms, _ := c.jm.TaskManagers(ctx)
	if len(tms) != 1 || !strings.HasPrefix(tms[0].Path, "127.0.0.1:") || tms[0].Hardware.CPUCores != runtime.NumCPU() {
		t.Fatalf("taskmanagers %+v", tms)
	}
	seq := func(i int) (string, int) {
		rs, _, err := c.jm.Reports(ctx, jid)
		if err != nil || len(rs) <= i {
			return "", 0
		}
		var a string
		var n int
		fmt.Sscanf(string(rs[i].Data), "%s %d", &a, &n)
		if a != rs[i].Attempt {
			t.Fatalf("report %q kept for attempt %s", rs[i].Data, rs[i].Attempt)
		}
		return a, n
	}
	c.waitFor("a third report", func() bool { a, n := seq(0); return a == first && n >= 3 })
	_, seen := seq(0)
	c.waitFor("a newer report", func() bool { _, n := seq(0); return n > seen })
	c.jm.mu.Lock()
	a := c.jm.jobs[jid].cur
	c.jm.mu.Unlock()
	c.jm.lose(a.tm, "the test")
	second := c.next().env.Attempt
	ex, err := c.jm.Exceptions(ctx, jid)
	if es := ex.History.Entries; err != nil || len(es) != 1 || es[0].Name != "attempt "+first+" failed" ||
		es[0].Stacktrace != "TaskManager a lost: the test" || es[0].TaskManagerID != "a" || ex.RootException != es[0].Stacktrace {
		t.Fatalf("exceptions %+v, %v; want the lost TaskManager's", ex, err)
	}
	c.waitFor("the second attempt's report", func() bool { a, _ := seq(1); return a == second })
	if rs, restarts, _ := c.jm.Reports(ctx, jid); len(rs) != 2 || rs[0].Attempt != first || restarts != 1 {
		t.Fatalf("reports %q, restarts %d; want those of %s and %s, 1 restart", rs, restarts, first, second)
	}
	if err := c.jm.Cancel(ctx, jid); err != nil {
		t.Fatal(err)
	}
	c.waitFor("canceled", func() bool { return c.state(jid) == rest.StateCanceled })

	// Without heartbeats in the test's span, the one Report is the end's.
	c2 := newCluster(t, Options{})
	c2.startTM("b", 1, cluster.Fingerprint{})
	c2.registered(1)
	jid2, _ := c2.jm.Submit(ctx, rest.Submission{Args: []string{"wait", "1"}})
	r := c2.next()
	if rs, _, _ := c2.jm.Reports(ctx, jid2); len(rs) != 0 {
		t.Fatalf("reports %q before any heartbeat", rs)
	}
	if err := c2.jm.Cancel(ctx, jid2); err != nil {
		t.Fatal(err)
	}
	c2.waitFor("canceled", func() bool { return c2.state(jid2) == rest.StateCanceled })
	if rs, _, _ := c2.jm.Reports(ctx, jid2); len(rs) != 1 || string(rs[0].Data) != r.env.Attempt+" 1" {
		t.Fatalf("reports %q after the end, want the end's of %s", rs, r.env.Attempt)
	}
	if _, _, err := c.jm.Reports(ctx, "nope"); !errors.Is(err, rest.ErrNotFound) {
		t.Fatalf("reports of an unknown job: %v", err)
	}
}

// TestSpreadReports: of a spread attempt, whose shares all report every
// heartbeat interval, the JobManager keeps the first share's Report as the
// attempt's and each share's by share.
func TestSpreadReports(t *testing.T) {
	c := newCluster(t, Options{})
	c.startTMWith(taskmanager.Options{ID: "a", Slots: 2, HeartbeatInterval: 10 * time.Millisecond, DataAddress: "127.0.0.1:0"})
	c.startTMWith(taskmanager.Options{ID: "b", Slots: 1, HeartbeatInterval: 10 * time.Millisecond, DataAddress: "127.0.0.1:0"})
	c.registered(2)
	ctx := context.Background()
	jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"spread-wait", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	attempt := c.next().env.Attempt
	c.next()
	parse := func(b []byte) (string, int) {
		var a string
		n := 0
		fmt.Sscanf(string(b), "%s %d", &a, &n)
		return a, n
	}
	c.waitFor("three reports of each share", func() bool {
		rs, _, _ := c.jm.Reports(ctx, jid)
		if len(rs) != 1 || len(rs[0].Shares) != 2 || rs[0].Attempt != attempt {
			return false
		}
		a0, n0 := parse(rs[0].Data)
		s0, m0 := parse(rs[0].Shares[0])
		s1, m1 := parse(rs[0].Shares[1])
		if rs[0].Data != nil && a0 != attempt+"/0" || rs[0].Shares[0] != nil && s0 != attempt+"/0" ||
			rs[0].Shares[1] != nil && s1 != attempt+"/1" {
			t.Fatalf("kept %q as the attempt's and %q by share", rs[0].Data, rs[0].Shares)
		}
		return n0 >= 3 && m0 >= 3 && m1 >= 3
	})
	if err := c.jm.Cancel(ctx, jid); err != nil {
		t.Fatal(err)
	}
	c.waitFor("canceled", func() bool { return c.state(jid) == rest.StateCanceled })
}

// TestResult: a job's result is IN_PROGRESS until it ends; a finished
// job's holds the standard output of the attempt that finished, not of
// the one that failed before it, and counts the bytes past
// cluster.MaxStdout; a canceled job's has none.
func TestResult(t *testing.T) {
	c := newCluster(t, Options{RestartDelay: time.Millisecond, HeartbeatTimeout: time.Hour})
	c.startTM("a", 1, cluster.Fingerprint{})
	c.registered(1)
	ctx := context.Background()

	jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"print", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	c.next()
	second := c.next()
	c.waitFor("the job finished", func() bool { return c.state(jid) == rest.StateFinished })
	r, err := c.jm.Result(ctx, jid)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("attempt %s\n", second.env.Attempt)
	if r.Status.ID != rest.StatusCompleted || r.Result == nil || r.Result.ApplicationStatus != rest.AppSucceeded ||
		string(r.Result.Stdout) != want || r.Result.StdoutDropped != 0 {
		t.Fatalf("result %+v %+v, want SUCCEEDED with stdout %q", r.Status, r.Result, want)
	}

	flood, _ := c.jm.Submit(ctx, rest.Submission{Args: []string{"flood", "1"}})
	c.next()
	c.waitFor("the flood finished", func() bool { return c.state(flood) == rest.StateFinished })
	r, _ = c.jm.Result(ctx, flood)
	if r.Result == nil || len(r.Result.Stdout) != cluster.MaxStdout || r.Result.StdoutDropped != 100 ||
		!bytes.HasSuffix(r.Result.Stdout, bytes.Repeat([]byte("y"), 10)) {
		t.Fatalf("flood: %d bytes kept, %+v dropped, want %d and 100", len(r.Result.Stdout), r.Result.StdoutDropped, cluster.MaxStdout)
	}

	idle, _ := c.jm.Submit(ctx, rest.Submission{Args: []string{"idle", "1"}})
	c.next()
	if r, err := c.jm.Result(ctx, idle); err != nil || r.Status.ID != rest.StatusInProgress || r.Result != nil {
		t.Fatalf("a running job's result: %+v %v", r, err)
	}
	if err := c.jm.Cancel(ctx, idle); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the job canceled", func() bool { return c.state(idle) == rest.StateCanceled })
	if r, _ := c.jm.Result(ctx, idle); r.Result == nil || r.Result.ApplicationStatus != rest.AppCanceled || len(r.Result.Stdout) != 0 {
		t.Fatalf("a canceled job's result: %+v", r.Result)
	}
	if _, err := c.jm.Result(ctx, strings.Repeat("0", 32)); !errors.Is(err, rest.ErrNotFound) {
		t.Fatalf("an unknown job's result: %v", err)
	}
}

// TestPruneAttempts: the removal that follows an attempt's first recorded
// checkpoint takes the attempts before it, of its epoch and earlier ones,
// and what is no attempt's, but never an attempt deployed after it, which
// may have started while the removal ran beside the job.
func TestPruneAttempts(t *testing.T) {
	c := newCluster(t, Options{HeartbeatTimeout: time.Hour})
	dir := filepath.Join(c.jm.opts.CheckpointDir, "job")
	for _, a := range []string{"1-1", "1-2", "1-10", "2-1", "0-7", "junk"} {
		if err := os.MkdirAll(filepath.Join(dir, a, "chk-1"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.jm.pruneAttempts(context.Background(), "job", "1-2"); err != nil {
		t.Fatal(err)
	}
	if got, want := listing(t, dir), []string{"1-10", "1-2", "2-1"}; !slices.Equal(got, want) {
		t.Fatalf("after pruning for 1-2: %v, want %v", got, want)
	}
}

// TestSpread: a job that spreads and asks for more slots than one
// TaskManager has runs a share on each TaskManager with a data plane
// (the most free first), each told its part, the slots and the data
// addresses; the first share's output is the job's. A job asking for
// what one TaskManager holds runs there alone. A failing share fails the
// attempt: the other share is canceled and the job runs again.
func TestSpread(t *testing.T) {
	c := newCluster(t, Options{RestartDelay: time.Millisecond})
	logA := &proctest.Log{}
	c.startTMWith(taskmanager.Options{ID: "a", Slots: 2, HeartbeatInterval: time.Hour, DataAddress: "127.0.0.1:0", Log: logA})
	c.startTMWith(taskmanager.Options{ID: "b", Slots: 1, HeartbeatInterval: time.Hour, DataAddress: "127.0.0.1:0"})
	c.startTM("c", 1, cluster.Fingerprint{}) // no data plane: no share
	c.registered(3)
	ctx := context.Background()
	shares := func(n int) map[string]run {
		t.Helper()
		got := map[string]run{}
		for range n {
			r := c.next()
			got[r.tm] = r
		}
		return got
	}
	jid, err := c.jm.Submit(ctx, rest.Submission{Args: []string{"spread-finish", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	got := shares(2)
	a, b := got["a"].env.Spread, got["b"].env.Spread
	if a == nil || b == nil || a.Part != 0 || b.Part != 1 || !slices.Equal(a.Slots, []int{2, 1}) || !slices.Equal(b.Slots, a.Slots) ||
		len(a.Addrs) != 2 || a.Addrs[0] == "" || a.Addrs[1] == "" || a.Addrs[0] == a.Addrs[1] || !slices.Equal(a.Addrs, b.Addrs) ||
		got["a"].env.Slots != 2 || got["b"].env.Slots != 1 || a.Server == nil || a.Client == nil || a.Channels != jid+"/"+got["a"].env.Attempt {
		t.Fatalf("shares %+v", got)
	}
	c.waitFor("the spread job finished", func() bool { return c.state(jid) == rest.StateFinished })
	if tms, _ := c.jm.TaskManagers(ctx); len(tms) != 3 || tms[0].DataPort == 0 || tms[1].DataPort == 0 || tms[2].DataPort != 0 {
		t.Fatalf("TaskManagers %+v: a and b have a data port, c none", tms)
	}
	if o, _ := c.jm.Overview(ctx); o.SlotsAvailable != 4 {
		t.Fatalf("%d slots free after the spread job, want 4", o.SlotsAvailable)
	}
	if r, err := c.jm.Result(ctx, jid); err != nil || r.Result == nil || string(r.Result.Stdout) != "share 0\n" {
		t.Fatalf("result %+v, %v: want the first share's output", r, err)
	}
	// two slots: TaskManager a alone
	jid, _ = c.jm.Submit(ctx, rest.Submission{Args: []string{"spread-finish", "2"}})
	if r := c.next(); r.tm != "a" || r.env.Spread != nil || r.env.Slots != 2 {
		t.Fatalf("ran on %s with %d slots, spread %+v: want a alone with 2", r.tm, r.env.Slots, r.env.Spread)
	}
	c.waitFor("the job finished", func() bool { return c.state(jid) == rest.StateFinished })
	// share 1 of the first attempt fails
	jid, _ = c.jm.Submit(ctx, rest.Submission{Args: []string{"spread-fail", "3"}})
	shares(2)
	if got := shares(2); got["a"].env.Attempt == got["b"].env.Attempt && got["a"].env.Spread != nil && !strings.HasSuffix(got["a"].env.Attempt, "-1") {
		c.waitFor("the job finished", func() bool { return c.state(jid) == rest.StateFinished })
	} else {
		t.Fatalf("the second attempt's shares %+v", got)
	}
	// the JobManager canceled share 0 of the failed attempt on a
	if !strings.Contains(logA.String(), "canceling job "+jid+" attempt ") {
		t.Fatalf("TaskManager a was not told to cancel share 0:\n%s", logA.String())
	}
	ex, err := c.jm.Exceptions(ctx, jid)
	if err != nil || len(ex.History.Entries) != 1 || !strings.Contains(ex.History.Entries[0].Stacktrace, "share 1 of 2 on TaskManager b: fake: share 1 fails") {
		t.Fatalf("exceptions %+v, %v", ex, err)
	}
	// a TaskManager without a data plane whose free slots exceed what the
	// shares would give: the job runs there alone
	c.startTM("d", 4, cluster.Fingerprint{})
	c.registered(4)
	jid, _ = c.jm.Submit(ctx, rest.Submission{Args: []string{"spread-finish", "5"}})
	if r := c.next(); r.tm != "d" || r.env.Spread != nil || r.env.Slots != 4 {
		t.Fatalf("ran on %s with %d slots, spread %+v: want d alone with 4 (a and b give 3)", r.tm, r.env.Slots, r.env.Spread)
	}
	c.waitFor("the job finished", func() bool { return c.state(jid) == rest.StateFinished })
}
