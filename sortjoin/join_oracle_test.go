package sortjoin

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// This file holds the joins' test oracle (a nested loop over Go slices), the input
// generators and the environment the join tests run in.

var allJoinKinds = []JoinKind{Inner, LeftOuter, RightOuter, FullOuter, Semi, Anti}

// joinRow renders one result row: each of key, left and right as its length and
// a 64-bit hash of its bytes (any change of a byte changes the row), a missing side
// as "-", so that an empty value is told apart from a missing side.
func joinRow(key, left, right []byte) string {
	b := make([]byte, 0, 64)
	for i, part := range [][]byte{key, left, right} {
		if i > 0 {
			b = append(b, ' ')
		}
		if part == nil && i > 0 {
			b = append(b, '-')
			continue
		}
		b = strconv.AppendInt(b, int64(len(part)), 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, memory.Hash(part, 0x5eed), 16)
	}
	return string(b)
}

// oracleJoin is the naive nested-loop join: the sorted rows kind must produce.
func oracleJoin(left, right []Record, kind JoinKind) []string {
	matches := make([][]int, len(left)) // right indexes matching each left record
	rightMatched := make([]bool, len(right))
	for i, l := range left {
		for k, r := range right {
			if bytes.Equal(l.Key, r.Key) {
				matches[i] = append(matches[i], k)
				rightMatched[k] = true
			}
		}
	}
	return oracleRows(left, right, matches, rightMatched, kind)
}

// oracleRows derives kind's rows from the match lists of a nested loop.
func oracleRows(left, right []Record, matches [][]int, rightMatched []bool, kind JoinKind) []string {
	var rows []string
	for i, l := range left {
		lv := nonNil(l.Val)
		switch kind {
		case Semi:
			if len(matches[i]) > 0 {
				rows = append(rows, joinRow(l.Key, lv, nil))
			}
			continue
		case Anti:
			if len(matches[i]) == 0 {
				rows = append(rows, joinRow(l.Key, lv, nil))
			}
			continue
		}
		for _, k := range matches[i] {
			rows = append(rows, joinRow(l.Key, lv, nonNil(right[k].Val)))
		}
		if len(matches[i]) == 0 && (kind == LeftOuter || kind == FullOuter) {
			rows = append(rows, joinRow(l.Key, lv, nil))
		}
	}
	if kind == RightOuter || kind == FullOuter {
		for k, r := range right {
			if !rightMatched[k] {
				rows = append(rows, joinRow(r.Key, nil, nonNil(r.Val)))
			}
		}
	}
	sort.Strings(rows)
	return rows
}

// oracleAll computes the rows of every kind with one nested loop.
func oracleAll(left, right []Record) map[JoinKind][]string {
	matches := make([][]int, len(left))
	rightMatched := make([]bool, len(right))
	for i, l := range left {
		for k, r := range right {
			if bytes.Equal(l.Key, r.Key) {
				matches[i] = append(matches[i], k)
				rightMatched[k] = true
			}
		}
	}
	out := map[JoinKind][]string{}
	for _, kind := range allJoinKinds {
		out[kind] = oracleRows(left, right, matches, rightMatched, kind)
	}
	return out
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// rowCollector is an EmitFunc target, safe for concurrent joins.
type rowCollector struct {
	mu   sync.Mutex
	rows []string
}

func (c *rowCollector) emit(key, left, right []byte) error {
	r := joinRow(key, left, right)
	c.mu.Lock()
	c.rows = append(c.rows, r)
	c.mu.Unlock()
	return nil
}

func (c *rowCollector) sorted() []string {
	sort.Strings(c.rows)
	return c.rows
}

// checkRows compares a join's rows with the oracle's, reporting a few differences.
func checkRows(t testing.TB, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("got %d rows, want %d", len(got), len(want))
	var missing, extra []string
	i, k := 0, 0
	for i < len(got) || k < len(want) {
		switch {
		case k == len(want) || i < len(got) && got[i] < want[k]:
			extra = append(extra, got[i])
			i++
		case i == len(got) || got[i] > want[k]:
			missing = append(missing, want[k])
			k++
		default:
			i++
			k++
		}
	}
	for _, r := range missing[:min(len(missing), 5)] {
		t.Errorf("missing row %.120s", r)
	}
	for _, r := range extra[:min(len(extra), 5)] {
		t.Errorf("extra row %.120s", r)
	}
}

// joinData is one pair of join inputs.
type joinData struct {
	name        string
	left, right []Record
	oneKey      bool // every record of both sides has the same key
	big         bool // larger than the tiny budget, so spilling is certain
}

func uintKey(v uint64) []byte { return memory.AppendUint64(nil, v) }

// joinVal returns a value naming its side and index, padded to size bytes.
func joinVal(side byte, i, size int) []byte {
	v := make([]byte, max(size, 9))
	v[0] = side
	binary.BigEndian.PutUint64(v[1:], uint64(i))
	for j := 9; j < len(v); j++ {
		v[j] = byte(i + j)
	}
	return v
}

// genRecords makes n records of one side whose keys keyOf chooses.
func genRecords(side byte, n, valSize int, keyOf func(i int) []byte) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Key: keyOf(i), Val: joinVal(side, i, valSize)}
	}
	return recs
}

