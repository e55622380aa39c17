package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testSnapshot is checkpoint id with two operators: a keyed one of
// parallelism 2 whose subtasks name shared files, and a source with a
// coordinator, in-flight records and an empty (not nil) state.
func testSnapshot(id int64, shared0, shared1 []string) *Snapshot {
	return &Snapshot{ID: id, Kind: Checkpoint, Timestamp: 1_700_000_000_000 + id, Finished: id%2 == 0,
		Operators: []OperatorState{
			{ID: "source", Name: "Source: numbers", Parallelism: 1, MaxParallelism: 128,
				Coordinator: []byte(fmt.Sprintf("enumerator %d", id)),
				Subtasks:    []SubtaskState{{State: []byte{}, InFlight: []byte(fmt.Sprintf("in flight %d", id))}}},
			{ID: "counts", Name: "KeyedProcess", Parallelism: 2, MaxParallelism: 128,
				Subtasks: []SubtaskState{
					{State: []byte(fmt.Sprintf("state 0 of %d", id)), Shared: shared0},
					{State: []byte(fmt.Sprintf("state 1 of %d", id)), Shared: shared1},
				}},
		}}
}

// writeShared puts shared file name into d through CreateShared.
func writeShared(t *testing.T, d *Dir, name string) {
	t.Helper()
	w, err := d.CreateShared(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(w, "shared file %s", name); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != LockFile { // held by the open Dir
			names = append(names, e.Name())
		}
	}
	return names
}

func TestDirStoreLatestLoad(t *testing.T) {
	path := t.TempDir()
	d, err := OpenDir(path, DirOptions{})
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
	if where != filepath.Join(path, "chk-1") {
		t.Fatalf("Store returned %q", where)
	}
	if got := listDir(t, where); !slices.Equal(got, []string{"_metadata", "op0-0.inflight", "op0-0.state", "op1-0.state", "op1-1.state"}) {
		t.Fatalf("chk-1 holds %v", got)
	}
	check := func(what string, got *Snapshot, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s = %+v\nwant %+v", what, got, want)
		}
	}
	got, at, err := d.Latest()
	check("Latest", got, err)
	if at != where {
		t.Fatalf("Latest at %q, want %q", at, where)
	}
	d.Close()
	d2, err := OpenDir(path, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	got, _, err = d2.Latest()
	check("Latest after reopening", got, err)
	got, err = Load(where)
	check("Load(dir)", got, err)
	got, err = Load(filepath.Join(where, MetadataFile))
	check("Load(_metadata)", got, err)
	info, err := Inspect(where)
	if err != nil {
		t.Fatal(err)
	}
	if info.SharedDir != filepath.Join(path, "shared") || info.Files[1][0].State != "op1-0.state" ||
		!reflect.DeepEqual(info.Files[1][0].Shared, []SharedFile{{"a.sst", 17}, {"b.sst", 17}}) || info.Files[0][0].InFlight != "op0-0.inflight" {
		t.Fatalf("Inspect = %+v", info)
	}
	if _, err := d2.Store(testSnapshot(1, nil, nil)); err == nil {
		t.Fatal("Store of an id stored before succeeded")
	}
}

