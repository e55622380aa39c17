package stream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
)

// failing runs keyedSums over n numbers, failing each attempt with err at
// number 190 once a checkpoint completed after 60; it returns the job's
// error and the failures reported.
func failing(t *testing.T, restart *RestartStrategy, err error) (error, []AttemptFailure, CheckpointHistory) {
	jerr, reported, h, _ := failingJob(t, restart, err)
	return jerr, reported, h
}

// failingJob is failing, returning the job too.
func failingJob(t *testing.T, restart *RestartStrategy, err error) (error, []AttemptFailure, CheckpointHistory, *Job) {
	t.Helper()
	const n = 200
	src := newGated(ints(n))
	var mu sync.Mutex
	var reported []AttemptFailure
	opts := Options{Parallelism: 2, Clock: manual(), Restart: restart, OnAttemptFailure: func(f AttemptFailure) {
		mu.Lock()
		reported = append(reported, f)
		mu.Unlock()
	}}
	env := New(opts)
	env.EnableCheckpointing(time.Hour)
	keyedSums(env, src, n, t.TempDir(), func(v int) error {
		if v == 190 {
			return err
		}
		return nil
	})
	jobs := make(chan *Job, 1)
	env.opts.Started = func(j *Job) { jobs <- j }
	done := make(chan error, 1)
	go func() {
		_, err := env.Execute(context.Background())
		done <- err
	}()
	j := <-jobs
	src.release(60)
	if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	src.open()
	jerr := <-done
	mu.Lock()
	defer mu.Unlock()
	return jerr, reported, j.Checkpoints(), j
}

// A failure that recurs is reported for each attempt with its number, its
// cause and the checkpoint the next attempt restores from; once the
// strategy allows no more restarts the job fails saying so.
func TestAttemptFailuresReported(t *testing.T) {
	boom := errors.New("poison record")
	err, reported, h, j := failingJob(t, FixedDelayRestart(2, 0), boom)
	ex, truncated := j.Exceptions()
	if len(ex) != 3 || truncated {
		t.Fatalf("exceptions %+v (truncated %v), want the 3 failures", ex, truncated)
	}
	for i, e := range ex {
		if e.Attempt != i+1 || !strings.Contains(e.Err, "poison record") || e.Time.IsZero() {
			t.Errorf("exception %d: %+v", i, e)
		}
	}
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "attempt 3 failed and the restart strategy allows no more restarts (fixed-delay: 2 restarts)") {
		t.Fatalf("job error %v", err)
	}
	if len(reported) != 3 || h.Restarts != 2 {
		t.Fatalf("reported %+v, restarts %d: want 3 failures and 2 restarts", reported, h.Restarts)
	}
	for i, f := range reported {
		last := i == 2
		if f.Attempt != i+1 || !errors.Is(f.Err, boom) || f.Restart == last {
			t.Errorf("failure %d: %+v", i, f)
		}
		if !last && f.Restore != "memory:checkpoint-1" {
			t.Errorf("failure %d restores from %q, want memory:checkpoint-1", i, f.Restore)
		}
		if last && !strings.Contains(f.Reason, "no more restarts") {
			t.Errorf("last failure's reason %q", f.Reason)
		}
	}
}

// An unrecoverable failure ends the job at once, whatever the strategy.
func TestUnrecoverableEndsJob(t *testing.T) {
	boom := errors.New("record has no timestamp")
	err, reported, h := failing(t, FixedDelayRestart(5, 0), Unrecoverable(boom))
	if !errors.Is(err, boom) || !IsUnrecoverable(err) || !strings.Contains(err.Error(), "attempt 1 failed and the failure is unrecoverable") {
		t.Fatalf("job error %v", err)
	}
	if len(reported) != 1 || reported[0].Restart || h.Restarts != 0 {
		t.Fatalf("reported %+v, restarts %d: want one failure and no restart", reported, h.Restarts)
	}
	if IsUnrecoverable(boom) || IsUnrecoverable(nil) || Unrecoverable(nil) != nil {
		t.Error("IsUnrecoverable of a plain error or nil")
	}
}

// failStore fails the Store of one checkpoint id.
type failStore struct {
	*checkpoint.Memory
	id  int64
	err error
}

func (f *failStore) Store(s *checkpoint.Snapshot) (string, error) {
	if s.ID == f.id {
		return "", f.err
	}
	return f.Memory.Store(s)
}

