package dataset

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines. In -short mode (the race run of
// CI) every test runs two of the configurations, parallel and spilling:
// the race detector needs the concurrency, not every parallelism.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		configs = []config{allConfigs[1], allConfigs[3]}
	}
	goleak.VerifyTestMain(m)
}
