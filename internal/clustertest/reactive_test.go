package clustertest

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/weirdata/weir/cluster/rest"
)

// oracle runs job embedded to its end and returns its committed output and
// late output.
func oracle(t *testing.T, bin string, job []string) (want, wantLate []string) {
	t.Helper()
	dir, late := filepath.Join(t.TempDir(), "oracle"), filepath.Join(t.TempDir(), "oracle-late")
	runToEnd(t, bin, append(slices.Clone(job), "--output", dir, "--late-output", late)...)
	want, wantLate = committed(t, dir), committed(t, late)
	if len(want) == 0 || len(wantLate) == 0 {
		t.Fatalf("the oracle run wrote %d lines and %d late lines", len(want), len(wantLate))
	}
	return want, wantLate
}

// submitDetached submits job to the JobManager at restURL, checkpointing
// every 200 ms at 1000 events a second, and returns its id and its output
// and late output directories.
func submitDetached(t *testing.T, bin, restURL string, job []string) (jid, out, late string) {
	t.Helper()
	out, late = filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "late")
	stdout := runToEnd(t, bin, append(slices.Clone(job), "--output", out, "--late-output", late,
		"--checkpoint-interval", "200ms", "--rate", "1000", "--jobmanager", restURL, "--detached")...)
	jid, ok := strings.CutPrefix(strings.TrimSpace(stdout), "Job has been submitted with JobID ")
	if !ok {
		t.Fatalf("weir run --detached printed %q", stdout)
	}
	return jid, out, late
}

// poll calls cond every 50 ms until it holds, failing the test after
// timeout.
func poll(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// maxParallelism returns the largest parallelism of the job's vertices as
// its TaskManager reported them (0 before it did), and the job's state.
func maxParallelism(c *rest.Client, jid string) (int, string) {
	d, err := c.Job(context.Background(), jid)
	if err != nil || len(d.Vertices) < 2 { // one vertex: the job before its attempt reported
		return 0, d.State
	}
	p := 0
	for _, v := range d.Vertices {
		p = max(p, v.Parallelism)
	}
	return p, d.State
}

// recorded waits for a checkpoint of jid recorded by the JobManager.
func recorded(t *testing.T, c *rest.Client, jid string) {
	t.Helper()
	poll(t, "a recorded checkpoint", 20*time.Second, func() bool {
		ck, err := c.Checkpoints(context.Background(), jid)
		return err == nil && ck.Counts.Completed > 0
	})
}

// exact waits for jid to end FINISHED and checks its committed output and
// late output against want and wantLate: 0 lines lost, 0 duplicated. It
// returns the job's checkpoints.
func exact(t *testing.T, c *rest.Client, jid, out, late string, want, wantLate []string) rest.Checkpoints {
	t.Helper()
	var d rest.JobDetails
	poll(t, "the job's end", 45*time.Second, func() bool {
		var err error
		d, err = c.Job(context.Background(), jid)
		return err == nil && rest.Ended(d.State)
	})
	if d.State != rest.StateFinished {
		t.Fatalf("job %s ended %s: %s", jid, d.State, d.Failure)
	}
	ck, err := c.Checkpoints(context.Background(), jid)
	if err != nil {
		t.Fatal(err)
	}
	got, gotLate := committed(t, out), committed(t, late)
	lost, dup := diff(want, got)
	lostLate, dupLate := diff(wantLate, gotLate)
	t.Logf("%d checkpoints recorded, restored from %+v: %d lines, %d lost, %d duplicated; %d late lines, %d lost, %d duplicated",
		ck.Counts.Completed, ck.Latest.Restored, len(got), len(lost), len(dup), len(gotLate), len(lostLate), len(dupLate))
	if len(lost)+len(dup)+len(lostLate)+len(dupLate) != 0 {
		t.Fatalf("lost %q, duplicated %q; late lost %q, duplicated %q", lost[:min(len(lost), 10)], dup[:min(len(dup), 10)],
			lostLate[:min(len(lostLate), 10)], dupLate[:min(len(dupLate), 10)])
	}
	return ck
}

// TestReactiveScaleUp: a JobManager and one 1-slot TaskManager;
// window-stats submitted at parallelism 2 runs at 1. Once a checkpoint is
// recorded a 2-slot TaskManager starts: after the JobManager's
// stabilization interval (2 s) the job is redeployed there from its
// latest checkpoint, GET /jobs/:jid shows its vertices at parallelism 2
// while it runs, and it ends FINISHED with the committed output of an
// uninterrupted embedded run.
func TestReactiveScaleUp(t *testing.T) {
	bin := weir(t)
	job := windowStatsArgs(t, 12000)
	want, wantLate := oracle(t, bin, job)

	_, rpcAddr, restURL := startJobManager(t, bin, t.TempDir())
	start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "1", "--id", "tm1")
	c := rest.NewClient(restURL, "")
	poll(t, "tm1's registration", 20*time.Second, func() bool {
		tms, err := c.TaskManagers(context.Background())
		return err == nil && len(tms) == 1
	})
	jid, out, late := submitDetached(t, bin, restURL, job)
	poll(t, "the job at parallelism 1", 20*time.Second, func() bool { p, _ := maxParallelism(c, jid); return p == 1 })
	recorded(t, c, jid)
	start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "2", "--id", "tm2")
	began := time.Now()
	var state string
	poll(t, "the job redeployed at parallelism 2", 30*time.Second, func() bool {
		var p int
		p, state = maxParallelism(c, jid)
		if rest.Ended(state) {
			t.Fatalf("the job ended %s at parallelism 1: make its input longer", state)
		}
		return p == 2 && state == rest.StateRunning
	})
	t.Logf("RUNNING at parallelism 2 %v after tm2 started", time.Since(began).Round(10*time.Millisecond))
	tms, err := c.TaskManagers(context.Background())
	if err != nil || len(tms) != 2 || tms[0].ID != "tm1" || tms[0].FreeSlots != 1 || tms[1].FreeSlots != 0 {
		t.Fatalf("TaskManagers after the rescale %+v (%v): want tm1 free and tm2 full", tms, err)
	}
	ck := exact(t, c, jid, out, late, want, wantLate)
	if ck.Latest.Restored == nil {
		t.Fatal("the redeployed job restored no checkpoint")
	}
}

