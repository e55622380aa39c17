package memory

import (
	"syscall"
	"unsafe"
)

// madvHugepage is MADV_HUGEPAGE, which package syscall does not name.
const madvHugepage = 14

// adviseHuge advises huge pages for the whole huge pages within [p, p+size).
func adviseHuge(p unsafe.Pointer, size uintptr) {
	from := (uintptr(p) + hugePage - 1) &^ (hugePage - 1)
	to := (uintptr(p) + size) &^ (hugePage - 1)
	if to <= from {
		return
	}
	// advice: an error (an old kernel, THP compiled out) leaves the pages as they are
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, from, to-from, madvHugepage)
}
