//go:build !linux

package memory

func totalMemory() int64 { return 0 }
