package spill

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// sizedRecords returns records of the sizes the format has edge cases for,
// around the block size bs, mixed with small ones.
func sizedRecords(rng *rand.Rand, bs int) [][]byte {
	sizes := []int{0, 1, 0, 2, bs - 1, bs - 2, bs, bs + 1, 3 * bs, 1 << 20, 0, 5, 127, 128, 16383, 16384}
	for i := 0; i < 400; i++ {
		sizes = append(sizes, rng.IntN(bs/2+2))
	}
	// Records that fill a block exactly: framing + payload == bs.
	sizes = append(sizes, bs-uvarintLen(uint64(bs-1)), 7, bs-uvarintLen(uint64(bs-2)))
	recs := make([][]byte, 0, len(sizes))
	for i, n := range sizes {
		if i%2 == 0 {
			recs = append(recs, textRecord(rng, n))
		} else {
			recs = append(recs, compressibleRecord(rng, n))
		}
	}
	return recs
}

func TestRoundTripSizes(t *testing.T) {
	for _, c := range codecs {
		for _, bs := range []int{MinBlockSize, 4096, DefaultBlockSize} {
			t.Run(fmt.Sprintf("%s/%d", c, bs), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(bs), uint64(c)))
				recs := sizedRecords(rng, bs)
				fs := NewMemFS()
				s := NewSpace(fs, "sizes", Options{Codec: c, BlockSize: bs})
				h := writeFile(t, s, recs)
				if h.Records != int64(len(recs)) || h.Bytes != sumLen(recs) {
					t.Fatalf("handle %+v, want %d records of %d bytes", h, len(recs), sumLen(recs))
				}
				data, err := fs.Contents(h.Name)
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(data)) != h.DiskBytes {
					t.Fatalf("file has %d bytes, handle says %d", len(data), h.DiskBytes)
				}
				checkBlocks(t, data, bs)
				got, err := readFile(s, h)
				if err != nil {
					t.Fatal(err)
				}
				checkRecords(t, got, recs)
				st := s.Stats()
				want := Stats{BytesWritten: h.Bytes, DiskBytesWritten: h.DiskBytes, BytesRead: h.Bytes, DiskBytesRead: h.DiskBytes, Files: 1}
				if st != want {
					t.Fatalf("stats %+v, want %+v", st, want)
				}
				closeSpace(t, s, fs)
			})
		}
	}
}

// checkBlocks walks the blocks of a file independently of Reader and checks the
// layout rules: no block's payload exceeds bs unless it holds a single record,
// and every block holds whole records.
func checkBlocks(t *testing.T, data []byte, bs int) {
	t.Helper()
	var d decompressor
	defer d.release()
	for blk := 0; len(data) > 0; blk++ {
		h, err := parseHeader(data, int64(len(data)-headerSize), 1<<40)
		if err != nil {
			t.Fatalf("block %d: %v", blk, err)
		}
		raw := make([]byte, h.raw)
		if err := d.decompress(h.codec, raw, data[headerSize:headerSize+h.stored]); err != nil {
			t.Fatalf("block %d: %v", blk, err)
		}
		data = data[headerSize+h.stored:]
		n := 0
		for p := raw; len(p) > 0; n++ {
			l, k := uvarint(p)
			if k <= 0 || l > uint64(len(p)-k) {
				t.Fatalf("block %d: record %d straddles the block end", blk, n)
			}
			p = p[k+int(l):]
		}
		if h.raw > bs && n != 1 {
			t.Fatalf("block %d: %d bytes > block size %d hold %d records, want 1", blk, h.raw, bs, n)
		}
	}
}

func uvarint(p []byte) (uint64, int) {
	var x uint64
	for i, b := range p {
		if i == 10 {
			return 0, -1
		}
		x |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}

func TestNextKV(t *testing.T) {
	type kv struct{ k, v []byte }
	rng := rand.New(rand.NewPCG(3, 4))
	pairs := []kv{{nil, nil}, {[]byte("k"), nil}, {nil, []byte("v")}, {textRecord(rng, 300), textRecord(rng, 1<<20)}}
	for i := 0; i < 2000; i++ {
		pairs = append(pairs, kv{fmt.Appendf(nil, "key%d", rng.IntN(50)), compressibleRecord(rng, rng.IntN(200))})
	}
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			fs := NewMemFS()
			s := NewSpace(fs, "kv", Options{Codec: c, BlockSize: 1024})
			w, err := s.Create()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pairs {
				if err := w.AppendKV(p.k, p.v); err != nil {
					t.Fatal(err)
				}
			}
			h, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.Open(h)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range pairs {
				k, v, err := r.NextKV()
				if err != nil {
					t.Fatalf("pair %d: %v", i, err)
				}
				if !bytes.Equal(k, p.k) || !bytes.Equal(v, p.v) {
					t.Fatalf("pair %d: got (%.10q, %.10q), want (%.10q, %.10q)", i, k, v, p.k, p.v)
				}
			}
			if _, _, err := r.NextKV(); err != io.EOF {
				t.Fatalf("after the last pair: %v, want io.EOF", err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			closeSpace(t, s, fs)
		})
	}
}

