package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// BinaryEnv names a weir binary built beforehand. When it is set, Binary
// returns it instead of building one: .ci/run builds the binary once for
// the three packages that run it.
const BinaryEnv = "WEIR_TEST_BIN"

var (
	buildOnce sync.Once
	buildDir  string
	builtBin  string
	buildErr  error
)

// Binary returns the weir binary, built once per test binary from
// cmd/weir (or $WEIR_TEST_BIN). It skips the test under -short, and
// without a go command when it must build. why says in the skip message
// what the test does with the binary.
func Binary(t testing.TB, why string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: runs without -short only", why)
	}
	if bin := os.Getenv(BinaryEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("$%s: %v", BinaryEnv, err)
		}
		return bin
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Skipf("no go command: %v", err)
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "weir-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "weir")
		out, err := exec.Command(goBin, "build", "-o", builtBin, "github.com/weirdata/weir/cmd/weir").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// RemoveBinary removes the binary Binary built, if any; TestMain calls
// it after the tests.
func RemoveBinary() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}
