//go:build !linux

package cli

func totalMemory() int64 { return 0 }
