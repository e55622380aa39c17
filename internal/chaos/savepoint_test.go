package chaos

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopWithSavepointRescale stops window-stats running at parallelism 2
// on the disk backend with incremental checkpoints, with SIGTERM at a
// random moment after its first commit: it writes a savepoint, prints its
// path and exits 0 with the output it committed. The savepoint is full and canonical, so it
// resumes at parallelism 1, 2 and 3 on either backend (each from a copy of
// that output), and the job commits exactly the uninterrupted run's output.
func TestStopWithSavepointRescale(t *testing.T) {
	bin := weir(t)
	jb := windowStatsJob(t, 4000)
	oracle, _ := uninterrupted(t, bin, jb)
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 6))
	wait := time.Duration(r.IntN(800)) * time.Millisecond
	t.Logf("seed %d: SIGTERM %v after the first commit", seed, wait)

	out, sp := filepath.Join(t.TempDir(), "out"), t.TempDir()
	args := append(slices.Clone(jb.args), "--output", out, "--savepoint-dir", sp, "--checkpoint-dir", t.TempDir(),
		"--checkpoint-interval", "200ms", "--rate", fmt.Sprint(jb.rate), "--state-backend", "disk", "--incremental-checkpoints")
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// a stop before anything was committed would test less: wait for the
	// first committed line (a loaded machine starts the job late)
	for deadline := time.Now().Add(30 * time.Second); !hasLines(out); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing committed in 30 s:\n%s", stderr.String())
		}
	}
	time.Sleep(wait)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("weir stopped with SIGTERM: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	path, ok := strings.CutPrefix(lines[len(lines)-1], "Savepoint completed. Path: ")
	if !ok || !strings.HasPrefix(path, sp) {
		t.Fatalf("stdout %q, want a last line naming a savepoint under %s", stdout.String(), sp)
	}
	stopped := committed(t, out)
	if len(stopped) == 0 || len(stopped) >= len(oracle) {
		t.Fatalf("committed %d of %d lines at the stop, want a part", len(stopped), len(oracle))
	}
	if lost, dup := diff(oracle, stopped); dup != 0 {
		t.Fatalf("committed %d lines at the stop that an uninterrupted run does not (%d left)", dup, lost)
	}
	for p, backend := range map[int]string{1: "heap", 2: "disk", 3: "heap"} {
		t.Run(fmt.Sprint("p", p, backend), func(t *testing.T) {
			out2 := filepath.Join(t.TempDir(), "out")
			copyDir(t, out, out2)
			args := append(slices.Clone(jb.args), "--output", out2, "--from-savepoint", path, "--state-backend", backend)
			args = append(args, "--parallelism", fmt.Sprint(p)) // the last --parallelism wins
			runToEnd(t, bin, args)
			got := committed(t, out2)
			if lost, dup := diff(oracle, got); lost != 0 || dup != 0 {
				t.Fatalf("%d records lost, %d duplicated (of %d)", lost, dup, len(oracle))
			}
		})
	}
}

// hasLines reports whether dir holds a committed file with a line.
func hasLines(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// copyDir copies the files of dir into a new directory to.
func copyDir(t *testing.T, dir, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
