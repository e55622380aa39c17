package sink

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/text"
)

// Two subtasks write over three checkpoints and a bounded end: after the
// commits every record is in exactly one committed file, each checkpoint
// that saw records closed one part per subtask, and no hidden file is left.
func TestFileSinkExactlyOnce(t *testing.T) {
	for _, f := range fileFormats {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			s := f.sink(dir)
			ws := []*FileWriter[rec]{must[*FileWriter[rec]](t)(s.Writer(0, 2)), must[*FileWriter[rec]](t)(s.Writer(1, 2))}
			var want []rec
			next := 0
			for cp := int64(1); cp <= 3; cp++ {
				for _, w := range ws {
					for range 2 {
						b := recs(next, 5)
						next += 5
						check(t, w.Write(b))
						want = append(want, b...)
					}
				}
				var cs []Committable
				for _, w := range ws {
					c := must[[]Committable](t)(w.PrepareCommit(cp))
					if len(c) != 1 || c[0].Checkpoint != cp {
						t.Fatalf("checkpoint %d: committables %+v, want one of checkpoint %d", cp, c, cp)
					}
					cs = append(cs, c...)
				}
				// nothing of this checkpoint is visible before Commit
				committed, _ := names(t, dir)
				if len(committed) != 2*int(cp-1) {
					t.Fatalf("before commit %d: committed files %v", cp, committed)
				}
				check(t, Commit(cs))
			}
			b := recs(next, 3)
			want = append(want, b...)
			check(t, ws[0].Write(b))
			for _, w := range ws {
				cs := must[[]Committable](t)(w.Finish())
				check(t, Commit(cs))
			}
			committed, hidden := names(t, dir)
			wantNames := []string{"part-0-0", "part-0-1", "part-0-2", "part-0-3", "part-1-0", "part-1-1", "part-1-2"}
			for i := range wantNames {
				wantNames[i] += s.cfg.names.PartSuffix
			}
			if !slices.Equal(committed, wantNames) || len(hidden) != 0 {
				t.Errorf("files %v and hidden %v, want %v and none", committed, hidden, wantNames)
			}
			sameRecords(t, f.read(t, dir), lines(want))
		})
	}
}

// Commit is idempotent: committing the same committables again (as a
// restored job does) changes nothing and is no error; a pending file that
// vanished without being committed is an error naming the file.
func TestCommitTwice(t *testing.T) {
	for _, f := range fileFormats {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			w := must[*FileWriter[rec]](t)(f.sink(dir).Writer(0, 1))
			check(t, w.Write(recs(0, 10)))
			cs := must[[]Committable](t)(w.PrepareCommit(1))
			check(t, Commit(cs))
			final := cs[0].Final
			before, _ := os.ReadFile(final)
			check(t, Commit(cs))
			after, _ := os.ReadFile(final)
			if string(before) != string(after) || len(before) == 0 {
				t.Error("second commit changed the committed file")
			}
			sameRecords(t, f.read(t, dir), lines(recs(0, 10)))
			check(t, w.Abort())
			committed, hidden := names(t, dir)
			if len(committed) != 1 || len(hidden) != 0 {
				t.Errorf("abort after commit: files %v, hidden %v", committed, hidden)
			}
			lost := Committable{Pending: filepath.Join(dir, ".part-0-9.pending"), Final: filepath.Join(dir, "part-0-9")}
			err := Commit([]Committable{lost})
			if err == nil || !strings.HasPrefix(err.Error(), "stream/sink:") || !strings.Contains(err.Error(), "part-0-9") {
				t.Errorf("commit of a lost pending file: %v", err)
			}
		})
	}
}

