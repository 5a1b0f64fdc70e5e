// Package v1_21 computes the scale-in oracle of Kubernetes 1.21 from its own
// k8s.io/kubernetes pkg/controller (see ../oraclegen and
// test/conformance/versions_test.go).
package v1_21

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/controller"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen"
)

// Both gates are alpha in 1.21 (off by default); all four combinations.
var combos = []map[string]bool{
	{"PodDeletionCost": false, "LogarithmicScaleDown": false},
	{"PodDeletionCost": true, "LogarithmicScaleDown": false},
	{"PodDeletionCost": false, "LogarithmicScaleDown": true},
	{"PodDeletionCost": true, "LogarithmicScaleDown": true},
}

func TestOracle(t *testing.T) {
	oraclegen.Run(t, oraclegen.Version{
		Minor:      21,
		Kubernetes: "v1.21.14",
		Sidecars:   false, // k8s.io/api v0.21 has no initContainers[].restartPolicy
		Combos:     combos,
		SetGates: func(t *testing.T, gates map[string]bool) {
			for name, v := range gates {
				// 1.21's helper returns the restore function.
				t.Cleanup(featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, featuregate.Feature(name), v))
			}
		},
		Features: features,
		Enabled:  enabled,
		Less:     less,
	})
}

// features probes the registration of each gate on copies of the default
// gate (1.21's MutableFeatureGate has no GetAll): an unknown gate cannot be
// set, a locked one cannot be set away from its default, and KnownFeatures
// lists the pre-release stage of all but GA and deprecated gates.
func features(names []string) map[string]oraclegen.Feature {
	stages := map[string]string{}
	for _, k := range utilfeature.DefaultMutableFeatureGate.KnownFeatures() {
		// "Name=true|false (BETA - default=true)"
		name, rest, _ := strings.Cut(k, "=")
		if _, after, ok := strings.Cut(rest, "("); ok {
			stage, _, _ := strings.Cut(after, " ")
			stages[name] = stage
		}
	}
	out := map[string]oraclegen.Feature{}
	for _, name := range names {
		probe := utilfeature.DefaultMutableFeatureGate.DeepCopy()
		def := false
		if err := probe.Set(name + "=false"); err != nil {
			if !strings.Contains(err.Error(), "locked") {
				continue // not registered
			}
			def = true
		} else if err := probe.Set(name + "=true"); err != nil {
			if !strings.Contains(err.Error(), "locked") {
				continue
			}
		} else {
			def = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
		}
		probe = utilfeature.DefaultMutableFeatureGate.DeepCopy()
		locked := probe.Set(name+"="+strconv.FormatBool(!def)) != nil
		stage, ok := stages[name]
		if !ok {
			stage = "GA or DEPRECATED"
		}
		out[name] = oraclegen.Feature{Default: def, Locked: locked, PreRelease: stage}
	}
	return out
}

func enabled(names []string) map[string]bool {
	out := map[string]bool{}
	for _, name := range names {
		out[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	return out
}

func less(raw []json.RawMessage, ranks []int, now time.Time) ([]json.RawMessage, [][]bool, error) {
	pods := make([]*corev1.Pod, len(raw))
	typed := make([]json.RawMessage, len(raw))
	for i, r := range raw {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		pods[i] = &corev1.Pod{}
		if err := dec.Decode(pods[i]); err != nil {
			return nil, nil, fmt.Errorf("pod %d does not decode into k8s.io/api v0.21: %v\n%s", i, err, r)
		}
		b, err := json.Marshal(pods[i])
		if err != nil {
			return nil, nil, err
		}
		typed[i] = b
	}
	s := controller.ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.NewTime(now)}
	out := make([][]bool, len(pods))
	for i := range pods {
		out[i] = make([]bool, len(pods))
		for j := range pods {
			if i != j {
				out[i][j] = s.Less(i, j)
			}
		}
	}
	return typed, out, nil
}
