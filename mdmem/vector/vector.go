// Package vector holds the arithmetic on embedding vectors that consolidate
// (which makes them) and inject (which ranks with them) must do alike.
package vector

import "math"

// Unit returns v scaled to length 1, or nil when it has no direction
// (empty, all zeros) or holds a NaN or an infinity: the form in which
// embeddings are cached and compared.
func Unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		n += f * f
	}
	if n == 0 || math.IsInf(n, 0) {
		return nil
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}
