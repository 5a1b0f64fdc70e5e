//go:build kubelet

package inprocess

import (
	"os"
	"strconv"
	"testing"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

func TestEvictDebug(t *testing.T) {
	t.Parallel()
	seed, _ := strconv.Atoi(os.Getenv("EVICT_SEED"))
	if seed == 0 {
		t.Skip()
	}
	maxPods, _ := strconv.Atoi(os.Getenv("EVICT_MAXPODS"))
	s := evictgen.GenerateWith(uint64(seed), max(maxPods, 8), 37, evictgen.AllDraws)
	for _, p := range s.Pods {
		t.Logf("%+v", p)
	}
	t.Logf("config %+v", s.Config())
	pred := evictPredict(t, s)
	for _, c := range pred.Order {
		t.Logf("pred %s pos %d step %d p=%.2f certain=%v use=%d req=%d grace=%v %+v", c.Pod, c.Position, c.Step, c.EvictProbability, c.Certain, c.Usage, c.Request, c.GracePeriodSeconds, c.DecidedBy)
	}
	t.Logf("localStorage %+v victims %v cut %d", pred.LocalStorage, pred.Victims, pred.Cut)
	for _, sg := range pred.Signals {
		t.Logf("signal %+v", sg)
	}
	t.Logf("uncertain %v notes %v", pred.Uncertain, pred.Notes)
	for run := range 3 {
		t.Logf("kills %v", evictRun(t, s, uint64(run)))
	}
}
