package checkpoint

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var savepointName = regexp.MustCompile(`^savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`)

// TestWriteSavepointSelfContained writes a savepoint of a checkpoint's
// state and removes the checkpoint storage: the savepoint loads alone,
// through its directory or its metadata file, shared files included.
func TestWriteSavepointSelfContained(t *testing.T) {
	src := t.TempDir()
	d, err := OpenDir(src, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeShared(t, d, "x.sst")
	writeShared(t, d, "y.sst")
	sp := testSnapshot(7, []string{"x.sst", "y.sst"}, []string{"x.sst"})
	sp.Kind = Savepoint
	dir := filepath.Join(t.TempDir(), "savepoints")
	path, err := WriteSavepoint(dir, sp, d.OpenShared)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir || !savepointName.MatchString(filepath.Base(path)) {
		t.Fatalf("savepoint at %q", path)
	}
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Join(path, MetadataFile)} {
		got, err := Load(p)
		if err != nil || !reflect.DeepEqual(got, sp) {
			t.Fatalf("Load(%s) = %+v, %v", p, got, err)
		}
	}
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.SharedDir != filepath.Join(path, "shared") {
		t.Fatalf("SharedDir %q", info.SharedDir)
	}
	b, err := os.ReadFile(filepath.Join(info.SharedDir, "y.sst"))
	if err != nil || string(b) != "shared file y.sst" {
		t.Fatalf("copied shared file: %q, %v", b, err)
	}
	if got := listDir(t, dir); len(got) != 1 {
		t.Fatalf("savepoint directory holds %v", got)
	}
}

// TestDirStoreSavepoint: a Dir stores a savepoint in its savepoint
// directory, outside the checkpoints; it does not count towards the
// retained checkpoints and Latest goes on returning the newest checkpoint.
func TestDirStoreSavepoint(t *testing.T) {
	path := t.TempDir()
	spDir := filepath.Join(t.TempDir(), "sp")
	d, err := OpenDir(path, DirOptions{Savepoints: spDir})
	if err != nil {
		t.Fatal(err)
	}
	writeShared(t, d, "a")
	if _, err := d.Store(testSnapshot(1, []string{"a"}, nil)); err != nil {
		t.Fatal(err)
	}
	sp := testSnapshot(2, []string{"a"}, nil)
	sp.Kind = Savepoint
	at, err := d.Store(sp)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(at) != spDir || !savepointName.MatchString(filepath.Base(at)) {
		t.Fatalf("savepoint stored at %q", at)
	}
	if got, err := Load(at); err != nil || !reflect.DeepEqual(got, sp) {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if got, _, err := d.Latest(); err != nil || got.ID != 1 || !slices.Equal(d.Retained(), []int64{1}) {
		t.Fatalf("Latest = %v, %v; retained %v", got, err, d.Retained())
	}
	if _, err := d.Store(testSnapshot(2, nil, nil)); err == nil {
		t.Fatal("Store of the savepoint's id succeeded")
	}
	if _, err := d.Store(testSnapshot(3, nil, nil)); err != nil {
		t.Fatal(err)
	}
	// Shared file a went with checkpoint 1; the savepoint has its copy.
	if got := listDir(t, filepath.Join(path, "shared")); len(got) != 0 {
		t.Fatalf("shared holds %v", got)
	}
	if got, err := Load(at); err != nil || !reflect.DeepEqual(got, sp) {
		t.Fatalf("Load after the checkpoint went = %+v, %v", got, err)
	}
}

func TestWriteSavepointFails(t *testing.T) {
	dir := t.TempDir()
	sp := testSnapshot(1, []string{"gone"}, nil)
	sp.Kind = Savepoint
	failing := func(name string) (io.ReadCloser, error) { return nil, errors.New("no " + name) }
	if _, err := WriteSavepoint(dir, sp, failing); err == nil || !strings.Contains(err.Error(), "no gone") {
		t.Fatalf("WriteSavepoint with a failing shared source: %v", err)
	}
	if got := listDir(t, dir); len(got) != 0 {
		t.Fatalf("a failed savepoint left %v", got)
	}
	if _, err := WriteSavepoint(dir, testSnapshot(1, nil, nil), nil); err == nil {
		t.Fatal("WriteSavepoint of a checkpoint succeeded")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "none"): "checkpoint: " + filepath.Join(dir, "none") + ": no such file or directory",
		notes:                      "checkpoint: " + notes + ": not a snapshot",
		empty:                      "checkpoint: " + filepath.Join(empty, MetadataFile) + ": missing",
	} {
		if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want %q", path, err, want)
		}
	}
}
