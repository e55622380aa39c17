package formats

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTempFileCommit(t *testing.T) {
	final := filepath.Join(t.TempDir(), "out.txt")
	tf, err := CreateTemp("formats", final)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tf.F.WriteString("data\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(final); !os.IsNotExist(err) {
		t.Fatalf("final file exists before commit: %v", err)
	}
	if err := tf.Finish(nil); err != nil {
		t.Fatal(err)
	}
	if err := tf.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(final)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != Mode {
		t.Errorf("committed file has mode %v, want %v", fi.Mode().Perm(), Mode)
	}
	if b, _ := os.ReadFile(final); string(b) != "data\n" {
		t.Errorf("committed file holds %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(final), ".out.txt.tmp-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}
