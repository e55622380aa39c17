package s3

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/weirdata/weir/stream/checkpoint"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeS3 serves an in-process S3 with bucket "ckpt" and returns its
// configuration.
func fakeS3(t *testing.T) Config {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("ckpt"); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gofakes3.New(be, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(ts.Close)
	return Config{Endpoint: ts.URL, AccessKeyID: "weir", SecretAccessKey: "secret", Region: "us-east-1", Timeout: 5 * time.Second}
}

func snapshot(id int64, kind checkpoint.Kind, shared []string) *checkpoint.Snapshot {
	return &checkpoint.Snapshot{ID: id, Kind: kind, Timestamp: 1_700_000_000_000 + id, Fingerprint: "job",
		Operators: []checkpoint.OperatorState{
			{ID: "source", Name: "Source", Parallelism: 1, MaxParallelism: 128, Coordinator: []byte("enumerator"),
				Subtasks: []checkpoint.SubtaskState{{State: []byte(fmt.Sprintf("offsets %d", id)), InFlight: []byte("in flight"), Watermark: 5}}},
			{ID: "counts", Name: "KeyedProcess", Parallelism: 2, MaxParallelism: 128,
				Subtasks: []checkpoint.SubtaskState{{State: []byte(fmt.Sprintf("state 0 of %d", id)), Shared: shared}, {State: []byte{}}}},
		}}
}

// TestStorageOnS3 runs a checkpoint storage on an S3 server: checkpoints
// stored, retained and read back equal by a reopened storage; shared files
// kept while named; a savepoint self-contained and loaded back.
func TestStorageOnS3(t *testing.T) {
	cfg := fakeS3(t)
	ctx := context.Background()
	b, err := Open(ctx, cfg, "ckpt")
	if err != nil {
		t.Fatal(err)
	}
	bucket, prefix, err := ParseURL("s3://ckpt/jobs/wordcount/")
	if err != nil || bucket != "ckpt" || prefix != "jobs/wordcount" {
		t.Fatalf("ParseURL = %q, %q, %v", bucket, prefix, err)
	}
	d, err := checkpoint.OpenBucket(b, prefix, checkpoint.DirOptions{Retained: 1, Savepoints: "savepoints"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x.sst", "y.sst"} {
		w, err := d.CreateShared(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "sst %s", name)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Store(snapshot(1, checkpoint.Checkpoint, []string{"x.sst"})); err != nil {
		t.Fatal(err)
	}
	want := snapshot(2, checkpoint.Checkpoint, []string{"y.sst"})
	where, err := d.Store(want)
	if err != nil || where != "s3://ckpt/jobs/wordcount/chk-2" {
		t.Fatalf("Store = %q, %v", where, err)
	}
	keys, err := b.List(ctx, prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, "chk-1") || strings.HasSuffix(k, "x.sst") {
			t.Fatalf("checkpoint 1 or its shared file outlived its retention: %v", keys)
		}
	}
	d2, err := checkpoint.OpenBucket(b, prefix, checkpoint.DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, at, err := d2.Latest()
	if err != nil || !reflect.DeepEqual(got, want) || at != where {
		t.Fatalf("Latest = %+v at %q, %v", got, at, err)
	}
	sp := snapshot(3, checkpoint.Savepoint, []string{"y.sst"})
	spAt, err := d.Store(sp)
	if err != nil || !strings.HasPrefix(spAt, "s3://ckpt/savepoints/savepoint-") {
		t.Fatalf("savepoint at %q, %v", spAt, err)
	}
	if got, err := checkpoint.LoadBucket(b, strings.TrimPrefix(spAt, "s3://ckpt/")); err != nil || !reflect.DeepEqual(got, sp) {
		t.Fatalf("LoadBucket = %+v, %v", got, err)
	}
	r, err := b.Get(ctx, strings.TrimPrefix(spAt, "s3://ckpt/")+"/shared/y.sst")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r)
	r.Close()
	if string(body) != "sst y.sst" {
		t.Fatalf("the savepoint's y.sst reads %q", body)
	}
	if _, err := b.Get(ctx, "no/such/key"); err == nil || !strings.Contains(err.Error(), "s3://ckpt/no/such/key") {
		t.Fatalf("Get of a missing key: %v", err)
	}
}

// TestOpenErrors: a missing bucket and an unreachable endpoint are errors
// naming them, the latter within the timeout.
func TestOpenErrors(t *testing.T) {
	cfg := fakeS3(t)
	if _, err := Open(context.Background(), cfg, "nope"); err == nil || !strings.Contains(err.Error(), "bucket nope at 127.0.0.1:") {
		t.Fatalf("Open of a missing bucket: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg.Endpoint, cfg.Timeout = "http://"+addr, 2*time.Second
	start := time.Now()
	_, err = Open(context.Background(), cfg, "ckpt")
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Open of an unreachable endpoint: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Open of an unreachable endpoint took %v", d)
	}
	for _, u := range []string{"s3://", "file:///x", "s3:///x"} {
		if _, _, err := ParseURL(u); err == nil {
			t.Errorf("ParseURL(%q) succeeded", u)
		}
	}
}
