package deployment

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	newTimestamp   = time.Date(2016, 5, 20, 2, 0, 0, 0, time.UTC)
	oldTimestamp   = time.Date(2016, 5, 20, 1, 0, 0, 0, time.UTC)
	olderTimestamp = time.Date(2016, 5, 20, 0, 0, 0, 0, time.UTC)
	noTimestamp    = time.Time{}
)

func num(n int32) *intstr.IntOrString  { v := intstr.FromInt32(n); return &v }
func pct(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

// newDeployment mirrors the upstream test helper: RollingUpdate, maxSurge and
// maxUnavailable 0 unless given.
func newDeployment(replicas int32, maxSurge, maxUnavailable *intstr.IntOrString) Deployment {
	d := Deployment{Replicas: replicas, Strategy: StrategyRollingUpdate, MaxSurge: num(0), MaxUnavailable: num(0)}
	if maxSurge != nil {
		d.MaxSurge = maxSurge
	}
	if maxUnavailable != nil {
		d.MaxUnavailable = maxUnavailable
	}
	return d
}

func rs(name string, replicas int32, ts time.Time) ReplicaSet {
	return ReplicaSet{Name: name, Replicas: replicas, Created: ts}
}

func newRS(name string, replicas int32, ts time.Time) ReplicaSet {
	r := rs(name, replicas, ts)
	r.New = true
	return r
}

// annotate sets the annotations a controller at deployment size desired wrote.
func annotate(r ReplicaSet, d Deployment, desired int32) ReplicaSet {
	d.Replicas = desired
	r.DesiredAnnotation = fmt.Sprint(desired)
	r.MaxAnnotation = fmt.Sprint(desired + MaxSurge(d))
	return r
}

func sizes(rss []ReplicaSet) map[string]int32 {
	m := map[string]int32{}
	for _, r := range rss {
		m[r.Name] = r.Replicas
	}
	return m
}

func byName(rss []ReplicaSet, name string) ReplicaSet {
	for _, r := range rss {
		if r.Name == name {
			return r
		}
	}
	panic("no replica set " + name)
}

func checkSizes(t *testing.T, got []ReplicaSet, want map[string]int32) {
	t.Helper()
	g := sizes(got)
	if len(g) != len(want) {
		t.Errorf("got replica sets %v, want %v", g, want)
	}
	for n, w := range want {
		if g[n] != w {
			t.Errorf("%s: got %d replicas, want %d (all: %v)", n, g[n], w, g)
		}
	}
}

func changeLog(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %s %d->%d", c.Step, c.ReplicaSet, c.From, c.To)
		if c.Error != "" {
			fmt.Fprintf(&b, " ERROR")
		}
		b.WriteString("; ")
	}
	return b.String()
}

// settle runs Sync until a sync changes nothing, with the availability held
// fixed: a shrunk RS keeps min(Available, Replicas) available pods (the RS
// controller deletes unavailable pods first), pods added never become
// available, and deleted pods vanish at once. It returns one change log per
// sync that changed something.
func settle(t *testing.T, d Deployment, rss []ReplicaSet, v Version) ([]ReplicaSet, []string) {
	t.Helper()
	var log []string
	for i := 0; i < 50; i++ {
		next, changes := Sync(d, rss, v)
		for j := range next {
			next[j].Available = min(next[j].Available, next[j].Replicas)
			next[j].StatusReplicas = next[j].Replicas
			next[j].RunningPods = next[j].Replicas
		}
		rss = next
		if len(changes) == 0 {
			return rss, log
		}
		for _, c := range changes {
			t.Logf("sync %d: %s %s %d -> %d: %s %s", i+1, c.Step, c.ReplicaSet, c.From, c.To, c.Reason, c.Error)
		}
		log = append(log, changeLog(changes))
	}
	t.Fatalf("no fixed point after 50 syncs")
	return nil, nil
}

func sscanChange(s string, step, name *string, from, to *int32) (int, error) {
	return fmt.Sscanf(strings.Replace(s, "->", " ", 1), "%s %s %d %d", step, name, from, to)
}
