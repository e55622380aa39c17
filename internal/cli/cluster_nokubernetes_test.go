//go:build !kubernetes

package cli

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestHAKubernetesNotBuilt: --ha kubernetes in a build without the
// backend says how to get one.
func TestHAKubernetesNotBuilt(t *testing.T) {
	withNamespaceFile(t, filepath.Join(t.TempDir(), "none"))
	s, err := haOf(t, "--ha", "kubernetes").open(context.Background())
	if s != nil || !errors.Is(err, errNoKubernetes) {
		t.Fatalf("store %v, error %v: want errNoKubernetes", s, err)
	}
}
