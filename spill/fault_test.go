package spill

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// faultScenario writes three multi-block files and reads them back, checking
// them against the oracle; it returns the first error.
func faultScenario(s *Space, recs [][]byte) error {
	var hs []Handle
	for f := range 3 {
		w, err := s.Create()
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := w.Append(r); err != nil {
				w.Abort()
				return err
			}
		}
		h, err := w.Finish()
		if err != nil {
			w.Abort() // does nothing: Finish cleaned up
			return err
		}
		hs = append(hs, h)
		_ = f
	}
	for _, h := range hs {
		got, err := readFile(s, h)
		if err != nil {
			return err
		}
		if len(got) != len(recs) {
			return fmt.Errorf("read %d records, want %d", len(got), len(recs))
		}
		for i := range got {
			if string(got[i]) != string(recs[i]) {
				return fmt.Errorf("record %d differs", i)
			}
		}
	}
	return nil
}

// TestFaults fails the n-th operation of each kind, for every n until the
// scenario no longer reaches it, and checks the error and the cleanup.
func TestFaults(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	recs := make([][]byte, 300)
	for i := range recs {
		recs[i] = textRecord(rng, 40)
	}
	for _, c := range codecs {
		for _, op := range []Op{OpCreate, OpWrite, OpSync, OpOpen, OpRead} {
			t.Run(c.String()+"/"+op.String(), func(t *testing.T) {
				failed := 0
				for n := 1; ; n++ {
					mem := NewMemFS()
					ffs := NewFaultFS(mem)
					s := NewSpace(ffs, "fault", Options{Codec: c, BlockSize: 1024})
					ffs.FailNth(op, n)
					err := faultScenario(s, recs)
					if err == nil {
						if ffs.Count(op) >= n {
							t.Fatalf("the %d-th %s of %d failed silently", n, op, ffs.Count(op))
						}
						closeSpace(t, s, mem)
						break
					}
					failed++
					wantErr(t, err, ErrInjected, op.String(), "fault-")
					if err := s.Close(); err != nil {
						t.Fatalf("Close after the fault: %v", err)
					}
					if left := mem.Files(); len(left) != 0 {
						t.Fatalf("files left after failing %s %d: %v", op, n, left)
					}
				}
				if failed == 0 {
					t.Fatalf("no %s failed", op)
				}
			})
		}
	}
}

// TestFaultsDiskFS repeats a failing write and read on a DiskFS and checks that
// the spill directory ends empty.
func TestFaultsDiskFS(t *testing.T) {
	recs := zipfRecords(9, 3000)
	for _, op := range []Op{OpWrite, OpRead, OpSync} {
		d := newDiskFS(t)
		ffs := NewFaultFS(d)
		s := NewSpace(ffs, "fault-disk", Options{BlockSize: 4096})
		ffs.FailNth(op, 3)
		wantErr(t, faultScenario(s, recs), ErrInjected, op.String())
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		assertEmptyDir(t, d)
	}
}

func TestFaultRemove(t *testing.T) {
	mem := NewMemFS()
	ffs := NewFaultFS(mem)
	s := NewSpace(ffs, "fault-rm", Options{})
	h := writeFile(t, s, [][]byte{[]byte("a")})
	ffs.FailNth(OpRemove, 1)
	err := s.Remove(h)
	wantErr(t, err, ErrInjected, "remove", h.Name)
	if len(mem.Files()) != 1 {
		t.Fatalf("files %v after a failed Remove", mem.Files())
	}

	// A failed remove in Abort leaves the file to Space.Close.
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	ffs.FailNth(OpRemove, 1)
	w.Abort()
	if len(mem.Files()) != 2 {
		t.Fatalf("files %v after Abort with a failed remove", mem.Files())
	}
	// Close reports a failed removal, and leaves exactly that file.
	ffs.FailNth(OpRemove, 2)
	err = s.Close()
	wantErr(t, err, ErrInjected, "remove")
	if left := mem.Files(); len(left) != 1 || !strings.Contains(err.Error(), left[0]) {
		t.Fatalf("files left %v, error %v", left, err)
	}
}

func TestFaultFSCount(t *testing.T) {
	ffs := NewFaultFS(NewMemFS())
	f, err := ffs.Create("a")
	if err != nil {
		t.Fatal(err)
	}
	ffs.FailNth(OpWrite, 2)
	for i := range 4 {
		_, err := f.Write([]byte("x"))
		if (i == 1) != errors.Is(err, ErrInjected) {
			t.Fatalf("write %d: %v", i+1, err)
		}
	}
	if ffs.Count(OpWrite) != 4 || ffs.Count(OpCreate) != 1 || ffs.Count(OpRead) != 0 {
		t.Fatalf("counts %d %d %d", ffs.Count(OpWrite), ffs.Count(OpCreate), ffs.Count(OpRead))
	}
	ffs.FailNth(OpWrite, 1)
	ffs.FailNth(OpWrite, 0) // cancels
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
}

// TestWriteErrorSurfacesOnAppend checks that a failed background write is
// returned by a later Append, before Finish, and that the Writer stays failed.
func TestWriteErrorSurfacesOnAppend(t *testing.T) {
	mem := NewMemFS()
	ffs := NewFaultFS(mem)
	s := NewSpace(ffs, "surface", Options{Codec: S2, BlockSize: 256})
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	ffs.FailNth(OpWrite, 1)
	rec := make([]byte, 100)
	var appendErr error
	for i := 0; i < 100 && appendErr == nil; i++ {
		appendErr = w.Append(rec)
	}
	wantErr(t, appendErr, ErrInjected, "write", w.Name(), "block 0")
	wantErr(t, w.Append(rec), ErrInjected, "write")
	_, err = w.Finish()
	wantErr(t, err, ErrInjected, "write")
	if len(mem.Files()) != 0 {
		t.Fatalf("files %v after a failed Finish", mem.Files())
	}
	w.Abort()
	closeSpace(t, s, mem)
}
