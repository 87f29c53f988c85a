package anomaly

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// The few statistics the model needs, written here rather than taken from
// gonum's stat and distuv packages, which import its matrix packages
// (mat, lapack, blas): 1.3 MB of code and their share of the function
// tables in every ptrace binary, mostly resident while it runs, for a
// variance, a median, a weighted least-squares line and a t quantile. The
// formulas and their order of operations are the ones gonum v0.16 uses,
// so the model's numbers stay the same (TestStatsAsGonum).

// variance is the unbiased sample variance of x by the corrected two-pass
// algorithm (Chan, Golub and LeVeque, "Algorithms for computing the sample
// variance", eq. 1.7).
func variance(x []float64) float64 {
	var sum float64
	for _, v := range x {
		sum += v
	}
	mean := sum / float64(len(x))
	var ss, comp float64
	for _, v := range x {
		d := v - mean
		ss += d * d
		comp += d
	}
	return (ss - comp*comp/float64(len(x))) / (float64(len(x)) - 1)
}

// sortedMedian is the 0.5 quantile of sorted, nonempty s with linear
// interpolation between the two values around it.
func sortedMedian(s []float64) float64 {
	for _, v := range s {
		if math.IsNaN(v) {
			return math.NaN()
		}
	}
	fidx := 0.5 * float64(len(s))
	var cum float64
	for i := range s {
		cum++
		if cum >= fidx {
			if i == 0 {
				return s[0]
			}
			t := cum - fidx
			return t*s[i-1] + (1-t)*s[i]
		}
	}
	return math.NaN() // unreachable: cum reaches len(s)
}

// weightedMean is Σ w·x / Σ w.
func weightedMean(x, w []float64) float64 {
	var sx, sw float64
	for i, wi := range w {
		sx += wi * x[i]
		sw += wi
	}
	return sx / sw
}

// linearRegression fits y = alpha + beta·x by weighted least squares
// (len(w) = len(x) = len(y)), with the corrected two-pass variance and
// covariance.
func linearRegression(x, y, w []float64) (alpha, beta float64) {
	xu := weightedMean(x, w)
	var ss, comp, sw float64
	for i, v := range x {
		wd := w[i] * (v - xu)
		d := v - xu
		ss += wd * d
		comp += wd
		sw += w[i]
	}
	xv := (ss - comp*comp/sw) / (sw - 1)
	yu := weightedMean(y, w)
	var sxy, xc, yc, sw2 float64
	for i, xv := range x {
		wxd := w[i] * (xv - xu)
		yd := y[i] - yu
		sxy += wxd * yd
		xc += wxd
		yc += w[i] * yd
		sw2 += w[i]
	}
	cov := (sxy - xc*yc/sw2) / (sw2 - 1)
	beta = cov / xv
	alpha = yu - beta*xu
	return alpha, beta
}

// studentsTQuantile is the p-quantile of Student's t with nu degrees of
// freedom: with F(x) = 1 − I_{ν/(x²+ν)}(ν/2, 1/2)/2 for x > 0, the inverse
// of the regularized incomplete beta function gives it.
func studentsTQuantile(p, nu float64) float64 {
	switch {
	case p == 0.5:
		return 0
	case p > 0.5:
		t := mathext.InvRegIncBeta(nu/2, 0.5, 2*(1-p))
		return math.Sqrt(nu * (1 - t) / t)
	}
	t := mathext.InvRegIncBeta(nu/2, 0.5, 2*p)
	return -math.Sqrt(nu * (1 - t) / t)
}
