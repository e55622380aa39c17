package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/internal/proctest"
)

// weir returns the weir binary, or skips the test under -short.
func weir(t *testing.T) string {
	t.Helper()
	return proctest.Binary(t, "starts a cluster of weir processes")
}

// runToEnd, committed and diff are proctest's.
var (
	runToEnd  = proctest.RunToEnd
	committed = proctest.Committed
	diff      = proctest.Diff
)

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.RemoveBinary()
	os.Exit(code)
}

// windowStatsArgs writes a CSV of n events (timestamps 10 ms apart, 7
// keys) with stragglers, as the chaos tests' window-stats job: every 25th
// event 19 s behind (late, to the late output) and others 1.5 s behind
// (within the out-of-orderness). It returns the weir run arguments of
// window-stats over it at parallelism 2, without outputs.
func windowStatsArgs(t *testing.T, n int) []string {
	in := proctest.WindowStatsEvents(t, n)
	return []string{"run", "window-stats", "--input", in, "--key", "user", "--time", "ts", "--value", "amount",
		"--window", "tumbling:5s", "--out-of-orderness", "2s", "--parallelism", "2"}
}

// proc is a weir process of the test's cluster.
type proc struct {
	cmd    *exec.Cmd
	stderr *proctest.Log
	done   chan error
}

// start starts weir with args; the test kills it at its end.
func start(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), stderr: &proctest.Log{}, done: make(chan error, 1)}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("weir %s:\n%s", strings.Join(args[:1], " "), tail(p.stderr.String(), 40))
		}
	})
	return p
}

// kill kills p with SIGKILL and waits for it.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	p.done <- nil // for the cleanup
}