// startProxy runs an in-process toxiproxy from a loopback port to
// upstream.
func startProxy(t *testing.T, upstream string) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	srv.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	px := toxiproxy.NewProxy(srv, "jobmanager", "127.0.0.1:0", upstream)
	if err := px.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		px.Toxics.ResetToxics(context.Background())
		px.Stop()
	})
	return px
}

// TestPartitionedTaskManager: tm1 reaches the JobManager (heartbeat
// timeout 2 s) only through a proxy; window-stats runs on it. Once a
// checkpoint is recorded and tm2 registered directly, the proxy swallows
// everything both ways without closing (a timeout toxic: a network
// partition). The JobManager declares tm1 lost by its silence and
// redeploys the job on tm2; tm1, no longer hearing the JobManager,
// cancels its attempt. The partition heals and tm1 registers again. The
// job ends FINISHED with exactly the embedded run's committed output: a
// zombie attempt committing would duplicate lines.
func TestPartitionedTaskManager(t *testing.T) {
	bin := weir(t)
	job := windowStatsArgs(t, 12000)
	want, wantLate := oracle(t, bin, job)

	jm, rpcAddr, restURL := startJobManager(t, bin, t.TempDir(), "--heartbeat-timeout", "2s")
	px := startProxy(t, rpcAddr)
	c := rest.NewClient(restURL, "")
	tm1, jid, out, late := onTM1ThenTM2(t, bin, c, restURL, px.Listen, rpcAddr, job)
	for _, stream := range []string{"upstream", "downstream"} {
		if _, err := px.Toxics.AddToxicJson(strings.NewReader(`{"name":"cut-` + stream + `","type":"timeout","stream":"` + stream + `","attributes":{"timeout":0}}`)); err != nil {
			t.Fatal(err)
		}
	}
	cut := time.Now()
	t.Log("cut tm1 off")
	waitLog(t, jm, "TaskManager tm1 lost: ")
	lostAfter := time.Since(cut)
	waitLog(t, jm, "deployed on TaskManager tm2")
	waitLog(t, tm1, "canceling job "+jid)
	canceledAfter := time.Since(cut)
	if l := lastLine(tm1.stderr.String(), "canceling job "+jid); !strings.Contains(l, "the JobManager was not heard from") {
		t.Fatalf("tm1 canceled the job for another reason: %s", l)
	}
	t.Logf("%v after the cut: %s", lostAfter.Round(10*time.Millisecond), lastLine(jm.stderr.String(), "TaskManager tm1 lost"))
	t.Logf("%v after the cut: %s", canceledAfter.Round(10*time.Millisecond), lastLine(tm1.stderr.String(), "canceling job "+jid))
	px.Toxics.ResetToxics(context.Background())
	poll(t, "tm1's registration after the partition", 20*time.Second, func() bool {
		return strings.Count(jm.stderr.String(), "TaskManager tm1 at ") >= 2
	})
	if id := busy(t, c, time.Now().Add(time.Second)); id != "tm2" {
		t.Fatalf("after the partition the job runs on %s, want tm2", id)
	}
	ck := exact(t, c, jid, out, late, want, wantLate)
	if ck.Latest.Restored == nil {
		t.Fatal("the redeployed job restored no checkpoint")
	}
}

