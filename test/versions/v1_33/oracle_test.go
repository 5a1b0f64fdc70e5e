// Package v1_33 computes the scale-in oracle of Kubernetes 1.33 from its own
// k8s.io/kubernetes pkg/controller (see ../oraclegen and
// test/conformance/versions_test.go).
package v1_33

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// PodDeletionCost is beta (on by default); LogarithmicScaleDown is GA and
// locked to true since 1.31, so only the cost gate varies.
var combos = []map[string]bool{
	{"PodDeletionCost": false},
	{"PodDeletionCost": true},
}

func TestOracle(t *testing.T) {
	oraclegen.Run(t, oraclegen.Version{
		Minor:      33,
		Kubernetes: "v1.33.13",
		Sidecars:   true, // k8s.io/api v0.33 has initContainers[].restartPolicy (compared since 1.32)
		Combos:     combos,
		SetGates: func(t *testing.T, gates map[string]bool) {
			for name, v := range gates {
				// Since 1.30 the helper restores the gate in t.Cleanup itself.
				featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, featuregate.Feature(name), v)
			}
		},
		Features: features,
		Enabled:  enabled,
		Less:     less,
	})
}

func features(names []string) map[string]oraclegen.Feature {
	all := utilfeature.DefaultMutableFeatureGate.GetAll()
	out := map[string]oraclegen.Feature{}
	for _, name := range names {
		if spec, ok := all[featuregate.Feature(name)]; ok {
			out[name] = oraclegen.Feature{Default: spec.Default, Locked: spec.LockToDefault, PreRelease: string(spec.PreRelease)}
		}
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
			return nil, nil, fmt.Errorf("pod %d does not decode into k8s.io/api v0.33: %v\n%s", i, err, r)
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
