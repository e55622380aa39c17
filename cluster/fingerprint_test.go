package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestOwn: the fingerprint's binary hash is the test executable's SHA-256,
// computed here independently.
func TestOwn(t *testing.T) {
	f, err := Own()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if f.Binary != hex.EncodeToString(sum[:]) {
		t.Fatalf("binary hash %s, want %x", f.Binary, sum)
	}
	if f.Module != "github.com/weirdata/weir" {
		t.Fatalf("module %q", f.Module)
	}
}

// TestCheckFingerprint: equal fingerprints pass; another binary is refused
// with an error naming both.
func TestCheckFingerprint(t *testing.T) {
	a := Fingerprint{Module: "m", Version: "v1", Revision: "abc", Binary: strings.Repeat("1", 64)}
	if err := CheckFingerprint(a, a); err != nil {
		t.Fatal(err)
	}
	b := a
	b.Binary = strings.Repeat("2", 64)
	err := CheckFingerprint(a, b)
	if !errors.Is(err, ErrFingerprint) || !strings.Contains(err.Error(), "111111111111") || !strings.Contains(err.Error(), "222222222222") {
		t.Fatalf("mismatch: %v", err)
	}
}
