//go:build !linux

package memory

import "unsafe"

func adviseHuge(unsafe.Pointer, uintptr) {}
