package workload

import (
	"math"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// A rollout that has not created its new ReplicaSet yet, followed by the
// follow-up step, in a namespace that also holds an orphan pod matching
// the old ReplicaSet: the pod was listed twice (the simulated new
// ReplicaSet claimed it with the Deployment's selector). Every pod must
// appear once in the table and in the victims.
func TestDeploymentOrphanListedOnce(t *testing.T) {
	d := mkDeploy(4, 4, "1", "1")
	old := mkDepRS(d, "v1", "web:1", 4, 10*24*time.Hour, 4, 5)
	pods := readyPods(old, 4, "a")
	orphan := mkPod("stray").labels("app", "web", appsv1.DefaultDeploymentUniqueLabelKey, "v1").on("a1").readyFor(time.Hour).pod()
	loose := mkPod("loose").labels("app", "web").on("a2").readyFor(time.Hour).pod()
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old},
		Pods: append(pods, orphan, loose)}
	for target := int32(0); target < 4; target++ {
		p := predictOK(t, s, snapshot.Deployment, "web", target, rules37(t))
		seen := map[string]int{}
		for _, x := range p.Pods {
			seen[x.Name]++
		}
		for n, c := range seen {
			if c > 1 {
				t.Errorf("to %d: %s listed %d times", target, n, c)
			}
		}
		victims := map[string]bool{}
		for _, v := range p.Victims {
			if victims[v] {
				t.Errorf("to %d: victim %s listed twice", target, v)
			}
			victims[v] = true
		}
		if hasPod(p, "loose") && findPod(t, p, "loose").Fate == prediction.FateDelete {
			t.Errorf("to %d: the pod matching no ReplicaSet is a victim", target)
		}
		noCreatedPods(t, p)
	}
}

// A scale-up to the largest replica count counts the pods created instead
// of building them: it answers at once. With maxSurge 0 nothing goes.
// (With any surge, spec.replicas+maxSurge overflows int32 in the
// controller itself, which then scales down; the model follows it, just
// as fast.)
func TestDeploymentScaleUpToInt32Max(t *testing.T) {
	s := exampleA(false)
	s.Deployments[0].Spec.Strategy.RollingUpdate.MaxSurge = intOrStr("0")
	start := time.Now()
	p := predictOK(t, s, snapshot.Deployment, "web", math.MaxInt32, rules37(t))
	if len(p.Victims) != 0 {
		t.Errorf("victims %v, want none", p.Victims)
	}
	if p.Creates < math.MaxInt32-13 {
		t.Errorf("creates %d, want at least %d", p.Creates, math.MaxInt32-13)
	}
	noCreatedPods(t, p)
	t.Logf("scale-up to %d predicted in %v", math.MaxInt32, time.Since(start))
	start = time.Now()
	predictOK(t, exampleA(false), snapshot.Deployment, "web", math.MaxInt32, rules37(t))
	t.Logf("with surge 25%% (the controller's int32 overflow): %v", time.Since(start))
}

// Two ReplicaSets shrink in one sync and share a node: whether each one's
// ranks see the other's victim gone decides the victims, so no fate is
// certain and every chance is a weighted mix of the interleavings.
func TestDeploymentRankRaceNeverCertain(t *testing.T) {
	s := raceFixture(true)
	p := predictOK(t, s, snapshot.Deployment, "web", 2, rules37(t))
	bs, err := DeploymentBranches(s, snapshot.Ref{Kind: snapshot.Deployment, Namespace: testNS, Name: "web"}, 2, Options{Rules: rules37(t), Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, b := range bs {
		total += b.Weight
	}
	if len(bs) < 2 || math.Abs(total-1) > 1e-9 {
		t.Fatalf("branches %+v (weights sum %v)", bs, total)
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		x := findPod(t, p, n)
		want := 0.0
		for _, b := range bs {
			for _, v := range b.Victims {
				if v == n {
					want += b.Weight
				}
			}
		}
		if x.Certain || math.Abs(x.DeleteProbability-want) > 1e-6 {
			t.Errorf("%s: certain %v p %v, want open with p %v", n, x.Certain, x.DeleteProbability, want)
		}
	}
	if p.Certain || len(p.Victims) != 2 {
		t.Errorf("certain %v victims %v", p.Certain, p.Victims)
	}
}
