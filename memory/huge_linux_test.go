package memory

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestMakeHuge checks that MakeHuge returns a zeroed array of n elements and
// that the kernel marked its whole huge pages for huge pages: the mapping
// holding them has flag "hg" in /proc/self/smaps.
func TestMakeHuge(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages in this kernel:", err)
	}
	s := MakeHuge[uint64](3 << 20) // 24 MiB
	if len(s) != 3<<20 {
		t.Fatalf("len %d, want %d", len(s), 3<<20)
	}
	for i, v := range s {
		if v != 0 {
			t.Fatalf("element %d is %d, want 0", i, v)
		}
	}
	for i := range s {
		s[i] = uint64(i)
	}
	p := (uintptr(unsafe.Pointer(&s[0])) + hugePage - 1) &^ (hugePage - 1)
	if !vmFlag(t, p, "hg") {
		t.Errorf("the mapping at %#x has no hg flag: huge pages were not advised", p)
	}
	if s[len(s)-1] != uint64(len(s)-1) {
		t.Fatal("the array lost a write")
	}
}

// TestMakeHugeTouched checks that MakeHuge returns an array whose pages are
// all mapped (mincore), so that reads at random do not fault in the zero page
// first.
func TestMakeHugeTouched(t *testing.T) {
	for _, n := range []int{touchMin / 8, 3 << 20} { // 64 KiB, 24 MiB
		s := MakeHuge[uint64](n)
		const page = 4096
		p := unsafe.Pointer(&s[0])
		from := (page - uintptr(p)%page) % page // the first whole page's offset
		size := (uintptr(n)*8 - from) &^ (page - 1)
		if size == 0 {
			t.Fatalf("n=%d: no whole page", n)
		}
		b := unsafe.Slice((*byte)(unsafe.Add(p, from)), size)
		vec := make([]byte, size/page)
		if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			t.Skip("mincore:", errno)
		}
		missing := 0
		for _, v := range vec {
			if v&1 == 0 {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("n=%d: %d of %d pages not mapped after MakeHuge", n, missing, len(vec))
		}
		runtime.KeepAlive(s)
	}
}

// vmFlag reports whether the mapping holding address p has flag f in
// /proc/self/smaps.
func vmFlag(t *testing.T, p uintptr, f string) bool {
	file, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer file.Close()
	in := false
	s := bufio.NewScanner(file)
	for s.Scan() {
		line := s.Text()
		if r, _, ok := strings.Cut(line, " "); ok && strings.Contains(r, "-") && !strings.HasSuffix(r, ":") {
			lo, hi, _ := strings.Cut(r, "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(p) >= a && uint64(p) < b
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Contains(" "+flags+" ", " "+f+" ")
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return false
}