// A crash after a checkpoint: the sink is abandoned after PrepareCommit(1)
// and Snapshot, with a pending part of checkpoint 2 (which never completes)
// and an in-progress part. A sink restored from checkpoint 1's state commits
// its committables (again, for the run where they had been committed),
// removes what the failed run left, and the replayed records then appear
// exactly once; no hidden file is left and no name is reused.
func TestCrashRestore(t *testing.T) {
	for _, f := range fileFormats {
		for _, committedBefore := range []bool{false, true} {
			name := f.name
			if committedBefore {
				name += "/committed-before-crash"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				s := f.sink(dir)
				a, b, c := recs(0, 7), recs(100, 5), recs(200, 4)
				w1 := must[*FileWriter[rec]](t)(s.Writer(0, 1))
				check(t, w1.Write(a))
				cs1 := must[[]Committable](t)(w1.PrepareCommit(1))
				state := w1.Snapshot()
				encoded := make([][]byte, len(cs1))
				for i, c := range cs1 {
					encoded[i] = must[[]byte](t)(c.MarshalBinary())
				}
				if committedBefore {
					check(t, Commit(cs1))
				}
				check(t, w1.Write(b))
				must[[]Committable](t)(w1.PrepareCommit(2))
				check(t, w1.Write(c))
				_, hidden := names(t, dir)
				if len(hidden) < 2 {
					t.Fatalf("before the crash: hidden files %v, want a pending and an in-progress part", hidden)
				}
				abandon(w1)

				w2 := must[*FileWriter[rec]](t)(s.Writer(0, 1, state))
				var restored []Committable
				for _, e := range encoded {
					var c Committable
					check(t, c.UnmarshalBinary(e))
					restored = append(restored, c)
				}
				check(t, Commit(must[[]Committable](t)(s.Confine(restored))))
				committed, hidden := names(t, dir)
				sfx := s.cfg.names.PartSuffix
				if !slices.Equal(committed, []string{"part-0-0" + sfx}) || len(hidden) != 0 {
					t.Fatalf("after restore: files %v, hidden %v; want part-0-0 only", committed, hidden)
				}
				check(t, w2.Write(b))
				check(t, w2.Write(c))
				check(t, Commit(must[[]Committable](t)(w2.Finish())))
				committed, hidden = names(t, dir)
				if !slices.Equal(committed, []string{"part-0-0" + sfx, "part-0-1" + sfx}) || len(hidden) != 0 {
					t.Errorf("files %v, hidden %v; want part-0-0 part-0-1", committed, hidden)
				}
				sameRecords(t, f.read(t, dir), lines(slices.Concat(a, b, c)))
			})
		}
	}
}

// abandon drops a writer as a crash would, closing only its file handle so
// that the test leaks none.
func abandon[T any](w *FileWriter[T]) {
	if p := w.cur; p != nil && p.f != nil {
		p.f.Close()
	}
}

// Abort leaves nothing: no in-progress part, no pending part.
func TestAbortLeavesNothing(t *testing.T) {
	for _, f := range fileFormats {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			w := must[*FileWriter[rec]](t)(f.sink(dir).Writer(0, 1))
			check(t, w.Write(recs(0, 5)))
			must[[]Committable](t)(w.PrepareCommit(1))
			check(t, w.Write(recs(5, 5)))
			check(t, w.Abort())
			ents, err := os.ReadDir(dir)
			check(t, err)
			if len(ents) != 0 {
				t.Errorf("after Abort the directory holds %d files (%s)", len(ents), ents[0].Name())
			}
			if err := w.Write(recs(0, 1)); err == nil || !strings.HasPrefix(err.Error(), "stream/sink:") {
				t.Errorf("write after abort: %v", err)
			}
		})
	}
}

// AbortKeeping removes what Abort removes except the pending parts it is
// given (a checkpoint's committables), which a restored job then commits.
func TestAbortKeepingCheckpointParts(t *testing.T) {
	dir := t.TempDir()
	w := must[*FileWriter[string]](t)(Text(dir).Writer(0, 1))
	check(t, w.Write([]string{"a"}))
	held := must[[]Committable](t)(w.PrepareCommit(1))
	check(t, w.Write([]string{"b"}))
	must[[]Committable](t)(w.PrepareCommit(2))
	check(t, w.Write([]string{"c"}))
	check(t, w.AbortKeeping(held))
	if c, h := names(t, dir); len(c) != 0 || len(h) != 1 || h[0] != filepath.Base(held[0].Pending) {
		t.Fatalf("after AbortKeeping: committed %v, hidden %v; want only %s", c, h, held[0].Pending)
	}
	check(t, Commit(held))
	if c, h := names(t, dir); len(c) != 1 || len(h) != 0 {
		t.Fatalf("after the commit: committed %v, hidden %v", c, h)
	}
}