// lastLine returns the last line of s containing sub.
func lastLine(s, sub string) string {
	ls := strings.Split(s, "\n")
	for i := len(ls) - 1; i >= 0; i-- {
		if strings.Contains(ls[i], sub) {
			return ls[i]
		}
	}
	return ""
}

// TestPausedTaskManager: tm1 runs window-stats; once a checkpoint is
// recorded and tm2 registered, tm1 is stopped with SIGSTOP (a process
// frozen by a long pause: its connection stays open, the kernel still
// acknowledges its bytes). Only the JobManager's heartbeat timeout can
// find it: the JobManager declares tm1 lost for its silence and redeploys
// the job on tm2. tm1 then resumes with its old attempt still running; it
// must commit nothing (the JobManager refuses the gate of an attempt that
// is not the job's current one) nor touch the new attempt's files (the
// file sinks' hidden names end in their writer's nonce), and it registers
// again. The job ends FINISHED on tm2 with exactly the embedded run's
// committed output.
func TestPausedTaskManager(t *testing.T) {
	bin := weir(t)
	job := windowStatsArgs(t, 12000)
	want, wantLate := oracle(t, bin, job)

	jm, rpcAddr, restURL := startJobManager(t, bin, t.TempDir(), "--heartbeat-timeout", "2s")
	c := rest.NewClient(restURL, "")
	tm1, jid, out, late := onTM1ThenTM2(t, bin, c, restURL, rpcAddr, rpcAddr, job)
	if err := tm1.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	t.Log("paused tm1")
	waitLog(t, jm, "TaskManager tm1 lost: ")
	lostAfter := time.Since(paused)
	if l := lastLine(jm.stderr.String(), "TaskManager tm1 lost: "); !strings.Contains(l, "no heartbeat for") {
		t.Fatalf("the JobManager lost tm1 for another reason than its silence: %s", l)
	}
	waitLog(t, jm, "deployed on TaskManager tm2")
	if err := tm1.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("%v after the pause: %s", lostAfter.Round(10*time.Millisecond), lastLine(jm.stderr.String(), "TaskManager tm1 lost"))
	poll(t, "tm1's registration after its pause", 20*time.Second, func() bool {
		return strings.Count(jm.stderr.String(), "TaskManager tm1 at ") >= 2
	})
	ck := exact(t, c, jid, out, late, want, wantLate)
	if ck.Latest.Restored == nil {
		t.Fatal("the redeployed job restored no checkpoint")
	}
	t.Logf("tm1 after its pause: %s", lastLine(tm1.stderr.String(), "job "+jid))
	// the resumed zombie fails nothing of the new attempt's: its sink files
	// end in their own nonce, and the output directory it created and
	// removes when empty on its failure is created again for the next part
	if l := lastLine(jm.stderr.String(), "deployed on TaskManager"); !strings.Contains(l, "on TaskManager tm2") {
		t.Fatalf("after the pause the job moved again: %s", l)
	}
}

// onTM1ThenTM2 starts TaskManager tm1 (2 slots, reaching the JobManager at
// tm1JM), submits job detached and waits until it runs on tm1; then it
// starts tm2 (2 slots, at rpcAddr) and waits for its registration and for
// a checkpoint of the job recorded. It returns tm1, the job's id and its
// output and late output directories.
func onTM1ThenTM2(t *testing.T, bin string, c *rest.Client, restURL, tm1JM, rpcAddr string, job []string) (tm1 *proc, jid, out, late string) {
	t.Helper()
	tm1 = start(t, bin, "taskmanager", "--jobmanager", tm1JM, "--slots", "2", "--id", "tm1")
	poll(t, "tm1's registration", 20*time.Second, func() bool {
		tms, err := c.TaskManagers(context.Background())
		return err == nil && len(tms) == 1
	})
	jid, out, late = submitDetached(t, bin, restURL, job)
	if id := busy(t, c, time.Now().Add(20*time.Second)); id != "tm1" {
		t.Fatalf("the job runs on %s, want tm1", id)
	}
	start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "2", "--id", "tm2")
	poll(t, "tm2's registration", 20*time.Second, func() bool {
		tms, err := c.TaskManagers(context.Background())
		return err == nil && len(tms) == 2
	})
	recorded(t, c, jid)
	return tm1, jid, out, late
}
