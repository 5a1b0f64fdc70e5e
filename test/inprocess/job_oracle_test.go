package inprocess

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	jobcontroller "k8s.io/kubernetes/pkg/controller/job"

	"github.com/go-logr/logr"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/workload"
	"github.com/scale-preview/scale-preview/test/internal/chance"
)

// jobScenario is a Job before the change, its pods, and the change.
type jobScenario struct {
	name        string
	job         *batchv1.Job // the spec before the change
	pods        []*corev1.Pod
	parallelism int32
	completions *int32 // nil: unchanged
}

var jobNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// jobPodState draws a pod's comparator inputs from few values, so that
// ties under every rule are common.
func jobPodState(rng *rand.Rand, p *corev1.Pod) {
	created := jobNow.Add(-[]time.Duration{3 * time.Hour, 2 * time.Hour, 90 * time.Minute}[rng.IntN(3)])
	p.CreationTimestamp = metav1.NewTime(created)
	p.Status.Phase = corev1.PodRunning
	if rng.IntN(10) > 0 {
		p.Spec.NodeName = "n" + strconv.Itoa(1+rng.IntN(3))
	}
	switch {
	case p.Spec.NodeName == "" || rng.IntN(10) == 0:
		p.Status.Phase = corev1.PodPending
	case rng.IntN(20) == 0:
		p.Status.Phase = corev1.PodUnknown
	}
	ready := p.Status.Phase == corev1.PodRunning && rng.IntN(4) > 0
	st := corev1.ConditionFalse
	at := created
	if ready {
		st = corev1.ConditionTrue
		at = jobNow.Add(-[]time.Duration{80 * time.Minute, 60 * time.Minute, 30 * time.Minute}[rng.IntN(3)])
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(at)}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: int32([]int{0, 0, 0, 1, 2}[rng.IntN(5)])}}
}

func jobRandomScenario(rng *rand.Rand, i int) *jobScenario {
	name := fmt.Sprintf("job-%04d", i)
	uid := types.UID("uid-" + name)
	labels := map[string]string{"batch.kubernetes.io/controller-uid": string(uid), "batch.kubernetes.io/job-name": name}
	par := int32(2 + rng.IntN(7))
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid},
		Spec: batchv1.JobSpec{Parallelism: ptrTo(par), BackoffLimit: ptrTo[int32](1000),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "x"}}}}},
	}
	sc := &jobScenario{name: name, job: j}
	n := 0
	newPod := func(index int) *corev1.Pod {
		n++
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%02d", name, n), Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%s-%02d", name, n)),
			Labels: labels, Finalizers: []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: uid, Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
		if index >= 0 {
			p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index)}
		}
		jobPodState(rng, p)
		sc.pods = append(sc.pods, p)
		return p
	}
	finished := func(index int) {
		// A failed or terminating pod: never a candidate.
		p := newPod(index)
		switch rng.IntN(3) {
		case 0:
			p.Status.Phase = corev1.PodFailed
			p.Status.Conditions = nil
		case 1:
			p.Status.Phase = corev1.PodFailed
			p.Status.Conditions, p.Finalizers = nil, nil
			j.Status.Failed++
		default:
			p.DeletionTimestamp = ptrTo(metav1.NewTime(jobNow.Add(-time.Minute)))
		}
	}
	if rng.IntN(2) == 0 {
		// NonIndexed, with or without completions.
		if rng.IntN(2) == 0 {
			j.Spec.Completions = ptrTo(par + int32(rng.IntN(6)))
			if rng.IntN(3) == 0 {
				j.Status.Succeeded = int32(rng.IntN(int(*j.Spec.Completions - 1)))
			}
		}
		for k := range par {
			p := newPod(-1)
			if k > 0 && rng.IntN(3) == 0 { // a twin of the one before: a tie
				twin := sc.pods[len(sc.pods)-2].DeepCopy()
				twin.Name, twin.UID = p.Name, p.UID
				sc.pods[len(sc.pods)-1] = twin
			}
		}
		for range rng.IntN(3) {
			finished(-1)
		}
		sc.parallelism = int32(rng.IntN(int(par)))
		return sc
	}
	// Indexed: one pod per pending index, up to parallelism; some indexes
	// done, some doubled, some pods without an index.
	completions := par + int32(rng.IntN(5))
	j.Spec.CompletionMode, j.Spec.Completions = ptrTo(batchv1.IndexedCompletion), ptrTo(completions)
	var done []string
	active := 0
	for ix := 0; ix < int(completions); ix++ {
		switch {
		case rng.IntN(6) == 0:
			if rng.IntN(2) == 0 {
				done = append(done, strconv.Itoa(ix))
			} else {
				p := newPod(ix)
				p.Status.Phase, p.Status.Conditions = corev1.PodSucceeded, nil
			}
		case active < int(par):
			active++
			p := newPod(ix)
			if prev := sc.pods[max(0, len(sc.pods)-2)]; active > 1 && jobActive(prev) && rng.IntN(3) == 0 { // a tie across indexes
				twin := prev.DeepCopy()
				twin.Name, twin.UID, twin.Annotations = p.Name, p.UID, p.Annotations
				sc.pods[len(sc.pods)-1] = twin
			}
			if rng.IntN(4) == 0 {
				dup := newPod(ix)
				if rng.IntN(2) == 0 { // a twin: tied under every rule
					twin := sc.pods[len(sc.pods)-2].DeepCopy()
					twin.Name, twin.UID = dup.Name, dup.UID
					sc.pods[len(sc.pods)-1] = twin
				}
			}
			if rng.IntN(8) == 0 {
				finished(ix)
			}
		}
	}
	j.Status.CompletedIndexes = strings.Join(done, ",")
	if rng.IntN(8) == 0 {
		newPod(-1)
	}
	sc.parallelism = int32(rng.IntN(int(par)))
	if rng.IntN(2) == 0 {
		sc.completions = ptrTo(sc.parallelism) // elastic: together
	}
	return sc
}

func jobActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

// jobPredict is the plugin's answer, from the Job before the change.
func jobPredict(sc *jobScenario) (*prediction.Prediction, error) {
	s := &snapshot.Snapshot{Jobs: []*batchv1.Job{sc.job}, Pods: sc.pods}
	ref := snapshot.Ref{Kind: snapshot.Job, Namespace: "ns", Name: sc.name}
	return workload.Predict(s, ref, sc.parallelism, workload.Options{Rules: rules.Defaults(rules.Newest), Now: jobNow, Seed: 1, JobCompletions: sc.completions})
}

var jobQuietLogs sync.Once

// jobRun runs the real Job controller once on the Job after the change and
// returns the pods it deleted. The pods reach the informer one by one in a
// random order, as pods created while kube-controller-manager runs do
// (the order ties are broken in; see docs/deployments.md).
func jobRun(sc *jobScenario, seed uint64) (map[string]bool, error) {
	jobQuietLogs.Do(func() { klog.SetLogger(logr.Discard()) })
	j := sc.job.DeepCopy()
	j.Spec.Parallelism = ptrTo(sc.parallelism)
	if sc.completions != nil {
		j.Spec.Completions = ptrTo(*sc.completions)
	}
	cs := fake.NewClientset(j)
	var mu sync.Mutex
	deleted := map[string]bool{}
	statusWritten := make(chan struct{}, 1)
	cs.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		deleted[a.(clienttesting.DeleteAction).GetName()] = true
		mu.Unlock()
		return false, nil, nil
	})
	cs.PrependReactor("update", "jobs", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			select {
			case statusWritten <- struct{}{}:
			default:
			}
		}
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := informers.NewSharedInformerFactory(cs, 0)
	podInf := f.Core().V1().Pods()
	jm, err := jobcontroller.NewController(ctx, cs, podInf, f.Batch().V1().Jobs(), f.Scheduling().V1beta1().Workloads(), f.Scheduling().V1beta1().PodGroups())
	if err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	f.WaitForCacheSync(ctx.Done())
	pods := slices.Clone(sc.pods)
	rng := rand.New(rand.NewPCG(seed, 3))
	rng.Shuffle(len(pods), func(i, k int) { pods[i], pods[k] = pods[k], pods[i] })
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods("ns").Create(ctx, p.DeepCopy(), metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	for end := time.Now().Add(10 * time.Second); len(podInf.Informer().GetStore().ListKeys()) < len(pods); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			return nil, fmt.Errorf("the pod informer did not see every pod")
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), podInf.Informer().HasSynced) {
		return nil, fmt.Errorf("informers did not sync")
	}
	done := make(chan struct{})
	go func() { defer close(done); jm.Run(ctx, 1) }()
	// The sync that reads the change deletes its pods before it writes the
	// Job's status; a later sync deletes nothing more (checked: the grace).
	select {
	case <-statusWritten:
	case <-time.After(20 * time.Second):
		cancel()
		<-done
		return nil, fmt.Errorf("the Job controller wrote no status")
	}
	time.Sleep(20 * time.Millisecond)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	out := map[string]bool{}
	for _, p := range sc.pods {
		if deleted[p.Name] {
			out[p.Name] = true
		}
	}
	return out, nil
}

