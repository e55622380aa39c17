package spill

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSharedFile writes runs one after another, reading earlier runs while a
// later one is written, and checks that they share files up to FileSize, each
// run reading back as written, and that a file goes when its last run does.
func TestSharedFile(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			mem := NewMemFS()
			s := NewSpace(mem, "shared", Options{Codec: c, BlockSize: 512, FileSize: 64 << 10})
			rng := rand.New(rand.NewPCG(1, 2))
			var hs []Handle
			var want [][][]byte
			for run := range 40 {
				recs := make([][]byte, 1+rng.IntN(300))
				for i := range recs {
					recs[i] = textRecord(rng, 1+rng.IntN(60))
				}
				w, err := s.Create()
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range recs {
					if err := w.Append(r); err != nil {
						t.Fatal(err)
					}
					if i == len(recs)/2 && run > 0 { // read an earlier run while this one is written
						k := rng.IntN(run)
						got, err := readFile(s, hs[k])
						if err != nil {
							t.Fatal(err)
						}
						checkRecords(t, got, want[k])
					}
				}
				h, err := w.Finish()
				if err != nil {
					t.Fatal(err)
				}
				hs, want = append(hs, h), append(want, recs)
			}
			files := map[string]int64{} // file name → its end
			for _, h := range hs {
				if h.Offset >= 64<<10 {
					t.Fatalf("run at %d of %s, past FileSize", h.Offset, h.Name)
				}
				files[h.Name] = max(files[h.Name], h.Offset+h.DiskBytes)
			}
			for name, end := range files { // a file is left for the next only when full
				if name != hs[len(hs)-1].Name && end < 64<<10 {
					t.Fatalf("%s ends at %d, below FileSize, yet a later run went elsewhere", name, end)
				}
			}
			if len(files) < 2 {
				t.Fatalf("%d files: FileSize was never reached", len(files))
			}
			if got := s.Stats().Files; got != int64(len(files)) {
				t.Fatalf("Stats().Files = %d, want %d", got, len(files))
			}
			for i, h := range hs {
				if i > 0 && h.Name == hs[i-1].Name && h.Offset != hs[i-1].Offset+hs[i-1].DiskBytes {
					t.Fatalf("run %d at %d, previous run ends at %d", i, h.Offset, hs[i-1].Offset+hs[i-1].DiskBytes)
				}
				got, err := readFile(s, h)
				if err != nil {
					t.Fatal(err)
				}
				checkRecords(t, got, want[i])
			}
			// Removing every run of the first file but one keeps it; the last removes it.
			first := hs[0].Name
			var runs []Handle
			for _, h := range hs {
				if h.Name == first {
					runs = append(runs, h)
				}
			}
			for i, h := range runs {
				if err := s.Remove(h); err != nil {
					t.Fatal(err)
				}
				if has := slices.Contains(mem.Files(), first); has != (i < len(runs)-1) {
					t.Fatalf("after removing %d of %d runs, file exists = %v", i+1, len(runs), has)
				}
			}
			closeSpace(t, s, mem)
		})
	}
}

// TestSharedFileFault fails a write in the middle of a run appended to a file
// that holds earlier runs: the run fails, the earlier runs still read back, the
// next run starts a new file, and Close leaves nothing.
func TestSharedFileFault(t *testing.T) {
	mem := NewMemFS()
	ffs := NewFaultFS(mem)
	s := NewSpace(ffs, "shared-fault", Options{BlockSize: 256})
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([][]byte, 200)
	for i := range recs {
		recs[i] = textRecord(rng, 30)
	}
	h1 := writeFile(t, s, recs)
	h2 := writeFile(t, s, recs)
	if h1.Name != h2.Name || h2.Offset != h1.DiskBytes {
		t.Fatalf("runs %+v and %+v do not share a file", h1, h2)
	}
	ffs.FailNth(OpWrite, 3)
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != h1.Name {
		t.Fatalf("third run in %s, want %s", w.Name(), h1.Name)
	}
	for _, r := range recs {
		if err = w.Append(r); err != nil {
			break
		}
	}
	if err == nil {
		_, err = w.Finish()
	}
	wantErr(t, err, ErrInjected, "write")
	w.Abort()
	for _, h := range []Handle{h1, h2} {
		got, err := readFile(s, h)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, recs)
	}
	h4 := writeFile(t, s, recs)
	if h4.Name == h1.Name || h4.Offset != 0 {
		t.Fatalf("run after the failure at %s+%d, want a new file", h4.Name, h4.Offset)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := mem.Files(); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

// TestOwnFiles checks that a negative FileSize gives every run its own file.
func TestOwnFiles(t *testing.T) {
	mem := NewMemFS()
	s := NewSpace(mem, "own", Options{FileSize: -1})
	names := map[string]bool{}
	for i := range 5 {
		h := writeFile(t, s, [][]byte{fmt.Appendf(nil, "run %d", i)})
		if h.Offset != 0 || names[h.Name] {
			t.Fatalf("run %d: %+v shares a file", i, h)
		}
		names[h.Name] = true
	}
	if len(mem.Files()) != 5 {
		t.Fatalf("files %v, want 5", mem.Files())
	}
	closeSpace(t, s, mem)
}
