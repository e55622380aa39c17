package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// bucketNames returns the names directly under prefix p of b, sorted: the
// listDir of a bucket.
func bucketNames(t *testing.T, b Bucket, p string) []string {
	t.Helper()
	ents, err := bucketFS{b: b}.ReadDir(p)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func writeSharedTo(t *testing.T, d *Dir, name string, body []byte) {
	t.Helper()
	w, err := d.CreateShared(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBucketStoreLatestLoad: a checkpoint stored in a bucket reads back
// equal, through the same Dir, a reopened one and LoadBucket; its files
// have names of their own attempt and its paths name the bucket.
func TestBucketStoreLatestLoad(t *testing.T) {
	b := NewMemBucket()
	d, err := OpenBucket(b, "jobs/a", DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, where, err := d.Latest(); s != nil || where != "" || err != nil {
		t.Fatalf("empty Latest = %v, %q, %v", s, where, err)
	}
	writeShared(t, d, "a.sst")
	writeShared(t, d, "b.sst")
	want := testSnapshot(1, []string{"a.sst", "b.sst"}, nil)
	where, err := d.Store(want)
	if err != nil {
		t.Fatal(err)
	}
	if where != "mem://bucket/jobs/a/chk-1" || d.Path() != "mem://bucket/jobs/a" {
		t.Fatalf("Store returned %q, Path %q", where, d.Path())
	}
	files := bucketNames(t, b, "jobs/a/chk-1")
	re := regexp.MustCompile(`^(_metadata|op0-0-[0-9a-f]{8}\.inflight|op[01]-[01]-[0-9a-f]{8}\.state)$`)
	if len(files) != 5 {
		t.Fatalf("chk-1 holds %v", files)
	}
	for _, f := range files {
		if !re.MatchString(f) {
			t.Fatalf("chk-1 holds %v: %q is not a name of the layout", files, f)
		}
	}
	if got := bucketNames(t, b, "jobs/a/shared"); !slices.Equal(got, []string{"a.sst", "b.sst"}) {
		t.Fatalf("shared holds %v", got)
	}
	got, at, err := d.Latest()
	if err != nil || !reflect.DeepEqual(got, want) || at != where {
		t.Fatalf("Latest = %+v at %q, %v", got, at, err)
	}
	d2, err := OpenBucket(b, "jobs/a/", DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := d2.Latest(); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Latest after reopening = %+v, %v", got, err)
	}
	for _, p := range []string{"jobs/a/chk-1", "jobs/a/chk-1/_metadata"} {
		if got, err := LoadBucket(b, p); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("LoadBucket(%s) = %+v, %v", p, got, err)
		}
	}
	r, err := d2.OpenShared("b.sst")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r)
	r.Close()
	if string(body) != "shared file b.sst" {
		t.Fatalf("shared b.sst reads %q", body)
	}
	if _, err := d2.Store(testSnapshot(1, nil, nil)); err == nil {
		t.Fatal("Store of an id stored before succeeded")
	}
	if _, err := LoadBucket(b, "jobs/none"); err == nil {
		t.Fatal("LoadBucket of nothing succeeded")
	}
}

// TestBucketRetainsSharedFiles is TestDirRetainsSharedFiles on a bucket: a
// shared file stays while a retained checkpoint names it and goes with the
// last; every other Store goes through a reopened storage.
func TestBucketRetainsSharedFiles(t *testing.T) {
	b := NewMemBucket()
	names := map[int64][2][]string{
		1: {{"a"}, nil},
		2: {{"a", "b"}, {"c"}},
		3: {{"a"}, {"c", "d"}},
		4: {{"d"}, nil},
		5: {nil, {"e"}},
		6: {nil, nil},
		7: {{"b"}, nil},
	}
	open := func() *Dir {
		d, err := OpenBucket(b, "p", DirOptions{Retained: 2})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := open()
	for id := int64(1); id <= 7; id++ {
		if id%2 == 0 {
			d = open()
		}
		n := names[id]
		for _, name := range append(slices.Clone(n[0]), n[1]...) {
			if _, err := b.Size(context.Background(), "p/shared/"+name); err != nil {
				writeShared(t, d, name)
			}
		}
		if _, err := d.Store(testSnapshot(id, n[0], n[1])); err != nil {
			t.Fatal(err)
		}
		retained := []int64{id}
		if id > 1 {
			retained = []int64{id - 1, id}
		}
		var wantDirs []string
		wantShared := map[string]bool{}
		for _, r := range retained {
			wantDirs = append(wantDirs, fmt.Sprintf("chk-%d", r))
			for _, l := range names[r] {
				for _, name := range l {
					wantShared[name] = true
				}
			}
		}
		if len(wantShared) > 0 {
			wantDirs = append(wantDirs, "shared")
		}
		slices.Sort(wantDirs)
		if got := bucketNames(t, b, "p"); !slices.Equal(got, wantDirs) {
			t.Fatalf("after checkpoint %d the bucket holds %v, want %v", id, got, wantDirs)
		}
		var ws []string
		for name := range wantShared {
			ws = append(ws, name)
		}
		slices.Sort(ws)
		if got := bucketNames(t, b, "p/shared"); !slices.Equal(got, ws) {
			t.Fatalf("after checkpoint %d the shared files are %v, want %v", id, got, ws)
		}
		if got := d.Retained(); !slices.Equal(got, retained) {
			t.Fatalf("after checkpoint %d Retained = %v, want %v", id, got, retained)
		}
	}
}

// TestBucketSkipsDamage: a changed state object makes its checkpoint
// damaged, named by its URL; Latest falls back to the one before. A Store
// whose metadata put fails leaves nothing, and what a killed writer left
// without metadata is removed on open.
func TestBucketSkipsDamage(t *testing.T) {
	b := NewMemBucket()
	d, err := OpenBucket(b, "p", DirOptions{Retained: 2})
	if err != nil {
		t.Fatal(err)
	}
	one := testSnapshot(1, nil, nil)
	if _, err := d.Store(one); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Store(testSnapshot(2, nil, nil)); err != nil {
		t.Fatal(err)
	}
	var state string
	for _, n := range bucketNames(t, b, "p/chk-2") {
		if strings.HasPrefix(n, "op1-0-") {
			state = "p/chk-2/" + n
		}
	}
	b.Set(state, []byte("state 0 of 9"))
	var reported []string
	d2, err := OpenBucket(b, "p", DirOptions{Retained: 2, OnSkip: func(p string, err error) { reported = append(reported, p+" "+err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	got, at, err := d2.Latest()
	if err != nil || !reflect.DeepEqual(got, one) || at != "mem://bucket/p/chk-1" {
		t.Fatalf("Latest = %+v at %q, %v; want checkpoint 1", got, at, err)
	}
	want := "mem://bucket/p/chk-2 checkpoint: mem://bucket/" + state + ": checksum mismatch"
	if len(reported) == 0 || reported[0] != want {
		t.Fatalf("OnSkip got %q, want %q", reported, want)
	}
	if s := d2.Skipped(); len(s) != 1 || !errors.Is(s[0], ErrCorrupt) {
		t.Fatalf("Skipped = %v", s)
	}

	// A failed metadata put: the Store fails and leaves no chk-3.
	b.Fail = func(op, key string) error {
		if op == "put" && strings.HasSuffix(key, "chk-3/_metadata") {
			return errors.New("injected")
		}
		return nil
	}
	if _, err := d2.Store(testSnapshot(3, nil, nil)); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("Store with a failing put: %v", err)
	}
	b.Fail = nil
	if got := bucketNames(t, b, "p/chk-3"); len(got) != 0 {
		t.Fatalf("a failed Store left %v", got)
	}
	// A killed writer's state files without metadata, and an orphan shared
	// file, go on open.
	b.Set("p/chk-4/op0-0-0badc0de.state", []byte("half"))
	b.Set("p/shared/orphan", []byte("of checkpoint 4"))
	if _, err := OpenBucket(b, "p", DirOptions{Retained: 2}); err != nil {
		t.Fatal(err)
	}
	if got := bucketNames(t, b, "p"); !slices.Equal(got, []string{"chk-1", "chk-2"}) {
		t.Fatalf("after reopening the bucket holds %v", got)
	}
}

// TestBucketSavepoint: a savepoint goes under the savepoint prefix,
// self-contained with its shared files, and loads back equal; a failed one
// leaves nothing. A shared file larger than the spool limit goes through a
// temporary file, which is removed.
func TestBucketSavepoint(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b := NewMemBucket()
	d, err := OpenBucket(b, "p", DirOptions{Savepoints: "sp"})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), spoolLimit/16+1000)
	writeSharedTo(t, d, "big.sst", big)
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("the spool left %d files", len(ents))
	}
	sp := testSnapshot(4, []string{"big.sst"}, nil)
	sp.Kind = Savepoint
	where, err := d.Store(sp)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^mem://bucket/(sp/savepoint-[0-9a-f]{6}-[0-9a-f]{12})$`).FindStringSubmatch(where)
	if m == nil {
		t.Fatalf("savepoint stored at %q", where)
	}
	if got, err := LoadBucket(b, m[1]); err != nil || !reflect.DeepEqual(got, sp) {
		t.Fatalf("LoadBucket = %+v, %v", got, err)
	}
	r, err := b.Get(context.Background(), m[1]+"/shared/big.sst")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r)
	if !bytes.Equal(body, big) {
		t.Fatalf("the savepoint's copy of big.sst has %d bytes, want %d equal", len(body), len(big))
	}
	b.Fail = func(op, key string) error {
		if op == "put" && strings.HasSuffix(key, "/_metadata") {
			return errors.New("injected")
		}
		return nil
	}
	sp2 := testSnapshot(5, []string{"big.sst"}, nil)
	sp2.Kind = Savepoint
	if _, err := d.Store(sp2); err == nil {
		t.Fatal("a savepoint whose metadata put failed was stored")
	}
	b.Fail = nil
	if got := bucketNames(t, b, "sp"); len(got) != 1 || got[0] != strings.TrimPrefix(m[1], "sp/") {
		t.Fatalf("savepoints: %v, want only %s", got, m[1])
	}
}