// jobRunRepeated runs the controller n times, four at a time (most of a
// run is the controller's cache-sync poll, not work).
func jobRunRepeated(sc *jobScenario, n int, firstSeed uint64) ([]map[string]bool, error) {
	outs := make([]map[string]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for r := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outs[r], errs[r] = jobRun(sc, firstSeed+uint64(r))
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", r, err)
		}
	}
	return outs, nil
}

// jobReport sums up one scenario's comparison.
type jobReport struct {
	runs, certainChecked, contradicted, probChecked, probOff, probBeyond int
	maxDiff                                                              float64
	problems                                                             []string
}

func jobJudge(pred *prediction.Prediction, outs []map[string]bool) jobReport {
	var rep jobReport
	freq := map[string]int{}
	for _, o := range outs {
		rep.runs++
		for n := range o {
			freq[n]++
		}
	}
	seen := map[string]bool{}
	for _, pp := range pred.Pods {
		seen[pp.Name] = true
		f := float64(freq[pp.Name]) / float64(rep.runs)
		switch {
		case pp.Fate != prediction.FateDelete && pp.Fate != prediction.FateKeep:
			if freq[pp.Name] > 0 {
				rep.contradicted++
				rep.problems = append(rep.problems, fmt.Sprintf("%s (%s) deleted in %d runs", pp.Name, pp.Fate, freq[pp.Name]))
			}
		case pp.Certain:
			rep.certainChecked++
			if want := map[bool]float64{true: 1, false: 0}[pp.Fate == prediction.FateDelete]; f != want {
				rep.contradicted++
				rep.problems = append(rep.problems, fmt.Sprintf("%s certain %s, deleted in %d/%d runs", pp.Name, pp.Fate, freq[pp.Name], rep.runs))
			}
		default:
			rep.probChecked++
			diff := math.Abs(f - pp.DeleteProbability)
			rep.maxDiff = max(rep.maxDiff, diff)
			if diff > chance.Tolerance {
				rep.probOff++
				note := ""
				if chance.BeyondNoise(freq[pp.Name], rep.runs, pp.DeleteProbability) {
					rep.probBeyond++
					note = " (beyond chance)"
				}
				rep.problems = append(rep.problems, fmt.Sprintf("%s p=%.2f, measured %.2f%s", pp.Name, pp.DeleteProbability, f, note))
			}
		}
	}
	// victims holds as many pods as are deleted, when every run deletes
	// as many.
	if counts := jobCounts(outs); len(counts) == 1 && !counts[len(pred.Victims)] {
		rep.contradicted++
		rep.problems = append(rep.problems, fmt.Sprintf("every run deleted %v pod(s), victims lists %d", counts, len(pred.Victims)))
	}
	for n, k := range freq {
		if !seen[n] { // a pod the plugin did not list (finished) was deleted
			rep.contradicted++
			rep.problems = append(rep.problems, fmt.Sprintf("%s not a candidate, deleted in %d runs", n, k))
		}
	}
	return rep
}

