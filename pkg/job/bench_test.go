package job

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

func benchPods(n int, indexed bool) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		ix := -1
		if indexed {
			ix = i
		}
		pods[i] = pod("p-"+strconv.Itoa(i), ix, i%3 != 0, time.Duration(i%7)*time.Minute, time.Duration(i%5)*time.Hour)
	}
	return pods
}

// A 2,000-pod Job: report allocations and bytes (-benchmem); wall-clock figures
// are the lead's to take.
func BenchmarkPredictNonIndexed2000(b *testing.B) {
	pods := benchPods(2000, false)
	j := testJob(2000, nil, false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Predict(Input{Job: j, Pods: pods, Parallelism: 1000, Now: testNow, Rules: rules.Defaults(37), Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPredictElasticIndexed2000(b *testing.B) {
	pods := benchPods(2000, true)
	j := testJob(2000, ptr.To[int32](2000), true)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Predict(Input{Job: j, Pods: pods, Parallelism: 1000, Completions: ptr.To[int32](1000), Now: testNow, Rules: rules.Defaults(37), Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
