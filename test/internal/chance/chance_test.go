package chance

import (
	"math"
	"testing"
)

func TestBeyondNoise(t *testing.T) {
	if got := BinomTail(35, 50, 0.5, true); math.Abs(got-0.0033) > 0.0002 {
		t.Errorf("P(X >= 35 | 50, 0.5) = %.5f, want 0.0033", got)
	}
	for k := 0; k <= 50; k++ {
		if s := BinomTail(k, 50, 0.3, true) + BinomTail(k-1, 50, 0.3, false); math.Abs(s-1) > 1e-9 {
			t.Fatalf("tails at %d sum to %v", k, s)
		}
	}
	for _, c := range []struct {
		k    int
		p    float64
		want bool
	}{
		{0, 0.86, true},   // the stale-status miss: far beyond chance
		{17, 0.5, false},  // 0.34 against 0.5: 50 runs explain it
		{45, 0.5, true},   // 0.9 against 0.5
		{33, 0.45, false}, // 0.66 against 0.45
		{25, 0.5, false},
	} {
		if got := BeyondNoise(c.k, 50, c.p); got != c.want {
			t.Errorf("BeyondNoise(%d/50, p=%.2f) = %v, want %v", c.k, c.p, got, c.want)
		}
	}
}