// A restore at another parallelism continues after the highest counter of
// all states and removes the in-progress parts of the old subtasks mapped
// to it: no name is used twice.
func TestRestoreRescaleNoCollision(t *testing.T) {
	dir := t.TempDir()
	s := Text(dir)
	var states [][]byte
	for i := range 2 {
		w := must[*FileWriter[string]](t)(s.Writer(i, 2))
		for cp := range 2 + 2*i { // subtask 0 at counter 2, subtask 1 at 4
			check(t, w.Write([]string{"x"}))
			check(t, Commit(must[[]Committable](t)(w.PrepareCommit(int64(cp)))))
		}
		states = append(states, w.Snapshot())
		check(t, w.Write([]string{"lost"}))
		abandon(w)
	}
	w := must[*FileWriter[string]](t)(s.Writer(0, 1, states...))
	_, hidden := names(t, dir)
	if len(hidden) != 0 {
		t.Errorf("restored at parallelism 1: hidden files %v left", hidden)
	}
	check(t, w.Write([]string{"y"}))
	check(t, Commit(must[[]Committable](t)(w.Finish())))
	committed, _ := names(t, dir)
	want := []string{"part-0-0", "part-0-1", "part-0-4", "part-1-0", "part-1-1", "part-1-2", "part-1-3"}
	if !slices.Equal(committed, want) {
		t.Errorf("files %v, want %v", committed, want)
	}
	if _, err := s.Writer(0, 1, []byte{9}); err == nil || !strings.HasPrefix(err.Error(), "stream/sink:") {
		t.Errorf("restore from a malformed state: %v", err)
	}
}

// OutputFileConfig sets the prefix and suffix of every name, hidden or not.
func TestOutputFileConfig(t *testing.T) {
	dir := t.TempDir()
	w := must[*FileWriter[string]](t)(Text(dir, WithOutputFileConfig(OutputFileConfig{PartPrefix: "out", PartSuffix: ".txt"})).Writer(3, 4))
	check(t, w.Write([]string{"a"}))
	if _, hidden := names(t, dir); !slices.Equal(hidden, []string{".out-3-0.txt.inprogress." + w.nonce}) {
		t.Errorf("in-progress %v", hidden)
	}
	cs := must[[]Committable](t)(w.PrepareCommit(1))
	if _, hidden := names(t, dir); !slices.Equal(hidden, []string{".out-3-0.txt.pending." + w.nonce}) {
		t.Errorf("pending %v", hidden)
	}
	check(t, Commit(cs))
	if committed, _ := names(t, dir); !slices.Equal(committed, []string{"out-3-0.txt"}) {
		t.Errorf("committed %v", committed)
	}
	if _, err := Text(dir, WithOutputFileConfig(OutputFileConfig{PartPrefix: "a/b"})).Writer(0, 1); err == nil {
		t.Error("a prefix with a separator: no error")
	}
}

// A restore from an older checkpoint removes the parts committed after it
// (a later checkpoint or savepoint committed them; their records are
// written again) and says so; a new job writing into the same directory
// continues after the parts committed there: Commit never replaces a
// committed file.
func TestNoCommittedNameReused(t *testing.T) {
	dir := t.TempDir()
	var notices []string
	s := Text(dir, WithNotices(func(m string) { notices = append(notices, m) }))
	w := must[*FileWriter[string]](t)(s.Writer(0, 1))
	check(t, w.Write([]string{"first"}))
	check(t, Commit(must[[]Committable](t)(w.PrepareCommit(1))))
	old := w.Snapshot() // at counter 1, after checkpoint 1
	for cp := range int64(3) {
		check(t, w.Write([]string{"later"}))
		check(t, Commit(must[[]Committable](t)(w.PrepareCommit(cp+2))))
	}
	for _, restored := range [][][]byte{{old}, nil} {
		w := must[*FileWriter[string]](t)(s.Writer(0, 1, restored...))
		check(t, w.Write([]string{"again"}))
		check(t, Commit(must[[]Committable](t)(w.Finish())))
	}
	committed, _ := names(t, dir)
	want := []string{"part-0-0", "part-0-1", "part-0-2"}
	if !slices.Equal(committed, want) {
		t.Errorf("files %v, want %v", committed, want)
	}
	src, err := text.Open(dir)
	sameRecords(t, readAll(t, src, err, func(s string) string { return s }), []string{"first", "again", "again"})
	if len(notices) != 1 || !strings.Contains(notices[0], "removed 3 committed part(s)") ||
		!strings.Contains(notices[0], "part-0-1, part-0-2, part-0-3") || !strings.Contains(notices[0], dir) {
		t.Errorf("notices %q, want one naming the 3 parts removed", notices)
	}
}

