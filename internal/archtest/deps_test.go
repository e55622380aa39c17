package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// deps returns the packages pkgs link (go list -deps) with the build tags.
func deps(t *testing.T, tags string, pkgs ...string) map[string]bool {
	t.Helper()
	args := []string{"list", "-deps"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(cmd.Args[1:], " "), err)
	}
	m := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		m[p] = true
	}
	return m
}

// linked returns the packages of m under any of the prefixes.
func linked(m map[string]bool, prefixes ...string) []string {
	var out []string
	for p := range m {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// TestLinkedDependencies: what the heavy dependencies weigh on.
//   - The weir binary links the Kubernetes backend only when built with the
//     tag kubernetes (as the Dockerfile builds it): client-go is a third of
//     the binary and of its resident pages without it.
//   - A program of the DataSet API over Parquet links neither the disk state
//     backend (pebble and its error and crash-report packages) nor the
//     metrics exporter.
func TestLinkedDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the whole binary")
	}
	k8s := []string{"k8s.io", "sigs.k8s.io", module + "/cluster/ha/kubernetes"}
	if got := linked(deps(t, "", "./cmd/weir"), k8s...); len(got) > 0 {
		t.Errorf("the default weir binary links %d Kubernetes packages, e.g. %s", len(got), got[0])
	}
	if got := linked(deps(t, "kubernetes", "./cmd/weir"), module+"/cluster/ha/kubernetes"); len(got) == 0 {
		t.Error("weir built with -tags kubernetes does not link cluster/ha/kubernetes")
	}
	heavy := []string{"github.com/cockroachdb/pebble", "github.com/getsentry/sentry-go", "github.com/gogo/protobuf", "github.com/prometheus/client_golang"}
	if got := linked(deps(t, "", "./dataset", "./formats/parquet"), heavy...); len(got) > 0 {
		t.Errorf("dataset and formats/parquet link %s", strings.Join(got, ", "))
	}
}
