package prediction

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func bigPrediction(n int) *Prediction {
	p := &Prediction{APIVersion: APIVersion, Kind: Kind, ReferenceTime: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}
	for i := range n {
		b := int64(i % 40)
		p.Pods = append(p.Pods, Pod{Name: fmt.Sprintf("web-%d", i), UID: fmt.Sprint(i), Created: p.ReferenceTime.Add(-time.Hour), ReadyBucket: &b,
			Fate: FateKeep, DecidedBy: &Decision{Rule: "R6", Name: "ready-time", This: "1h", Other: "2h", Text: "R6 ..."}})
		p.Victims = append(p.Victims, fmt.Sprintf("web-%d", i))
	}
	p.Normalize()
	return p
}

// The copy kubectl's printers take is a deep, equal copy.
func TestDeepCopyObject(t *testing.T) {
	p := bigPrediction(3)
	c := p.DeepCopyObject().(*Prediction)
	if !reflect.DeepEqual(p, c) {
		t.Fatalf("copy differs:\n%+v\n%+v", p, c)
	}
	*c.Pods[0].ReadyBucket = 99
	c.Pods[0].DecidedBy.Rule = "R1"
	if *p.Pods[0].ReadyBucket == 99 || p.Pods[0].DecidedBy.Rule == "R1" {
		t.Error("the copy shares memory with the original")
	}
	if gvk := c.GetObjectKind().GroupVersionKind(); gvk != GroupVersion.WithKind(Kind) {
		t.Errorf("gvk %v", gvk)
	}
}

func BenchmarkDeepCopy20000(b *testing.B) {
	p := bigPrediction(20000)
	for b.Loop() {
		p.DeepCopyObject()
	}
}

// The scheme knows the document's type under its apiVersion and kind.
func TestScheme(t *testing.T) {
	gvks, _, err := Scheme.ObjectKinds(&Prediction{})
	if err != nil || len(gvks) != 1 || gvks[0] != GroupVersion.WithKind(Kind) || GroupVersion.String() != APIVersion {
		t.Errorf("ObjectKinds %v %v", gvks, err)
	}
}