// Confine accepts the sink's own part names (and the paths older
// checkpoints stored in its directory) and joins them to the directory; it
// refuses anything else, naming the entry.
func TestConfine(t *testing.T) {
	dir := t.TempDir()
	s := Text(dir, WithOutputFileConfig(OutputFileConfig{PartSuffix: ".txt"}))
	ok := []Committable{
		{Checkpoint: 1, Pending: ".part-0-3.txt.pending", Final: "part-0-3.txt"},
		{Checkpoint: 2, Pending: filepath.Join(dir, ".part-1-0.txt.pending"), Final: filepath.Join(dir, "part-1-0.txt")},
	}
	got, err := s.Confine(ok)
	if err != nil {
		t.Fatal(err)
	}
	want := []Committable{
		{Checkpoint: 1, Pending: filepath.Join(dir, ".part-0-3.txt.pending"), Final: filepath.Join(dir, "part-0-3.txt")},
		{Checkpoint: 2, Pending: filepath.Join(dir, ".part-1-0.txt.pending"), Final: filepath.Join(dir, "part-1-0.txt")},
	}
	if !slices.Equal(got, want) {
		t.Errorf("confined %v, want %v", got, want)
	}
	other := t.TempDir()
	// what CheckCommittable, which knows no directory nor names, flags too
	inspectFlags := map[string]bool{"pending elsewhere": true, "climbing": true, "another part's file": true, "hidden final": true, "dot": true}
	for name, c := range map[string]Committable{
		"final elsewhere":     {Pending: ".part-0-3.txt.pending", Final: filepath.Join(other, "part-0-3.txt")},
		"pending elsewhere":   {Pending: filepath.Join(other, ".part-0-3.txt.pending"), Final: "part-0-3.txt"},
		"climbing":            {Pending: ".part-0-3.txt.pending", Final: "../part-0-3.txt"},
		"not a part":          {Pending: ".authorized_keys.pending", Final: "authorized_keys"},
		"another suffix":      {Pending: ".part-0-3.pending", Final: "part-0-3"},
		"another part's file": {Pending: ".part-0-4.txt.pending", Final: "part-0-3.txt"},
		"hidden final":        {Pending: "..part-0-3.txt.pending", Final: ".part-0-3.txt"},
		"dot":                 {Pending: ".", Final: "part-0-3.txt"},
	} {
		_, err := s.Confine([]Committable{ok[0], c})
		if !errors.Is(err, ErrNotOwnPart) || !strings.Contains(err.Error(), "entry 1 ") || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: %v, want ErrNotOwnPart naming entry 1 and %s", name, err, dir)
		}
		var u interface{ Unrecoverable() bool }
		if !errors.As(err, &u) || !u.Unrecoverable() {
			t.Errorf("%s: the refusal is not marked unrecoverable", name)
		}
		if cerr := CheckCommittable(c); inspectFlags[name] && cerr == nil {
			t.Errorf("%s: CheckCommittable accepts it", name)
		}
	}
	if err := CheckCommittable(ok[0]); err != nil {
		t.Errorf("CheckCommittable of a good entry: %v", err)
	}
}

// TextOf writes records as Flink's SimpleStringEncoder: toString and a line
// end.
func TestTextOf(t *testing.T) {
	dir := t.TempDir()
	w := must[*FileWriter[wordCount]](t)(TextOf[wordCount](dir).Writer(0, 1))
	check(t, w.Write([]wordCount{{"to", 1}, {"be", 2}}))
	check(t, Commit(must[[]Committable](t)(w.Finish())))
	b, err := os.ReadFile(filepath.Join(dir, "part-0-0"))
	check(t, err)
	if string(b) != "(to,1)\n(be,2)\n" {
		t.Errorf("got %q", b)
	}
}

// A fresh writer removes the hidden parts its subtask's index left in a
// killed run, and only those, and writes from counter 0 again.
func TestFreshWriterRemovesHiddenLeftovers(t *testing.T) {
	dir := t.TempDir()
	s := Text(dir)
	w := must[*FileWriter[string]](t)(s.Writer(0, 2))
	check(t, w.Write([]string{"lost"}))
	must[[]Committable](t)(w.PrepareCommit(1))
	check(t, w.Write([]string{"lost too"}))
	other := must[*FileWriter[string]](t)(s.Writer(1, 2))
	check(t, other.Write([]string{"other"}))
	abandon(w) // killed
	if _, hidden := names(t, dir); len(hidden) != 3 {
		t.Fatalf("hidden %v, want a pending and two in-progress parts", hidden)
	}
	w2 := must[*FileWriter[string]](t)(s.Writer(0, 2))
	if _, hidden := names(t, dir); !slices.Equal(hidden, []string{".part-1-0.inprogress." + other.nonce}) {
		t.Fatalf("hidden %v, want subtask 1's only", hidden)
	}
	check(t, w2.Write([]string{"again"}))
	check(t, Commit(must[[]Committable](t)(w2.Finish())))
	if committed, _ := names(t, dir); !slices.Equal(committed, []string{"part-0-0"}) {
		t.Errorf("committed %v", committed)
	}
	check(t, other.Abort())
}

