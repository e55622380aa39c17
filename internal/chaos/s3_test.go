package chaos

import (
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// TestKillRestartS3 is the kill loop with the checkpoints in S3 (an
// in-process S3 server the killed processes reach over HTTP): window-stats
// on the heap backend and word count on the disk backend, whose
// incremental checkpoints put the store's files as shared objects.
func TestKillRestartS3(t *testing.T) {
	bin := weir(t)
	be := s3mem.New()
	if err := be.CreateBucket("ckpt"); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gofakes3.New(be, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	defer ts.Close()
	t.Setenv("AWS_ENDPOINT_URL", ts.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "weir")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "us-east-1")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	for _, c := range []struct {
		jb    job
		flags []string
	}{
		{windowStatsJob(t, 500*kills), backends["heap"]},
		{wordCountJob(t, 150*kills), backends["disk"]},
	} {
		oracle, lateOracle := uninterrupted(t, bin, c.jb)
		t.Run(c.jb.name, func(t *testing.T) {
			killLoop(t, bin, c.jb, oracle, lateOracle, "s3://ckpt/"+c.jb.name, r, c.flags)
		})
	}
}
