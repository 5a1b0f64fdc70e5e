package workload

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// bigRollout: a Deployment of n replicas mid-rollout over three
// ReplicaSets, pods spread over 20 nodes with ranks and ready buckets that
// make the interleavings matter.
func bigRollout(n int) *snapshot.Snapshot {
	d := mkDeploy(int32(n), int32(n), "25%", "25%")
	sizes := []int{n / 2, n / 4, n - n/2 - n/4}
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}}
	for r, h := range []string{"v0", "v1", "v2"} {
		image := "web:1"
		if h == "v2" {
			image = "web:2"
		}
		rs := mkDepRS(d, h, image, int32(sizes[r]), time.Duration(30-10*r)*24*time.Hour, int32(n), int32(n+n/4))
		s.ReplicaSets = append(s.ReplicaSets, rs)
		for i := 0; i < sizes[r]; i++ {
			p := rsPod(fmt.Sprintf("%s-%d", rs.Name, i), rs).on(fmt.Sprintf("node-%d", (i*7+r)%20)).readyFor(readyAges[(i+r)%len(readyAges)])
			s.Pods = append(s.Pods, p.pod())
		}
	}
	return s
}

// BenchmarkDeploymentMidRollout: a scale-in to 60% of a mid-rollout
// Deployment, every interleaving explored.
func BenchmarkDeploymentMidRollout(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		s := bigRollout(n)
		r := ruleSetFor(b, 37)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Predict(s, snapshot.Ref{Kind: snapshot.Deployment, Namespace: testNS, Name: "web"}, int32(n*6/10), Options{Rules: r, Now: testNow}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
