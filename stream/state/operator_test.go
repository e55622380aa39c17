package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
)

// opStore returns a store with lists "split" and "union" of strings and a
// broadcast state "rules", optionally restored from snap.
func opStore(t testing.TB, snap []byte) (*OperatorStore, ListState[string], ListState[string], *BroadcastState[string, int]) {
	t.Helper()
	s := NewOperatorStore(OperatorOptions{Name: "op"})
	if snap != nil {
		if err := s.Restore(bytes.NewReader(snap)); err != nil {
			t.Fatal(err)
		}
	}
	split, err := GetOperatorListState(s, ListDescriptor[string]{Name: "split"})
	if err != nil {
		t.Fatal(err)
	}
	union, err := GetUnionListState(s, ListDescriptor[string]{Name: "union"})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := GetBroadcastState(s, MapDescriptor[string, int]{Name: "rules"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Dispose(); err != nil {
			t.Error(err)
		}
	})
	return s, split, union, rules
}

func opSnap(t testing.TB, s *OperatorStore) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOperatorStateRescale follows Flink's OperatorStateRestoreTest and
// OperatorStateBackendTest.testSnapshotRestoreSync: typed states written by
// two subtasks, snapshotted, repartitioned to 1, 2 and 3 subtasks and
// restored, give back the elements by Flink's rules.
func TestOperatorStateRescale(t *testing.T) {
	var snaps [][]byte
	for i := range 2 {
		s, split, union, rules := opStore(t, nil)
		for j := range 3 {
			split.Add(fmt.Sprintf("s%d.%d", i, j))
		}
		union.Add(fmt.Sprintf("u%d", i))
		rules.Put("r", 7)
		rules.Put("q", 1)
		snaps = append(snaps, opSnap(t, s))
	}
	splitAll := []string{"s0.0", "s0.1", "s0.2", "s1.0", "s1.1", "s1.2"}
	want := map[int][][]string{
		1: {splitAll},
		2: {splitAll[:3], splitAll[3:]}, // same parallelism: each keeps its own
		3: {splitAll[:2], splitAll[2:4], splitAll[4:]},
		4: {splitAll[:2], splitAll[2:4], splitAll[4:5], splitAll[5:]},
	}
	for n, wantSplit := range want {
		parts, err := RepartitionOperatorState(snaps, n)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := range n {
			_, split, union, rules := opStore(t, parts[i])
			if g := split.Get(); !slices.Equal(g, wantSplit[i]) {
				t.Errorf("%d subtasks: subtask %d split %v, want %v", n, i, g, wantSplit[i])
			}
			got = append(got, split.Get()...)
			if g := union.Get(); !slices.Equal(g, []string{"u0", "u1"}) {
				t.Errorf("%d subtasks: subtask %d union %v", n, i, g)
			}
			if v, _ := rules.Get("r"); v != 7 || rules.Len() != 2 {
				t.Errorf("%d subtasks: subtask %d broadcast r=%d, %d entries", n, i, v, rules.Len())
			}
		}
		if !slices.Equal(got, splitAll) {
			t.Errorf("%d subtasks: split elements %v", n, got)
		}
	}
}

// listSnap writes a snapshot of the given split, union and broadcast states
// with elements named after the state.
func listSnap(t testing.TB, split, union map[string]int, bcast map[string]int) []byte {
	t.Helper()
	s := NewOperatorStore(OperatorOptions{})
	defer s.Dispose()
	for name, n := range split {
		l, _ := GetOperatorListState(s, ListDescriptor[string]{Name: name})
		for j := range n {
			l.Add(fmt.Sprint(name, ":", j))
		}
	}
	for name, n := range union {
		l, _ := GetUnionListState(s, ListDescriptor[string]{Name: name})
		for j := range n {
			l.Add(fmt.Sprint(name, ":", j))
		}
	}
	for name, n := range bcast {
		b, _ := GetBroadcastState(s, MapDescriptor[string, int]{Name: name})
		for j := range n {
			b.Put(fmt.Sprint(j), j)
		}
	}
	return opSnap(t, s)
}

