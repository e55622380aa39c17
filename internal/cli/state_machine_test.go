package cli

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weirdata/weir/examples/streaming"
)

// naiveAlerts runs Flink's state machine over events with its transition
// table written out again, a map of addresses to state names, and returns
// the alert lines sorted.
func naiveAlerts(events []streaming.Event) []string {
	next := map[string]map[string]string{
		"Initial": {"a": "W", "c": "X"},
		"W":       {"b": "Y"},
		"X":       {"b": "Y", "d": "Z"},
		"Y":       {"e": "Z"},
		"Z":       {"g": "Terminal"},
	}
	states := map[int32]string{}
	var alerts []string
	for _, e := range events {
		s, ok := states[e.Address]
		if !ok {
			s = "Initial"
		}
		ev := string(rune('a' + e.Type))
		to, ok := next[s][ev]
		switch {
		case !ok:
			u := uint32(e.Address)
			alerts = append(alerts, fmt.Sprintf("ALERT %d.%d.%d.%d : %s -> %s", u>>24, u>>16&0xff, u>>8&0xff, u&0xff, s, ev))
		case to == "Terminal":
			delete(states, e.Address)
		default:
			states[e.Address] = to
		}
	}
	slices.Sort(alerts)
	return alerts
}

// TestStateMachine follows Flink's StateMachineExample: the alerts printed
// for a seed's events equal a naive run of the transition table over the
// same events, at parallelism 1 and 2; without errors there are none.
func TestStateMachine(t *testing.T) {
	for _, c := range []struct {
		seed      int64
		errorRate float64
		events    int
	}{{7, 0.05, 20000}, {1, 0.3, 3000}, {3, 0, 20000}} {
		events, err := streaming.GenerateEvents(c.seed, c.errorRate, c.events)
		if err != nil {
			t.Fatal(err)
		}
		want := naiveAlerts(events)
		if (len(want) == 0) != (c.errorRate == 0) {
			t.Fatalf("seed %d error rate %v: %d alerts in the oracle", c.seed, c.errorRate, len(want))
		}
		for _, p := range []int{1, 2} {
			code, stdout, stderr := runWeir(context.Background(), "run", "state-machine", "--seed", fmt.Sprint(c.seed),
				"--error-rate", fmt.Sprint(c.errorRate), "--events", fmt.Sprint(c.events), "--parallelism", fmt.Sprint(p))
			if code != 0 || stderr != "" {
				t.Fatalf("seed %d p%d: exit %d, stderr %q", c.seed, p, code, stderr)
			}
			if got := printedLines(t, stdout, p); !slices.Equal(got, want) {
				t.Errorf("seed %d error rate %v p%d: %d alerts, want %d; first %q, want %q", c.seed, c.errorRate, p,
					len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
			}
		}
	}
}

func TestStateMachineBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--events", "-1"}, {"--error-rate", "2"}, {"--rate", "-5"}} {
		code, _, stderr := runWeir(context.Background(), append([]string{"run", "state-machine"}, args...)...)
		if code != 1 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}
