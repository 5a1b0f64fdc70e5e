package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// syncBuffer is a bytes.Buffer safe for the watch's writes and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchRun starts the command with --watch on client and returns a stop
// function that cancels it (as Ctrl-C does) and gives the exit code.
func watchRun(t *testing.T, client *fake.Clientset, out, errOut io.Writer, args ...string) (stop func() int) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "no-kubeconfig"))
	oldQuiet, oldMax := watchQuiet, watchMaxDelay
	watchQuiet, watchMaxDelay = 20*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { watchQuiet, watchMaxDelay = oldQuiet, oldMax })
	client.Resources = builtinResources
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	o.client = client
	o.width = func(io.Writer) int { return 0 }
	ctx, cancel := context.WithCancel(context.Background())
	o.ctx = ctx
	done := make(chan int, 1)
	go func() { done <- run(o, args) }()
	return func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(interruptGrace):
			t.Fatalf("the watch did not stop within %v of Ctrl-C", interruptGrace)
			return -1
		}
	}
}

// watchArgs: the old ReplicaSet of liveObjects (3 ready pods) to 1.
var watchArgs = []string{"rs/api-6f7d8", "--replicas=1", "-n", "prod", "--kube-version", "1.37", "--watch", "-o", "json"}

// documents decodes the stream of JSON predictions the watch printed.
func documents(t *testing.T, s string) []prediction.Prediction {
	t.Helper()
	var out []prediction.Prediction
	dec := json.NewDecoder(strings.NewReader(s))
	for dec.More() {
		var p prediction.Prediction
		if err := dec.Decode(&p); err != nil {
			break // a document still being written
		}
		out = append(out, p)
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A kept pod that turns unready becomes a victim: the watch prints again,
// says what changed and when; a change that moves no victim prints
// nothing; Ctrl-C stops it cleanly (exit 0).
func TestWatchReprintsOnChange(t *testing.T) {
	c := fake.NewClientset(liveObjects()...)
	var out, errOut syncBuffer
	stop := watchRun(t, c, &out, &errOut, watchArgs...)
	waitFor(t, "the first prediction", func() bool { return len(documents(t, out.String())) == 1 })
	first := documents(t, out.String())[0]
	var kept string
	for _, p := range first.Pods {
		if p.Fate == prediction.FateKeep && p.Ready && p.Certain {
			kept = p.Name
		}
	}
	if kept == "" || !first.Certain {
		t.Fatalf("no ready pod certainly kept: %v", first.Victims)
	}
	reads := slices.Clone(c.Actions())
	// A label change on a pod moves nothing: no new document.
	pod, err := c.CoreV1().Pods("prod").Get(context.Background(), kept, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels = map[string]string{"app": "api", "pod-template-hash": pod.Labels["pod-template-hash"], "note": "x"}
	if _, err := c.CoreV1().Pods("prod").Update(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(documents(t, out.String())); n != 1 {
		t.Errorf("a change that moves no victim printed again (%d documents)", n)
	}
	// The kept pod turns unready: it must now be deleted.
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	pod.Status.ContainerStatuses[0].Ready = false
	if _, err := c.CoreV1().Pods("prod").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second prediction", func() bool { return len(documents(t, out.String())) >= 2 })
	second := documents(t, out.String())[1]
	if !slices.Contains(second.Victims, kept) {
		t.Errorf("%s turned unready but is not a victim: %v", kept, second.Victims)
	}
	if code := stop(); code != ExitOK {
		t.Errorf("exit %d after Ctrl-C, want 0", code)
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "first prediction") || !strings.Contains(lines[1], "now deleted: "+kept) {
		t.Errorf("want a line per prediction, the second naming %s:\n%s", kept, errOut.String())
	}
	if _, err := time.Parse(time.RFC3339, strings.Fields(lines[1])[1][:len("2006-01-02T15:04:05Z")]); err != nil {
		t.Errorf("no timestamp in %q: %v", lines[1], err)
	}
	for _, a := range reads {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			t.Errorf("the watch issued %q on %s", v, a.GetResource().Resource)
		}
	}
}

// The pod watch expires (410 Gone): the informer lists again and watches
// from there, and the next change is still seen.
func TestWatchSurvivesExpiry(t *testing.T) {
	c := fake.NewClientset(liveObjects()...)
	var watches atomic.Int32
	c.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		if watches.Add(1) > 1 {
			return false, nil, nil // the tracker's watch
		}
		w := watch.NewFake()
		go w.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
		return true, w, nil
	})
	var out, errOut syncBuffer
	stop := watchRun(t, c, &out, &errOut, watchArgs...)
	waitFor(t, "a second watch after the 410", func() bool { return watches.Load() >= 2 })
	waitFor(t, "the first prediction", func() bool { return len(documents(t, out.String())) == 1 })
	// A new, unready pod of the ReplicaSet: the first victim.
	p := livePod(liveRS(liveObjects()[0].(*appsv1.Deployment), "api-6f7d8", "6f7d8", "api:1", 3, 10*24*time.Hour), "api-6f7d8-fffff", "c0000000-0000-4000-8000-00000000000f", "node-5", time.Minute, false, 0)
	if _, err := c.CoreV1().Pods("prod").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a prediction with the new pod", func() bool {
		docs := documents(t, out.String())
		return len(docs) >= 2 && slices.Contains(docs[len(docs)-1].Victims, "api-6f7d8-fffff")
	})
	if code := stop(); code != ExitOK {
		t.Errorf("exit %d", code)
	}
}