// counts parses a repartitioned snapshot into state name -> entries.
func counts(t testing.TB, b []byte) map[string]int {
	t.Helper()
	secs, err := readOpSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, s := range secs {
		m[s.name] = len(s.entries)
	}
	return m
}

// TestRepartitionFlinkCases ports the cases of Flink's
// StateAssignmentOperationTest (testRepartitionSplitDistributeStates,
// testRepartitionUnionState, testRepartitionBroadcastState,
// testRepartitionBroadcastStateWithNullSubtaskState and
// testReDistributeCombinedPartitionableStates, each from parallelism 2 to 3,
// 1 and 2), with the exact assignment of RoundRobinOperatorStateRepartitioner
// worked out by hand as the expectation.
func TestRepartitionFlinkCases(t *testing.T) {
	type m = map[string]int
	cases := []struct {
		name string
		old  [][]byte
		want map[int][]m // new parallelism -> per subtask state -> entries
	}{
		{
			name: "split distribute",
			old:  [][]byte{listSnap(t, m{"t-1": 2}, nil, nil), listSnap(t, m{"t-2": 2}, nil, nil)},
			want: map[int][]m{
				// t-1 gives runs 1,1,0 from subtask 0; t-2 starts at subtask 2
				3: {{"t-1": 1, "t-2": 1}, {"t-1": 1}, {"t-2": 1}},
				1: {{"t-1": 2, "t-2": 2}},
				2: {{"t-1": 2}, {"t-2": 2}},
			},
		},
		{
			name: "union",
			old:  [][]byte{listSnap(t, nil, m{"t-3": 1, "t-4": 2}, nil), listSnap(t, nil, m{"t-3": 1}, nil)},
			want: map[int][]m{
				3: {{"t-3": 2, "t-4": 2}, {"t-3": 2, "t-4": 2}, {"t-3": 2, "t-4": 2}},
				1: {{"t-3": 2, "t-4": 2}},
				2: {{"t-3": 2, "t-4": 2}, {"t-3": 2, "t-4": 2}},
			},
		},
		{
			name: "broadcast",
			old:  [][]byte{listSnap(t, nil, nil, m{"t-5": 3, "t-6": 3}), listSnap(t, nil, nil, m{"t-5": 3, "t-6": 3})},
			want: map[int][]m{
				3: {{"t-5": 3, "t-6": 3}, {"t-5": 3, "t-6": 3}, {"t-5": 3, "t-6": 3}},
				1: {{"t-5": 3, "t-6": 3}},
				2: {{"t-5": 3, "t-6": 3}, {"t-5": 3, "t-6": 3}},
			},
		},
		{
			name: "broadcast with a subtask without state",
			old:  [][]byte{listSnap(t, nil, nil, m{"t-5": 3, "t-6": 3}), nil},
			want: map[int][]m{
				3: {{"t-5": 3, "t-6": 3}, {"t-5": 3, "t-6": 3}, {"t-5": 3, "t-6": 3}},
				1: {{"t-5": 3, "t-6": 3}},
				2: {{"t-5": 3, "t-6": 3}, {"t-5": 3, "t-6": 3}},
			},
		},
		{
			name: "combined",
			old: [][]byte{
				listSnap(t, m{"t-3": 2}, m{"t-1": 1, "t-2": 2}, m{"t-4": 3, "t-5": 3, "t-6": 3}),
				listSnap(t, nil, m{"t-1": 1}, m{"t-4": 3, "t-5": 3, "t-6": 3}),
			},
			want: map[int][]m{
				3: {
					{"t-1": 2, "t-2": 2, "t-3": 1, "t-4": 3, "t-5": 3, "t-6": 3},
					{"t-1": 2, "t-2": 2, "t-3": 1, "t-4": 3, "t-5": 3, "t-6": 3},
					{"t-1": 2, "t-2": 2, "t-4": 3, "t-5": 3, "t-6": 3},
				},
				1: {{"t-1": 2, "t-2": 2, "t-3": 2, "t-4": 3, "t-5": 3, "t-6": 3}},
				2: {
					{"t-1": 2, "t-2": 2, "t-3": 2, "t-4": 3, "t-5": 3, "t-6": 3},
					{"t-1": 2, "t-2": 2, "t-4": 3, "t-5": 3, "t-6": 3},
				},
			},
		},
	}
	for _, c := range cases {
		for n, want := range c.want {
			parts, err := RepartitionOperatorState(c.old, n)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if got := counts(t, parts[i]); fmt.Sprint(got) != fmt.Sprint(want[i]) {
					t.Errorf("%s, 2 -> %d: subtask %d got %v, want %v", c.name, n, i, got, want[i])
				}
			}
		}
	}
}

