package sortjoin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
)

// sliceSource is a source over records already in order, failing with err after
// failAfter records if err is set.
type sliceSource struct {
	recs      []Record
	i         int
	failAfter int
	err       error
}

func (s *sliceSource) next() ([]byte, []byte, error) {
	if s.err != nil && s.i == s.failAfter {
		return nil, nil, s.err
	}
	if s.i >= len(s.recs) {
		return nil, nil, io.EOF
	}
	r := s.recs[s.i]
	s.i++
	return r.Key, r.Val, nil
}

func TestLoserTree(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	var tree loserTree // reused across merges, as the sorter does
	for k := 0; k <= 17; k++ {
		for _, keyLen := range []int{1, 3, 12} {
			t.Run(fmt.Sprintf("k=%d/keylen=%d", k, keyLen), func(t *testing.T) {
				var all []Record
				srcs := make([]source, k)
				for i := range srcs {
					recs := make([]Record, r.IntN(60)) // some inputs are empty
					for j := range recs {
						recs[j] = Record{Key: randBytes(r, r.IntN(keyLen+1)), Val: []byte{byte(i), byte(j)}}
					}
					slices.SortFunc(recs, func(a, b Record) int { return bytes.Compare(a.Key, b.Key) })
					all = append(all, recs...)
					srcs[i] = &sliceSource{recs: recs}
				}
				if _, err := tree.init(srcs); err != nil {
					t.Fatal(err)
				}
				var out []Record
				for {
					k, v, ok, _, err := tree.next()
					if err != nil {
						t.Fatal(err)
					}
					if !ok {
						break
					}
					out = append(out, Record{Key: k, Val: v})
				}
				checkSorted(t, all, out)
				if _, _, ok, _, _ := tree.next(); ok {
					t.Fatal("next after the end returned a record")
				}
				tree.reset()
			})
		}
	}
}

func TestLoserTreeError(t *testing.T) {
	boom := errors.New("boom")
	recs := []Record{{Key: []byte("a")}, {Key: []byte("b")}, {Key: []byte("c")}}
	srcs := []source{&sliceSource{recs: recs}, &sliceSource{recs: recs, failAfter: 2, err: boom}, &sliceSource{recs: recs}}
	var tree loserTree
	if _, err := tree.init(srcs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, _, ok, failed, err := tree.next()
		if err != nil {
			if !errors.Is(err, boom) || failed != 1 {
				t.Fatalf("error %v from source %d, want boom from source 1", err, failed)
			}
			break
		}
		if !ok {
			t.Fatal("merge ended without the error")
		}
		n++
	}
	if _, _, ok, _, err := tree.next(); ok || !errors.Is(err, boom) {
		t.Fatalf("after an error next returned ok=%v err=%v", ok, err)
	}
	if i, err := tree.init([]source{&sliceSource{recs: recs}, &sliceSource{err: boom}}); !errors.Is(err, boom) || i != 1 {
		t.Fatalf("init error %v from source %d, want boom from source 1", err, i)
	}
}

// sortBufferKeys fills a sort buffer with keys and returns it.
func sortBufferKeys(t testing.TB, m *memory.Manager, keys [][]byte) *sortBuffer {
	b := newSortBuffer(m, "radix-test", memory.Unlimited, 0, 0)
	for _, k := range keys {
		if !b.add(k, nil) {
			t.Fatal("unlimited buffer refused a record")
		}
	}
	return b
}

// TestRadixSort checks the radix sort of the index against slices.SortFunc.
func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 1))
	gens := map[string]func() []byte{
		"random":     func() []byte { return randBytes(r, r.IntN(20)) },
		"short":      func() []byte { return randBytes(r, r.IntN(3)) },
		"equal":      func() []byte { return []byte("the same key, longer than eight") },
		"one-byte":   func() []byte { return []byte{byte(r.IntN(3))} },
		"prefix-tie": func() []byte { return append([]byte("12345678"), randBytes(r, r.IntN(4))...) },
		"zero-pad":   func() []byte { return make([]byte, r.IntN(10)) },
		// keys of one length up to 8 bytes are their prefixes: equal
		// prefixes end the sort without a look at the keys
		"eight-few":  func() []byte { return binary.BigEndian.AppendUint64(nil, uint64(r.IntN(5))<<40|7) },
		"eight-many": func() []byte { return binary.BigEndian.AppendUint64(nil, r.Uint64N(1000)) },
		"four-few":   func() []byte { return binary.BigEndian.AppendUint32(nil, uint32(r.IntN(4))) },
		"long-shared": func() []byte {
			return append([]byte("a shared prefix of thirty bytes"), randBytes(r, r.IntN(3))...)
		},
		"zero-tail": func() []byte {
			k := append([]byte("12345678"), make([]byte, r.IntN(20))...)
			if r.IntN(2) == 0 {
				k = append(k, byte(r.IntN(3)))
			}
			return k
		},
		"printable": func() []byte {
			b := make([]byte, 99)
			for i := range b {
				b[i] = byte(' ' + r.IntN(95))
			}
			return b
		},
	}
	m := memory.MustNewManager(memory.Options{SegmentSize: 4096})
	for name, gen := range gens {
		for _, n := range []int{0, 1, 2, 47, 48, 49, 300, 5000} {
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = gen()
			}
			b := sortBufferKeys(t, m, keys)
			b.sort()
			want := slices.Clone(keys)
			slices.SortFunc(want, bytes.Compare)
			for i := range want {
				if k, _ := b.get(i); !bytes.Equal(k, want[i]) {
					t.Fatalf("%s/%d: key %d is %q, want %q", name, n, i, k, want[i])
				}
			}
			b.release()
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRadixSortAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	r := rand.New(rand.NewPCG(13, 1))
	keys := make([][]byte, 20000)
	for i := range keys {
		keys[i] = randBytes(r, 4+r.IntN(12)) // short keys: many prefix ties
		if i%3 == 0 {
			keys[i] = append([]byte("tiedtied"), keys[i]...)
		}
	}
	m := memory.MustNewManager(memory.Options{})
	b := sortBufferKeys(t, m, keys)
	saved := slices.Clone(b.idx)
	allocs := testing.AllocsPerRun(5, func() {
		copy(b.idx, saved)
		b.sorted = false
		b.sort()
	})
	if allocs != 0 {
		t.Errorf("sorting %d entries allocated %v times", len(keys), allocs)
	}
	b.release()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
