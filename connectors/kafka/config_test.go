package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/watermark"
)

// TestSASL: a cluster that authenticates by SASL is read with the right
// credentials, PLAIN and SCRAM, and refused with a wrong password.
func TestSASL(t *testing.T) {
	for _, mech := range []string{SASLPlain, SASLScramSHA256, SASLScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "in"), kfake.EnableSASL(),
				kfake.Superuser(mech, "weir", "secret"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			cfg := Config{Brokers: c.ListenAddrs(), Timeout: 2 * time.Second, SASL: &SASL{Mechanism: mech, User: "weir", Password: "secret"}}
			want := produceSpread(t, cfg, "in", "r", 2, 20)
			src, err := NewSource(cfg, SourceOptions{Topics: []string{"in"}, Bounded: true}, Values())
			if err != nil {
				t.Fatal(err)
			}
			env := stream.New(stream.Options{Parallelism: 1})
			out := stream.Collect(stream.FromSource(env, src, watermark.NoWatermarks[string](), "kafka"))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := sameSet(out.Values(), want); err != nil {
				t.Fatal(err)
			}
			bad := cfg
			bad.SASL = &SASL{Mechanism: mech, User: "weir", Password: "wrong"}
			if _, err := bad.connect(); !errors.Is(err, ErrUnreachable) {
				t.Fatalf("a wrong password: %v", err)
			}
		})
	}
}

// TestConfigValidate: what cannot work is refused before anything runs.
func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{Brokers: []string{"a:1,b:2"}},
		{Brokers: []string{"a:1"}, Timeout: -1},
		{Brokers: []string{"a:1"}, SASL: &SASL{Mechanism: "GSSAPI", User: "u"}},
		{Brokers: []string{"a:1"}, SASL: &SASL{Mechanism: "PLAIN"}},
		{Brokers: []string{"a:1"}, TLS: &TLS{CertFile: "c.pem"}},
	} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
		}
	}
	if err := (Config{Brokers: ParseBrokers(" a:1, b:2 ,")}).Validate(); err != nil {
		t.Error(err)
	}
	if got := ParseBrokers(" a:1, b:2 ,"); len(got) != 2 || got[0] != "a:1" || got[1] != "b:2" {
		t.Errorf("ParseBrokers: %q", got)
	}
	for _, s := range []string{"earliest", "latest", "committed", "committed-or-latest", "timestamp:17"} {
		o, err := ParseOffsets(s)
		if err != nil || o.String() != s {
			t.Errorf("ParseOffsets(%q) = %v, %v", s, o, err)
		}
	}
	for _, s := range []string{"", "first", "timestamp:", "timestamp:-1"} {
		if _, err := ParseOffsets(s); err == nil {
			t.Errorf("ParseOffsets(%q) accepted", s)
		}
	}
	for _, s := range []string{"exactly-once", "at-least-once"} {
		d, err := ParseDelivery(s)
		if err != nil || d.String() != s {
			t.Errorf("ParseDelivery(%q) = %v, %v", s, d, err)
		}
	}
}

// TestEncodings: committables and writer states read back what was
// written, and truncated or altered bytes are refused.
func TestEncodings(t *testing.T) {
	c := Committable{TransactionalID: "job-3-17", ProducerID: 1 << 40, Epoch: 12}
	b, _ := c.MarshalBinary()
	var got Committable
	if err := got.UnmarshalBinary(b); err != nil || got != c {
		t.Fatalf("committable: %v, %v", got, err)
	}
	for i := range len(b) {
		if err := got.UnmarshalBinary(b[:i]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("committable cut at %d: %v", i, err)
		}
	}
	if err := got.UnmarshalBinary(append(b, 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("committable with a trailing byte: %v", err)
	}
	s := writerState{prefix: "job", subtask: 3, next: 17}
	sb := s.marshal()
	var gs writerState
	if err := gs.unmarshal(sb); err != nil || gs != s {
		t.Fatalf("writer state: %v, %v", gs, err)
	}
	for i := range len(sb) {
		if err := gs.unmarshal(sb[:i]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("writer state cut at %d: %v", i, err)
		}
	}
}