// TestRepartitionSplitBalance checks the round-robin split against its
// defining properties, on random states: every state's elements come out
// once each and in order when the runs are read from the subtask the state
// starts at; runs of one state differ by at most one element; and, because
// each state starts its longer runs where the one before ran out of them,
// the subtasks' totals over all states differ by at most one.
func TestRepartitionSplitBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		oldP, n := 1+r.IntN(4), 1+r.IntN(6)
		if oldP == n {
			n++
		}
		states := 1 + r.IntN(4)
		old := make([][]byte, oldP)
		want := map[string][]string{}
		for i := range old {
			s := NewOperatorStore(OperatorOptions{})
			for k := range states {
				name := fmt.Sprint("s", k)
				l, _ := GetOperatorListState(s, ListDescriptor[string]{Name: name})
				for j := range r.IntN(7) {
					v := fmt.Sprint(i, ".", j)
					l.Add(v)
					want[name] = append(want[name], v)
				}
			}
			old[i] = opSnap(t, s)
			s.Dispose()
		}
		parts, err := RepartitionOperatorState(old, n)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][][]string{}
		total := make([]int, n)
		for i, p := range parts {
			s, _, _, _ := opStore(t, nil)
			if err := s.Restore(bytes.NewReader(p)); err != nil {
				t.Fatal(err)
			}
			for k := range states {
				name := fmt.Sprint("s", k)
				l, _ := GetOperatorListState(s, ListDescriptor[string]{Name: name})
				if got[name] == nil {
					got[name] = make([][]string, n)
				}
				got[name][i] = l.Get()
				total[i] += len(l.Get())
			}
		}
		for name, runs := range got {
			lo, hi := len(want[name]), 0
			for _, run := range runs {
				lo, hi = min(lo, len(run)), max(hi, len(run))
			}
			if hi-lo > 1 {
				t.Fatalf("%d -> %d: state %s runs %v", oldP, n, name, runs)
			}
			// the runs, read from some subtask on, give the elements in order
			found := false
			for st := range n {
				var cat []string
				for k := range n {
					cat = append(cat, runs[(st+k)%n]...)
				}
				found = found || slices.Equal(cat, want[name])
			}
			if !found {
				t.Fatalf("%d -> %d: state %s runs %v, elements %v", oldP, n, name, runs, want[name])
			}
		}
		if slices.Max(total)-slices.Min(total) > 1 {
			t.Fatalf("%d -> %d: totals per subtask %v", oldP, n, total)
		}
	}
}

