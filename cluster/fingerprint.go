package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
)

// Fingerprint names the build of a binary: a TaskManager registers with
// its own and a JobManager refuses one unlike its own, as the two would
// not run the same program.
type Fingerprint struct {
	// Module and Version are the main module's path and version.
	Module  string `json:"module"`
	Version string `json:"version"`
	// Revision is the VCS revision the binary was built at ("" if
	// unknown), with "+dirty" when the tree had changes.
	Revision string `json:"revision"`
	// Binary is the SHA-256 of the executable, in hex.
	Binary string `json:"binary"`
}

func (f Fingerprint) String() string {
	rev := f.Revision
	if rev == "" {
		rev = "no revision"
	}
	bin := f.Binary
	if len(bin) > 12 {
		bin = bin[:12]
	}
	return fmt.Sprintf("%s@%s (%s, binary sha256 %s)", f.Module, f.Version, rev, bin)
}

var (
	ownOnce sync.Once
	own     Fingerprint
	ownErr  error
)

// Own returns the fingerprint of the running binary, computed once.
func Own() (Fingerprint, error) {
	ownOnce.Do(func() { own, ownErr = compute() })
	return own, ownErr
}

func compute() (Fingerprint, error) {
	var f Fingerprint
	if bi, ok := debug.ReadBuildInfo(); ok {
		f.Module, f.Version = bi.Main.Path, bi.Main.Version
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				f.Revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && f.Revision != "" {
			f.Revision += "+dirty"
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return f, fmt.Errorf("cluster: fingerprint: %w", err)
	}
	file, err := os.Open(exe)
	if err != nil {
		return f, fmt.Errorf("cluster: fingerprint: %w", err)
	}
	defer file.Close()
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return f, fmt.Errorf("cluster: fingerprint: %s: %w", exe, err)
	}
	f.Binary = hex.EncodeToString(h.Sum(nil))
	return f, nil
}

// ErrFingerprint is wrapped by the error of a TaskManager refused for
// another build.
var ErrFingerprint = fmt.Errorf("cluster: build fingerprint mismatch")

// CheckFingerprint returns nil if a TaskManager's fingerprint tm matches
// its JobManager's jm, else an error naming both.
func CheckFingerprint(jm, tm Fingerprint) error {
	if jm == tm {
		return nil
	}
	return fmt.Errorf("%w: the JobManager runs %s, the TaskManager %s: run the same binary in both roles", ErrFingerprint, jm, tm)
}
