//go:build kubelet

package inprocess

// A reported node of testdata/eviction as the kubelet runs it: its pods,
// its summary giving back what a killed pod used, and the eviction
// configuration of its configz document.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kubeeviction "k8s.io/kubernetes/pkg/kubelet/eviction"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// evictKubeletCase is the thresholds in force on the node in dir and the
// outcomes of runs runs of the eviction manager on it.
func evictKubeletCase(t *testing.T, dir, node string, runs int) (kubeletAnswer, bool) {
	t.Helper()
	n := loadEvictCase(t, dir, node)
	cfg := n.config(t)
	a := kubeletAnswer{Key: filepath.Base(dir), Input: evictCaseInput(t, dir, node, runs), InForce: evictInForce(cfg.Thresholds, n.disks())}
	kills := make([]map[string]evictgen.Kill, runs)
	for run := range runs {
		kills[run] = evictRunNode(t, n, n.kubeletPods(), cfg, n.disks(), uint64(run), evictCaseName)
	}
	a.Outcomes = evictGroup(kills)
	return evictLiveAnswer(t, sectionCases, a)
}

func evictCaseName(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// evictCase is a reported node as an evictgen.Node: pods leave the
// summary when killed, giving back their memory and processes.
type evictCase struct {
	name    string
	pods    []*v1.Pod // active, bound to the node, as the API shows them
	summary *statsapi.Summary
	kc      *kubeletconfigv1beta1.KubeletConfiguration
}

func loadEvictCase(t *testing.T, dir, node string) *evictCase {
	t.Helper()
	c := &evictCase{name: dir}
	var list v1.List
	evictReadJSON(t, filepath.Join(dir, "objects.json"), &list)
	for _, item := range list.Items {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(item.Raw, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if p, ok := obj.(*v1.Pod); ok && p.Spec.NodeName == node && p.DeletionTimestamp == nil &&
			p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			c.pods = append(c.pods, p)
		}
	}
	c.summary = &statsapi.Summary{}
	evictReadJSON(t, filepath.Join(dir, "summary.json"), c.summary)
	var doc struct {
		KubeletConfig *kubeletconfigv1beta1.KubeletConfiguration `json:"kubeletconfig"`
	}
	evictReadJSON(t, filepath.Join(dir, "configz.json"), &doc)
	c.kc = doc.KubeletConfig
	return c
}

func evictReadJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func (c *evictCase) String() string { return c.name }

func (c *evictCase) PodNames() []string {
	out := make([]string, len(c.pods))
	for i, p := range c.pods {
		out[i] = evictCaseName(p)
	}
	return out
}

func (c *evictCase) Order(run uint64) []int { return rand.New(rand.NewPCG(7, run)).Perm(len(c.pods)) }

// kubeletPods are the pods as the kubelet holds them: a static pod under
// its own UID, not its mirror's.
func (c *evictCase) kubeletPods() []*v1.Pod {
	out := make([]*v1.Pod, len(c.pods))
	for i, p := range c.pods {
		q := p.DeepCopy()
		if m := q.Annotations["kubernetes.io/config.mirror"]; m != "" {
			q.UID = types.UID(m)
			delete(q.Annotations, "kubernetes.io/config.mirror")
		}
		out[i] = q
	}
	return out
}

// config is the running kubelet's eviction configuration: the maps of
// the configz document (a map configz left out is empty in the kubelet).
func (c *evictCase) config(t *testing.T) kubeeviction.Config {
	t.Helper()
	kc := c.kc
	ths, err := kubeeviction.ParseThresholdConfig(kc.EnforceNodeAllocatable, kc.EvictionHard, kc.EvictionSoft, kc.EvictionSoftGracePeriod, kc.EvictionMinimumReclaim)
	if err != nil {
		t.Fatalf("%s: the kubelet rejects its configz: %v", c.name, err)
	}
	return kubeeviction.Config{PressureTransitionPeriod: kc.EvictionPressureTransitionPeriod.Duration, MaxPodGracePeriodSeconds: int64(kc.EvictionMaxPodGracePeriod), Thresholds: ths}
}

func (c *evictCase) disks() evictDisks {
	l := eviction.InferLayout(c.summary)
	return evictDisks{l.ImageFs, l.Split}
}

// Summary is the reported summary without the pods killed, their working
// sets and processes given back to the node, every figure stamped now.
func (c *evictCase) Summary(running map[string]bool, now time.Time) json.RawMessage {
	s := &statsapi.Summary{} // a deep copy: the stats types have no DeepCopy
	if b, err := json.Marshal(c.summary); err != nil || json.Unmarshal(b, s) != nil {
		panic(fmt.Sprint("a summary always round-trips: ", err))
	}
	var ws, procs uint64
	s.Pods = slices.DeleteFunc(s.Pods, func(p statsapi.PodStats) bool {
		if running[p.PodRef.Namespace+"/"+p.PodRef.Name] || !slices.Contains(c.PodNames(), p.PodRef.Namespace+"/"+p.PodRef.Name) {
			return false
		}
		if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			ws += *p.Memory.WorkingSetBytes
		}
		if p.ProcessStats != nil && p.ProcessStats.ProcessCount != nil {
			procs += *p.ProcessStats.ProcessCount
		}
		return true
	})
	at := metav1.NewTime(now)
	giveBack := func(m *statsapi.MemoryStats) {
		if m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
			*m.AvailableBytes += ws
			*m.WorkingSetBytes -= min(ws, *m.WorkingSetBytes)
			m.Time = at
		}
	}
	giveBack(s.Node.Memory)
	for i := range s.Node.SystemContainers {
		if s.Node.SystemContainers[i].Name == statsapi.SystemContainerPods {
			giveBack(s.Node.SystemContainers[i].Memory)
		}
	}
	if r := s.Node.Rlimit; r != nil && r.NumOfRunningProcesses != nil {
		*r.NumOfRunningProcesses -= int64(min(procs, uint64(*r.NumOfRunningProcesses)))
		r.Time = at
	}
	fss := []*statsapi.FsStats{s.Node.Fs}
	if r := s.Node.Runtime; r != nil {
		fss = append(fss, r.ImageFs, r.ContainerFs)
	}
	for _, f := range fss {
		if f != nil {
			f.Time = at
		}
	}
	for i := range s.Pods {
		if m := s.Pods[i].Memory; m != nil {
			m.Time = at
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprint("a summary always marshals: ", err))
	}
	return b
}

var _ evictgen.Node = (*evictCase)(nil)