// TestOperatorStatePendingAndKinds: a restore before registration keeps a
// state's section, which a snapshot writes again and a later registration
// takes; a name registered as another distribution or type is an error.
func TestOperatorStatePendingAndKinds(t *testing.T) {
	snap := listSnap(t, map[string]int{"a": 2}, map[string]int{"b": 1}, nil)
	s := NewOperatorStore(OperatorOptions{})
	defer s.Dispose()
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if s.MemoryUsed() == 0 {
		t.Error("pending sections are not counted")
	}
	if !bytes.Equal(opSnap(t, s), snap) {
		t.Error("pending sections are not written again as read")
	}
	if _, err := GetUnionListState(s, ListDescriptor[string]{Name: "a"}); err == nil {
		t.Error("a split list restored as a union list")
	}
	a, err := GetOperatorListState(s, ListDescriptor[string]{Name: "b"})
	if err == nil {
		t.Errorf("a union list restored as a split list: %v", a.Get())
	}
	s2 := NewOperatorStore(OperatorOptions{})
	defer s2.Dispose()
	if err := s2.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	l, err := GetOperatorListState(s2, ListDescriptor[string]{Name: "a"})
	if err != nil || !slices.Equal(l.Get(), []string{"a:0", "a:1"}) {
		t.Fatalf("restored %v, %v", l.Get(), err)
	}
	if _, err := GetOperatorListState(s2, ListDescriptor[int]{Name: "a"}); err == nil {
		t.Error("a list of strings asked as a list of ints")
	}
	if _, err := GetBroadcastState(s2, MapDescriptor[string, int]{Name: "a"}); err == nil {
		t.Error("a list asked as a broadcast state")
	}
	if _, err := GetOperatorListState(s2, ListDescriptor[string]{Name: "t", TTL: TTLConfig{TTL: 1}}); err == nil {
		t.Error("TTL on operator state")
	}
}

// TestOperatorStateMemory: the states' bytes count against the budget, the
// error says so, and clearing returns them.
func TestOperatorStateMemory(t *testing.T) {
	mgr := memory.MustNewManager(memory.Options{Budget: 64 << 10})
	s := NewOperatorStore(OperatorOptions{Name: "src", Memory: mgr})
	l, _ := GetOperatorListState(s, ListDescriptor[string]{Name: "l"})
	b, _ := GetBroadcastState(s, MapDescriptor[int, string]{Name: "b"})
	for i := range 100 {
		l.Add(fmt.Sprint(i))
		b.Put(i, "x")
	}
	if s.Err() != nil || s.MemoryUsed() == 0 || mgr.Used() < s.MemoryUsed() {
		t.Fatalf("err %v, used %d, manager %d", s.Err(), s.MemoryUsed(), mgr.Used())
	}
	l.Clear()
	b.Clear()
	if s.MemoryUsed() != 0 || mgr.Used() != 0 {
		t.Fatalf("after Clear: used %d, manager %d", s.MemoryUsed(), mgr.Used())
	}
	big := string(make([]byte, 1<<10))
	for range 100 {
		l.Add(big)
	}
	if !errors.Is(s.Err(), memory.ErrBudgetExceeded) {
		t.Fatal("no error past the budget")
	}
	if len(l.Get()) != 100 {
		t.Fatal("the writes past the budget are not kept")
	}
	if err := s.Dispose(); err != nil {
		t.Fatal(err)
	}
	if mgr.Used() != 0 {
		t.Fatalf("manager holds %d after Dispose", mgr.Used())
	}
}

// TestOperatorSnapshotCorrupt: truncations and flipped bytes are
// ErrCorruptSnapshot, never a panic.
func TestOperatorSnapshotCorrupt(t *testing.T) {
	snap := listSnap(t, map[string]int{"a": 3}, map[string]int{"b": 2}, map[string]int{"c": 2})
	for i := range len(snap) {
		for _, b := range [][]byte{snap[:i], flip(snap, i)} {
			s := NewOperatorStore(OperatorOptions{})
			if err := s.Restore(bytes.NewReader(b)); i > 0 && !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("byte %d: %v", i, err)
			}
			s.Dispose()
		}
	}
}

func flip(b []byte, i int) []byte {
	b = slices.Clone(b)
	b[i] ^= 0x55
	return b
}

