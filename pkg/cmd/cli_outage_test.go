package cmd

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

const outageFile = "../../examples/outage.yaml"

// outageVariant writes examples/outage.yaml after edit and returns the
// outage arguments for it.
func outageVariant(edit func(items []map[string]any) []map[string]any, args ...string) func(*testing.T) []string {
	return func(t *testing.T) []string {
		t.Helper()
		path := fileVariant(t, outageFile, edit)
		return append([]string{"outage", "-f", path, "-n", "shop", "--now", liveNowFlag}, args...)
	}
}

// dropZoneLabels removes every node's zone label.
func dropZoneLabels(node map[string]any) {
	delete(node["metadata"].(map[string]any)["labels"].(map[string]any), "topology.kubernetes.io/zone")
}

// outageMatrix are the outage's bad inputs (TestBadInputMatrix runs them).
func outageMatrix() []modeBadInput {
	return []modeBadInput{
		{"outage: node not in the files", staticArgs("outage", "node-9", "-f", outageFile), ExitNotFound, []string{`"node-9"`, "not in the files"}},
		{"outage: zone without nodes", staticArgs("outage", "--zone", "zone-x", "-f", outageFile), ExitNotFound, []string{"topology.kubernetes.io/zone=zone-x"}},
		{"outage: no node, selector or zone", staticArgs("outage", "-f", outageFile), ExitUsage, []string{"--selector or --zone"}},
		{"outage: nodes and a zone", staticArgs("outage", "node-a1", "--zone", "zone-a", "-f", outageFile), ExitUsage, []string{"not more than one"}},
		{"outage: malformed duration", staticArgs("outage", "node-a1", "--node-monitor-grace-period", "fifty", "-f", outageFile), ExitUsage, []string{"node-monitor-grace-period", "outage --help"}},
		{"outage: malformed rate", staticArgs("outage", "node-a1", "--node-eviction-rate", "fast", "-f", outageFile), ExitUsage, []string{"node-eviction-rate"}},
		{"outage: negative rate", staticArgs("outage", "node-a1", "--node-eviction-rate", "-1", "-f", outageFile), ExitUsage, []string{"--node-eviction-rate is out of range"}},
		{"outage: threshold above 1", staticArgs("outage", "node-a1", "--unhealthy-zone-threshold", "1.5", "-f", outageFile), ExitUsage, []string{"--unhealthy-zone-threshold"}},
		{"outage: zero grace period", staticArgs("outage", "node-a1", "--node-monitor-grace-period", "0s", "-f", outageFile), ExitUsage, []string{"--node-monitor-grace-period"}},
		{"outage: bad condition", staticArgs("outage", "node-a1", "--condition", "down", "-f", outageFile), ExitUsage, []string{"unreachable or not-ready"}},
		{"outage: files without nodes", outageVariant(dropKind("Node"), "node-a1"), ExitBadFile, []string{"no Node"}},
		{"outage: pods whose owners are missing", outageVariant(dropKind("ReplicaSet"), "node-a1", "--fail-if-uncertain"), ExitUncertain, []string{"--fail-if-uncertain"}},
		{"outage: PDB with an invalid selector", outageVariant(editKind("PodDisruptionBudget", badPDBSelector), "node-a1"), ExitBadFile, []string{"invalid selector"}},
	}
}

func outageRun(t *testing.T, args ...string) *prediction.Prediction {
	t.Helper()
	r := cliRun(t, nil, nil, append([]string{"outage", "-f", outageFile, "-n", "shop", "--now", liveNowFlag}, append(args, "-o", "json")...)...)
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// The example: zone-a (2 of 5 nodes) goes down; its own zone is fully
// disrupted while the others are healthy, so it is tainted at the normal
// rate: the two nodes by T+39.6..70.1 s. Each pod meets its kind's fate.
func TestOutageExample(t *testing.T) {
	p := outageRun(t, "--zone", "zone-a")
	o := p.Outage
	if !p.Certain || len(o.Nodes) != 2 || !slices.Equal(o.Nodes[0].TaintedAfterSeconds, []float64{39.6, 70.1}) {
		t.Fatalf("%+v", o.Nodes)
	}
	if o.Zones[0].Zone != "zone-a" || o.Zones[0].State != "FullDisruption" || o.Zones[1].State != "Normal" {
		t.Errorf("%+v", o.Zones)
	}
	fates := map[string]string{}
	for _, pod := range o.Pods {
		fates[pod.Pod] = pod.Fate
	}
	want := map[string]string{"shop/db-0": "stuck", "shop/logs-a1": "stays", "shop/debug": "deleted", "shop/api-7d9f8c6b5-p0": "deleted"}
	for pod, fate := range want {
		if fates[pod] != fate {
			t.Errorf("%s: %s, want %s", pod, fates[pod], fate)
		}
	}
	if p.Victims[0] != "shop/api-7d9f8c6b5-p0" || slices.Contains(p.Victims, "shop/logs-a1") || !slices.Contains(p.Victims, "shop/db-0") {
		t.Errorf("victims %v", p.Victims)
	}
	for _, r := range o.Replacements {
		if r.Owner == "Deployment/cache" && (r.Node != "" || !strings.Contains(r.Reason, "didn't match Pod's node affinity/selector")) {
			t.Errorf("%+v", r)
		}
	}
	zero := 0
	for _, w := range o.Workloads {
		if w.ReachesZero {
			zero++
		}
		if w.Name == "shop/web" && (!w.BudgetBroken || w.BrokenUntil == nil || *w.BrokenUntil != 370.1 || w.AvailableMin != 2) {
			t.Errorf("%+v", w)
		}
	}
	if zero != 2 {
		t.Errorf("%d workloads reach 0, want cache and report", zero)
	}
}

// Every zone down: the controller lifts the taints; nothing is deleted
// for certain, and the pods say how they still might be (a taint set
// during the pass that finds every zone down stays).
func TestOutageAllZones(t *testing.T) {
	p := outageRun(t, "-l", "kubernetes.io/hostname")
	if len(p.Victims) != 0 || p.Certain {
		t.Errorf("victims %v, certain %v", p.Victims, p.Certain)
	}
	for _, n := range p.Outage.Nodes {
		if n.TaintedAfterSeconds != nil || !strings.Contains(n.Reason, "every zone is fully disrupted") {
			t.Errorf("%+v", n)
		}
	}
}

// Without zone labels the cluster is one zone, said so; 2 of 5 not Ready
// is still Normal.
func TestOutageNoZoneLabels(t *testing.T) {
	r := cliRun(t, nil, nil, outageVariant(editKind("Node", dropZoneLabels), "node-a1", "node-a2", "-o", "json")(t)...)
	wantExit(t, r, ExitOK)
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Outage.Zones) != 1 || p.Outage.Zones[0].Zone != "" || p.Outage.Zones[0].State != "Normal" || !strings.Contains(strings.Join(p.Warnings, " "), "one zone") {
		t.Errorf("%+v %v", p.Outage.Zones, p.Warnings)
	}
}

