package cmd

import (
	"fmt"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// predictionChanges runs after every re-prediction of --watch: at 50,000
// pods with 10,000 victims it must stay linear.
func BenchmarkPredictionChanges(b *testing.B) {
	mk := func(shift int) *prediction.Prediction {
		p := &prediction.Prediction{Certain: true}
		for i := 0; i < 50000; i++ {
			name := fmt.Sprintf("web-%05d", i)
			fate := prediction.FateKeep
			if (i+shift)%5 == 0 {
				fate = prediction.FateDelete
				p.Victims = append(p.Victims, name)
			}
			p.Pods = append(p.Pods, prediction.Pod{Name: name, Fate: fate, Certain: true})
		}
		return p
	}
	was, now := mk(0), mk(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(predictionChanges(was, now)) == 0 {
			b.Fatal("no change found")
		}
	}
}
