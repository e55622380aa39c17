package clustertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/rest"
)

// TestStreamSpreadKill: a JobManager and three TaskManagers (2 slots
// each) on loopback; window-stats submitted at parallelism 4, which no
// TaskManager holds alone, runs spread over two of them (their slots all
// taken), checkpointing every 200 ms. A TaskManager running a share of it
// is killed with SIGKILL, each after it ran 0.8-1.6 s, and started
// again, then one of the other share: the attempt fails as a whole and the next one, spread over the
// TaskManagers left, restores the latest checkpoint in every share. The
// job ends FINISHED with the committed output and late output of an
// uninterrupted embedded run: 0 records lost, 0 duplicated. Once with
// aligned checkpoints, once with unaligned ones.
func TestStreamSpreadKill(t *testing.T) {
	for _, unaligned := range []bool{false, true} {
		t.Run(fmt.Sprintf("unaligned=%v", unaligned), func(t *testing.T) { streamSpreadKill(t, unaligned) })
	}
}

func streamSpreadKill(t *testing.T, unaligned bool) {
	bin := weir(t)
	job := windowStatsArgs(t, 12000)
	job[len(job)-1] = "4" // --parallelism
	want, wantLate := oracle(t, bin, job)

	_, rpcAddr, restURL := startJobManager(t, bin, t.TempDir())
	tms := map[string]*proc{}
	startTM := func(id string) {
		tms[id] = start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "2", "--id", id)
	}
	for _, id := range []string{"tm1", "tm2", "tm3"} {
		startTM(id)
	}
	c := rest.NewClient(restURL, "")
	poll(t, "three TaskManagers", 20*time.Second, func() bool {
		tms, err := c.TaskManagers(context.Background())
		return err == nil && len(tms) == 3
	})
	submitted := job
	if unaligned {
		submitted = append(slices.Clone(job), "--unaligned-checkpoints")
	}
	jid, out, late := submitDetached(t, bin, restURL, submitted)
	// the TaskManagers whose slots the job holds, once it holds 4
	busy := func() []string {
		var ids []string
		poll(t, "the job spread over two TaskManagers", 20*time.Second, func() bool {
			ids = ids[:0]
			list, err := c.TaskManagers(context.Background())
			if err != nil {
				return false
			}
			used := 0
			for _, tm := range list {
				if tm.FreeSlots < tm.SlotsNumber {
					ids = append(ids, tm.ID)
					used += tm.SlotsNumber - tm.FreeSlots
				}
			}
			return used == 4
		})
		slices.Sort(ids)
		return ids
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	for k := range 2 {
		ids := busy()
		if len(ids) != 2 {
			t.Fatalf("the job holds slots of %v, want two TaskManagers", ids)
		}
		recorded(t, c, jid)
		time.Sleep(time.Duration(800+r.IntN(800)) * time.Millisecond)
		if _, state := maxParallelism(c, jid); rest.Ended(state) {
			t.Fatalf("the job ended %s after %d kills: make its input longer", state, k)
		}
		id := ids[k%2] // one share's TaskManager, then the other's
		tms[id].kill(t)
		t.Logf("killed %s of %v", id, ids)
		startTM(id)
	}
	ck := exact(t, c, jid, out, late, want, wantLate)
	if ck.Latest.Restored == nil {
		t.Fatal("the job never restored a checkpoint")
	}
	ex, err := c.Exceptions(context.Background(), jid)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ex.History.Entries {
		t.Logf("exception: %s", firstLine(e.Stacktrace))
	}
	if p, _ := maxParallelism(c, jid); p != 4 {
		t.Errorf("the job's vertices had parallelism %d, want 4", p)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
