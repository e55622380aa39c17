package spill

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestSpaceCloseMidway closes a Space while writers are mid-write (blocks in
// flight and unflushed records) and readers mid-read (a block read ahead), and
// expects an empty spill directory and no goroutine left.
func TestSpaceCloseMidway(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			d := newDiskFS(t)
			s := NewSpace(d, "midway", Options{Codec: c, BlockSize: 1024})
			rng := rand.New(rand.NewPCG(5, 6))
			var hs []Handle
			for range 3 {
				recs := make([][]byte, 500)
				for i := range recs {
					recs[i] = textRecord(rng, 100)
				}
				hs = append(hs, writeFile(t, s, recs))
			}
			for i, h := range hs[:2] { // two readers mid-read
				r, err := s.Open(h)
				if err != nil {
					t.Fatal(err)
				}
				for range 15 * (i + 1) {
					if _, err := r.Next(); err != nil {
						t.Fatal(err)
					}
				}
			}
			for n := range 3 { // writers with 0, 1 and many blocks written
				w, err := s.Create()
				if err != nil {
					t.Fatal(err)
				}
				for range n * n * 50 {
					if err := w.Append(textRecord(rng, 100)); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The three runs share a file, which the first open writer appends
			// to; the other two writers get files of their own.
			if ents, _ := os.ReadDir(d.Dir()); len(ents) != 3 {
				t.Fatalf("%d files before Close, want 3", len(ents))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			assertEmptyDir(t, d)
			goleak.VerifyNone(t)
			if err := s.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if _, err := s.Create(); !errors.Is(err, ErrClosed) {
				t.Fatalf("Create after Close: %v", err)
			}
			if _, err := s.Open(hs[2]); !errors.Is(err, ErrClosed) {
				t.Fatalf("Open after Close: %v", err)
			}
		})
	}
}

// TestSpaceLongOwner creates a file on disk for an owner named by a long
// operator chain: the name is cut to what file systems allow.
func TestSpaceLongOwner(t *testing.T) {
	d := newDiskFS(t)
	owner := "flow-" + strings.Repeat("Result of Iterate at regression.go:49 -> FlatMap ", 8)
	s := NewSpace(d, owner, Options{})
	h := writeFile(t, s, [][]byte{[]byte("x")})
	if len(h.Name) > 255 || !strings.HasPrefix(h.Name, "flow-Result_of_Iterate") {
		t.Fatalf("name %q (%d bytes)", h.Name, len(h.Name))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmptyDir(t, d)
}

func TestSpaceNames(t *testing.T) {
	m := NewMemFS()
	a := NewSpace(m, "sort/run 1", Options{})
	b := NewSpace(m, "sort/run 1", Options{})
	e := NewSpace(m, "", Options{})
	var names []string
	for _, s := range []*Space{a, b, a, e} {
		w, err := s.Create()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, w.Name())
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		if strings.ContainsAny(n, "/ ") {
			t.Errorf("name %q is not flat", n)
		}
	}
	if !strings.HasPrefix(names[0], "sort_run_1-") || !strings.HasPrefix(names[3], "spill-") {
		t.Errorf("names %q do not start with the owner", names)
	}
	if names[2] != names[0] { // a's second run shares its first run's file
		t.Errorf("a's runs in %q and %q", names[0], names[2])
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != 3 {
		t.Errorf("names collide: %q", names)
	}
	for _, s := range []*Space{a, b, e} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.Files()) != 0 {
		t.Fatalf("files left: %v", m.Files())
	}
}

func TestDiskFS(t *testing.T) {
	parent := t.TempDir()
	d, err := NewDiskFS(parent)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(d.Dir()) != parent || !strings.HasPrefix(filepath.Base(d.Dir()), "weir-spill-") {
		t.Fatalf("dir %s is not weir-spill-* under %s", d.Dir(), parent)
	}
	f, err := d.Create("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create("a"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create of an existing file: %v", err)
	}
	for _, bad := range []string{"", ".", "..", "x/y", "../a", "a\x00"} {
		if _, err := d.Create(bad); !errors.Is(err, errBadName) {
			t.Errorf("Create(%q): %v", bad, err)
		}
	}
	if _, err := d.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a missing file: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("directory survives Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestMemFS(t *testing.T) {
	m := NewMemFS()
	f, err := m.Create("a")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("abc"))
	f.Close()
	if _, err := f.Write([]byte("d")); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
	if _, err := m.Create("a"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create of an existing file: %v", err)
	}
	r, err := m.Open("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Remove("a"); err != nil { // open files stay readable
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, _ := r.Read(buf); string(buf[:n]) != "abc" {
		t.Fatalf("read %q after Remove", buf[:n])
	}
	if err := m.Remove("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second Remove: %v", err)
	}
}

func TestOptions(t *testing.T) {
	o := Options{}.EnsureDefaults()
	if o.Codec != defaultCodec || o.BlockSize != DefaultBlockSize {
		t.Fatalf("defaults %+v", o)
	}
	if o := (Options{BlockSize: 1}).EnsureDefaults(); o.BlockSize != MinBlockSize {
		t.Fatalf("BlockSize 1 became %d", o.BlockSize)
	}
	if o := (Options{BlockSize: 1 << 30}).EnsureDefaults(); o.BlockSize != MaxBlockSize {
		t.Fatalf("BlockSize 1 GiB became %d", o.BlockSize)
	}
	for c, want := range map[Codec]string{DefaultCodec: "default", None: "none", S2: "s2", Zstd: "zstd", 9: "codec(9)"} {
		if c.String() != want {
			t.Errorf("Codec(%d).String() = %q, want %q", c, c.String(), want)
		}
	}
	if OpCreate.String() != "create" || OpRemove.String() != "remove" || Op(42).String() != "op(42)" {
		t.Error("Op.String")
	}
	// Memory grows with the block size, and compression needs more than None.
	small, big := Options{Codec: S2, BlockSize: 4096}, Options{Codec: S2}
	if small.WriterMemory() >= big.WriterMemory() || small.ReaderMemory() >= big.ReaderMemory() {
		t.Error("memory does not grow with the block size")
	}
	if (Options{Codec: None}).WriterMemory() >= big.WriterMemory() {
		t.Error("None needs as much memory as S2")
	}
	if _, err := NewSpace(NewMemFS(), "bad", Options{Codec: 9}).Create(); err == nil {
		t.Fatal("Create with an unknown codec succeeded")
	}
}
