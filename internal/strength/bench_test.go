package strength

import (
	"context"
	"testing"
	"time"
)

// BenchmarkTestStrength measures one group's test strength on the sample
// module (7 mutable changed lines, 6 covered, real `go test` per mutant):
// mutants/s is measured mutants over wall time, s/group the time of one Run.
func BenchmarkTestStrength(b *testing.B) {
	s := newSample(b, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": strongTest})
	o := s.options("go test ./calc -run TestClamp")
	ctx := context.Background()
	mutants := 0
	start := time.Now()
	for b.Loop() {
		rep, err := Run(ctx, o, DefaultFloor)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Measured() == 0 {
			b.Fatalf("nothing measured:\n%s", rep.Summary())
		}
		mutants += rep.Measured()
	}
	elapsed := time.Since(start).Seconds()
	b.ReportMetric(float64(mutants)/elapsed, "mutants/s")
	b.ReportMetric(elapsed/float64(b.N), "s/group")
}
