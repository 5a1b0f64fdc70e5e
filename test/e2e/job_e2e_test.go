package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// jobE2EScenario is a Job, the states written onto its pods (by completion
// index for an Indexed Job, by creation order otherwise), and the change.
type jobE2EScenario struct {
	name        string
	indexed     bool
	parallelism int32
	completions *int32
	states      []podState
	newPar      int32
	newCompl    *int32
}

// jobPrediction is the part of the plugin's JSON a Job adds.
type jobPrediction struct {
	Job *struct {
		WantActive int32 `json:"wantActive"`
		Forced     int   `json:"forced"`
	} `json:"job"`
}

// TestJobScaleIn predicts a Job's scale-in with the plugin, then lowers
// parallelism (and completions) for real under the Job controller of the
// suite's kube-controller-manager build, and compares the deleted pods.
func TestJobScaleIn(t *testing.T) {
	needPlugin(t)
	stop := jobStartController(t)
	defer stop()
	scenarios := []jobE2EScenario{
		{name: "elastic", indexed: true, parallelism: 6, completions: ptrTo[int32](6),
			states: []podState{running("n1", 30*time.Minute), running("n2", 10*time.Minute), notReady("n1"),
				running("n1", 40*time.Minute), pending(""), running("n2", 5*time.Minute).withRestarts(2)},
			newPar: 3, newCompl: ptrTo[int32](3)},
		{name: "indexed-ties", indexed: true, parallelism: 6, completions: ptrTo[int32](6),
			states: []podState{running("n1", 30*time.Minute), running("n1", 30*time.Minute), notReady("n2"),
				running("n2", time.Hour), running("n2", 30*time.Minute), running("n1", time.Hour)},
			newPar: 3},
		{name: "nonindexed", parallelism: 5,
			states: []podState{pending(""), notReady("n1"), running("n1", 5*time.Minute), running("n2", 30*time.Minute), running("n1", time.Hour)},
			newPar: 2},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { jobRunScenario(t, sc) })
	}
}

func jobRunScenario(t *testing.T, sc jobE2EScenario) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := env.cp.admin
	ns := "e2e-job-" + sc.name
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "work", Namespace: ns},
		Spec: batchv1.JobSpec{Parallelism: ptrTo(sc.parallelism), Completions: sc.completions, BackoffLimit: ptrTo[int32](100),
			Template: podTemplate(nil, false)}}
	j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	if sc.indexed {
		j.Spec.CompletionMode = ptrTo(batchv1.IndexedCompletion)
	}
	if _, err := c.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods, err := jobWaitPods(ctx, ns, int(sc.parallelism))
	if err != nil {
		t.Fatal(err)
	}
	ref := time.Now()
	ready := 0
	for i, p := range pods {
		st := sc.states[i]
		if err := applyPodState(ctx, c, p, st, ref); err != nil {
			t.Fatal(err)
		}
		if st.Ready {
			ready++
		}
		logf("%s: %s = %s", sc.name, p.Name, st)
	}
	// The controller has seen the states when its status counts them; its
	// pod events are batched (1 s), so wait a little more.
	if err := jobWaitStatus(ctx, ns, func(s batchv1.JobStatus) bool {
		return s.Active == sc.parallelism && s.Ready != nil && int(*s.Ready) == ready
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)

	args := []string{"job/work", fmt.Sprintf("--parallelism=%d", sc.newPar), "-n", ns, "--kubeconfig", env.cp.viewerKubeconfig, "-o", "json"}
	if sc.newCompl != nil {
		args = append(args, fmt.Sprintf("--completions=%d", *sc.newCompl))
	}
	run, err := runPlugin(ctx, env.pluginPath, args...)
	if err != nil || run.exitCode != 0 {
		t.Fatalf("plugin: %v %s", err, run)
	}
	var pred prediction
	var jp jobPrediction
	if err := json.Unmarshal([]byte(run.stdout), &pred); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(run.stdout), &jp); err != nil || jp.Job == nil {
		t.Fatalf("no job section: %v", err)
	}
	logf("%s: predicted %v (certain %v, wantActive %d)", sc.name, pred.Victims, *pred.Certain, jp.Job.WantActive)

	patch := map[string]any{"parallelism": sc.newPar}
	if sc.newCompl != nil {
		patch["completions"] = *sc.newCompl
	}
	body, _ := json.Marshal(map[string]any{"spec": patch})
	if _, err := c.BatchV1().Jobs(ns).Patch(ctx, "work", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted, err := jobWaitDeleted(ctx, ns, pods, len(pred.Victims))
	if err != nil {
		t.Fatal(err)
	}
	logf("%s: deleted %v", sc.name, deleted)
	for _, pp := range pred.Pods {
		if !pp.Certain || (pp.Fate != "delete" && pp.Fate != "keep") {
			continue
		}
		if got := deleted[pp.Name]; got != (pp.Fate == "delete") {
			t.Errorf("%s: predicted %s for certain, deleted=%v", pp.Name, pp.Fate, got)
		}
	}
	if len(deleted) != len(pred.Victims) {
		t.Errorf("deleted %d pods, predicted %d", len(deleted), len(pred.Victims))
	}
	if !*pred.Certain {
		t.Errorf("the scenario was meant to be determined: %s", run.stdout)
	}
}

// jobWaitPods waits for the Job controller's n pods and returns them by
// completion index (Indexed) or creation order and name.
func jobWaitPods(ctx context.Context, ns string, n int) ([]*corev1.Pod, error) {
	for {
		list, err := env.cp.admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		if len(list.Items) == n {
			var out []*corev1.Pod
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			sort.Slice(out, func(a, b int) bool {
				ia, ea := strconv.Atoi(out[a].Annotations[batchv1.JobCompletionIndexAnnotation])
				ib, eb := strconv.Atoi(out[b].Annotations[batchv1.JobCompletionIndexAnnotation])
				if ea == nil && eb == nil && ia != ib {
					return ia < ib
				}
				return out[a].Name < out[b].Name
			})
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d pods, want %d: %w", len(list.Items), n, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func jobWaitStatus(ctx context.Context, ns string, ok func(batchv1.JobStatus) bool) error {
	for {
		j, err := env.cp.admin.BatchV1().Jobs(ns).Get(ctx, "work", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ok(j.Status) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("job status %+v: %w", j.Status, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// jobWaitDeleted waits until want of the pods are terminating or gone,
// then a little longer to catch any further deletion.
func jobWaitDeleted(ctx context.Context, ns string, pods []*corev1.Pod, want int) (map[string]bool, error) {
	var extra time.Time
	for {
		list, err := env.cp.admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		alive := map[string]bool{}
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				alive[p.Name] = true
			}
		}
		deleted := map[string]bool{}
		for _, p := range pods {
			if !alive[p.Name] {
				deleted[p.Name] = true
			}
		}
		if len(deleted) >= want {
			if extra.IsZero() {
				extra = time.Now().Add(3 * time.Second)
			} else if time.Now().After(extra) {
				return deleted, nil
			}
		}
		select {
		case <-ctx.Done():
			return deleted, fmt.Errorf("%d pods deleted, predicted %d: %w", len(deleted), want, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// jobStartController runs a kube-controller-manager with only the Job
// controller (the suite's own runs without it).
func jobStartController(t *testing.T) func() {
	return startControlPlaneExtra(t, "kube-controller-manager-job", "kube-controller-manager",
		"--kubeconfig", env.cp.adminKubeconfig, "--controllers", "job-controller",
		"--leader-elect=false", "--secure-port", "0", "--v", "2")
}
