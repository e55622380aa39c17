package disk_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine running: a
// store's Pebble goroutines end with Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
