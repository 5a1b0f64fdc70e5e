//go:build !kubelet

package inprocess

import (
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// Without -tags kubelet the kubelet's answers are replayed from
// kubeletFile. An input the recording lacks fails -short (whose sample it
// holds) and is skipped beyond it; an answer recorded from another input
// fails: both say how to record again.

var evictReplayed struct {
	sync.Mutex
	read, unrecorded map[string]int
}

func evictReplay(t *testing.T, section, key, input string) (kubeletAnswer, bool) {
	t.Helper()
	a, ok := evictRecorded(t)[section][key]
	evictReplayed.Lock()
	defer evictReplayed.Unlock()
	if evictReplayed.read == nil {
		evictReplayed.read, evictReplayed.unrecorded = map[string]int{}, map[string]int{}
	}
	switch {
	case !ok && testing.Short():
		t.Fatalf("%s[%s]: not in %s: run `make inprocess-record`", section, key, kubeletFile)
	case !ok:
		evictReplayed.unrecorded[section]++
		return a, false
	case a.Input != input:
		t.Fatalf("%s[%s]: %s was recorded from another input: run `make inprocess-record`", section, key, kubeletFile)
	}
	evictReplayed.read[section]++
	return a, true
}

func evictKubeletParse(t *testing.T, i int, d evictDraw) (kubeletAnswer, bool) {
	t.Helper()
	return evictReplay(t, sectionThresholds, strconv.Itoa(i), evictFingerprint(t, d))
}

func evictKubeletScenario(t *testing.T, s *evictgen.Scenario, runs int) (kubeletAnswer, bool) {
	t.Helper()
	return evictReplay(t, sectionScenarios, strconv.FormatUint(s.Seed, 10), evictScenarioInput(t, s, runs))
}

func evictKubeletCase(t *testing.T, dir, node string, runs int) (kubeletAnswer, bool) {
	t.Helper()
	return evictReplay(t, sectionCases, filepath.Base(dir), evictCaseInput(t, dir, node, runs))
}

// kubeletDone says how many of the section's answers were replayed.
func kubeletDone(_ *testing.T, section string) string {
	evictReplayed.Lock()
	defer evictReplayed.Unlock()
	return fmt.Sprintf("the kubelet's answers replayed from %s: %d, inputs without one %d (-tags kubelet runs it)",
		kubeletFile, evictReplayed.read[section], evictReplayed.unrecorded[section])
}
