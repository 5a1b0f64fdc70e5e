package job

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

var testNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func testJob(par int32, completions *int32, indexed bool) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ml", UID: "job-uid"},
		Spec: batchv1.JobSpec{Parallelism: ptr.To(par), Completions: completions, BackoffLimit: ptr.To[int32](6)}}
	if indexed {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	return j
}

// pod: index -1 for none; ready with readyAgo > 0; created createdAgo ago.
func pod(name string, index int, ready bool, readyAgo, createdAgo time.Duration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(testNow.Add(-createdAgo)), Finalizers: []string{batchv1.JobTrackingFinalizer}},
		Spec:   corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if index >= 0 {
		p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index)}
	}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(testNow.Add(-readyAgo))}}
	}
	return p
}

func predict(t *testing.T, j *batchv1.Job, pods []*corev1.Pod, par int32, completions *int32, minor int) Result {
	t.Helper()
	res, err := Predict(Input{Job: j, Pods: pods, Parallelism: par, Completions: completions, Now: testNow, Rules: rules.Defaults(minor), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fates renders "name:D" (certain delete), "name:k" (certain keep) or
// "name:0.33" (open), in order.
func fates(r Result) string {
	var out []string
	for _, f := range r.Order {
		s := f.Pod.Name + ":"
		switch {
		case !f.Certain:
			s += strconv.FormatFloat(math.Round(f.Probability*100)/100, 'f', -1, 64)
		case f.Delete:
			s += "D"
		default:
			s += "k"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestNonIndexedComparator(t *testing.T) {
	pods := []*corev1.Pod{
		pod("old-ready", -1, true, time.Hour, 2*time.Hour),
		pod("new-ready", -1, true, time.Minute, 2*time.Hour),
		pod("not-ready", -1, false, 0, 3*time.Hour),
		pod("restarted", -1, true, time.Hour, 2*time.Hour),
	}
	pods[3].Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 3}}
	r := predict(t, testJob(4, nil, false), pods, 2, nil, 37)
	if got, want := fates(r), "not-ready:D new-ready:D restarted:k old-ready:k"; got != want {
		t.Errorf("fates %s, want %s", got, want)
	}
	if r.Want != 2 || r.Victims != 2 || !r.Certain {
		t.Errorf("want %d victims %d certain %v", r.Want, r.Victims, r.Certain)
	}
}

// Deletion cost and log2 buckets are not the Job's rules: exact ready
// times decide where a ReplicaSet would tie by bucket.
func TestNonIndexedIgnoresCostAndBuckets(t *testing.T) {
	a := pod("a", -1, true, 100*time.Second, time.Hour)
	b := pod("b", -1, true, 101*time.Second, time.Hour)
	a.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "1000"}
	r := predict(t, testJob(2, nil, false), []*corev1.Pod{a, b}, 1, nil, 37)
	if got, want := fates(r), "a:D b:k"; got != want {
		t.Errorf("fates %s, want %s", got, want)
	}
}

func TestNonIndexedTie(t *testing.T) {
	var pods []*corev1.Pod
	for _, n := range []string{"a", "b", "c"} {
		pods = append(pods, pod(n, -1, true, time.Hour, time.Hour))
	}
	r := predict(t, testJob(3, nil, false), pods, 1, nil, 37)
	if r.Certain || len(r.Contenders) != 1 {
		t.Fatalf("certain %v contenders %v", r.Certain, r.Contenders)
	}
	for _, f := range r.Order {
		if math.Abs(f.Probability-2.0/3) > 1e-9 {
			t.Errorf("%s: %v, want 2/3", f.Pod.Name, f.Probability)
		}
	}
}

// With completions, the pods wanted are at most the completions left (1.22+);
// 1.21 removes only what exceeds parallelism.
func TestWantRemaining(t *testing.T) {
	j := testJob(4, ptr.To[int32](5), false)
	j.Status.Succeeded = 3
	var pods []*corev1.Pod
	for i := range 4 {
		pods = append(pods, pod("p"+strconv.Itoa(i), -1, true, time.Duration(i+1)*time.Minute, time.Hour))
	}
	if r := predict(t, j, pods, 3, nil, 37); r.Want != 2 || r.Victims != 2 {
		t.Errorf("1.37: want %d victims %d, want 2 and 2", r.Want, r.Victims)
	}
	if r := predict(t, j, pods, 3, nil, 21); r.Victims != 1 {
		t.Errorf("1.21: victims %d, want 1", r.Victims)
	}
	// Without completions, a success keeps what runs (1.22+).
	j = testJob(4, nil, false)
	done := pod("done", -1, false, 0, time.Hour)
	done.Status.Phase = corev1.PodSucceeded
	if r := predict(t, j, append(pods, done), 1, nil, 37); r.Victims != 0 || len(r.Warnings) != 1 {
		t.Errorf("victims %d warnings %q, want none and a warning", r.Victims, r.Warnings)
	}
}

// Elastic Indexed: completions and parallelism 4 -> 2 remove indexes 2
// and 3 whatever the comparator says.
func TestElasticIndexedOutOfRange(t *testing.T) {
	j := testJob(4, ptr.To[int32](4), true)
	pods := []*corev1.Pod{
		pod("t-0", 0, false, 0, time.Minute),
		pod("t-1", 1, false, 0, time.Minute),
		pod("t-2", 2, true, time.Hour, time.Hour),
		pod("t-3", 3, true, time.Hour, time.Hour),
	}
	r := predict(t, j, pods, 2, ptr.To[int32](2), 37)
	if got, want := fates(r), "t-2:D t-3:D t-0:k t-1:k"; got != want {
		t.Errorf("fates %s, want %s", got, want)
	}
	for _, f := range r.Order[:2] {
		if f.Cause != OutOfRange {
			t.Errorf("%s: cause %s", f.Pod.Name, f.Cause)
		}
	}
}

// Lowering parallelism alone on an Indexed Job: one pod per index, sorted
// from index order, so ties break the same way every time (1.25+).
func TestIndexedTieFollowsIndexOrder(t *testing.T) {
	j := testJob(4, ptr.To[int32](8), true)
	var pods []*corev1.Pod
	for i := 3; i >= 0; i-- {
		pods = append(pods, pod("t-"+strconv.Itoa(i), i, true, time.Hour, time.Hour))
	}
	r := predict(t, j, pods, 2, nil, 37)
	if got, want := fates(r), "t-0:D t-1:D t-2:k t-3:k"; got != want {
		t.Errorf("fates %s, want %s", got, want)
	}
	// 1.24 and older: another sort.Sort; the tie is left to chance.
	if r := predict(t, j, pods, 2, nil, 24); r.Certain {
		t.Errorf("1.24: certain, want open")
	}
}

func TestIndexedDuplicatesAndNoIndex(t *testing.T) {
	j := testJob(3, ptr.To[int32](3), true)
	pods := []*corev1.Pod{
		pod("t-0", 0, true, time.Hour, time.Hour),
		pod("t-0-dup", 0, false, 0, time.Minute),
		pod("t-1", 1, true, time.Hour, time.Hour),
		pod("stray", -1, true, time.Hour, time.Hour),
	}
	// Nothing lowered: the duplicates and the stray go anyway.
	r := predict(t, j, pods, 3, nil, 37)
	if got, want := fates(r), "stray:D t-0-dup:D t-0:k t-1:k"; got != want {
		t.Errorf("fates %s, want %s", got, want)
	}
	if r.Order[1].Cause != Duplicate || r.Order[1].Kept != "t-0" {
		t.Errorf("dup: %+v", r.Order[1])
	}
}

// Two tied pods of one index: one stays by chance; when the sort then
// removes the one that stays, both go.
func TestIndexedTiedDuplicates(t *testing.T) {
	j := testJob(2, ptr.To[int32](2), true)
	pods := []*corev1.Pod{
		pod("a", 0, true, time.Hour, time.Hour),
		pod("b", 0, true, time.Hour, time.Hour),
		pod("c", 1, true, 2*time.Hour, 2*time.Hour),
	}
	r := predict(t, j, pods, 2, nil, 37)
	for _, f := range r.Order {
		want := map[string]float64{"a": 0.5, "b": 0.5, "c": 0}[f.Pod.Name]
		if math.Abs(f.Probability-want) > 1e-9 {
			t.Errorf("%s: %v, want %v", f.Pod.Name, f.Probability, want)
		}
	}
	// Parallelism 1: the survivor of index 0 (ready more recently than c) goes too.
	r = predict(t, j, pods, 1, nil, 37)
	if got, want := fates(r), "a:D b:D c:k"; got != want && got != "b:D a:D c:k" {
		t.Errorf("fates %s, want %s", got, want)
	}
}

func TestOddInputs(t *testing.T) {
	pods := []*corev1.Pod{pod("a", -1, true, time.Hour, time.Hour)}
	j := testJob(2, nil, false)
	if r := predict(t, j, pods, 2, nil, 37); !strings.Contains(r.Note, "not below") {
		t.Errorf("same parallelism: note %q", r.Note)
	}
	j.Spec.Suspend = ptr.To(true)
	if r := predict(t, j, pods, 1, nil, 37); !strings.Contains(r.Note, "suspended") || r.Victims != 0 {
		t.Errorf("suspended: note %q victims %d", r.Note, r.Victims)
	}
}

func TestCompletionModeErrors(t *testing.T) {
	cases := []struct {
		name    string
		job     *batchv1.Job
		par     int32
		compl   int32
		minor   int
		message string
	}{
		{"non-indexed", testJob(4, ptr.To[int32](8), false), 2, 2, 37, "immutable"},
		{"not in tandem", testJob(4, ptr.To[int32](8), true), 2, 3, 37, "in tandem"},
		{"before elastic", testJob(4, ptr.To[int32](8), true), 2, 2, 26, "ElasticIndexedJob"},
	}
	for _, tc := range cases {
		_, err := Predict(Input{Job: tc.job, Parallelism: tc.par, Completions: ptr.To(tc.compl), Now: testNow, Rules: rules.Defaults(tc.minor)})
		var me *ModeError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.message) {
			t.Errorf("%s: %v, want a ModeError with %q", tc.name, err, tc.message)
		}
	}
	_, err := Predict(Input{Job: testJob(4, ptr.To[int32](8), true), Parallelism: 2, Completions: ptr.To[int32](2), Now: testNow,
		Rules: rules.Resolve(30, map[string]bool{rules.ElasticIndexedJob: false})})
	if err == nil {
		t.Error("1.30 with ElasticIndexedJob off: accepted")
	}
}

func TestParseIndexes(t *testing.T) {
	got := parseIndexes("0,2-4,7,9-12", 10)
	want := []int{0, 2, 3, 4, 7, 9}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}

// 1.21 has no out-of-range step: a pod beyond completions is one of the
// sorted ones (completions could not change then).
func TestOutOfRangeFrom122(t *testing.T) {
	j := testJob(3, ptr.To[int32](2), true)
	pods := []*corev1.Pod{
		pod("t-0", 0, true, time.Minute, time.Hour),
		pod("t-1", 1, true, time.Minute, time.Hour),
		pod("t-5", 5, true, time.Hour, 2*time.Hour), // ready longest: sorts last
	}
	if r := predict(t, j, pods, 3, nil, 37); fates(r) != "t-5:D t-0:k t-1:k" {
		t.Errorf("1.37: %s", fates(r))
	}
	if r := predict(t, j, pods, 2, nil, 21); r.Order[0].Pod.Name == "t-5" || r.Victims != 1 {
		t.Errorf("1.21: %s", fates(r))
	}
}

func TestFinishingJob(t *testing.T) {
	j := testJob(3, ptr.To[int32](3), false)
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}}
	r := predict(t, j, []*corev1.Pod{pod("a", -1, true, time.Hour, time.Hour)}, 1, nil, 37)
	if !strings.Contains(r.Note, "finishing") || r.Victims != 0 {
		t.Errorf("note %q victims %d", r.Note, r.Victims)
	}
}