// FuzzOperatorSnapshot decodes arbitrary input as an operator state
// snapshot, with and without repaired checksums: no panic, and what decodes
// restores into typed states, repartitions, and snapshots again to bytes
// that decode to the same sections.
func FuzzOperatorSnapshot(f *testing.F) {
	f.Add(listSnap(f, map[string]int{"a": 3}, map[string]int{"b": 2}, map[string]int{"c": 2}))
	f.Add(listSnap(f, nil, nil, nil))
	f.Add([]byte{})
	if v1, err := os.ReadFile("testdata/operator-v1.snap"); err == nil {
		f.Add(v1) // version 1, without schemas
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, fixChecksums(data)} {
			secs, err := readOpSnapshot(in)
			if err != nil {
				continue
			}
			var buf bytes.Buffer
			if err := writeOpSnapshot(&buf, slices.Clone(secs)); err != nil {
				t.Fatal(err)
			}
			again, err := readOpSnapshot(buf.Bytes())
			if err != nil || secsText(again) != secsText(sortedSecs(secs)) {
				t.Fatalf("round trip: %v, %v vs %v", err, again, secs)
			}
			if _, err := RepartitionOperatorState([][]byte{in, in}, 3); err != nil {
				t.Fatal(err)
			}
			s := NewOperatorStore(OperatorOptions{})
			if err := s.Restore(bytes.NewReader(in)); err != nil {
				t.Fatal(err)
			}
			GetOperatorListState(s, ListDescriptor[string]{Name: "a"})
			GetUnionListState(s, ListDescriptor[string]{Name: "b"})
			GetBroadcastState(s, MapDescriptor[string, int]{Name: "c"})
			if err := s.Dispose(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// secsText prints sections with their schemas.
func secsText(secs []opSection) string {
	s := ""
	for _, sec := range secs {
		s += fmt.Sprintf("%s %s %v %v\n", sec.name, sec.mode, sec.entries, sec.schema)
	}
	return s
}

func sortedSecs(secs []opSection) []opSection {
	secs = slices.Clone(secs)
	slices.SortFunc(secs, func(a, b opSection) int { return cmpString(a.name, b.name) })
	return secs
}

// TestOperatorStateRegistration follows Flink's
// OperatorStateBackendTest.testRegisterStates and testSnapshotEmpty: asking
// again for a name gives the same state with its contents; a store with
// nothing registered snapshots to a snapshot that restores to nothing; a
// broadcast state's entries survive a snapshot and restore.
func TestOperatorStateRegistration(t *testing.T) {
	s, split, _, rules := opStore(t, nil)
	split.Add("x")
	again, err := GetOperatorListState(s, ListDescriptor[string]{Name: "split"})
	if err != nil || again != split || !slices.Equal(again.Get(), []string{"x"}) {
		t.Fatalf("second registration: %v, %v", again, err)
	}
	if n := s.Names(); !slices.Equal(n, []string{"rules", "split", "union"}) {
		t.Errorf("names %v", n)
	}
	rules.Put("a", 1)
	rules.Put("b", 2)
	rules.Put("a", 3)
	rules.Remove("b")
	if v, ok := rules.Get("a"); !ok || v != 3 || rules.Len() != 1 || rules.Contains("b") {
		t.Fatalf("broadcast state: a=%d %v, %d entries", v, ok, rules.Len())
	}
	_, split2, union2, rules2 := opStore(t, opSnap(t, s))
	if v, _ := rules2.Get("a"); v != 3 || rules2.Len() != 1 || !slices.Equal(split2.Get(), []string{"x"}) || union2.Get() != nil {
		t.Fatalf("restored: rules %d entries, split %v, union %v", rules2.Len(), split2.Get(), union2.Get())
	}

	empty := NewOperatorStore(OperatorOptions{})
	defer empty.Dispose()
	snap := opSnap(t, empty)
	parts, err := RepartitionOperatorState([][]byte{snap, nil}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range parts {
		if p != nil {
			t.Errorf("subtask %d of an empty state gets %d bytes", i, len(p))
		}
	}
	_, l, u, b := opStore(t, snap)
	if l.Get() != nil || u.Get() != nil || b.Len() != 0 {
		t.Error("an empty snapshot restored to something")
	}
}

// TestIsOperatorSnapshot tells operator state snapshots from keyed ones.
func TestIsOperatorSnapshot(t *testing.T) {
	b, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	keyed := snapshot(t, b, KeyGroupRange{0, 15})
	op := listSnap(t, map[string]int{"a": 1}, nil, nil)
	if !IsOperatorSnapshot(op) || IsOperatorSnapshot(keyed) || IsOperatorSnapshot(nil) || IsOperatorSnapshot(op[:3]) {
		t.Error("IsOperatorSnapshot is wrong")
	}
}
