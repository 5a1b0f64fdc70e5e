package cmd

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// stsFile writes a StatefulSet "web" and its pods as multi-document YAML.
// Each pod spec is "ordinal[:notready]"; names that are not numbers are
// used verbatim (web-<name>).
func stsFile(policy string, start int, retention string, pods ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default, uid: set-uid}
spec:
  replicas: %d
  podManagementPolicy: %s
  selector: {matchLabels: {app: web}}
  ordinals: {start: %d}
  persistentVolumeClaimRetentionPolicy: {whenScaled: %s, whenDeleted: Retain}
  volumeClaimTemplates: [{metadata: {name: data}}]
  template: {metadata: {labels: {app: web}}}
`, len(pods), policy, start, retention)
	for _, spec := range pods {
		name, state, _ := strings.Cut(spec, ":")
		ready := "True"
		if state == "notready" {
			ready = "False"
		}
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Pod
metadata: {name: web-%s, namespace: default, uid: uid-%s, labels: {app: web}, creationTimestamp: "2025-01-01T00:00:00Z", ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: set-uid, controller: true}]}
spec: {nodeName: n1}
status: {phase: Running, conditions: [{type: Ready, status: "%s", lastTransitionTime: "2025-01-01T00:00:10Z"}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-web-%s, namespace: default}
`, name, name, ready, name)
	}
	return b.String()
}

func stsPredict(t *testing.T, file string, replicas int, extra ...string) (*prediction.Prediction, cliResult) {
	t.Helper()
	args := append([]string{"-f", "-", "sts/web", fmt.Sprintf("--replicas=%d", replicas), "-o", "json", "--now", "2025-06-01T00:00:00Z"}, extra...)
	r := cliRun(t, nil, strings.NewReader(file), args...)
	wantExit(t, r, ExitOK)
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	return &p, r
}

func fates(p *prediction.Prediction) map[string]string {
	m := map[string]string{}
	for _, pod := range p.Pods {
		m[pod.Name] = pod.Fate
	}
	return m
}

func TestStatefulSetCLI(t *testing.T) {
	five := []string{"0", "1", "2", "3", "4"}
	cases := []struct {
		name     string
		file     string
		replicas int
		victims  []string
		check    func(t *testing.T, p *prediction.Prediction)
	}{
		{"reverse ordinal", stsFile("OrderedReady", 0, "Retain", five...), 2, []string{"web-4", "web-3", "web-2"}, func(t *testing.T, p *prediction.Prediction) {
			if d := p.Pods[0].DecidedBy; d == nil || d.Rule != "ORDINAL" {
				t.Errorf("decided by %+v", d)
			}
			if !p.Certain {
				t.Error("StatefulSet fates are certain")
			}
		}},
		{"start ordinal 3", stsFile("OrderedReady", 3, "Retain", "3", "4", "5", "6", "7"), 2, []string{"web-7", "web-6", "web-5"}, func(t *testing.T, p *prediction.Prediction) {
			if p.StatefulSet.Start != 3 || p.StatefulSet.End != 4 {
				t.Errorf("range [%d, %d]", p.StatefulSet.Start, p.StatefulSet.End)
			}
		}},
		{"gaps in ordinals", stsFile("OrderedReady", 0, "Retain", "0", "1", "3", "5"), 2, []string{"web-5", "web-3"}, nil},
		{"unparsable name is not a member", stsFile("OrderedReady", 0, "Retain", "0", "1", "2", "abc"), 1, []string{"web-2", "web-1"}, func(t *testing.T, p *prediction.Prediction) {
			if f, ok := fates(p)["web-abc"]; ok && f == prediction.FateDelete {
				t.Errorf("web-abc fate %q", f)
			}
		}},
		{"OrderedReady stalls on a kept unhealthy pod", stsFile("OrderedReady", 0, "Retain", "0", "1:notready", "2", "3", "4"), 2, []string{}, func(t *testing.T, p *prediction.Prediction) {
			st := p.StatefulSet
			if !st.Stalled || st.StallPod != "web-1" {
				t.Errorf("stall %+v", st)
			}
			f := fates(p)
			for _, n := range []string{"web-4", "web-3", "web-2"} {
				if f[n] != "blocked" {
					t.Errorf("%s fate %q, want blocked", n, f[n])
				}
			}
			if !strings.Contains(p.Message, "STALLS at web-1") {
				t.Errorf("message %q", p.Message)
			}
		}},
		{"Parallel deletes all condemned whatever their health", stsFile("Parallel", 0, "Retain", "0", "1:notready", "2", "3", "4"), 2, []string{"web-4", "web-3", "web-2"}, nil},
		{"PVC whenScaled Delete", stsFile("OrderedReady", 0, "Delete", five...), 3, []string{"web-4", "web-3"}, func(t *testing.T, p *prediction.Prediction) {
			var del []string
			for _, c := range p.StatefulSet.Claims {
				if c.Fate == "delete" {
					del = append(del, c.Name)
				}
			}
			slices.Sort(del)
			if !slices.Equal(del, []string{"data-web-3", "data-web-4"}) {
				t.Errorf("claims deleted %v", del)
			}
		}},
		{"PVC whenScaled Retain", stsFile("OrderedReady", 0, "Retain", five...), 3, []string{"web-4", "web-3"}, func(t *testing.T, p *prediction.Prediction) {
			for _, c := range p.StatefulSet.Claims {
				if c.Fate == "delete" {
					t.Errorf("claim %s deleted under Retain", c.Name)
				}
			}
		}},
		{"scale to 0", stsFile("OrderedReady", 0, "Retain", "0", "1", "2"), 0, []string{"web-2", "web-1", "web-0"}, nil},
		{"scale-up", stsFile("OrderedReady", 0, "Retain", "0", "1"), 4, []string{}, func(t *testing.T, p *prediction.Prediction) {
			if !strings.Contains(p.Message, "no pod would be deleted") {
				t.Errorf("message %q", p.Message)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := stsPredict(t, tc.file, tc.replicas)
			if !slices.Equal(p.Victims, tc.victims) {
				t.Fatalf("victims %v, want %v (message %q)", p.Victims, tc.victims, p.Message)
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

// The table marks claim deletions loudly.
func TestStatefulSetTableDataLoss(t *testing.T) {
	r := cliRun(t, nil, strings.NewReader(stsFile("OrderedReady", 0, "Delete", "0", "1", "2")), "-f", "-", "sts/web", "--replicas=1")
	wantExit(t, r, ExitOK)
	if !strings.Contains(r.stdout, "DATA LOSS") || !strings.Contains(r.stdout, "data-web-2") || !strings.Contains(r.stdout, "reverse ordinal") {
		t.Fatalf("table:\n%s", r.stdout)
	}
}
