package anomaly

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestStatsAsGonum: the model's statistics give gonum's values bit for
// bit (the anomaly report does not change with them), on random samples
// of every size up to 60 with 0/1 weights as fitLogLog makes them and with
// arbitrary ones, and t quantiles over the degrees of freedom and levels
// the test uses. The variance is gonum's up to the order of its sum (an
// unrolled assembly loop on amd64, a plain one elsewhere), within 1e-12.
func TestStatsAsGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	same := func(what string, got, want float64) {
		t.Helper()
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s = %v, gonum %v", what, got, want)
		}
	}
	for n := 1; n <= 60; n++ {
		for range 50 {
			x, y, w, wf := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range x {
				x[i] = math.Log(1 + r.Float64()*1e6)
				y[i] = 2 + 0.7*x[i] + r.NormFloat64()*0.3
				if r.IntN(5) > 0 {
					w[i] = 1
				}
				wf[i] = r.Float64() * 3
			}
			w[0] = 1
			s := slices.Clone(y)
			slices.Sort(s)
			same("sortedMedian", sortedMedian(s), stat.Quantile(0.5, stat.LinInterp, s, nil))
			if n >= 2 {
				for _, ws := range [][]float64{w, wf} {
					a, b := linearRegression(x, y, ws)
					ga, gb := stat.LinearRegression(x, y, ws, false)
					same("linearRegression alpha", a, ga)
					same("linearRegression beta", b, gb)
				}
				if got, want := variance(x), stat.Variance(x, nil); math.Abs(got-want) > 1e-12*math.Abs(want) {
					t.Fatalf("variance = %v, gonum %v", got, want)
				}
			}
		}
	}
	if !math.IsNaN(sortedMedian([]float64{1, math.NaN()})) {
		t.Fatal("sortedMedian of a NaN sample is not NaN")
	}
	for _, df := range []float64{1, 1.5, 2, 3, 5, 8, 13, 30, 100, 999, 9999} {
		for _, p := range []float64{0.001, 0.3, 0.5, 0.9, 0.99, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12} {
			same("studentsTQuantile", studentsTQuantile(p, df), distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p))
		}
	}
	for _, p := range []float64{0.01, 0.7, 1 - 1e-9} {
		same("tQuantile, large df", tQuantile(p, 2e4), distuv.UnitNormal.Quantile(p))
	}
}