// TestAppendKVFormat checks that AppendKV writes uvarint(len(key)) key val, the
// form of memory.AppendKV, as one record.
func TestAppendKVFormat(t *testing.T) {
	fs := NewMemFS()
	s := NewSpace(fs, "kvfmt", Options{Codec: None})
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte("k"), 200) // a two-byte uvarint
	if err := w.AppendKV(key, []byte("val")); err != nil {
		t.Fatal(err)
	}
	h, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	got, err := readFile(s, h)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{200, 1}, key...), "val"...)
	checkRecords(t, got, [][]byte{want})
	closeSpace(t, s, fs)
}

func TestEmptyFile(t *testing.T) {
	for _, c := range codecs {
		fs := NewMemFS()
		s := NewSpace(fs, "empty", Options{Codec: c})
		h := writeFile(t, s, nil)
		if h.Records != 0 || h.Bytes != 0 || h.DiskBytes != 0 {
			t.Fatalf("%s: handle %+v of an empty file", c, h)
		}
		got, err := readFile(s, h)
		if err != nil || len(got) != 0 {
			t.Fatalf("%s: got %d records, %v", c, len(got), err)
		}
		if len(fs.Files()) != 1 {
			t.Fatalf("%s: files %v, want the empty file", c, fs.Files())
		}
		closeSpace(t, s, fs)
	}
}

func TestAllEqualRecords(t *testing.T) {
	rec := []byte("the same key|the same value")
	recs := make([][]byte, 50000)
	for i := range recs {
		recs[i] = rec
	}
	for _, c := range codecs {
		fs := NewMemFS()
		s := NewSpace(fs, "equal", Options{Codec: c, BlockSize: 4096})
		h := writeFile(t, s, recs)
		got, err := readFile(s, h)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, recs)
		if c != None && h.DiskBytes*10 > h.Bytes {
			t.Errorf("%s: %d bytes on disk for %d equal bytes: not compressed", c, h.DiskBytes, h.Bytes)
		}
		closeSpace(t, s, fs)
	}
}

