package cli

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// fakeS3Env serves an in-process S3 with bucket "ckpt", points the AWS
// environment variables at it, and returns the paths of the objects put so
// far.
func fakeS3Env(t *testing.T) (puts func() []string) {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("ckpt"); err != nil {
		t.Fatal(err)
	}
	h := gofakes3.New(be, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()
	var mu sync.Mutex
	var paths []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Setenv("AWS_ENDPOINT_URL", ts.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "weir")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "us-east-1")
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(paths)
	}
}

// A stream job checkpoints into S3: its output equals a run without
// checkpoints, a second run finds it finished there, a savepoint of it
// inspects and restores from its URL, and the S3 flags' misuses are
// refused with their reasons.
func TestStreamCheckpointsOnS3(t *testing.T) {
	puts := fakeS3Env(t)
	in := statsCSV(t, 3000)
	plain := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runWeir(context.Background(), statsArgs(in, "--output", plain)...); code != 0 {
		t.Fatalf("plain run: code %d, %q", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	args := statsArgs(in, "--checkpoint-dir", "s3://ckpt/jobs/stats", "--checkpoint-interval", "20ms", "--rate", "10000", "--output", out, "--parallelism", "2")
	if code, _, stderr := runWeir(context.Background(), args...); code != 0 {
		t.Fatalf("run on S3: code %d, %q", code, stderr)
	}
	want := readPartsSorted(t, plain)
	if got := readPartsSorted(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) == 0 {
		t.Fatalf("output with S3 checkpoints: %d lines, want the %d of the plain run", len(got), len(want))
	}
	// The disk backend's incremental checkpoints put their store's files
	// as shared objects.
	outDisk := filepath.Join(t.TempDir(), "out")
	disk := statsArgs(in, "--checkpoint-dir", "s3://ckpt/jobs/stats-disk", "--checkpoint-interval", "20ms", "--rate", "10000",
		"--state-backend", "disk", "--incremental-checkpoints", "--output", outDisk)
	if code, _, stderr := runWeir(context.Background(), disk...); code != 0 {
		t.Fatalf("run on S3 with the disk backend: code %d, %q", code, stderr)
	}
	if got := readPartsSorted(t, outDisk); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("output with incremental S3 checkpoints: %d lines, want the %d of the plain run", len(got), len(want))
	}
	if !slices.ContainsFunc(puts(), func(p string) bool { return strings.HasPrefix(p, "/ckpt/jobs/stats-disk/shared/") }) {
		t.Fatal("the disk backend's checkpoints put no shared objects")
	}
	if code, _, stderr := runWeir(context.Background(), disk...); code != 0 || !strings.Contains(stderr, "the job already finished at checkpoint") {
		t.Fatalf("second run with the disk backend: code %d, %q", code, stderr)
	}
	code, _, stderr := runWeir(context.Background(), args...)
	m := regexp.MustCompile(`the job already finished at checkpoint (\d+) \((s3://ckpt/jobs/stats/chk-\d+)\)`).FindStringSubmatch(stderr)
	if code != 0 || m == nil || m[1] == "1" {
		t.Fatalf("second run: code %d, %q; want it finished after more than one checkpoint", code, stderr)
	}
	code, stdout, stderr := runWeir(context.Background(), "savepoint", "inspect", m[2])
	if code != 0 || !strings.Contains(stdout, m[2]) || !strings.Contains(stdout, "checkpoint "+m[1]) {
		t.Fatalf("inspect %s: code %d, %q, %q", m[2], code, stdout, stderr)
	}
	code, _, stderr = runWeir(context.Background(), statsArgs(in, "--from-savepoint", m[2], "--output", out)...)
	if code != 0 || !strings.Contains(stderr, "the job already finished at checkpoint "+m[1]) {
		t.Fatalf("--from-savepoint %s: code %d, %q", m[2], code, stderr)
	}
	code, _, stderr = runWeir(context.Background(), statsArgs(in, "--savepoint-dir", "s3://ckpt/sp", "--output", t.TempDir())...)
	if code != 1 || !strings.Contains(stderr, "--checkpoint-dir in the same bucket") {
		t.Fatalf("--savepoint-dir on S3 alone: code %d, %q", code, stderr)
	}
	code, _, stderr = runWeir(context.Background(), statsArgs(in, "--checkpoint-dir", "s3://nope/x", "--output", t.TempDir())...)
	if code != 1 || !strings.Contains(stderr, "bucket nope at 127.0.0.1:") {
		t.Fatalf("a missing bucket: code %d, %q", code, stderr)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("AWS_ENDPOINT_URL", "http://"+addr)
	code, _, stderr = runWeir(context.Background(), statsArgs(in, "--checkpoint-dir", "s3://ckpt/x", "--output", t.TempDir())...)
	if code != 1 || !strings.Contains(stderr, addr) {
		t.Fatalf("an unreachable endpoint: code %d, %q", code, stderr)
	}
}