// Memory stays flat: pods churn (one created and deleted per step) for
// many steps; the heap after the last step is within a bound of the heap
// after the first ones.
func TestWatchMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("churns for a few seconds")
	}
	c := fake.NewClientset(liveObjects()...)
	var n atomic.Int64
	counter := writerFunc(func(p []byte) (int, error) { n.Add(int64(len(p))); return len(p), nil })
	stop := watchRun(t, c, counter, io.Discard, watchArgs...)
	rs := liveRS(liveObjects()[0].(*appsv1.Deployment), "api-6f7d8", "6f7d8", "api:1", 3, 10*24*time.Hour)
	heap := func() uint64 {
		c.ClearActions() // the fake clientset records every call
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const warm, steps = 200, 2000
	var base uint64
	for i := 0; i < steps; i++ {
		if i == warm {
			base = heap()
		}
		name := fmt.Sprintf("api-9c4b2-churn%d", i)
		p := livePod(rs, name, fmt.Sprintf("c1000000-0000-4000-8000-%012d", i), "node-9", time.Minute, i%2 == 0, 0)
		if _, err := c.CoreV1().Pods("prod").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.CoreV1().Pods("prod").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			// The fake watch holds 100 events and panics when full: let
			// the informer drain it; the pause also lets predictions run.
			time.Sleep(time.Millisecond)
		}
	}
	end := heap()
	if code := stop(); code != ExitOK {
		t.Errorf("exit %d", code)
	}
	growth := int64(end) - int64(base)
	t.Logf("heap after %d churn steps: %d KiB, after %d: %d KiB (growth %d KiB); %d bytes printed", warm, base/1024, steps, end/1024, growth/1024, n.Load())
	if n.Load() == 0 {
		t.Error("nothing printed")
	}
	if growth > 4<<20 {
		t.Errorf("the heap grew by %d KiB over %d steps: not flat", growth/1024, steps-warm)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// What the watch reports, and that nothing else counts as a change.
func TestPredictionChanges(t *testing.T) {
	pred := func(certain bool, victims ...string) *prediction.Prediction {
		p := &prediction.Prediction{Certain: certain, Victims: victims}
		for _, n := range []string{"a", "b", "c"} {
			fate := prediction.FateKeep
			if slices.Contains(victims, n) {
				fate = prediction.FateDelete
			}
			p.Pods = append(p.Pods, prediction.Pod{Name: n, Fate: fate, Certain: certain})
		}
		return p
	}
	for _, tc := range []struct {
		name     string
		was, now *prediction.Prediction
		want     []string
	}{
		{"same", pred(true, "a"), pred(true, "a"), nil},
		{"new victim", pred(true, "a"), pred(true, "a", "b"), []string{"now deleted: b"}},
		{"swap", pred(true, "a"), pred(true, "b"), []string{"now deleted: b", "no longer deleted: a"}},
		{"order", pred(true, "a", "b"), pred(true, "b", "a"), []string{"deletion order changed: b, a"}},
		{"certainty", pred(true, "a"), pred(false, "a"), []string{"certain: true -> false", "certainty changed: a now left to chance, b now left to chance, c now left to chance"}},
	} {
		if got := predictionChanges(tc.was, tc.now); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