// The flags change the assumed settings and say so.
func TestOutageSettingsFlags(t *testing.T) {
	p := outageRun(t, "node-a1", "--node-monitor-grace-period", "2s", "--node-monitor-period", "1s", "--node-lease-duration", "4s", "--node-eviction-rate", "10", "--kube-version", "1.31")
	a := p.Outage.Assumed
	if a.NodeMonitorGracePeriodSeconds != 2 || a.NodeMonitorPeriodSeconds != 1 || a.LeaseRenewIntervalSeconds != 1 || a.NodeEvictionRate != 10 {
		t.Errorf("%+v", a)
	}
	if w := p.Outage.Nodes[0].TaintedAfterSeconds; !slices.Equal(w, []float64{1, 4.1}) {
		t.Errorf("window %v, want [1, 4.1]", w)
	}
	p = outageRun(t, "node-a1", "--kube-version", "1.31")
	if p.Outage.Assumed.NodeMonitorGracePeriodSeconds != 40 {
		t.Errorf("1.31's default: %+v", p.Outage.Assumed)
	}
}

func TestOutageNames(t *testing.T) {
	r := cliRun(t, nil, nil, "outage", "node-a2", "-f", outageFile, "-n", "shop", "-o", "name")
	wantExit(t, r, ExitOK)
	if r.stdout != "pod/cache-7d9f8c6b5-p1\npod/debug\npod/report-x7k2q\npod/web-7d9f8c6b5-p1\n" {
		t.Errorf("%q", r.stdout)
	}
}

func TestOutageLayouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"outage_zone", []string{"--zone", "zone-a"}},
		{"outage_notready", []string{"node-a1", "--condition", "not-ready"}},
	} {
		for _, width := range []int{80, 120} {
			name := tc.name + "_" + map[int]string{80: "80", 120: "120"}[width]
			t.Run(name, func(t *testing.T) {
				defer func(w int) { cliWidth = w }(cliWidth)
				cliWidth = width
				r := cliRun(t, nil, nil, append([]string{"outage", "-f", outageFile, "-n", "shop", "--now", liveNowFlag}, tc.args...)...)
				wantLayout(t, r, "layout_"+name, width)
			})
		}
	}
}

// Live: the same answer as offline; a missing node is exit 3; a forbidden
// list names the permission and exits 4.
func TestOutageLive(t *testing.T) {
	r := cliRun(t, fake.NewClientset(fileObjects(t, outageFile, "default")...), nil, "outage", "--zone", "zone-a", "--kube-version", "1.37", "-n", "shop", "--now", liveNowFlag, "-o", "name")
	wantExit(t, r, ExitOK)
	off := cliRun(t, nil, nil, "outage", "--zone", "zone-a", "-f", outageFile, "-n", "shop", "--now", liveNowFlag, "-o", "name")
	if r.stdout != off.stdout || r.stdout == "" {
		t.Errorf("live %q offline %q", r.stdout, off.stdout)
	}
	r = cliRun(t, fake.NewClientset(fileObjects(t, outageFile, "default")...), nil, "outage", "node-9", "--kube-version", "1.37")
	wantExit(t, r, ExitNotFound, "node-9")
	c := fake.NewClientset(fileObjects(t, outageFile, "default")...)
	c.PrependReactor("list", "poddisruptionbudgets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "", errors.New("no"))
	})
	r = cliRun(t, c, nil, "outage", "node-a1", "--kube-version", "1.37")
	wantExit(t, r, ExitForbidden, "list poddisruptionbudgets.policy")
}
