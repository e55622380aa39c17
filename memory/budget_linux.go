package memory

import "syscall"

// totalMemory returns the machine's memory in bytes, or 0 without a reading.
func totalMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