// joinDatasets returns the inputs every join test runs on.
func joinDatasets() []joinData {
	r := rand.New(rand.NewPCG(1, 2))
	var ds []joinData
	add := func(d joinData) { ds = append(ds, d) }

	some := genRecords('R', 300, 16, func(i int) []byte { return uintKey(uint64(i % 97)) })
	add(joinData{name: "empty-left", right: some})
	add(joinData{name: "empty-right", left: genRecords('L', 300, 16, func(i int) []byte { return uintKey(uint64(i % 89)) })})
	add(joinData{name: "both-empty"})
	add(joinData{
		name:  "no-matches",
		left:  genRecords('L', 900, 16, func(i int) []byte { return uintKey(uint64(2 * r.IntN(5000))) }),
		right: genRecords('R', 800, 16, func(i int) []byte { return uintKey(uint64(2*r.IntN(5000) + 1)) }),
		big:   true,
	})
	perm := r.Perm(1500)
	add(joinData{
		name:  "unique",
		left:  genRecords('L', 1000, 16, func(i int) []byte { return uintKey(uint64(perm[i])) }),
		right: genRecords('R', 1000, 16, func(i int) []byte { return uintKey(uint64(perm[500+i])) }),
		big:   true,
	})
	add(joinData{
		name:  "duplicates",
		left:  genRecords('L', 1000, 16, func(i int) []byte { return uintKey(uint64(r.IntN(150))) }),
		right: genRecords('R', 800, 16, func(i int) []byte { return uintKey(uint64(r.IntN(180))) }),
		big:   true,
	})
	hot := uintKey(42)
	add(joinData{
		name:   "all-equal",
		left:   genRecords('L', 150, 200, func(int) []byte { return hot }),
		right:  genRecords('R', 120, 200, func(int) []byte { return hot }),
		oneKey: true,
		big:    true,
	})
	zl := rand.NewZipf(r, 1.3, 1, 400)
	zr := rand.NewZipf(r, 1.3, 1, 400)
	add(joinData{
		name:  "zipf",
		left:  genRecords('L', 700, 24, func(int) []byte { return uintKey(zl.Uint64()) }),
		right: genRecords('R', 600, 24, func(int) []byte { return uintKey(zr.Uint64()) }),
		big:   true,
	})
	// Keys and values larger than a 4 KiB segment, mixed with small ones.
	bigKey := func(i int) []byte {
		k := memory.AppendString(nil, strings.Repeat(string(rune('a'+i%7)), 10+(i%3)*3000))
		return k
	}
	add(joinData{
		name:  "large-records",
		left:  genRecords('L', 40, 5000, func(i int) []byte { return bigKey(r.IntN(10)) }),
		right: genRecords('R', 30, 6000, func(i int) []byte { return bigKey(r.IntN(12)) }),
		big:   true,
	})
	// Variable-length string keys, some empty values and an empty key.
	strs := func(side byte, n int) []Record {
		recs := make([]Record, n)
		for i := range recs {
			k := r.IntN(60)
			var key []byte
			if k > 0 {
				key = memory.AppendString(nil, strings.Repeat("k", k%13)+string(rune('A'+k)))
			}
			var v []byte
			if i%5 != 0 {
				v = joinVal(side, i, 9)
			}
			recs[i] = Record{Key: key, Val: v}
		}
		return recs
	}
	add(joinData{name: "strings-empty-values", left: strs('L', 400), right: strs('R', 350)})
	return ds
}

