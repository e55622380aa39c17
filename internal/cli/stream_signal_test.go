package cli

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/weirdata/weir/internal/proctest"
)

// TestStreamingWordCountSignal runs the directory-watching job as a process:
// the words of two files dropped in while it runs are printed, and SIGINT
// (or SIGTERM) stops it with status 130, its spill directory and output
// left empty.
func TestStreamingWordCountSignal(t *testing.T) {
	bin := proctest.Binary(t, "builds the weir binary")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { runInterrupted(t, bin, sig) })
	}
}

func runInterrupted(t *testing.T, bin string, sig syscall.Signal) {
	in, out, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	var stdout, stderr syncBuffer
	cmd := exec.Command(bin, "run", "streaming-wordcount", "--input", in, "--monitor", "50ms",
		"--parallelism", "2", "--tmp", tmp)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	dropFile(t, in, "a.txt", "Hello world", "hello")
	waitFor(t, "the first file's counts", func() bool { return hasAll(stdout.String(), []string{"(hello,2)", "(world,1)"}) })
	dropFile(t, in, "b.txt", "world, again")
	waitFor(t, "the second file's counts", func() bool { return hasAll(stdout.String(), []string{"(world,2)", "(again,1)"}) })
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit: %v, want status %d; stderr %q", err, ExitInterrupted, stderr.String())
	}
	if got := stderr.String(); got != "weir: interrupted\n" {
		t.Errorf("stderr %q", got)
	}
	for _, d := range []string{tmp, out} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s holds %v", d, ents)
		}
	}
}
