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
func MakeHuge[T any](n int) []T {
	s := make([]T, n)
	var zero T
	if size := uintptr(n) * unsafe.Sizeof(zero); size >= hugeMin {
		adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	return s
}
