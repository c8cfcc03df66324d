package scheduling

import "math"

// parseInt64 is strconv.ParseInt(s, 10, 64) without the error value, which
// allocates: Has parses every candidate value of a bounded requirement on
// the scheduling hot path, and non-numeric values are common there. It
// accepts an optional sign and decimal digits, rejecting overflow.
func parseInt64(s string) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i]) - '0'
		if d > 9 || n > (limit-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		// -n wraps, giving MinInt64 exactly when n is 1<<63.
		return int64(-n), true
	}
	return int64(n), true
}
