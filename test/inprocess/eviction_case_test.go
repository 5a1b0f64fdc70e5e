package inprocess

// Reported nodes (testdata/eviction/NAME: objects.json, summary.json and
// configz.json, as kubectl get and get --raw print them) under the real
// 1.37 eviction manager, configured from the configz document as the
// kubelet that served it ran, judged against the plugin's own command.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kubeeviction "k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/test/internal/evictjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

func TestEvictionCasesAgainstKubelet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ dir, node, now string }{
		{"eviction-no-hard-thresholds", "worker-800119", "2026-11-21T05:45:17Z"},
		{"eviction-tie-at-the-cut", "worker-800103", "2026-11-20T13:25:38Z"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", "eviction", c.dir)
			n := loadEvictCase(t, dir, c.node)
			pred := evictCasePredict(t, dir, c.node, c.now)
			if pred.Signal != string(eviction.MemoryAvailable) && pred.Signal != string(eviction.AllocatableMemoryAvailable) {
				t.Fatalf("%s: the harness gives back only memory and processes, not disk; the plugin ranks for %s", dir, pred.Signal)
			}
			evictCompareThresholds(t, dir, n.config(t).Thresholds, n.disks(), pred)
			runs := 96
			if testing.Short() {
				runs = 16
			}
			outcomes := make([]evictjudge.Outcome, runs)
			for run := range runs {
				outcomes[run] = evictjudge.Outcome{Kills: evictRunNode(t, n, n.kubeletPods(), n.config(t), n.disks(), uint64(run), evictCaseName), Runs: 1}
			}
			tally := evictjudge.JudgeNamed(pred, outcomes, dir, true, func(p string) string { return p }, t.Errorf)
			t.Logf("%s: %d runs; %d determined fates compared, %d probabilities judged, %d off beyond chance; victims %v", dir, runs, tally.Determined, tally.Judged, tally.Off, pred.Victims)
		})
	}
}

// evictCompareThresholds: the thresholds the plugin shows are the
// running kubelet's (ths from ParseThresholdConfig, then
// UpdateContainerFsThresholds for the layout; inert copies aside).
func evictCompareThresholds(t *testing.T, what string, ths []evictionapi.Threshold, d evictDisks, pred *eviction.Result) {
	t.Helper()
	ths, _ = kubeeviction.UpdateContainerFsThresholds(slices.Clone(ths), d.imageFs, d.split)
	var want, got []string
	for _, th := range ths {
		if th.Operator != "" {
			want = append(want, fmt.Sprintf("%s grace=%v", th.Signal, th.GracePeriod))
		}
	}
	for _, sg := range pred.Signals {
		for _, th := range sg.Thresholds {
			grace := time.Duration(0)
			if th.Kind == "soft" {
				grace, _ = time.ParseDuration(th.GracePeriod)
			}
			got = append(got, fmt.Sprintf("%s grace=%v", sg.Signal, grace))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("%s: the kubelet's thresholds %v, the plugin's %v", what, want, got)
	}
}

func evictCaseName(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// evictCasePredict runs the plugin's command on the files, as a user does.
func evictCasePredict(t *testing.T, dir, node, now string) *eviction.Result {
	t.Helper()
	bin := evictPluginBinary(t)
	args := []string{"node/" + node, "--now", now, "-o", "json"}
	for _, f := range []string{"objects.json", "summary.json", "configz.json"} {
		args = append(args, "-f", filepath.Join(dir, f))
	}
	var out, errOut bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil && c.ProcessState.ExitCode() != 8 {
		t.Fatalf("kubectl scale-preview %v: %v: %s", args, err, errOut.String())
	}
	var doc struct {
		Eviction *eviction.Result `json:"eviction"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Eviction == nil {
		t.Fatalf("kubectl scale-preview %v: no eviction in the output (%v)", args, err)
	}
	return doc.Eviction
}

var evictPlugin struct {
	once sync.Once
	path string
	err  error
}

// evictPluginBinary builds the plugin once per test binary (the root
// module's own dependencies, not this module's).
func evictPluginBinary(t *testing.T) string {
	t.Helper()
	evictPlugin.once.Do(func() {
		dir, err := os.MkdirTemp("", "evict-plugin-")
		if err != nil {
			evictPlugin.err = err
			return
		}
		evictPlugin.path = filepath.Join(dir, "kubectl-scale_preview")
		b := exec.Command("go", "build", "-o", evictPlugin.path, "./cmd/kubectl-scale_preview")
		b.Dir = filepath.Join("..", "..")
		if out, err := b.CombinedOutput(); err != nil {
			evictPlugin.err = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if evictPlugin.err != nil {
		t.Fatal(evictPlugin.err)
	}
	return evictPlugin.path
}

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