func tail(s string, n int) string {
	ls := strings.Split(s, "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}

// startJobManager starts a JobManager on free loopback ports and returns
// it with its RPC address and REST URL, read from its first line.
func startJobManager(t *testing.T, bin, ckDir string, more ...string) (*proc, string, string) {
	t.Helper()
	args := append([]string{"jobmanager", "--checkpoint-dir", ckDir, "--rest-address", "127.0.0.1:0",
		"--rpc-address", "127.0.0.1:0", "--restart-delay", "200ms"}, more...)
	cmd := exec.Command(bin, args...)
	pr, pw := io.Pipe()
	buf := &proctest.Log{}
	cmd.Stderr = io.MultiWriter(pw, buf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: buf, done: make(chan error, 1)}
	go func() {
		err := cmd.Wait()
		pw.Close()
		p.done <- err
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("jobmanager:\n%s", tail(buf.String(), 60))
		}
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var rpcAddr, restURL string
		if _, err := fmt.Sscanf(sc.Text(), "weir: JobManager: rpc %s rest %s", &rpcAddr, &restURL); err == nil {
			go io.Copy(io.Discard, pr)
			return p, strings.TrimSuffix(rpcAddr, ","), restURL
		}
	}
	t.Fatalf("the JobManager did not start:\n%s", buf.String())
	return nil, "", ""
}

// busy returns the id of the TaskManager whose slots the job holds, once
// one does.
func busy(t *testing.T, c *rest.Client, deadline time.Time) string {
	t.Helper()
	for time.Now().Before(deadline) {
		tms, err := c.TaskManagers(context.Background())
		if err == nil {
			for _, tm := range tms {
				if tm.FreeSlots < tm.SlotsNumber {
					return tm.ID
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no TaskManager runs the job")
	return ""
}

// TestKillTaskManagers: a JobManager and three TaskManagers (2 slots
// each) on loopback; window-stats submitted with --jobmanager,
// checkpointing every 200 ms; the TaskManager running it is killed with
// SIGKILL three times, each after it ran 0.8-1.6 s, and started again.
// The job ends FINISHED (the submitting weir run exits 0) and its
// committed output and late output equal an uninterrupted embedded
// run's: 0 records lost, 0 duplicated.
func TestKillTaskManagers(t *testing.T) {
	bin := weir(t)
	job := windowStatsArgs(t, 9000)
	oracleDir, oracleLate := filepath.Join(t.TempDir(), "oracle"), filepath.Join(t.TempDir(), "oracle-late")
	runToEnd(t, bin, append(slices.Clone(job), "--output", oracleDir, "--late-output", oracleLate)...)
	want, wantLate := committed(t, oracleDir), committed(t, oracleLate)
	if len(want) == 0 || len(wantLate) == 0 {
		t.Fatalf("the oracle run wrote %d lines and %d late lines", len(want), len(wantLate))
	}

	ckDir := t.TempDir()
	_, rpcAddr, restURL := startJobManager(t, bin, ckDir)
	tms := map[string]*proc{}
	startTM := func(id string) {
		tms[id] = start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "2", "--id", id)
	}
	for _, id := range []string{"tm1", "tm2", "tm3"} {
		startTM(id)
	}
	out, late := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "late")
	submit := exec.Command(bin, append(slices.Clone(job), "--output", out, "--late-output", late,
		"--checkpoint-interval", "200ms", "--rate", "1000", "--jobmanager", restURL)...)
	var subOut, subErr bytes.Buffer
	submit.Stdout, submit.Stderr = &subOut, &subErr
	if err := submit.Start(); err != nil {
		t.Fatal(err)
	}
	submitted := make(chan error, 1)
	go func() { submitted <- submit.Wait() }()
	t.Cleanup(func() {
		submit.Process.Signal(syscall.SIGKILL)
	})
	c := rest.NewClient(restURL, "")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	const kills = 3
	for k := range kills {
		id := busy(t, c, time.Now().Add(20*time.Second))
		time.Sleep(time.Duration(800+r.IntN(800)) * time.Millisecond)
		select {
		case err := <-submitted:
			t.Fatalf("the job ended after %d kills (%v), want %d: make its input longer\n%s", k, err, kills, subErr.String())
		default:
		}
		tms[id].kill(t)
		t.Logf("killed %s", id)
		startTM(id)
	}
	select {
	case err := <-submitted:
		if err != nil {
			t.Fatalf("weir run --jobmanager: %v\n%s%s", err, subOut.String(), subErr.String())
		}
	case <-time.After(45 * time.Second):
		t.Fatalf("the job did not end:\n%s", subErr.String())
	}
	jid, ok := submittedID(subErr.String())
	if !ok {
		t.Fatalf("weir run --jobmanager printed %q on stderr", subErr.String())
	}
	d, err := c.Job(context.Background(), jid)
	if err != nil || d.State != rest.StateFinished {
		t.Fatalf("job %s: %+v, %v", jid, d, err)
	}
	var vs []string
	for _, v := range d.Vertices {
		vs = append(vs, fmt.Sprintf("%s (%d)", v.Name, v.Parallelism))
	}
	t.Logf("vertices: %s", strings.Join(vs, "; "))
	if len(d.Vertices) < 2 || d.Vertices[0].Parallelism == 0 { // the TaskManager reported the job's tasks
		t.Fatalf("vertices %+v", d.Vertices)
	}
	t.Logf("%d kills", kills)
	ck := exact(t, c, jid, out, late, want, wantLate)
	ex, err := c.Exceptions(context.Background(), jid)
	if err != nil {
		t.Fatal(err)
	}
	// a kill fails the attempt on the TaskManager (lost, or its gate
	// broken), unless the JobManager took that TaskManager for lost already
	es := ex.History.Entries
	if len(es) == 0 || ex.RootException != es[0].Stacktrace {
		t.Errorf("exceptions %+v: want the failures, the newest the root", ex)
	}
	for i, e := range es {
		if e.TaskManagerID == "" || e.Stacktrace == "" || i > 0 && e.Timestamp > es[i-1].Timestamp {
			t.Errorf("exception %d %+v: want where and why, newest first", i, e)
		}
	}
	if ck.Latest.Restored == nil {
		t.Fatal("the job never restored a checkpoint: the kills came before any completed")
	}
	if _, err := os.Stat(filepath.Join(ckDir, jid)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the finished job's checkpoint directory: %v, want it removed", err)
	}
}

// submittedID finds the job id in the line a submission prints.
func submittedID(out string) (string, bool) {
	for line := range strings.Lines(out) {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "Job has been submitted with JobID "); ok {
			return id, true
		}
	}
	return "", false
}
