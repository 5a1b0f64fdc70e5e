// Package chance judges measured frequencies of the real controllers
// against the plugin's probabilities: a miss counts when it is larger than
// the tolerance and larger than the runs' sampling explains.
package chance

import "math"

// Tolerance is how far a predicted probability may be from the measured
// frequency.
const Tolerance = 0.15

// NoiseLevel: a measured frequency counts as off beyond chance when a pod
// whose true chance were at the tolerance's edge would give one this far
// out less often than this. With about 1,300 chances judged in the long
// run, chance alone then fails it about once in a thousand runs; judging
// |measured - predicted| > Tolerance alone, 50 runs of a 50% pod would miss
// by chance in 3% of pods.
const NoiseLevel = 1e-3

// BeyondNoise says whether k deletions in n runs are unlikely (below
// NoiseLevel) for every true chance within the tolerance of p: a one-sided
// binomial tail at the nearest edge.
func BeyondNoise(k, n int, p float64) bool {
	f := float64(k) / float64(n)
	switch {
	case f > p+Tolerance:
		return BinomTail(k, n, min(1, p+Tolerance), true) < NoiseLevel
	case f < p-Tolerance:
		return BinomTail(k, n, max(0, p-Tolerance), false) < NoiseLevel
	}
	return false
}

// BinomTail is P(X >= k) (upper) or P(X <= k) for X ~ Binomial(n, p).
func BinomTail(k, n int, p float64, upper bool) float64 {
	lo, hi := 0, k
	if upper {
		lo, hi = k, n
	}
	sum := 0.0
	for i := max(lo, 0); i <= min(hi, n); i++ {
		sum += binomPMF(i, n, p)
	}
	return sum
}

// binomPMF is P(X = i) for X ~ Binomial(n, p).
func binomPMF(i, n int, p float64) float64 {
	if p == 0 || p == 1 { // the logarithms below would give NaN
		if (p == 0 && i == 0) || (p == 1 && i == n) {
			return 1
		}
		return 0
	}
	lg, _ := math.Lgamma(float64(n + 1))
	l1, _ := math.Lgamma(float64(i + 1))
	l2, _ := math.Lgamma(float64(n - i + 1))
	return math.Exp(lg - l1 - l2 + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
}