// TestDirRetainsSharedFiles follows Flink's SharedStateRegistryTest and
// DefaultCompletedCheckpointStoreTest (testAddCheckpointMoreThanMaxRetained):
// a shared file stays while a retained checkpoint names it and goes with the
// last, and the checkpoints beyond the newest Retained are discarded. The
// oracle recomputes, after each Store, the files the retained checkpoints
// name. Every other Store goes through a reopened Dir, so the registry
// rebuilt from the metadata is what decides.
func TestDirRetainsSharedFiles(t *testing.T) {
	path := t.TempDir()
	names := map[int64][2][]string{
		1: {{"a"}, nil},
		2: {{"a", "b"}, {"c"}},
		3: {{"a"}, {"c", "d"}},
		4: {{"d"}, nil},
		5: {nil, {"e"}},
		6: {nil, nil},
		7: {{"b"}, nil}, // named again after 2 was discarded: written anew
	}
	d, err := OpenDir(path, DirOptions{Retained: 2})
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 7; id++ {
		if id%2 == 0 {
			d.Close()
			if d, err = OpenDir(path, DirOptions{Retained: 2}); err != nil {
				t.Fatal(err)
			}
		}
		n := names[id]
		for _, name := range append(slices.Clone(n[0]), n[1]...) {
			if _, err := os.Stat(d.SharedPath(name)); err != nil {
				writeShared(t, d, name)
			}
		}
		if _, err := d.Store(testSnapshot(id, n[0], n[1])); err != nil {
			t.Fatal(err)
		}
		// SharedSize: every distinct file the checkpoint names, and those
		// the checkpoints retained before it (id-2 and id-1) did not name.
		var wantAll, wantAdded int64
		seen := map[string]bool{}
		for _, name := range append(slices.Clone(n[0]), n[1]...) {
			if seen[name] {
				continue
			}
			seen[name] = true
			size := int64(len("shared file ") + len(name))
			wantAll += size
			before := false
			for _, r := range []int64{id - 2, id - 1} {
				before = before || slices.Contains(names[r][0], name) || slices.Contains(names[r][1], name)
			}
			if !before {
				wantAdded += size
			}
		}
		if all, added := d.SharedSize(); all != wantAll || added != wantAdded {
			t.Fatalf("after checkpoint %d SharedSize = %d, %d, want %d, %d", id, all, added, wantAll, wantAdded)
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
		wantDirs = append(wantDirs, "shared")
		slices.Sort(wantDirs)
		if got := listDir(t, path); !slices.Equal(got, wantDirs) {
			t.Fatalf("after checkpoint %d the storage holds %v, want %v", id, got, wantDirs)
		}
		var ws []string
		for name := range wantShared {
			ws = append(ws, name)
		}
		slices.Sort(ws)
		if got := listDir(t, filepath.Join(path, "shared")); !slices.Equal(got, ws) {
			t.Fatalf("after checkpoint %d the shared files are %v, want %v", id, got, ws)
		}
		if got := d.Retained(); !slices.Equal(got, retained) {
			t.Fatalf("after checkpoint %d Retained = %v, want %v", id, got, retained)
		}
	}
	got, _, err := d.Latest()
	if err != nil || !reflect.DeepEqual(got, testSnapshot(7, names[7][0], names[7][1])) {
		t.Fatalf("Latest = %+v, %v", got, err)
	}
}

// damage is a way to damage one file of a stored checkpoint.
type damage struct {
	name string
	file string // in the checkpoint's directory; "shared/x" in the storage's
	do   func(path string) error
	want string // in the reason
}

var damages = []damage{
	{"truncated metadata", "_metadata", truncateBy(3), "checksum mismatch"},
	{"metadata cut to a few bytes", "_metadata", truncateTo(5), "truncated: 5 bytes"},
	{"flipped metadata byte", "_metadata", flipByte(20), "checksum mismatch"},
	{"empty metadata", "_metadata", truncateTo(0), "truncated: 0 bytes"},
	{"missing state file", "op1-1.state", os.Remove, "missing"},
	{"truncated state file", "op1-1.state", truncateBy(1), "truncated: 11 bytes of 12"},
	{"flipped state byte", "op1-1.state", flipByte(3), "checksum mismatch"},
	{"longer state file", "op1-1.state", appendByte, "longer than the 12 bytes"},
	{"flipped in-flight byte", "op0-0.inflight", flipByte(0), "checksum mismatch"},
	{"missing shared file", "shared/only2", os.Remove, "missing"},
	{"flipped shared byte", "shared/only2", flipByte(4), "checksum mismatch"},
}

func truncateBy(n int64) func(string) error {
	return func(path string) error {
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		return os.Truncate(path, st.Size()-n)
	}
}

func truncateTo(n int64) func(string) error {
	return func(path string) error { return os.Truncate(path, n) }
}

func flipByte(at int) func(string) error {
	return func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b[at] ^= 0x40
		return os.WriteFile(path, b, 0o644)
	}
}