// Two writers of one subtask restored from the same checkpoint, as a new
// attempt and a zombie attempt of the old one on a TaskManager thought
// lost: each writes, prepares a checkpoint and, the zombie, aborts. Their
// hidden files never share a name, so neither overwrites nor removes the
// other's, and the new attempt's commit publishes its own records.
func TestZombieWriterLeavesTheNewOnesFiles(t *testing.T) {
	dir := t.TempDir()
	s := Text(dir)
	first := must[*FileWriter[string]](t)(s.Writer(0, 1))
	check(t, first.Write([]string{"before"}))
	check(t, Commit(must[[]Committable](t)(first.PrepareCommit(1))))
	state := first.Snapshot()

	fresh := must[*FileWriter[string]](t)(s.Writer(0, 1, state))
	zombie := must[*FileWriter[string]](t)(s.Writer(0, 1, state))
	check(t, fresh.Write([]string{"fresh"}))
	check(t, zombie.Write([]string{"zombie"}))
	cs := must[[]Committable](t)(fresh.PrepareCommit(2))
	check(t, zombie.Write([]string{"zombie again"}))
	must[[]Committable](t)(zombie.PrepareCommit(2))
	if _, hidden := names(t, dir); len(hidden) != 2 {
		t.Fatalf("hidden %v, want the pending parts of both writers", hidden)
	}
	check(t, zombie.Abort())
	if _, hidden := names(t, dir); !slices.Equal(hidden, []string{filepath.Base(cs[0].Pending)}) {
		t.Fatalf("after the zombie's abort: hidden %v, want the fresh writer's pending part %s", hidden, filepath.Base(cs[0].Pending))
	}
	check(t, Commit(cs))
	b, err := os.ReadFile(cs[0].Final)
	check(t, err)
	if string(b) != "fresh\n" {
		t.Errorf("the committed part holds %q, want the fresh writer's records", b)
	}
}

// Confine takes pending names with and without a nonce, and nothing else.
func TestConfineNonce(t *testing.T) {
	dir := t.TempDir()
	s := Text(dir)
	for _, tc := range []struct {
		pending string
		ok      bool
	}{
		{".part-0-1.pending", true},
		{".part-0-1.pending.0123456789abcdef", true},
		{".part-0-1.pending.0123456789abcde", false},
		{".part-0-1.pending.0123456789abcdefa", false},
		{".part-0-1.pendingx0123456789abcdef", false},
		{".part-0-2.pending.0123456789abcdef", false},
	} {
		_, err := s.Confine([]Committable{{Checkpoint: 1, Pending: tc.pending, Final: "part-0-1"}})
		if (err == nil) != tc.ok {
			t.Errorf("Confine(%s): %v, want ok %v", tc.pending, err, tc.ok)
		}
	}
}

// A run that created the output directory and failed removes it when it
// left it empty; on a cluster, that run may be a zombie attempt whose
// successor writes there. A writer whose directory went while it held no
// open part creates it again for its next part.
func TestDirectoryRemovedWhileEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w := must[*FileWriter[string]](t)(Text(dir).Writer(0, 1))
	check(t, w.Write([]string{"a"}))
	check(t, Commit(must[[]Committable](t)(w.PrepareCommit(1))))
	check(t, os.Remove(filepath.Join(dir, "part-0-0")))
	check(t, os.Remove(dir)) // empty: the other run's cleanup
	check(t, w.Write([]string{"b"}))
	check(t, Commit(must[[]Committable](t)(w.PrepareCommit(2))))
	b, err := os.ReadFile(filepath.Join(dir, "part-0-1"))
	check(t, err)
	if string(b) != "b\n" {
		t.Fatalf("part-0-1 holds %q, want the record written after the directory went", b)
	}
}
