package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirdata/weir/internal/proctest"
)

// The configurations of the kill test: every state backend and checkpoint
// alignment it runs with, each mapped to its flags.
var (
	backends = map[string][]string{
		"heap": {"--state-backend", "heap"},
		"disk": {"--state-backend", "disk", "--incremental-checkpoints"},
	}
	alignments = map[string][]string{
		"aligned":   {"--checkpointing-mode", "exactly-once"},
		"unaligned": {"--checkpointing-mode", "exactly-once", "--unaligned-checkpoints"},
	}
)

// kills is how many times the kill test kills each configuration's job:
// WEIR_CHAOS_KILLS, 6 by default (the full loop is WEIR_CHAOS_KILLS=20).
var kills = func() int {
	if n, err := strconv.Atoi(os.Getenv("WEIR_CHAOS_KILLS")); err == nil && n > 0 {
		return n
	}
	return 6
}()

// weir returns the weir binary, or skips the test under -short.
func weir(t *testing.T) string {
	t.Helper()
	return proctest.Binary(t, "kills weir processes")
}

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.RemoveBinary()
	os.Exit(code)
}

// job is a stream job of the test: its weir run arguments (without
// --output and the checkpoint flags) and its source rate; late says it
// writes its late events to --late-output too.
type job struct {
	name string
	args []string
	rate int
	late bool
}

// windowStatsJob writes a CSV of n events (timestamps 10 ms apart, 7 keys)
// with stragglers: every 25th event is 19 s behind, long after its window
// fired, so it is late and goes to the late output, and a few others 1.5 s
// behind, within the out-of-orderness of 2 s. It returns window-stats
// summing them per key in tumbling 5 s windows at parallelism 2: the
// watermark follows each record, so the firings and the late events do not
// depend on timing.
func windowStatsJob(t *testing.T, n int) job {
	in := proctest.WindowStatsEvents(t, n)
	return job{name: "window-stats", rate: 1000, late: true, args: []string{"run", "window-stats", "--input", in, "--key", "user",
		"--time", "ts", "--value", "amount", "--window", "tumbling:5s", "--out-of-orderness", "2s", "--parallelism", "2"}}
}

// iterateJob writes n "(a,b)" pairs and returns the stream iteration of
// Flink's IterateExample over them at parallelism 2: each pair circles the
// feedback loop until its numbers reach the bound, and its line
// ((a,b),steps) comes out once.
func iterateJob(t *testing.T, n int) job {
	var b strings.Builder
	r := rand.New(rand.NewPCG(7, 8))
	for range n {
		fmt.Fprintf(&b, "(%d,%d)\n", 1+r.IntN(40), 1+r.IntN(40))
	}
	in := filepath.Join(t.TempDir(), "pairs.txt")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return job{name: "iterate", rate: 250, args: []string{"run", "iterate", "--input", in, "--max-wait", "1s", "--parallelism", "2"}}
}