func jobCounts(outs []map[string]bool) map[int]bool {
	counts := map[int]bool{}
	for _, o := range outs {
		counts[len(o)] = true
	}
	return counts
}

// TestJobAgainstController compares the plugin's Job predictions with the
// real Job controller of 1.37 on seeded random Jobs: every certain fate in
// every run, and every open fate's probability within the tolerance unless
// the runs' sampling explains the gap.
func TestJobAgainstController(t *testing.T) {
	t.Parallel()
	scenarios, runs, openRuns := envInt("INPROCESS_JOB_SCENARIOS", 80), envInt("INPROCESS_JOB_RUNS", 24), envInt("INPROCESS_JOB_OPEN_RUNS", 100)
	if testing.Short() {
		scenarios, runs, openRuns = 10, 6, 30
	}
	seed := uint64(envInt("INPROCESS_SEED", 1))
	rng := rand.New(rand.NewPCG(seed, 29))
	var total jobReport
	kinds := map[string]int{}
	for i := range scenarios {
		sc := jobRandomScenario(rng, i)
		pred, err := jobPredict(sc)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		n := runs
		if !pred.Certain {
			n = openRuns
		}
		mode := "NonIndexed"
		if sc.job.Spec.CompletionMode != nil {
			mode = "Indexed"
			if sc.completions != nil {
				mode = "Indexed+completions"
			}
		}
		kinds[mode]++
		for _, pp := range pred.Pods {
			switch {
			case strings.Contains(pp.Reason, "tied duplicates"):
				kinds["tied-duplicate fates"]++
			case strings.Contains(pp.Reason, "from index order"):
				kinds["index-order tie fates"]++
			case strings.HasPrefix(pp.Reason, "duplicate of index"):
				kinds["duplicate fates"]++
			case strings.Contains(pp.Reason, "out of range"):
				kinds["out-of-range fates"]++
			}
		}
		outs, err := jobRunRepeated(sc, n, seed*1_000_003+uint64(i)*1009)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		rep := jobJudge(pred, outs)
		total.runs += rep.runs
		total.certainChecked += rep.certainChecked
		total.contradicted += rep.contradicted
		total.probChecked += rep.probChecked
		total.probOff += rep.probOff
		total.probBeyond += rep.probBeyond
		total.maxDiff = max(total.maxDiff, rep.maxDiff)
		if rep.contradicted > 0 || rep.probBeyond > 0 {
			t.Errorf("%s (%s, parallelism %d -> %d, %d pods): %s\n  predicted: %s", sc.name, mode, *sc.job.Spec.Parallelism, sc.parallelism, len(sc.pods),
				strings.Join(rep.problems, "; "), jobDescribe(pred))
		} else if len(rep.problems) > 0 {
			t.Logf("%s: within sampling noise: %s", sc.name, strings.Join(rep.problems, "; "))
		}
	}
	t.Logf("%d scenarios %v, %d runs: %d certain fates checked, %d contradicted; %d open fates, %d off by more than %.2f (%d beyond chance), largest gap %.3f",
		scenarios, kinds, total.runs, total.certainChecked, total.contradicted, total.probChecked, total.probOff, chance.Tolerance, total.probBeyond, total.maxDiff)
}

func jobDescribe(p *prediction.Prediction) string {
	var parts []string
	for _, pp := range p.Pods {
		ix := ""
		if pp.CompletionIndex != nil {
			ix = "#" + strconv.Itoa(*pp.CompletionIndex)
		}
		parts = append(parts, fmt.Sprintf("%s%s:%s/%.2f", pp.Name, ix, pp.Fate, pp.DeleteProbability))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
