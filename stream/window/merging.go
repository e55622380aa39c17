package window

import (
	"fmt"
	"slices"
)

// Mapping is one in-flight window of a merging assigner and its state
// window: the window whose namespace holds the merged contents.
type Mapping[W Window] struct {
	Window, State W
}

// MergeFunc is called by AddWindow when windows merge: result is the new
// window, merged the windows it replaces, stateResult the state window kept
// for it and mergedState the state windows to merge into stateResult.
type MergeFunc[W Window] func(result W, merged []W, stateResult W, mergedState []W) error

// MergingWindowSet is Flink's MergingWindowSet: the in-flight windows of one
// key of a merging assigner, each mapped to the state window holding its
// contents, so that merging windows moves no state, only the mapping. The
// operator keeps it in keyed state (Mappings) and persists it when Changed.
type MergingWindowSet[W Window] struct {
	assigner MergingAssigner[W]
	mapping  []Mapping[W]
	changed  bool
}

// NewMergingWindowSet returns the set restored from mappings.
func NewMergingWindowSet[W Window](a MergingAssigner[W], mappings []Mapping[W]) *MergingWindowSet[W] {
	return &MergingWindowSet[W]{assigner: a, mapping: mappings}
}

// Mappings returns the windows and their state windows.
func (s *MergingWindowSet[W]) Mappings() []Mapping[W] { return s.mapping }

// Changed says whether the mapping changed since NewMergingWindowSet.
func (s *MergingWindowSet[W]) Changed() bool { return s.changed }

func (s *MergingWindowSet[W]) find(w W) int {
	return slices.IndexFunc(s.mapping, func(m Mapping[W]) bool { return m.Window == w })
}

// StateWindow returns the state window of in-flight window w.
func (s *MergingWindowSet[W]) StateWindow(w W) (W, bool) {
	if i := s.find(w); i >= 0 {
		return s.mapping[i].State, true
	}
	var zero W
	return zero, false
}

func (s *MergingWindowSet[W]) remove(w W) (W, bool) {
	i := s.find(w)
	if i < 0 {
		var zero W
		return zero, false
	}
	st := s.mapping[i].State
	s.mapping = slices.Delete(s.mapping, i, i+1)
	s.changed = true
	return st, true
}

func (s *MergingWindowSet[W]) put(w, st W) {
	if i := s.find(w); i >= 0 {
		s.mapping[i].State = st
	} else {
		s.mapping = append(s.mapping, Mapping[W]{w, st})
	}
	s.changed = true
}

// RetireWindow removes w from the in-flight windows (its state is gone).
func (s *MergingWindowSet[W]) RetireWindow(w W) error {
	if _, ok := s.remove(w); !ok {
		return fmt.Errorf("window: window %v is not in the in-flight window set", w)
	}
	return nil
}

// AddWindow adds newWindow, merging it with the in-flight windows it
// intersects, and returns the window it ended up in; merge is called for
// every merge that involves a window with state.
func (s *MergingWindowSet[W]) AddWindow(newWindow W, merge MergeFunc[W]) (W, error) {
	windows := make([]W, 0, len(s.mapping)+1)
	for _, m := range s.mapping {
		windows = append(windows, m.Window)
	}
	windows = append(windows, newWindow)
	type result struct {
		w      W
		merged []W
	}
	var results []result
	if err := s.assigner.MergeWindows(windows, func(toMerge []W, r W) {
		results = append(results, result{r, slices.Clone(toMerge)})
	}); err != nil {
		return newWindow, err
	}
	resultWindow, mergedNew := newWindow, false
	for _, r := range results {
		merged := r.merged
		if i := slices.Index(merged, newWindow); i >= 0 {
			merged = slices.Delete(merged, i, i+1)
			mergedNew, resultWindow = true, r.w
		}
		// the state window of the result is that of any merged window
		stateWindow, _ := s.StateWindow(merged[0])
		var mergedState []W
		for _, m := range merged {
			if st, ok := s.remove(m); ok {
				mergedState = append(mergedState, st)
			}
		}
		s.put(r.w, stateWindow)
		if i := slices.Index(mergedState, stateWindow); i >= 0 {
			mergedState = slices.Delete(mergedState, i, i+1)
		}
		// a pre-existing window merged into itself alone moves no state
		if !(len(merged) == 1 && merged[0] == r.w) {
			st, _ := s.StateWindow(r.w)
			if err := merge(r.w, merged, st, mergedState); err != nil {
				return resultWindow, err
			}
		}
	}
	if len(results) == 0 || (resultWindow == newWindow && !mergedNew) {
		s.put(resultWindow, resultWindow)
	}
	return resultWindow, nil
}