// wordCountJob writes two text files of n lines each of five words from a
// vocabulary of 60 and returns streaming-wordcount over their directory at
// parallelism 2 (a file per source subtask): a running count per word in
// keyed state.
func wordCountJob(t *testing.T, n int) job {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	for f := range 2 {
		var b strings.Builder
		for range n {
			for w := range 5 {
				if w > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "w%d", r.IntN(60))
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part%d.txt", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return job{name: "streaming-wordcount", rate: 600, args: []string{"run", "streaming-wordcount", "--input", dir, "--parallelism", "2"}}
}

// TestKillRestart runs each job under each configuration with checkpoints
// every 100-500 ms and a throttled source, kills it with SIGKILL at random
// moments (kills times, each once it ran 200-700 ms), restarts it with the
// same command each time and lets the last run finish; the committed
// output (and late output) must be the uninterrupted run's: 0 records
// lost, 0 duplicated. Window-stats has stragglers: a record late before a
// failure is late after it, so no window fires twice. The stream iteration
// logs its feedback in its checkpoints. Run again, the finished job changes
// nothing.
func TestKillRestart(t *testing.T) {
	bin := weir(t)
	// inputs in proportion to the kills, so that each job outlasts them
	jobs := []job{windowStatsJob(t, 500*kills), wordCountJob(t, 150*kills), iterateJob(t, 200*kills)}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	for _, jb := range jobs {
		oracle, lateOracle := uninterrupted(t, bin, jb)
		for backend, bflags := range backends {
			for name, flags := range alignments {
				t.Run(jb.name+"/"+backend+"/"+name, func(t *testing.T) {
					killLoop(t, bin, jb, oracle, lateOracle, t.TempDir(), r, append(slices.Clone(bflags), flags...))
				})
			}
		}
	}
}

// killLoop runs jb checkpointing into chk (a directory or an s3:// URL),
// with more flags, kills it kills times at random moments, runs it to its
// end and checks its committed output against oracle and lateOracle: 0
// lost, 0 duplicated. Run again, the finished job changes nothing.
func killLoop(t *testing.T, bin string, jb job, oracle, lateOracle []string, chk string, r *rand.Rand, more []string) {
	t.Helper()
	interval := time.Duration(100+r.IntN(401)) * time.Millisecond
	out, late := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "late")
	args := append(slices.Clone(jb.args), "--output", out, "--checkpoint-dir", chk,
		"--checkpoint-interval", interval.String(), "--rate", fmt.Sprint(jb.rate))
	if jb.late {
		args = append(args, "--late-output", late)
	}
	args = append(args, more...)
	killed := 0
	for killed < kills {
		finished := runKilled(t, bin, args, time.Duration(200+r.IntN(501))*time.Millisecond)
		if finished {
			t.Fatalf("the job finished after %d kills, want %d: make its input longer", killed, kills)
		}
		killed++
	}
	runToEnd(t, bin, args)
	got := committed(t, out)
	lost, dup := diff(oracle, got)
	t.Logf("interval %v, %d kills: %d lines, %d lost, %d duplicated", interval, killed, len(got), lost, dup)
	if lost != 0 || dup != 0 {
		l, d := lines(oracle, got)
		t.Fatalf("%d records lost, %d duplicated (of %d); lost %q, duplicated %q", lost, dup, len(oracle), l[:min(len(l), 20)], d[:min(len(d), 20)])
	}
	if jb.late {
		got := committed(t, late)
		if l, d := lines(lateOracle, got); len(l) != 0 || len(d) != 0 {
			t.Fatalf("late output: %d lost, %d duplicated (of %d); lost %q, duplicated %q", len(l), len(d), len(lateOracle), l[:min(len(l), 20)], d[:min(len(d), 20)])
		}
	}
	before := listing(t, out)
	runToEnd(t, bin, args)
	if after := listing(t, out); !slices.Equal(before, after) {
		t.Fatalf("the finished job run again changed its output: %v, then %v", before, after)
	}
}

// uninterrupted runs jb to its end without checkpoints or throttle and
// returns its committed lines, sorted, and its late lines.
func uninterrupted(t *testing.T, bin string, jb job) (out, late []string) {
	dir, lateDir := filepath.Join(t.TempDir(), "oracle"), filepath.Join(t.TempDir(), "late")
	args := append(slices.Clone(jb.args), "--output", dir)
	if jb.late {
		args = append(args, "--late-output", lateDir)
	}
	runToEnd(t, bin, args)
	out = committed(t, dir)
	if len(out) == 0 {
		t.Fatalf("%s wrote no output", jb.name)
	}
	if jb.late {
		if late = committed(t, lateDir); len(late) == 0 {
			t.Fatalf("%s wrote no late events: the test's stragglers are not late", jb.name)
		}
	}
	return out, late
}

// runKilled starts weir with args, kills it with SIGKILL after d and
// reports whether it had finished (successfully) first.
func runKilled(t *testing.T, bin string, args []string, d time.Duration) bool {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("weir %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return true
	case <-time.After(d):
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
		return false
	}
	if err != nil {
		t.Fatalf("weir %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return true // it ended just before the kill
}

// listing returns the names and sizes of dir's files.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d", e.Name(), info.Size()))
	}
	return out
}

// runToEnd, committed and lines are proctest's.
var (
	committed = proctest.Committed
	lines     = proctest.Diff
)

func runToEnd(t *testing.T, bin string, args []string) string {
	t.Helper()
	return proctest.RunToEnd(t, bin, args...)
}

// diff compares two sorted multisets of lines: the lines of want missing
// from got (lost) and the lines of got beyond want (duplicated).
func diff(want, got []string) (lost, dup int) {
	l, d := lines(want, got)
	return len(l), len(d)
}