func appendByte(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte{'x'})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestDirSkipsTornCheckpoint damages the newest of two checkpoints one file
// at a time: Latest returns the one before, and the reason names the file
// and what is wrong with it; so does a Dir opened afterwards, and Load of
// the damaged checkpoint fails with the same reason.
func TestDirSkipsTornCheckpoint(t *testing.T) {
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			path := t.TempDir()
			d, err := OpenDir(path, DirOptions{Retained: 2})
			if err != nil {
				t.Fatal(err)
			}
			writeShared(t, d, "both")
			writeShared(t, d, "only2")
			one := testSnapshot(1, []string{"both"}, nil)
			if _, err := d.Store(one); err != nil {
				t.Fatal(err)
			}
			chk2, err := d.Store(testSnapshot(2, []string{"both"}, []string{"only2"}))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(chk2, dm.file)
			if strings.HasPrefix(dm.file, "shared/") {
				file = filepath.Join(path, dm.file)
			}
			if err := dm.do(file); err != nil {
				t.Fatal(err)
			}
			wantReason := "checkpoint: " + file + ": " + dm.want
			var reported []string
			d.Close()
			opened, err := OpenDir(path, DirOptions{Retained: 2, OnSkip: func(p string, err error) {
				reported = append(reported, p+" "+err.Error())
			}})
			if err != nil {
				t.Fatal(err)
			}
			for _, dd := range []*Dir{d, opened} {
				got, at, err := dd.Latest()
				if err != nil || !reflect.DeepEqual(got, one) || at != filepath.Join(path, "chk-1") {
					t.Fatalf("Latest = %+v at %q, %v; want checkpoint 1", got, at, err)
				}
				skipped := dd.Skipped()
				if len(skipped) != 1 || !strings.HasPrefix(skipped[0].Error(), wantReason) || !errors.Is(skipped[0], ErrCorrupt) {
					t.Fatalf("Skipped = %v, want %q", skipped, wantReason)
				}
			}
			if len(reported) != 2 || !strings.HasPrefix(reported[0], chk2+" "+wantReason) {
				t.Fatalf("OnSkip got %q, want twice %q", reported, chk2+" "+wantReason)
			}
			if _, err := Load(chk2); err == nil || !strings.HasPrefix(err.Error(), wantReason) {
				t.Fatalf("Load of the damaged checkpoint: %v, want %q", err, wantReason)
			}
			// The job restored from 1 goes on with 2 again: the damaged
			// directory is replaced and the shared file only it named is
			// rewritten by the runtime.
			writeShared(t, opened, "only2")
			if _, err := opened.Store(testSnapshot(2, nil, []string{"only2"})); err != nil {
				t.Fatal(err)
			}
			if got, _, err := opened.Latest(); err != nil || got.ID != 2 || len(opened.Skipped()) != 0 {
				t.Fatalf("Latest after storing 2 again = %v, %v, skipped %v", got, err, opened.Skipped())
			}
		})
	}
}

// TestDirNoIntactCheckpoint: when the only checkpoint is damaged, Latest
// returns none and the reason, naming the file.
func TestDirNoIntactCheckpoint(t *testing.T) {
	path := t.TempDir()
	d, err := OpenDir(path, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chk, err := d.Store(testSnapshot(3, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := flipByte(1)(filepath.Join(chk, "op1-0.state")); err != nil {
		t.Fatal(err)
	}
	s, _, err := d.Latest()
	want := "checkpoint: " + filepath.Join(chk, "op1-0.state") + ": checksum mismatch"
	if s != nil || err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Latest = %v, %v; want no snapshot and %q", s, err, want)
	}
}

// TestDirRemovesLeftovers: what a crash leaves (a checkpoint directory
// without metadata, temporary files, shared files no checkpoint names) is
// removed on open; complete checkpoints and the shared files they name
// stay.
func TestDirRemovesLeftovers(t *testing.T) {
	path := t.TempDir()
	d, err := OpenDir(path, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeShared(t, d, "kept")
	if _, err := d.Store(testSnapshot(1, []string{"kept"}, nil)); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"chk-2/op0-0.state":   "half",
		"chk-2/_metadata.tmp": "half",
		"chk-3/x":             "",
		"shared/.new.tmp":     "half",
		"shared/orphan":       "of checkpoint 2",
		"unrelated.txt":       "not ours",
	} {
		p := filepath.Join(path, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	if _, err := OpenDir(path, DirOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := listDir(t, path), []string{"chk-1", "shared", "unrelated.txt"}; !slices.Equal(got, want) {
		t.Fatalf("storage holds %v, want %v", got, want)
	}
	if got := listDir(t, filepath.Join(path, "shared")); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("shared holds %v", got)
	}
}

func TestDirRefuses(t *testing.T) {
	d, err := OpenDir(t.TempDir(), DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Snapshot{
		"missing shared file": testSnapshot(1, []string{"nope"}, nil),
		"bad shared name":     testSnapshot(1, []string{"../x"}, nil),
		"hidden shared name":  testSnapshot(1, []string{".x"}, nil),
		"subtasks":            {ID: 1, Operators: []OperatorState{{ID: "x", Parallelism: 2, Subtasks: make([]SubtaskState, 1)}}},
		"savepoint":           {ID: 1, Kind: Savepoint},
	} {
		if _, err := d.Store(s); err == nil {
			t.Errorf("Store with %s succeeded", name)
		}
	}
	if got := listDir(t, d.Path()); !slices.Equal(got, []string{"shared"}) {
		t.Fatalf("refused stores left %v", got)
	}
	if _, err := d.CreateShared("a/b"); err == nil {
		t.Fatal("CreateShared of a path succeeded")
	}
}
