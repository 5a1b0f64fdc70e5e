//go:build kubelet

package inprocess

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// Under -tags kubelet the answers are the kubelet's, live. Each is checked
// against its recording where the kubelet is deterministic: the input,
// the thresholds and /configz always, a rejection but not its message
// (the first bad threshold met in map order), and the runs' outcomes where
// the recording had one outcome in every run (else they may vary with
// the kubelet's map order: the live outcomes are judged instead).
// INPROCESS_RECORD=1 (make inprocess-record) rewrites kubeletFile's
// section of each test that runs.

var evictLive struct {
	sync.Mutex
	made    map[string][]kubeletAnswer
	checked map[string]int
}

func evictRecording() bool { return os.Getenv("INPROCESS_RECORD") != "" }

// evictLiveAnswer keeps a for the recording and compares it with the
// recorded answer (a -short input has one).
func evictLiveAnswer(t *testing.T, section string, a kubeletAnswer) (kubeletAnswer, bool) {
	t.Helper()
	evictLive.Lock()
	defer evictLive.Unlock()
	if evictLive.made == nil {
		evictLive.made, evictLive.checked = map[string][]kubeletAnswer{}, map[string]int{}
	}
	evictLive.made[section] = append(evictLive.made[section], a)
	old, ok := evictRecorded(t)[section][a.Key]
	if evictRecording() || !ok {
		return a, true
	}
	if diff := evictAnswerDiff(old, a); diff != "" {
		t.Errorf("%s[%s]: the kubelet's answer differs from %s's in its %s:\nrecorded %s\nlive     %s\n(run `make inprocess-record` if the kubelet or the input changed)",
			section, a.Key, kubeletFile, diff, evictJSON(t, old), evictJSON(t, a))
	}
	evictLive.checked[section]++
	return a, true
}

// evictAnswerDiff names the deterministic part in which two answers differ.
func evictAnswerDiff(old, live kubeletAnswer) string {
	switch {
	case old.Input != live.Input:
		return "input"
	case (old.Error == "") != (live.Error == "") || !slices.Equal(old.Parsed, live.Parsed) || !slices.Equal(old.InForce, live.InForce):
		return "thresholds"
	case !bytes.Equal(old.Configz, live.Configz):
		return "/configz document"
	case len(old.Outcomes) == 1 && !slices.Equal(old.Outcomes, live.Outcomes):
		return "outcome, the same in every recorded run"
	}
	return ""
}

func evictJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kubeletDone writes the section when recording, and otherwise checks that
// the -short run met every recorded answer.
func kubeletDone(t *testing.T, section string) string {
	t.Helper()
	evictLive.Lock()
	defer evictLive.Unlock()
	recorded := len(evictRecorded(t)[section])
	if !evictRecording() {
		if testing.Short() && evictLive.checked[section] != recorded {
			t.Errorf("%s: %d answers recorded, %d met by this run: run `make inprocess-record`", section, recorded, evictLive.checked[section])
		}
		return fmt.Sprintf("the kubelet live, %d recorded answers checked against it", evictLive.checked[section])
	}
	if !testing.Short() {
		t.Fatal("INPROCESS_RECORD records the -short samples, which make test replays: add -short")
	}
	writeKubeletSection(t, section, evictLive.made[section])
	return fmt.Sprintf("%d answers of the kubelet recorded in %s", len(evictLive.made[section]), kubeletFile)
}

var kubeletFileMu sync.Mutex

// writeKubeletSection replaces one section of kubeletFile as it is on
// disk now (the tests record side by side).
func writeKubeletSection(t *testing.T, section string, answers []kubeletAnswer) {
	t.Helper()
	kubeletFileMu.Lock()
	defer kubeletFileMu.Unlock()
	rec, err := readKubeletFile()
	if err != nil {
		t.Fatal(err)
	}
	secs := map[string][]kubeletAnswer{}
	for sec, m := range rec {
		for _, a := range m {
			secs[sec] = append(secs[sec], a)
		}
	}
	secs[section] = slices.Clone(answers)
	for _, as := range secs {
		sort.Slice(as, func(i, j int) bool { return as[i].Key < as[j].Key }) // the same file from the same answers
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err := json.NewEncoder(zw).Encode(secs); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.FromSlash(kubeletFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// evictGroup are a node's runs as distinct outcomes, sorted by kills.
func evictGroup(runs []map[string]evictgen.Kill) []evictgen.Outcome {
	count := map[string]int{}
	for _, k := range runs {
		count[evictgen.EncodeKills(k)]++
	}
	out := make([]evictgen.Outcome, 0, len(count))
	for k, n := range count {
		out = append(out, evictgen.Outcome{Kills: k, Runs: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kills < out[j].Kills })
	return out
}
