package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A second OpenDir of a directory in use fails naming the holder (pid,
// host, start time) and removes nothing; once the first is closed the
// directory opens again.
func TestDirLock(t *testing.T) {
	path := t.TempDir()
	d, err := OpenDir(path, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Store(testSnapshot(1, nil, nil)); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	_, err = OpenDir(path, DirOptions{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	for _, want := range []string{path, fmt.Sprintf("pid %d", os.Getpid()), "on host " + host, " since 20"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("second open: %q does not name %q", err, want)
		}
	}
	if got, _, err := d.Latest(); err != nil || got == nil || got.ID != 1 {
		t.Fatalf("the holder's checkpoint after the refused open: %v %v", got, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2, err := OpenDir(path, DirOptions{})
	if err != nil {
		t.Fatalf("open after Close: %v", err)
	}
	defer d2.Close()
	if got, _, err := d2.Latest(); err != nil || got == nil || got.ID != 1 {
		t.Fatalf("reopened: %v %v", got, err)
	}
}

// The fingerprint is stored and read back; metadata of version 1, which
// has none, still reads.
func TestMetadataFingerprint(t *testing.T) {
	m := &metadata{ID: 7, Timestamp: 5, Fingerprint: "00ff00ff00ff00ff"}
	got, err := decodeMetadata("_metadata", encodeMetadata(m))
	if err != nil || got.Fingerprint != m.Fingerprint || got.ID != 7 {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	// version 1: the same bytes without the fingerprint string
	m.Fingerprint = ""
	b := encodeMetadata(m)
	body := b[:len(b)-4]
	at := len(metadataMagic) + 1 + 1 + len(binary.AppendVarint(nil, m.ID)) + len(binary.AppendVarint(nil, m.Timestamp)) + 2
	if body[at] != 0 {
		t.Fatalf("no empty fingerprint at %d", at)
	}
	v1 := append(append([]byte{}, body[:at]...), body[at+1:]...)
	v1[len(metadataMagic)] = 1
	got, err = decodeMetadata("_metadata", seal(v1))
	if err != nil || got.Fingerprint != "" || got.ID != 7 || got.Timestamp != 5 {
		t.Fatalf("version 1: %+v %v", got, err)
	}
}

// A savepoint's in-progress directory whose writer is gone (killed: its
// lock released) is removed; one a live writer holds stays, and so does
// everything else in the directory.
func TestRemoveStaleSavepoints(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".savepoint-aaaaaa-000000000000.inprogress", ".savepoint-bbbbbb-000000000000.inprogress", "savepoint-cccccc-000000000000", ".other.inprogress"} {
		if err := os.MkdirAll(filepath.Join(dir, name, "shared"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	live, err := os.Open(filepath.Join(dir, ".savepoint-bbbbbb-000000000000.inprogress"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := flockExclusive(live); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveStaleSavepoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, ".savepoint-aaaaaa-000000000000.inprogress")}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	ents, _ := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{".other.inprogress", ".savepoint-bbbbbb-000000000000.inprogress", "savepoint-cccccc-000000000000"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	// a savepoint written next to the live one leaves it too
	s := testSnapshot(3, nil, nil)
	s.Kind = Savepoint
	if _, err := WriteSavepoint(dir, s, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".savepoint-bbbbbb-000000000000.inprogress")); err != nil {
		t.Errorf("the live writer's directory: %v", err)
	}
}

// A follower opens a directory the owner holds, without the lock: it
// reads the owner's checkpoints as they come, writes shared files the
// owner reads, refuses to store, and removes nothing, not even an
// incomplete checkpoint, which it takes for one the owner is writing.
func TestDirFollower(t *testing.T) {
	path := t.TempDir()
	d, err := OpenDir(path, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	leftover := filepath.Join(path, "chk-99")
	if err := os.MkdirAll(leftover, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := OpenDir(path, DirOptions{Follower: true})
	if err != nil {
		t.Fatalf("follower open: %v", err)
	}
	defer f.Close()
	if _, err := os.Stat(leftover); err != nil {
		t.Fatalf("the follower removed %s: %v", leftover, err)
	}
	if got, _, err := f.Latest(); err != nil || got != nil {
		t.Fatalf("follower's latest before any checkpoint: %v %v", got, err)
	}
	if _, err := d.Store(testSnapshot(1, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if got, _, err := f.Latest(); err != nil || got == nil || got.ID != 1 {
		t.Fatalf("follower's latest after the owner stored 1: %v %v", got, err)
	}
	if _, err := f.Store(testSnapshot(2, nil, nil)); err == nil || !strings.Contains(err.Error(), "follower") {
		t.Fatalf("follower's Store: %v, want a refusal", err)
	}
	w, err := f.CreateShared("s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := d.OpenShared("s1")
	if err != nil {
		t.Fatalf("the owner reads the follower's shared file: %v", err)
	}
	r.Close()
}
