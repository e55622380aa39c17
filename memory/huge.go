package memory

import "unsafe"

// hugeMin is the size from which MakeHuge asks for huge pages: below it a
// table's pages fit the TLB anyway.
const hugeMin = 4 << 20

// hugePage is the size of a transparent huge page on amd64 and arm64 Linux.
const hugePage = 2 << 20

// MakeHuge returns make([]T, n), and, when its array is at least hugeMin
// bytes, asks the kernel to back its whole huge pages with transparent huge
// pages (madvise MADV_HUGEPAGE, on Linux; a no-op elsewhere, or where the
// kernel refuses). Go's runtime does not ask for them, and on kernels whose
// transparent_hugepage setting is "madvise" (Debian's default) a large array
// that is accessed at random (a dense group table, a join's direct index)
// then takes a TLB miss on nearly every access; huge pages cut those
// misses. The advice covers only pages the array wholly holds
// and changes nothing Go relies on: it takes effect on the pages a fresh
// array faults in, and is advice the kernel may ignore.
//
// An array of at least touchMin bytes is also written once, in order, before
// it is returned. A hash table's slots and a dense index are read before they
// are written: a fresh page read first maps the shared zero page, and the
// first write then faults again to copy it, with a TLB flush on every thread
// of the process. Written in order, each page faults once (a huge page once
// for 2 MiB), and the reads that follow find it mapped.
func MakeHuge[T any](n int) []T {
	s := make([]T, n)
	var zero T
	size := uintptr(n) * unsafe.Sizeof(zero)
	if size >= hugeMin {
		adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	if size >= touchMin {
		clear(s)
	}
	return s
}

// touchMin is the size from which MakeHuge writes an array once: below it
// the faults are few.
const touchMin = 64 << 10