// A failed checkpoint is reported; with no failure tolerated (Flink's
// default) it fails the attempt naming the checkpoint and its cause, with
// one tolerated the job runs on and the next checkpoint completes.
func TestTolerableCheckpointFailures(t *testing.T) {
	enospc := errors.New("no space left on device")
	for _, tolerable := range []int{0, 1} {
		src := newGated(ints(200))
		env := New(Options{Parallelism: 1, Clock: manual(), Restart: NoRestart()})
		cfg := env.EnableCheckpointing(time.Hour)
		cfg.Storage = &failStore{Memory: checkpoint.NewMemory(1), id: 2, err: enospc}
		cfg.TolerableFailures = tolerable
		var failed []int64
		var mu sync.Mutex
		cfg.OnFailure = func(id int64, err error) {
			mu.Lock()
			defer mu.Unlock()
			if !errors.Is(err, enospc) {
				t.Errorf("checkpoint %d failed with %v", id, err)
			}
			failed = append(failed, id)
		}
		keyedSums(env, src, 200, t.TempDir(), nil)
		j, err := env.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		src.release(10)
		if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := j.TriggerCheckpoint(context.Background()); !errors.Is(err, enospc) {
			t.Fatalf("checkpoint 2: %v", err)
		}
		if tolerable == 0 {
			_, err := j.Wait()
			if !errors.Is(err, enospc) || !strings.Contains(err.Error(), "too many failed checkpoints in a row (1, 0 tolerated): stream: checkpoint aborted: checkpoint 2: no space left on device") {
				t.Fatalf("tolerating 0: job error %v", err)
			}
		} else {
			if id, err := j.TriggerCheckpoint(context.Background()); err != nil || id != 3 {
				t.Fatalf("tolerating 1: checkpoint %d: %v", id, err)
			}
			src.open()
			if _, err := j.Wait(); err != nil {
				t.Fatalf("tolerating 1: %v", err)
			}
		}
		mu.Lock()
		if len(failed) != 1 || failed[0] != 2 {
			t.Errorf("tolerating %d: reported failures %v, want checkpoint 2", tolerable, failed)
		}
		mu.Unlock()
		if h := j.Checkpoints(); h.Failed != 1 || len(h.Completed) != 1+tolerable {
			t.Errorf("tolerating %d: %d failed and %d completed checkpoints counted, want 1 and %d", tolerable, h.Failed, len(h.Completed), 1+tolerable)
		}
	}
}

// A checkpoint storage serves one job: another program, or the same
// program with another fingerprint, is refused (unrecoverable, naming the
// checkpoint), unless it allows non-restored state.
func TestFingerprintRefused(t *testing.T) {
	store, out := checkpoint.NewMemory(1), t.TempDir()
	run := func(fp string, allow bool) error {
		src := newGated(ints(50))
		env := New(Options{Parallelism: 1, Clock: manual(), Fingerprint: fp, AllowNonRestoredState: allow, Restart: NoRestart()})
		env.EnableCheckpointing(time.Hour).Storage = store
		keyedSums(env, src, 50, out, nil)
		j, err := env.Start(context.Background())
		if err != nil {
			return err
		}
		src.release(10)
		if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
			t.Fatal(err)
		}
		j.Cancel()
		j.Wait()
		return nil
	}
	if err := run("job a", false); err != nil {
		t.Fatal(err)
	}
	if err := run("job a", false); err != nil {
		t.Fatalf("the same job resumes: %v", err)
	}
	err := run("job b", false)
	if !IsUnrecoverable(err) || !strings.Contains(err.Error(), "memory:checkpoint-2 is a checkpoint of another job") {
		t.Fatalf("another job: %v", err)
	}
	if err := run("job b", true); err != nil {
		t.Fatalf("another job allowing non-restored state: %v", err)
	}
}

// A job keeps its last 64 failures and says it dropped older ones.
func TestExceptionsTruncated(t *testing.T) {
	l := &failureLog{}
	for i := 1; i <= 70; i++ {
		l.add(Exception{Attempt: i})
	}
	j := &Job{failures: l}
	ex, truncated := j.Exceptions()
	if len(ex) != 64 || ex[0].Attempt != 7 || ex[63].Attempt != 70 || !truncated {
		t.Fatalf("%d exceptions from attempt %d to %d, truncated %v", len(ex), ex[0].Attempt, ex[len(ex)-1].Attempt, truncated)
	}
}