// sortedRecords returns a copy of recs sorted by key (stable).
func sortedRecords(recs []Record) []Record {
	out := slices.Clone(recs)
	slices.SortStableFunc(out, func(a, b Record) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

// joinBudget is a memory setting the join tests sweep.
type joinBudget struct {
	name         string
	mem          memory.Options
	partitions   int
	maxRecursion int
	tiny         bool // the budget is smaller than the big datasets
}

var (
	joinTiny    = memory.Options{SegmentSize: 4096, Budget: 4 * 4096}
	joinBudgets = []joinBudget{
		{name: "unlimited", mem: memory.Options{SegmentSize: 4096}},
		{name: "small", mem: memory.Options{SegmentSize: 4096, Budget: 12 * 4096}, partitions: 8},
		{name: "tiny", mem: joinTiny, tiny: true},
		{name: "tiny-rec1", mem: joinTiny, maxRecursion: 1, tiny: true},
		{name: "tiny-rec0", mem: joinTiny, maxRecursion: -1, tiny: true},
	}
	// joinSpillOpts makes spill buffers small enough for the tiny budget.
	joinSpillOpts = spill.Options{Codec: spill.S2, BlockSize: 1024}
)

// joinEnv is a memory manager and a spill FS (behind a FaultFS) for one test: the
// disk (DiskFS in a temporary directory) or, for the large sweeps, a MemFS.
type joinEnv struct {
	resource.Env
	mgr   *memory.Manager
	disk  *spill.DiskFS
	mem   *spill.MemFS
	fault *spill.FaultFS
}

// newJoinEnv returns an environment spilling to a MemFS.
func newJoinEnv(t testing.TB, mo memory.Options) *joinEnv {
	t.Helper()
	return newJoinEnvFS(t, mo, false)
}

// newJoinDiskEnv returns an environment spilling to the disk.
func newJoinDiskEnv(t testing.TB, mo memory.Options) *joinEnv {
	t.Helper()
	return newJoinEnvFS(t, mo, true)
}

func newJoinEnvFS(t testing.TB, mo memory.Options, disk bool) *joinEnv {
	t.Helper()
	mgr, err := memory.NewManager(mo)
	if err != nil {
		t.Fatal(err)
	}
	e := &joinEnv{mgr: mgr}
	var inner spill.FS
	if disk {
		if e.disk, err = spill.NewDiskFS(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		inner = e.disk
	} else {
		e.mem = spill.NewMemFS()
		inner = e.mem
	}
	e.fault = spill.NewFaultFS(inner)
	e.Env = resource.Env{Memory: mgr, FS: e.fault, Spill: joinSpillOpts}
	return e
}

// spilled reports whether any spill file was created.
func (e *joinEnv) spilled() bool { return e.fault.Count(spill.OpCreate) > 0 }

// check asserts that every reservation was released and every spill file removed.
func (e *joinEnv) check(t testing.TB) {
	t.Helper()
	if err := e.mgr.Close(); err != nil {
		t.Errorf("manager: %v", err)
	}
	var left []string
	if e.disk != nil {
		ents, err := os.ReadDir(e.disk.Dir())
		if err != nil {
			t.Fatal(err)
		}
		for _, ent := range ents {
			left = append(left, ent.Name())
		}
		if err := e.disk.Close(); err != nil {
			t.Error(err)
		}
	} else {
		left = e.mem.Files()
	}
	for _, name := range left {
		t.Errorf("spill file left behind: %s", name)
	}
}

// hashSplit splits recs into n parts by a hash of the key, as an exchange would.
func hashSplit(recs []Record, n int) [][]Record {
	parts := make([][]Record, n)
	for _, r := range recs {
		p := memory.Hash(r.Key, 0xfeed) % uint64(n)
		parts[p] = append(parts[p], r)
	}
	return parts
}
