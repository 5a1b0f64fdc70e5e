package inprocess

// The eviction tests' real component is the kubelet's own code (threshold
// parsing, eviction manager, /configz scheme), but importing it compiles
// cadvisor, containerd, gRPC and kube-apiserver's options (290 packages)
// and its live runs take half a minute. So make test replays its answers,
// recorded from the -short samples in testdata/kubelet.json.gz
// (eviction_record_replay_test.go), and make check runs the kubelet live
// under -tags kubelet (eviction_record_live_test.go). The plugin's
// prediction is made live in both, and judged the same way.

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/test/internal/evictjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

const kubeletFile = "testdata/kubelet.json.gz"

// The sections of kubeletFile, one per test.
const (
	sectionThresholds = "thresholds" // TestEvictionThresholdsAgainstKubelet
	sectionScenarios  = "scenarios"  // TestEvictionAgainstKubelet
	sectionCases      = "cases"      // TestEvictionCasesAgainstKubelet
)

// kubeletAnswer is what the kubelet's code answered for one input, keyed
// by the test's own key (case number, seed, directory).
type kubeletAnswer struct {
	Key string `json:"key"`
	// Input fingerprints what the kubelet was given (evictFingerprint), so
	// that a changed generator fails instead of replaying a stale answer.
	Input string `json:"input"`
	// Error is ParseThresholdConfig's rejection.
	Error string `json:"error,omitempty"`
	// Parsed are ParseThresholdConfig's thresholds, InForce those in force
	// after UpdateContainerFsThresholds for the layout (inert copies left
	// out), each as evictKubeletThreshold prints it, sorted.
	Parsed  []string `json:"parsed,omitempty"`
	InForce []string `json:"inForce,omitempty"`
	// Configz is the document the kubelet's scheme serves at /configz.
	Configz json.RawMessage `json:"configz,omitempty"`
	// Outcomes are the eviction manager's runs, distinct, sorted by kills.
	Outcomes []evictgen.Outcome `json:"outcomes,omitempty"`
}

// kubeletRecording is kubeletFile: per section, the answers by key.
type kubeletRecording map[string]map[string]kubeletAnswer

func readKubeletFile() (kubeletRecording, error) {
	f, err := os.Open(kubeletFile)
	if os.IsNotExist(err) {
		return kubeletRecording{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var secs map[string][]kubeletAnswer
	if err := json.NewDecoder(zr).Decode(&secs); err != nil {
		return nil, err
	}
	rec := kubeletRecording{}
	for sec, answers := range secs {
		rec[sec] = map[string]kubeletAnswer{}
		for _, a := range answers {
			rec[sec][a.Key] = a
		}
	}
	return rec, nil
}

var kubeletRecorded = sync.OnceValues(readKubeletFile)

func evictRecorded(t *testing.T) kubeletRecording {
	t.Helper()
	rec, err := kubeletRecorded()
	if err != nil {
		t.Fatalf("%s: %v", kubeletFile, err)
	}
	return rec
}

// evictFingerprint is a short hash of the JSON of parts.
func evictFingerprint(t *testing.T, parts ...any) string {
	t.Helper()
	b, err := json.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:4])
}

// The inputs of each section's answers, as fingerprinted.

func evictScenarioInput(t *testing.T, s *evictgen.Scenario, runs int) string {
	t.Helper()
	return evictFingerprint(t, s.String(), s.Config(), s.KubeletPods(), s.Summary(s.AllRunning(), evictgen.Start), runs)
}

func evictCaseInput(t *testing.T, dir, node string, runs int) string {
	t.Helper()
	parts := []any{node, runs}
	for _, f := range []string{"objects.json", "summary.json", "configz.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(b))
	}
	return evictFingerprint(t, parts...)
}

// evictDraw is one configuration TestEvictionThresholdsAgainstKubelet
// draws: the kubelet configuration's eviction fields and a disk layout.
type evictDraw struct {
	Alloc       []string          `json:"alloc"`
	Hard        map[string]string `json:"hard"`
	Soft        map[string]string `json:"soft"`
	Grace       map[string]string `json:"grace"`
	MinReclaim  map[string]string `json:"minReclaim"`
	MaxPodGrace int32             `json:"maxPodGrace"`
	ImageFs     bool              `json:"imageFs"`
	Split       bool              `json:"split"`
}

func (d evictDraw) String() string {
	return fmt.Sprintf("hard %v soft %v grace %v minReclaim %v, imageFs %v split %v", d.Hard, d.Soft, d.Grace, d.MinReclaim, d.ImageFs, d.Split)
}

// evictOutcomes are a's runs as the judge takes them.
func evictOutcomes(t *testing.T, a kubeletAnswer) []evictjudge.Outcome {
	t.Helper()
	out := make([]evictjudge.Outcome, len(a.Outcomes))
	for i, o := range a.Outcomes {
		k, err := evictgen.DecodeKills(o.Kills)
		if err != nil {
			t.Fatalf("%s %s: %v", kubeletFile, a.Key, err)
		}
		out[i] = evictjudge.Outcome{Kills: k, Runs: o.Runs}
	}
	return out
}

// evictSignalGrace is a threshold as evictCompareThresholds compares it:
// the plugin's result shows a threshold's signal and grace period.
func evictSignalGrace(th string) string {
	sg, _, _ := strings.Cut(th, " value=")
	return sg
}

func evictValue(q fmt.Stringer, isNil bool, pct float32) string {
	if !isNil {
		return q.String()
	}
	return fmt.Sprintf("%g%%", pct)
}

func evictPluginThreshold(th eviction.Threshold) string {
	mr := "-"
	if th.MinReclaim != nil {
		mr = evictValue(th.MinReclaim.Quantity, th.MinReclaim.Quantity == nil, th.MinReclaim.Percentage)
	}
	return fmt.Sprintf("%s grace=%v value=%s minReclaim=%s", th.Signal, th.GracePeriod, evictValue(th.Value.Quantity, th.Value.Quantity == nil, th.Value.Percentage), mr)
}