// TestManyFiles keeps many writers and then many readers of one Space open at
// once, interleaving their calls, as a merge or a partitioned join does.
func TestManyFiles(t *testing.T) {
	const files = 40
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			d := newDiskFS(t)
			s := NewSpace(d, "many", Options{Codec: c, BlockSize: 512})
			recs := zipfRecords(uint64(c), 20000)
			ws := make([]*Writer, files)
			want := make([][][]byte, files)
			for i := range ws {
				var err error
				if ws[i], err = s.Create(); err != nil {
					t.Fatal(err)
				}
			}
			for i, r := range recs {
				f := i * 7 % files
				if err := ws[f].Append(r); err != nil {
					t.Fatal(err)
				}
				want[f] = append(want[f], r)
			}
			hs := make([]Handle, files)
			for i, w := range ws {
				var err error
				if hs[i], err = w.Finish(); err != nil {
					t.Fatal(err)
				}
			}
			rs := make([]*Reader, files)
			for i := range rs {
				var err error
				if rs[i], err = s.Open(hs[i]); err != nil {
					t.Fatal(err)
				}
			}
			got := make([][][]byte, files)
			for live := files; live > 0; {
				live = 0
				for i, r := range rs {
					rec, err := r.Next()
					if err == io.EOF {
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					live++
					got[i] = append(got[i], slices.Clone(rec))
				}
			}
			for i := range rs {
				checkRecords(t, got[i], want[i])
				if err := rs[i].Close(); err != nil {
					t.Fatal(err)
				}
			}
			if st := s.Stats(); st.Files != files || st.BytesWritten != sumLen(recs) || st.BytesRead != sumLen(recs) {
				t.Fatalf("stats %+v", st)
			}
			for i := 0; i < files; i += 2 {
				if err := s.Remove(hs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(s.Files()); n != files/2 {
				t.Fatalf("%d files left after removing half of %d", n, files)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			assertEmptyDir(t, d)
		})
	}
}

// TestParallel runs several operator instances at once, each on a hash
// partition of one zipf-skewed input, sharing one DiskFS; half of them own a
// Space each, the other half share one. The union of what they read back must
// be the input.
func TestParallel(t *testing.T) {
	const workers = 6
	recs := zipfRecords(11, 60000)
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			d := newDiskFS(t)
			shared := NewSpace(d, "shared", Options{Codec: c, BlockSize: 2048})
			parts := make([][][]byte, workers)
			for _, r := range recs {
				k, _, _ := bytes.Cut(r, []byte("|"))
				h := fnv.New64a()
				h.Write(k)
				p := h.Sum64() % workers
				parts[p] = append(parts[p], r)
			}
			got := make([][][]byte, workers)
			errs := make([]error, workers)
			var wg sync.WaitGroup
			for i := range workers {
				wg.Go(func() {
					s := shared
					if i%2 == 0 {
						s = NewSpace(d, fmt.Sprintf("op-%d", i), Options{Codec: c, BlockSize: 2048})
						defer func() { errs[i] = errors.Join(errs[i], s.Close()) }()
					}
					got[i], errs[i] = spillRuns(s, parts[i], 4)
				})
			}
			wg.Wait()
			for i := range workers {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				checkRecords(t, got[i], parts[i])
			}
			if err := shared.Close(); err != nil {
				t.Fatal(err)
			}
			assertEmptyDir(t, d)
		})
	}
}

// spillRuns writes recs into runs files, reads them back in order, removes them
// and returns what it read.
func spillRuns(s *Space, recs [][]byte, runs int) ([][]byte, error) {
	var hs []Handle
	per := len(recs)/runs + 1
	for start := 0; start < len(recs); start += per {
		w, err := s.Create()
		if err != nil {
			return nil, err
		}
		for _, r := range recs[start:min(start+per, len(recs))] {
			if err := w.Append(r); err != nil {
				w.Abort()
				return nil, err
			}
		}
		h, err := w.Finish()
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	var out [][]byte
	for _, h := range hs {
		got, err := readFile(s, h)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		if err := s.Remove(h); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func TestWriterAndReaderStates(t *testing.T) {
	fs := NewMemFS()
	s := NewSpace(fs, "states", Options{Codec: S2, BlockSize: 64})
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := w.Append(fmt.Appendf(nil, "record %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, w.Append([]byte("late")), ErrClosed, h.Name)
	if _, err := w.Finish(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Finish: %v", err)
	}
	w.Abort() // does nothing after Finish
	r, err := s.Open(h)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the end: %v, want io.EOF", err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	r, err = s.Open(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	wantErr(t, func() error { _, err := r.Next(); return err }(), ErrClosed, h.Name)

	aborted, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	if err := aborted.Append([]byte("x")); err != nil {
		t.Fatal(err)
	}
	aborted.Abort()
	aborted.Abort()
	// The aborted run shares h's file, which stays while h's run does.
	if aborted.Name() != h.Name || !slices.Contains(fs.Files(), h.Name) {
		t.Fatalf("aborted run in %s, first run in %s, files %v", aborted.Name(), h.Name, fs.Files())
	}
	if err := s.Remove(h); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(fs.Files(), aborted.Name()) {
		t.Fatalf("file %s still exists after its last run was removed", aborted.Name())
	}
	wantErr(t, aborted.Append([]byte("y")), ErrClosed)
	closeSpace(t, s, fs)
}

func TestForBudget(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		set    int
		want   int
	}{
		{0, 0, 0},
		{-1, 0, 0},
		{1 << 20, 0, MinBudgetBlockSize},
		{32 << 20, 0, 32 << 10},
		{128 << 20, 0, 128 << 10},
		{256 << 20, 0, DefaultBlockSize},
		{64 << 30, 0, DefaultBlockSize},
		{32 << 20, 4096, 4096}, // the caller's own
	} {
		got := Options{BlockSize: tc.set}.ForBudget(tc.budget).BlockSize
		if got != tc.want {
			t.Errorf("ForBudget(%d) with BlockSize %d = %d, want %d", tc.budget, tc.set, got, tc.want)
		}
	}
}
