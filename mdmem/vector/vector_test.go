package vector

import (
	"math"
	"testing"
)

func TestUnit(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name string
		v    []float32
		want []float32 // nil: no direction
	}{
		{"plain", []float32{3, 4}, []float32{0.6, 0.8}},
		{"negative", []float32{-2, 0}, []float32{-1, 0}},
		{"tiny", []float32{1e-30, 1e-30}, []float32{float32(1 / math.Sqrt2), float32(1 / math.Sqrt2)}},
		{"empty", nil, nil},
		{"zero", []float32{0, 0}, nil},
		{"NaN", []float32{1, nan}, nil},
		{"infinity", []float32{inf, 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unit(tt.v)
			if (got == nil) != (tt.want == nil) || len(got) != len(tt.want) {
				t.Fatalf("Unit(%v) = %v, want %v", tt.v, got, tt.want)
			}
			for i := range got {
				if math.Abs(float64(got[i]-tt.want[i])) > 1e-6 {
					t.Fatalf("Unit(%v) = %v, want %v", tt.v, got, tt.want)
				}
			}
		})
	}
}
